"""Question sets in dokimi's formats, read tolerantly (never rewritten) and hashed.

    questions.v2   {"schema_version": 2, "questions": [{"id", "question", "metadata"?: {...},
                    "ground_truth_chunk"?, "ground_truth"?, "expected_topics"?: [str], "topics"?: [str],
                    "numeric_claims"?: [str | {"claim": str}], "output_structure"?}]}
    questions.v1   {"schema_version": 1, "questions": [{"id", "text", ...}]}

The version: a stamped `schema_version` decides (1, 2, "v1", "questions.v2", ...); an unstamped file is
read as the version its records match (v2 when any record has `question`, else v1 when any has `text`).
The file's name never decides: `golden_set.json` stamped 1 is v1.

dokimi's tolerant reading, each rule applied to a copy of the record:
- a bare JSON list is read as `{"questions": [...]}`;
- `question_text` (with neither `question` nor `text`) is read as `question`;
- `question_id` (with no `id`) is read as `id`;
- records with no id at all are numbered by position, `q0000`, `q0001`, ..., with a `_` prefix when
  another record already has that id (`0` is an id, not a missing one);
- `metadata` given as a list is read as `{"items": [...]}`;
- a `null` in an optional key that v1 does not declare and v2 types (`metadata`, `ground_truth_chunk`,
  `expected_topics`, ...) is dropped silently; a `null` inside a typed value (`"topics": [null]`) is refused.
A set that needed any of the first five is read in legacy format, said once in `QuestionSet.notes`.
After reading, every record must be valid for its version: v2 needs `id` and a non-empty `question`
and may not also carry `text`; v1 needs a non-empty `text`. Every failing record is named, each with its
fix, in one error raised before any model is called.

`question_set_hash` is the first 12 hex digits of SHA-256 over the sorted `id:question` lines: the
same questions under the same ids hash the same whatever file shape carried them, and a set already
valid as v1 or v2 hashes as it always did.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgauge._io import read_data
from ctxgauge.errors import UserError
from ctxgauge.suites.qa.sources._battery import Question

V1, V2 = "questions.v1", "questions.v2"
_STAMPS = {V1: ("1", "1.0", "v1", V1), V2: ("2", "2.0", "v2", V2)}
TEXT_FIELD = {V1: "text", V2: "question"}
STRING_FIELDS = ("ground_truth_chunk", "ground_truth", "output_structure")
"""Optional v2 fields holding one string."""
LIST_FIELDS = ("expected_topics", "topics")
"""Optional v2 fields holding a list of strings."""
OPTIONAL_FIELDS = ("metadata", *STRING_FIELDS, *LIST_FIELDS, "numeric_claims")
"""Keys v1 does not declare and v2 types: a `null` in any of them is dropped silently."""


@dataclass(frozen=True)
class SetRecord:
    """What a question-set record carries beyond the question every arm is asked."""

    qid: str
    metadata: dict = field(default_factory=dict)
    ground_truth_chunk: str | None = None
    """The reference text a grounded judge grades the answer against (dokimi's field)."""
    ground_truth: str | None = None
    """A reference answer; grounds the judge when there is no `ground_truth_chunk`."""
    expected_topics: tuple[str, ...] = ()
    """Curated topics; ground truth only under `--grounded-from-topics` (see `_grounding`)."""
    topics: tuple[str, ...] = ()
    numeric_claims: tuple[str, ...] = ()
    """Numbers the answer must get right: one judged wrong caps correctness at 40."""


@dataclass
class QuestionSet:
    """A dokimi question set: questions in file order, each one's record, and what was read as legacy."""

    name: str
    path: Path
    format: str
    questions: list[Question]
    records: dict[str, SetRecord] = field(default_factory=dict)
    legacy: list[str] = field(default_factory=list)
    """Each legacy rule the set needed, once, in the order first met (empty for a v1 or v2 file)."""

    @property
    def notes(self) -> list[str]:
        """One line when the set was read in legacy format, else none."""
        if not self.legacy:
            return []
        return [f"{self.path.name} read in legacy format ({'; '.join(self.legacy)}); "
                f"the file is left as it is"]

    @property
    def metadata(self) -> dict[str, dict]:
        return {qid: r.metadata for qid, r in self.records.items()}

    @property
    def hash(self) -> str:
        return question_set_hash((q.qid, q.prompt) for q in self.questions)

    def identity(self) -> dict:
        return {"name": self.name, "format": self.format, "hash": self.hash, "questions": len(self.questions),
                "normalised": list(self.legacy)}


def question_set_hash(pairs) -> str:
    """First 12 hex digits of SHA-256 over the sorted `id:question` lines, joined by newlines."""
    lines = sorted(f"{qid}:{text}" for qid, text in pairs)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:12]


def _stamped(data: Any, path: Path) -> str | None:
    if not isinstance(data, dict) or data.get("schema_version") is None:
        return None
    stamp = data["schema_version"]
    text = str(stamp).strip().lower() if not isinstance(stamp, bool) else ""
    for fmt, spellings in _STAMPS.items():
        if text in spellings:
            return fmt
    raise UserError(f"{path}: schema_version {stamp!r} is neither 1 nor 2; stamp \"schema_version\": 2 "
                    "(records with \"question\") or 1 (records with \"text\"), or remove it")


def _matched(records: list) -> str:
    """The version an unstamped set's records match: v2 when any record has a question, else v1 when
    any has v1's `text`, else v2 (whose error messages then name what is missing)."""
    dicts = [r for r in records if isinstance(r, dict)]
    if any(r.get("question") is not None or ("question_text" in r and "text" not in r) for r in dicts):
        return V2
    return V1 if any(r.get("text") is not None for r in dicts) else V2


class _Reader:
    """One pass over the records: legacy rules applied to copies, every problem collected."""

    def __init__(self, path: Path, fmt: str):
        self.path, self.fmt = path, fmt
        self.legacy: list[str] = []
        self.errors: list[tuple[int, str]] = []
        """(record index, problem with its fix): reported in record order whichever pass found them."""

    def note(self, text: str) -> None:
        if text not in self.legacy:
            self.legacy.append(text)

    def record(self, i: int, rec: Any) -> dict | None:
        """The record with legacy rules applied, or None (with its errors noted)."""
        if not isinstance(rec, dict):
            self.errors.append((i, f"record {i}: not an object; write it as {{\"id\": \"q1\", "
                                   f"\"{TEXT_FIELD[self.fmt]}\": \"...\"}}"))
            return None
        r = dict(rec)
        if "question_text" in r and "question" not in r and "text" not in r:
            r["question"] = r.pop("question_text")
            self.note("`question_text` read as `question`")
        if "question_id" in r and "id" not in r:
            r["id"] = r.pop("question_id")
            self.note("`question_id` read as `id`")
        for key in OPTIONAL_FIELDS:
            if key in r and r[key] is None:
                del r[key]  # dokimi drops a null where v2 types a value and v1 has no key
        if isinstance(r.get("metadata"), list):
            r["metadata"] = {"items": list(r["metadata"])}
            self.note("`metadata` given as a list read as {\"items\": [...]}")
        return r

    def check(self, i: int, r: dict) -> None:
        """Every problem of one record, each with its fix."""
        where = f"record {i}" + (f" (id {r['id']!r})" if isinstance(r.get("id"), (str, int)) else "")
        def bad(problem: str) -> None:
            self.errors.append((i, problem))
        if "id" in r and (r["id"] is None or isinstance(r["id"], bool) or not isinstance(r["id"], (str, int))
                          or isinstance(r["id"], str) and not r["id"].strip()):
            bad(f"{where}: id must be a non-empty string or an integer, got {json.dumps(r['id'])}; "
                "fix it, or remove the key to have it numbered by position")
        field_name = TEXT_FIELD[self.fmt]
        other = TEXT_FIELD[V1 if self.fmt == V2 else V2]
        text = r.get(field_name)
        if not isinstance(text, str) or not text.strip():
            hint = (f" (it has \"{other}\", the {V1 if self.fmt == V2 else V2} field: rename it to "
                    f"\"{field_name}\" or stamp \"schema_version\": {1 if self.fmt == V2 else 2})"
                    if isinstance(r.get(other), str) else "")
            bad(f"{where}: {self.fmt} needs a non-empty \"{field_name}\" string{hint}")
        elif self.fmt == V2 and r.get("text") is not None:
            bad(f"{where}: a {V2} record may not carry both \"question\" and \"text\"; remove \"text\"")
        m = r.get("metadata")
        if m is not None and not isinstance(m, dict):
            bad(f"{where}: \"metadata\" must be an object (or a list, read as {{\"items\": [...]}}), "
                f"got {type(m).__name__}")
        for key in STRING_FIELDS:
            if key in r and not isinstance(r[key], str):
                bad(f"{where}: \"{key}\" must be a string, got {type(r[key]).__name__}")
        for key in LIST_FIELDS:
            if key not in r:
                continue
            v = r[key]
            if not isinstance(v, list):
                bad(f"{where}: \"{key}\" must be a list of strings, got {type(v).__name__}")
                continue
            for j, item in enumerate(v):
                if item is None:
                    bad(f"{where}: \"{key}\" holds a null at position {j}; remove it or give a string")
                elif not isinstance(item, str) or not item.strip():
                    bad(f"{where}: \"{key}\"[{j}] must be a non-empty string")
        if "numeric_claims" in r:
            v = r["numeric_claims"]
            if not isinstance(v, list):
                bad(f"{where}: \"numeric_claims\" must be a list of claims (strings or {{\"claim\": ...}})")
            else:
                for j, item in enumerate(v):
                    if _claim_text(item) is None:
                        bad(f"{where}: \"numeric_claims\"[{j}] is {json.dumps(item)}; give a string or "
                            "{\"claim\": \"...\"}" + ("; remove the null" if item is None else ""))


def _claim_text(item: Any) -> str | None:
    if isinstance(item, dict):
        item = item.get("claim")
    return item.strip() if isinstance(item, str) and item.strip() else None


def _strings(v: Any) -> tuple[str, ...]:
    return tuple(s.strip() for s in v) if isinstance(v, list) else ()


def load_question_set(path: str | Path) -> QuestionSet:
    """Read a dokimi question set; see the module docstring for what is accepted. The file is only read."""
    path = Path(path)
    data = read_data(path, "question set", fmt="json")
    if isinstance(data, list):
        records, bare = data, True
    elif isinstance(data, dict) and isinstance(data.get("questions"), list):
        records, bare = data["questions"], False
    else:
        raise UserError(f"{path}: expected {{\"questions\": [...]}} or a list of question records")
    if not records:
        raise UserError(f"{path}: no questions; add records to its \"questions\" list")
    fmt = _stamped(data, path) or _matched(records)
    reader = _Reader(path, fmt)
    if bare:
        reader.note("bare list read as {\"questions\": [...]}")
    read = [reader.record(i, rec) for i, rec in enumerate(records)]
    for i, r in enumerate(read):
        if r is not None:
            reader.check(i, r)

    # Ids: explicit ones first (a clash between two of them is the author's to mend), then the
    # position numbers, prefixed until free so a numbered record never takes an explicit id.
    taken: dict[str, int] = {}
    for i, r in enumerate(read):
        if r is None or not isinstance(r.get("id"), (str, int)) or isinstance(r.get("id"), bool):
            continue
        qid = str(r["id"])
        if qid in taken:
            reader.errors.append((i, f"record {i} (id {qid!r}): record {taken[qid]} has the same id; "
                                     "give each question its own id"))
        else:
            taken.setdefault(qid, i)
    numbered = 0
    ids: list[str | None] = []
    for i, r in enumerate(read):
        if r is None:
            ids.append(None)
        elif "id" in r:
            ids.append(str(r["id"]))
        else:
            qid = f"q{i:04d}"
            while qid in taken:
                qid = "_" + qid
            taken[qid] = i
            ids.append(qid)
            numbered += 1
    if numbered:
        reader.note(f"{numbered} record(s) without an id numbered by position (q0000, q0001, ...)")
    if reader.errors:
        n = len({i for i, _ in reader.errors})
        raise UserError(f"{path}: {n} invalid record{'s' if n > 1 else ''} as {fmt} (nothing was asked): "
                        + "; ".join(problem for _, problem in sorted(reader.errors, key=lambda e: e[0])))

    questions: list[Question] = []
    recs: dict[str, SetRecord] = {}
    for i, (r, qid) in enumerate(zip(read, ids)):
        assert r is not None and qid is not None
        meta = dict(r.get("metadata") or {})
        difficulty = meta.get("difficulty")
        cats = meta.get("categories") or meta.get("tags") or ()
        questions.append(Question(qid, i + 1, r[TEXT_FIELD[fmt]].strip(), r.get("output_structure") or "",
                                  difficulty if isinstance(difficulty, int) and 1 <= difficulty <= 5 else None,
                                  tuple(str(c) for c in cats) if isinstance(cats, (list, tuple)) else ()))
        claims = tuple(c for c in map(_claim_text, r.get("numeric_claims") or ()) if c)
        recs[qid] = SetRecord(qid, meta, r.get("ground_truth_chunk") or None, r.get("ground_truth") or None,
                              _strings(r.get("expected_topics")), _strings(r.get("topics")), claims)
    return QuestionSet(name=path.stem, path=path, format=fmt, questions=questions, records=recs,
                       legacy=reader.legacy)
