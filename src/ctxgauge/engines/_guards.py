"""Guards around every engine call: a crashing engine fails its unit, and hits that break the contract are
refused with the rule they broke, and an identity that cannot be had is a failure to record, not a crash
(used by every suite, `ctxgauge query` and the contract checker); and the one way a suite asks an engine to
keep an index in memory instead of writing its artifact (`ask_defer_writes`)."""

from __future__ import annotations

from typing import Sequence

from ctxgauge.corpus import Corpus
from ctxgauge.engines._base import Hit
from ctxgauge.engines._spans import check_spans, line_count
from ctxgauge.errors import EngineError, UserError

SHOWN_CHARS = 200
"""How much of an engine's path or message a failure reason quotes: a 60 MB path from a broken engine must
not become a 60 MB reason in every record that names it."""


def cut(text: str, limit: int = 2000) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def shown(path: str) -> str:
    """A path quoted for a failure reason, cut to SHOWN_CHARS."""
    return cut(repr(path), SHOWN_CHARS)


def checked_hits(hits: Sequence[Hit], corpus: Corpus | None, k: int, engine_name: str) -> list[Hit]:
    """The engine's hits if they keep the contract (at most k, unique, relative paths in the corpus,
    numeric scores, best first, spans by the rules of `engines/_spans.py`, in range of the file at the
    corpus revision); otherwise EngineError saying which rule broke."""
    out = list(hits)
    if len(out) > k:
        raise EngineError(f"{engine_name} returned {len(out)} hits for k={k}")
    seen = set()
    for h in out:
        if not isinstance(h.score, (int, float)) or h.score != h.score:
            raise EngineError(f"{engine_name} returned a non-numeric score for {shown(h.path)}")
        if h.path in seen:
            raise EngineError(f"{engine_name} returned {shown(h.path)} twice")
        seen.add(h.path)
        if corpus is not None and h.path not in corpus:
            raise EngineError(f"{engine_name} returned {shown(h.path)}, which is not a file of the corpus")
    for a, b in zip(out, out[1:]):
        if b.score > a.score:
            raise EngineError(f"{engine_name} returned hits out of order ({shown(a.path)} before {shown(b.path)})")
    for h in out:
        spans = getattr(h, "spans", ())
        if spans:  # a file-only hit reads nothing more
            n_lines = line_count(corpus.read(h.path)) if corpus is not None else None
            check_spans(spans, f"{engine_name} hit {shown(h.path)}", n_lines)
    return out


def query_notes(engine) -> dict | None:
    """How the engine read its last answer, for the unit that asked it: the optional `query_notes()` of an
    engine that reads someone else's answer (an MCP server's: how it was read, whether it was cut to k,
    lines not understood, scores given or derived from rank), as a JSON object; None when the engine has no
    notes (every file-only built-in: their units stay as they were). Notes never fail a unit: a method that
    raises, or answers anything but a JSON object of plain values, gives None."""
    notes = getattr(engine, "query_notes", None)
    if not callable(notes):
        return None
    try:
        got = notes()
    except Exception:
        return None
    if not isinstance(got, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, (str, int, float, bool))) for k, v in got.items()):
        return None
    return dict(sorted(got.items()))


def call_engine(what: str, engine, fn, *args):
    """Run one engine operation; anything but a user error becomes an EngineError naming the engine."""
    try:
        return fn(*args)
    except (UserError, EngineError):
        raise
    except Exception as exc:  # a crashing engine fails the unit, not ctxgauge
        raise EngineError(f"{engine.name} {what} failed: {type(exc).__name__}: {cut(str(exc))}") from exc


def ask_identity(engine) -> tuple[dict | None, EngineError | None]:
    """`(identity, None)`, or `(None, error)` when the engine's identity request failed (a command engine that
    exits at once, crashes on `identity` or never answers). The suites record the run and fail every unit
    that engine would have served with the error, instead of ending without a record."""
    try:
        return call_engine("identity", engine, engine.identity), None
    except EngineError as exc:
        return None, exc


def ask_defer_writes(engine, out_dir) -> bool:
    """Ask `engine` to keep its builds and updates into `out_dir` in memory, its artifact unwritten
    (`Engine.defer_writes`); True when it does. Only a caller that queries the index and never reads the
    artifact's bytes asks (replay, cases): every artifact that is hashed or fingerprinted is written by a
    plain build or update. An engine without the method, or whose method fails, writes as before: deferring
    is never needed for a result, so its failure is no engine failure."""
    defer = getattr(engine, "defer_writes", None)
    if not callable(defer):
        return False
    try:
        return bool(defer(out_dir))
    except Exception:
        return False


def refuse_own_tree(engine, suite: str) -> None:
    """UserError when `engine` serves a tree of its own instead of the corpus it is given (an MCP server
    ctxgauge did not start, not told what to index: `serves_own_tree`). Replay and determinism measure
    the corpus at each revision; such a server would be measured on whatever it happens to hold."""
    if getattr(engine, "serves_own_tree", False):
        raise UserError(f"{suite} cannot measure {engine.name}: a server ctxgauge did not start (url= without "
                        "cmd=) serves whatever tree it holds, not the revision measured; give cmd= to start it "
                        "here, or index_tool= a tool that takes {corpus}")
