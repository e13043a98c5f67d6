"""The within-file span ranker every built-in engine shares: which lines of a ranked file to hand over.

An engine ranks files first; spans are chosen afterwards, per hit, so a ranking of files is the same with
spans on or off (`spans=false` is the whole files of before). For one file and one request:

- terms: the request's `code_tokens` (identifier parts and joined identifiers, lowercase, in first-seen
  order, each once);
- occurrences: every place a term occurs in the file's lowercased text as a substring (so `round` finds
  `rounding`, as grep would), each counted on the line it starts on;
- candidates: fixed windows of `span_lines` lines starting at lines 1, 1 + s, 1 + 2s, ... (s = half a
  window, at least 1) until a window reaches the last line; or, when the engine gives units (graph's
  tree-sitter definitions), those units, a unit longer than `span_lines` replaced by the windows inside it;
- a term's weight in a file: its rarity there, round(1000 · ln(1 + n / m)) for a file of n lines of which
  m hold the term (a word on every line weighs ln 2, one on a single line of 1,000 weighs ln 1001), so a
  window holding the request's rare words beats one holding only its everyday ones;
- a candidate's score: (the summed weights of the distinct terms it holds, occurrences it holds);
  candidates are taken best first, ties by earlier start line, then earlier end line, skipping any that
  shares a line with one taken, until `max_spans` are taken; candidates holding no term are never taken;
- a file where no candidate holds a term gets its first window (lines 1 to `span_lines`); an empty file
  is returned whole (no spans).

Weighting by rarity was chosen on the tune half of `benchmarks/quality_split.json` (fusion's rankings of
124 replayed commits, packed at 1,000 and 4,000 tokens): it raised line coverage over counting distinct
words (0.259 -> 0.270 at 1,000, 0.389 -> 0.402 at 4,000), while smaller windows (10-30 lines), more spans
(5, 8), whole small files and merging touching windows did no better; `span_lines` 40 and `max_spans` 3
stay the defaults. Weights are rounded to integers and ties broken explicitly, so the same file and request
give the same spans on every run and machine. The work is per file version: each file's lowercased text and line starts are kept per
blob id, and each answer per (blob id, terms, units, parameters), so a replay reads and indexes each file
version once however many commits rank it (incremental by construction), and a new version of a file costs
only its own reading.

`SpanEngine` is the mixin the built-in engines use: spans need the file bytes at query time and the engine
contract's query gets no corpus, so each build and update keeps the files in the out directory
(`_spans_store`) and the engine object remembers the corpus it came from (the fast path); it turns `query`
into `query_files` (the ranking, unchanged) plus spans, and declares the three parameters. Spans are on by
default; `spans=false` gives whole files (and keeps no text).
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ctxgauge.corpus import Corpus
from ctxgauge.engines._base import Hit
from ctxgauge.engines._spans import MAX_SPANS, Span
from ctxgauge.engines._spec import Param
from ctxgauge.engines._text.tokens import code_tokens
from ctxgauge.errors import EngineError

SPAN_LINES = 40
"""Lines of a window (and the longest unit kept whole)."""
MAX_SPANS_PER_HIT = 3
"""Spans a hit carries at most, by default."""
SPAN_PARAMS: dict[str, Any] = {
    "spans": True,
    "span_lines": Param(SPAN_LINES, ge=1, le=100_000),
    "max_spans": Param(MAX_SPANS_PER_HIT, ge=1, le=MAX_SPANS),
}
"""The parameters every built-in engine takes: `spans` (true, the default: each hit carries its spans;
false: whole files, as before spans), `span_lines` and `max_spans`. They enter each engine's spec, and so its identity; the ranker's code enters it as an import."""

DOC_CACHE = 2048
"""File versions whose lowercased text and line starts are kept (least recently used dropped first)."""
ANSWER_CACHE = 65536
"""(file version, request terms) answers kept."""


class _Doc:
    """One file version as the ranker reads it: its lowercased text, where each line starts, its lines."""

    __slots__ = ("text", "newlines", "n_lines")

    def __init__(self, data: bytes):
        from ctxgauge.metrics._lines import line_count

        # \n is one byte in UTF-8 and one character after decoding and lowercasing, so lines found in the
        # lowered text are the file's lines (split on \n, as the span rules count them).
        self.text = data.decode("utf-8", "replace").lower()
        self.newlines = np.flatnonzero(np.frombuffer(self.text.encode("utf-32-le"), dtype="<u4") == 10)
        self.n_lines = line_count(data)


def windows(first: int, last: int, span_lines: int) -> list[Span]:
    """The fixed windows covering lines first..last: `span_lines` long, starting every half window, the last
    one ending at `last` (one window when the range is no longer than a window)."""
    if last < first:
        return []
    if last - first + 1 <= span_lines:
        return [(first, last)]
    stride = max(1, span_lines // 2)
    out, start = [], first
    while True:
        end = min(start + span_lines - 1, last)
        out.append((start, end))
        if end >= last:
            return out
        start += stride


def candidates(n_lines: int, span_lines: int, units: Sequence[Span] = ()) -> list[Span]:
    """The candidate spans of a file of `n_lines` lines: its windows, or the units given (each cut to the
    file, a long one replaced by its windows), without repeats, in (start, end) order."""
    if not units:
        return windows(1, n_lines, span_lines)
    out: set[Span] = set()
    for s, e in units:
        s, e = max(1, int(s)), min(n_lines, int(e))
        if e >= s:
            out.update(windows(s, e, span_lines))
    return sorted(out) or windows(1, n_lines, span_lines)


def term_weight(n_lines: int, lines_holding: int) -> int:
    """A term's weight in a file of `n_lines` lines, `lines_holding` of which hold it: its rarity there,
    round(1000 · ln(1 + n_lines / lines_holding)), at least 1."""
    return max(1, int(1000 * math.log(1 + n_lines / max(1, lines_holding)) + 0.5))


def choose(doc: _Doc, terms: Sequence[str], span_lines: int, max_spans: int,
           units: Sequence[Span] = ()) -> tuple[Span, ...]:
    """The spans of one file for `terms` (the module docstring's rule)."""
    n = doc.n_lines
    if n == 0:
        return ()
    cands = candidates(n, span_lines, units)
    head = (windows(1, n, span_lines)[0],)
    if not terms:
        return head
    starts = np.fromiter((s for s, _ in cands), dtype=np.int64, count=len(cands))
    ends = np.fromiter((e for _, e in cands), dtype=np.int64, count=len(cands))
    weighted = np.zeros(len(cands), dtype=np.int64)
    occurrences = np.zeros(len(cands), dtype=np.int64)
    for term in terms:
        positions = [m.start() for m in re.finditer(re.escape(term), doc.text)]
        if not positions:
            continue
        lines = np.searchsorted(doc.newlines, np.asarray(positions, dtype=np.int64), side="left") + 1
        per_line = np.bincount(lines, minlength=n + 1)[1:n + 1]
        cum = np.concatenate([[0], np.cumsum(per_line)])
        inside = cum[ends] - cum[starts - 1]
        weighted += (inside > 0) * term_weight(n, int(np.count_nonzero(per_line)))
        occurrences += inside
    order = np.lexsort((ends, starts, -occurrences, -weighted))
    taken: list[Span] = []
    for i in order.tolist():
        if weighted[i] == 0 or len(taken) >= max_spans:
            break
        s, e = cands[i]
        if all(e < a or s > b for a, b in taken):
            taken.append((s, e))
    return tuple(taken) or head


class SpanRanker:
    """`choose` with its per-blob caches (one per engine object: the answers depend on its parameters)."""

    def __init__(self, span_lines: int, max_spans: int):
        self.span_lines, self.max_spans = int(span_lines), int(max_spans)
        self._docs: OrderedDict[str, _Doc] = OrderedDict()
        self._answers: OrderedDict[tuple, tuple[Span, ...]] = OrderedDict()

    def _doc(self, blob: str, read: Callable[[], bytes]) -> _Doc:
        doc = self._docs.get(blob)
        if doc is None:
            doc = self._docs[blob] = _Doc(read())
            if len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)
        else:
            self._docs.move_to_end(blob)
        return doc

    def spans(self, blob: str, read: Callable[[], bytes], terms: tuple[str, ...],
              units: Sequence[Span] = ()) -> tuple[Span, ...]:
        """The spans of the file version `blob` (its bytes from `read()` when not cached) for `terms`."""
        key = (blob, terms, tuple(units))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = choose(self._doc(blob, read), terms, self.span_lines, self.max_spans,
                                                units)
            if len(self._answers) > ANSWER_CACHE:
                self._answers.popitem(last=False)
        return found


def request_terms(text: str) -> tuple[str, ...]:
    """The terms the ranker looks for: the request's code tokens, each once, in first-seen order."""
    return tuple(dict.fromkeys(code_tokens(text)))


HELD_DIRS = 16
"""Out directories whose corpus one engine object remembers (replay and the suites use one or two)."""


class _Held:
    """What one out directory holds, as an engine object knows it: the corpus it built or updated it from
    and the stamp of the span store it wrote then (None: it wrote none)."""

    __slots__ = ("corpus", "stamp")

    def __init__(self, corpus: Corpus, stamp: Any):
        self.corpus, self.stamp = corpus, stamp

    def blob_of(self, path: str) -> str | None:
        f = self.corpus.get(path)
        return None if f is None else f.blob

    def read(self, path: str) -> bytes:
        return self.corpus.read(path)


class SpanEngine:
    """Mixin of the built-in engines: `query` is `query_files` (the engine's ranking of files) plus, with
    `spans` on, each hit's spans from the files the out directory holds.

    An engine calls `hold(out_dir, corpus)` at the end of each build and update, defines `query_files`, and
    may override `units(out_dir, path, blob, read)` (graph: definitions) or `hit_spans` (minilm: chunks).
    With `spans` on, `hold` also writes the out directory's span store (`_spans_store`: each file's bytes by
    content id), so any engine object, in any process, can answer with spans from the index alone; the object
    that built the index reads its corpus instead, as long as the store is the one it wrote (a stamp check:
    another writer's update is read from disk, never answered from a stale corpus).
    A composite engine asks its parts for `query_files`, so parts never compute spans they do not hand over,
    and sets their `span_store` false, so parts write no copies of the text the composite already keeps."""

    params: dict
    span_store: bool = True
    """Whether `hold` writes the span store (a composite's parts: no)."""

    def hold(self, out_dir: Path, corpus: Corpus) -> None:
        """Remember that `out_dir` now holds an index of `corpus` (and, with spans on, store its files)."""
        from ctxgauge.engines import _spans_store

        written = None
        if self.params.get("spans") and self.span_store:
            written = _spans_store.write(out_dir, corpus)
        held = self.__dict__.setdefault("_span_corpora", OrderedDict())
        key = Path(out_dir).resolve()
        held.pop(key, None)
        held[key] = _Held(corpus, written)
        while len(held) > HELD_DIRS:
            held.popitem(last=False)

    def held_files(self, out_dir: Path) -> Any:
        """The files `out_dir` holds: this object's corpus when its store is unchanged since it wrote it (or it
        wrote none), else the span store on disk; EngineError when there is neither."""
        from ctxgauge.engines import _spans_store

        held = self.__dict__.get("_span_corpora", {}).get(Path(out_dir).resolve())
        now = _spans_store.stamp(out_dir)
        if held is not None and (held.stamp is None or held.stamp == now):
            return held
        if now is None:
            raise EngineError(f"{getattr(self, 'name', '?')}: spans need the files of the index in {out_dir}, "
                              "and it keeps none (built with spans=false or by an older ctxgauge); "
                              "build it again, or give spans=false")
        stored = self.__dict__.setdefault("_span_stored", OrderedDict())
        key = (Path(out_dir).resolve(), now)
        found = stored.get(key)
        if found is None:
            found = stored[key] = _spans_store.StoredFiles(out_dir)
            while len(stored) > HELD_DIRS:
                stored.popitem(last=False)
        return found

    def ranker(self) -> SpanRanker:
        r = self.__dict__.get("_span_ranker")
        if r is None:
            r = self.__dict__["_span_ranker"] = SpanRanker(self.params["span_lines"], self.params["max_spans"])
        return r

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        raise NotImplementedError

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        hits = self.query_files(out_dir, text, k)
        if not self.params.get("spans") or not hits:
            return hits
        return self.hit_spans(out_dir, text, hits)

    def units(self, out_dir: Path, path: str, blob: str, read: Callable[[], bytes]) -> Sequence[Span]:
        """Candidate units of one file (empty: fixed windows)."""
        return ()

    def hit_spans(self, out_dir: Path, text: str, hits: list[Hit]) -> list[Hit]:
        """Each hit with its spans from the shared ranker (same path, same score, same order)."""
        files = self.held_files(out_dir)
        ranker, terms = self.ranker(), request_terms(text)
        out = []
        for h in hits:
            blob = files.blob_of(h.path)
            if blob is None:
                raise EngineError(f"{getattr(self, 'name', '?')}: {h.path!r} is not among the files the index "
                                  f"in {out_dir} holds for spans")

            def read(path: str = h.path) -> bytes:
                return files.read(path)

            units = self.units(out_dir, h.path, blob, read)
            out.append(Hit(h.path, h.score, ranker.spans(blob, read, terms, units)))
        return out


def files_of(engine: Any, out_dir: Path, text: str, k: int) -> list[Hit]:
    """A part's ranking of files for a composite engine: `query_files` when it has one (no spans computed
    and thrown away), else its `query` (a plugin)."""
    fn = getattr(engine, "query_files", None)
    return fn(out_dir, text, k) if callable(fn) else engine.query(out_dir, text, k)
