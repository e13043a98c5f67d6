"""The Python API behind `ctxgauge query`: build one engine over one source and rank files for one request."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.corpus import open_corpus
from ctxgauge.engines._guards import call_engine, checked_hits
from ctxgauge.engines._registry import engine_available, get_engine
from ctxgauge.errors import UserError

INDEX_MARK = ".ctxgauge-index"
"""Written into a kept index directory after a build: a later `query --index-dir` may build there again (an
engine may clear its own out_dir), but never into a folder of someone else's files."""


def _claim(out: Path) -> None:
    """Refuse an out_dir that holds files ctxgauge did not write: building there could replace or delete them."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--index-dir {out}: is a file; name a new or empty directory")
    if out.is_dir() and any(out.iterdir()) and not (out / INDEX_MARK).is_file():
        raise UserError(f"--index-dir {out}: not empty and not an index ctxgauge built; name a new or empty "
                        "directory (or one an earlier `ctxgauge query --index-dir` built)")


def run_query(source: str | Path, text: str, *, engine: str = "bm25", k: int = 10, rev: str | None = None,
              out_dir: str | Path) -> dict:
    """Build `engine` over `source` into `out_dir` and rank files for `text`. Returns the `--json` shape:
    `{engine, identity, corpus: summary, source (the SOURCE line), request, k, hits: [{path, score}]}`."""
    if k < 1:
        raise UserError(f"-k must be at least 1 (how many files to return), got {k}")
    corpus = open_corpus(source, rev)
    eng = get_engine(engine)
    ok, why = engine_available(eng)
    if not ok:
        raise UserError(f"engine {eng.name} is not available here: {why}")
    out = Path(out_dir)
    _claim(out)
    corpus.require_files()  # after the spec and the out dir: a typo there is the first thing to mend
    out.mkdir(parents=True, exist_ok=True)
    try:
        call_engine("build", eng, eng.build, corpus, out)
        (out / INDEX_MARK).write_text(f"{eng.name}\n", encoding="utf-8")
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
        "source": corpus.source_line(),
        "request": text,
        "k": k,
        "hits": [h.to_dict() for h in hits],
    }
