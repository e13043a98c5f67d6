"""The Python API behind `ctxgauge query`: build one engine over one source and rank files for one request."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.corpora import open_corpus
from ctxgauge.engines._guards import call_engine, checked_hits
from ctxgauge.engines._registry import engine_available, get_engine
from ctxgauge.errors import UserError


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
