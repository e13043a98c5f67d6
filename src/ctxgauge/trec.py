"""TREC run and qrels files, so trec_eval, ir_measures or ranx can score what ctxgauge ranked, and
ctxgauge can score what they (or anything else) ranked.

    run:    QID Q0 DOCNO RANK SCORE TAG      one line per ranked file, best first
    qrels:  QID 0 DOCNO RELEVANCE            one line per judged file (relevance > 0: relevant)

Columns are separated by whitespace, so a QID (a case name, a commit id, an instance id) and a DOCNO (a file
path) are written with `%` and every Unicode whitespace character percent-encoded as UTF-8 (`my file.py` ->
`my%20file.py`, a no-break space -> `%C2%A0`, U+2028 -> `%E2%80%A8`) and decoded on reading, so ctxgauge reads
back exactly what it wrote. Reading splits lines and columns on all Unicode whitespace (str.splitlines and
str.split); only the escapes the writer makes are decoded, a foreign `%41` stays as it is.

trec_eval ignores the RANK column and re-sorts each query's lines by SCORE (descending, ties broken by
DOCNO in *reverse* byte order). `write_run` therefore writes scores that strictly decrease with rank
(the rank-derived `n - rank + 1`, n the ranking's length), so every tool reads back exactly our order; the
engines' own scores stay in the run record. `read_run` orders lines the way trec_eval does.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ctxgauge._io import write_text_atomic
from ctxgauge.errors import UserError

def _needs_escape(ch: str) -> bool:
    # `%` (the escape itself), and every character Python's str.split() or str.splitlines() breaks on: ASCII
    # whitespace, U+001C-001F, U+0085, U+00A0, U+1680, U+2000-200A, U+2028/2029, U+202F, U+205F, U+3000.
    # trec_eval and ir_measures split on ASCII whitespace only; we split on all of it when reading.
    return ch == "%" or ch.isspace()


def _encode(text: str) -> str:
    if not any(_needs_escape(ch) for ch in text):
        return text
    return "".join("".join(f"%{b:02X}" for b in ch.encode("utf-8")) if _needs_escape(ch) else ch for ch in text)


_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _decode(text: str) -> str:
    if "%" not in text:
        return text

    def one(m: re.Match) -> str:
        # Only what `_encode` writes is decoded: a run of escapes that is UTF-8 for characters it escapes. A
        # `%41` another tool wrote stays `%41`, as it always did.
        raw = m.group(0)
        try:
            chars = bytes.fromhex(raw.replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return raw
        return chars if all(_needs_escape(ch) for ch in chars) else "".join(
            _decode_run(raw[i:i + 3]) for i in range(0, len(raw), 3))

    return _ESCAPES.sub(one, text)


def _decode_run(code: str) -> str:
    ch = chr(int(code[1:], 16))
    return ch if ch.isascii() and _needs_escape(ch) else code


def encode_docno(path: str) -> str:
    """A path (or a query id) as a whitespace-free TREC column: `%` and every Unicode whitespace character
    percent-encoded as UTF-8 bytes (`my file.py` -> `my%20file.py`, U+00A0 -> `%C2%A0`, U+2028 -> `%E2%80%A8`)."""
    return _encode(path)


def decode_docno(docno: str) -> str:
    """The path an `encode_docno` column stands for; other `%xx` sequences are left as they are."""
    return _decode(docno)


def _check_qid(qid: str) -> str:
    if not qid:
        raise ValueError("a query id must be non-empty")
    return encode_docno(qid)


def format_run(rankings: Mapping[str, Sequence[str]], tag: str) -> str:
    """TREC run text for query id -> ranked paths (best first), scores strictly decreasing with rank."""
    tag = "".join("_" if ch.isspace() else ch for ch in tag) or "ctxgauge"
    lines = []
    for qid, ranking in rankings.items():
        q = _check_qid(qid)
        n = len(ranking)
        for rank, path in enumerate(ranking, start=1):
            lines.append(f"{q} Q0 {encode_docno(path)} {rank} {n - rank + 1} {tag}\n")
    return "".join(lines)


def format_qrels(qrels: Mapping[str, Mapping[str, int] | Iterable[str]]) -> str:
    """TREC qrels text for query id -> {path: relevance} (or an iterable of relevant paths, relevance 1)."""
    lines = []
    for qid, judged in qrels.items():
        q = _check_qid(qid)
        items = judged.items() if isinstance(judged, Mapping) else ((p, 1) for p in judged)
        for path, rel in items:
            lines.append(f"{q} 0 {encode_docno(path)} {int(rel)}\n")
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
        out.setdefault(decode_docno(cols[0]), {})[decode_docno(cols[2])] = rel
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
        docs = raw.setdefault(decode_docno(cols[0]), {})
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
