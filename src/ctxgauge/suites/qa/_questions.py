"""Question sets in dokimi's formats, read tolerantly and hashed.

    questions.v2   {"version": 2, "questions": [{"id", "question", "metadata": {...}, "ground_truth"?}]}
    questions.v1   {"questions": [{"id", "text", ...}]}

Older and hand-made files vary, so the reader accepts: a bare list instead of the wrapper, a bare string
per record, `question_text` or `text` for the question, `question_id` for the id, records without an
id (numbered by position, `q001`...), metadata given as a list (kept as `{"tags": [...]}`), and ground truth
under `ground_truth`, `expected_answer`, `reference_answer` or `answer`. Each normalisation is noted
once (`QuestionSet.notes`), so a run says what was read differently from the format. A record that
cannot be read fails before any model is called, naming the record and the fix.

`question_set_hash` is the first 12 hex digits of SHA-256 over the sorted `id:question` lines: the
same questions under the same ids hash the same whatever file shape carried them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgauge.errors import UserError
from ctxgauge.suites.qa._battery import Question

TEXT_KEYS = ("question", "question_text", "text", "prompt")
ID_KEYS = ("id", "question_id", "qid")
TRUTH_KEYS = ("ground_truth", "expected_answer", "reference_answer", "answer")


@dataclass
class QuestionSet:
    """A dokimi question set: questions in file order, ground truth where given, normalisation notes."""

    name: str
    path: Path
    format: str
    questions: list[Question]
    ground_truth: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def hash(self) -> str:
        return question_set_hash((q.qid, q.prompt) for q in self.questions)

    def identity(self) -> dict:
        return {"name": self.name, "format": self.format, "hash": self.hash, "questions": len(self.questions),
                "normalised": list(self.notes)}


def question_set_hash(pairs) -> str:
    """First 12 hex digits of SHA-256 over the sorted `id:question` lines, joined by newlines."""
    lines = sorted(f"{qid}:{text}" for qid, text in pairs)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:12]


def _format_of(data: Any, path: Path) -> str:
    if isinstance(data, dict):
        v = str(data.get("version") or data.get("schema") or data.get("format") or "")
        if v.endswith("2") or "v2" in v:
            return "questions.v2"
        if v.endswith("1") or "v1" in v:
            return "questions.v1"
    stem = path.name.lower()
    return "questions.v1" if "v1" in stem else "questions.v2"


def load_question_set(path: str | Path) -> QuestionSet:
    """Read a dokimi question set; see the module docstring for what is accepted."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    fmt = _format_of(data, path)
    notes: list[str] = []

    def note(text: str) -> None:
        if text not in notes:
            notes.append(text)

    if isinstance(data, list):
        records = data
        note("bare list of records read as {questions: [...]}")
    elif isinstance(data, dict) and isinstance(data.get("questions"), list):
        records = data["questions"]
    else:
        raise UserError(f"{path}: expected {{\"questions\": [...]}} or a list of question records")

    questions: list[Question] = []
    truth: dict[str, str] = {}
    meta: dict[str, dict] = {}
    unnumbered = 0
    for i, rec in enumerate(records):
        where = f"{path}: record {i}"
        if isinstance(rec, str):
            rec = {"question": rec}
            note("bare string records read as the question text")
        if not isinstance(rec, dict):
            raise UserError(f"{where}: a question record must be an object like {{\"id\": \"q1\", \"question\": \"...\"}}")
        text_key = next((k for k in TEXT_KEYS if isinstance(rec.get(k), str) and rec[k].strip()), None)
        if text_key is None:
            raise UserError(f"{where}: no question text; give it a \"question\" field (\"text\" in questions.v1)")
        if text_key != "question" and not (text_key == "text" and fmt == "questions.v1"):
            note(f"`{text_key}` read as `question`")
        id_key = next((k for k in ID_KEYS if rec.get(k) not in (None, "")), None)
        if id_key is None:
            qid = f"q{i + 1:03d}"
            unnumbered += 1
        else:
            qid = str(rec[id_key])
            if id_key != "id":
                note(f"`{id_key}` read as `id`")
        if any(q.qid == qid for q in questions):
            raise UserError(f"{where}: id {qid!r} appears twice; give each question its own id")
        m = rec.get("metadata")
        if isinstance(m, list):
            m = {"tags": list(m)}
            note("metadata given as a list kept as {tags: [...]}")
        elif m is not None and not isinstance(m, dict):
            raise UserError(f"{where}: metadata must be an object (or a list of tags)")
        meta[qid] = dict(m or {})
        truth_key = next((k for k in TRUTH_KEYS if isinstance(rec.get(k), str) and rec[k].strip()), None)
        if truth_key is not None:
            truth[qid] = rec[truth_key]
            if truth_key != "ground_truth":
                note(f"`{truth_key}` read as `ground_truth`")
        difficulty = meta[qid].get("difficulty")
        cats = meta[qid].get("categories") or meta[qid].get("tags") or ()
        questions.append(Question(qid, i + 1, rec[text_key].strip(), str(rec.get("output_structure") or ""),
                                  difficulty if isinstance(difficulty, int) and 1 <= difficulty <= 5 else None,
                                  tuple(str(c) for c in cats) if isinstance(cats, (list, tuple)) else ()))
    if unnumbered:
        note(f"{unnumbered} record(s) without an id numbered by position (q001, q002, ...)")
    if not questions:
        raise UserError(f"{path}: no questions")
    return QuestionSet(name=path.stem, path=path, format=fmt, questions=questions, ground_truth=truth,
                       metadata=meta, notes=notes)
