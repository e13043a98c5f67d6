"""The Python API behind the CLI's single-shot commands (`query`); suites have their own modules."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ctxgauge.corpora import Corpus, open_corpus
from ctxgauge.engines import Hit, engine_available, get_engine
from ctxgauge.errors import EngineError, UserError


def checked_hits(hits: Sequence[Hit], corpus: Corpus | None, k: int, engine_name: str) -> list[Hit]:
    """The engine's hits if they keep the contract (at most k, unique, relative paths in the corpus,
    numeric scores, best first); otherwise EngineError saying which rule broke."""
    out = list(hits)
    if len(out) > k:
        raise EngineError(f"{engine_name} returned {len(out)} hits for k={k}")
    seen = set()
    for h in out:
        if not isinstance(h.score, (int, float)) or h.score != h.score:
            raise EngineError(f"{engine_name} returned a non-numeric score for {h.path!r}")
        if h.path in seen:
            raise EngineError(f"{engine_name} returned {h.path!r} twice")
        seen.add(h.path)
        if corpus is not None and h.path not in corpus:
            raise EngineError(f"{engine_name} returned {h.path!r}, which is not a file of the corpus")
    for a, b in zip(out, out[1:]):
        if b.score > a.score:
            raise EngineError(f"{engine_name} returned hits out of order ({a.path!r} before {b.path!r})")
    return out


def call_engine(what: str, engine, fn, *args):
    """Run one engine operation; anything but a user error becomes an EngineError naming the engine."""
    try:
        return fn(*args)
    except (UserError, EngineError):
        raise
    except Exception as exc:  # a crashing engine fails the unit, not ctxgauge
        raise EngineError(f"{engine.name} {what} failed: {type(exc).__name__}: {exc}") from exc


def run_query(source: str | Path, text: str, *, engine: str = "bm25", k: int = 10, rev: str | None = None,
              out_dir: str | Path) -> dict:
    """Build `engine` over `source` into `out_dir` and rank files for `text`. Returns the `--json` shape:
    `{engine, identity, corpus: summary, request, k, hits: [{path, score}]}`."""
    corpus = open_corpus(source, rev)
    eng = get_engine(engine)
    ok, why = engine_available(eng)
    if not ok:
        raise UserError(f"engine {eng.name} is not available here: {why}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        call_engine("build", eng, eng.build, corpus, out)
        hits = checked_hits(call_engine("query", eng, eng.query, out, text, k), corpus, k, eng.name)
        identity = eng.identity()
    finally:
        close = getattr(eng, "close", None)
        if callable(close):
            close()
    return {
        "engine": eng.name,
        "identity": identity,
        "corpus": corpus.summary(),
        "request": text,
        "k": k,
        "hits": [h.to_dict() for h in hits],
    }
