"""Guards around every engine call: a crashing engine fails its unit, and hits that break the contract are
refused with the rule they broke (used by every suite, `ctxgauge query` and the contract checker)."""

from __future__ import annotations

from typing import Sequence

from ctxgauge.corpora import Corpus
from ctxgauge.engines._base import Hit
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
