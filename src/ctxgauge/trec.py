"""TREC run and qrels files, so trec_eval, ir_measures or ranx can score what ctxgauge ranked, and
ctxgauge can score what they (or anything else) ranked.

    run:    QID Q0 DOCNO RANK SCORE TAG      one line per ranked file, best first
    qrels:  QID 0 DOCNO RELEVANCE            one line per judged file (relevance > 0: relevant)

Columns are separated by whitespace, so a DOCNO (a file path) is written with `%`, space, tab, CR and LF
percent-encoded (`my file.py` -> `my%20file.py`) and decoded on reading; a QID may not hold whitespace.

trec_eval ignores the RANK column and re-sorts each query's lines by SCORE (descending, ties broken by
DOCNO in *reverse* byte order). `write_run` therefore writes scores that strictly decrease with rank
(the rank-derived `n - rank + 1`, n the ranking's length), so every tool reads back exactly our order; the
engines' own scores stay in the run record. `read_run` orders lines the way trec_eval does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ctxgauge._io import write_text_atomic
from ctxgauge.errors import UserError

_ENCODE = {"%": "%25", " ": "%20", "\t": "%09", "\n": "%0A", "\r": "%0D"}
_DECODE = {v: k for k, v in _ENCODE.items()}


def encode_docno(path: str) -> str:
    """A path as a whitespace-free DOCNO: `%`, space, tab, CR and LF percent-encoded."""
    return "".join(_ENCODE.get(ch, ch) for ch in path)


def decode_docno(docno: str) -> str:
    """The path an `encode_docno` DOCNO stands for (other `%xx` sequences are left as they are)."""
    if "%" not in docno:
        return docno
    out, i = [], 0
    while i < len(docno):
        code = docno[i:i + 3].upper()
        if code in _DECODE:
            out.append(_DECODE[code])
            i += 3
        else:
            out.append(docno[i])
            i += 1
    return "".join(out)


def _check_qid(qid: str) -> str:
    if not qid or any(ch.isspace() for ch in qid):
        raise ValueError(f"query id {qid!r} must be non-empty and hold no whitespace")
    return qid


def format_run(rankings: Mapping[str, Sequence[str]], tag: str) -> str:
    """TREC run text for query id -> ranked paths (best first), scores strictly decreasing with rank."""
    tag = "".join("_" if ch.isspace() else ch for ch in tag) or "ctxgauge"
    lines = []
    for qid, ranking in rankings.items():
        _check_qid(qid)
        n = len(ranking)
        for rank, path in enumerate(ranking, start=1):
            lines.append(f"{qid} Q0 {encode_docno(path)} {rank} {n - rank + 1} {tag}\n")
    return "".join(lines)


def format_qrels(qrels: Mapping[str, Mapping[str, int] | Iterable[str]]) -> str:
    """TREC qrels text for query id -> {path: relevance} (or an iterable of relevant paths, relevance 1)."""
    lines = []
    for qid, judged in qrels.items():
        _check_qid(qid)
        items = judged.items() if isinstance(judged, Mapping) else ((p, 1) for p in judged)
        for path, rel in items:
            lines.append(f"{qid} 0 {encode_docno(path)} {int(rel)}\n")
    return "".join(lines)


def write_run(path: str | Path, rankings: Mapping[str, Sequence[str]], tag: str) -> None:
    """Write `format_run(rankings, tag)` to `path` atomically."""
    write_text_atomic(path, format_run(rankings, tag))


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int] | Iterable[str]]) -> None:
    """Write `format_qrels(qrels)` to `path` atomically."""
    write_text_atomic(path, format_qrels(qrels))


def _lines(path: str | Path) -> Iterable[tuple[int, list[str]]]:
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text (a TREC file is plain text)") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield lineno, line.split()


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Query id -> {path: relevance}, in file order; a malformed line is a UserError naming it."""
    out: dict[str, dict[str, int]] = {}
    for lineno, cols in _lines(path):
        if len(cols) != 4:
            raise UserError(f"{path}:{lineno}: a qrels line reads `QID 0 DOCNO RELEVANCE` (4 columns), "
                            f"found {len(cols)}")
        try:
            rel = int(cols[3])
        except ValueError:
            raise UserError(f"{path}:{lineno}: relevance must be an integer, found {cols[3]!r}") from None
        out.setdefault(cols[0], {})[decode_docno(cols[2])] = rel
    return out


def read_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """Query id -> [(path, score)], ordered as trec_eval orders them: score descending, ties by DOCNO in
    reverse byte order (the RANK column is ignored, as trec_eval ignores it). A path listed twice for one
    query is a UserError (trec_eval would count it twice)."""
    raw: dict[str, dict[str, tuple[float, str]]] = {}
    for lineno, cols in _lines(path):
        if len(cols) != 6:
            raise UserError(f"{path}:{lineno}: a run line reads `QID Q0 DOCNO RANK SCORE TAG` (6 columns), "
                            f"found {len(cols)}")
        try:
            score = float(cols[4])
        except ValueError:
            raise UserError(f"{path}:{lineno}: score must be a number, found {cols[4]!r}") from None
        if not math.isfinite(score):
            raise UserError(f"{path}:{lineno}: score must be finite, found {cols[4]!r}")
        docs = raw.setdefault(cols[0], {})
        doc = decode_docno(cols[2])
        if doc in docs:
            raise UserError(f"{path}:{lineno}: {doc!r} is listed twice for query {cols[0]!r}")
        docs[doc] = (score, cols[2])
    out = {}
    for qid, docs in raw.items():
        # Two stable sorts: DOCNO descending first, then score descending, as trec_eval's comparator.
        items = sorted(docs.items(), key=lambda kv: kv[1][1].encode("utf-8"), reverse=True)
        items.sort(key=lambda kv: -kv[1][0])
        out[qid] = [(doc, score) for doc, (score, _) in items]
    return out
