"""The main job on the bundled sample: what `make demo` and `ctxgauge demo` run."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ctxgauge.api import call_engine, checked_hits
from ctxgauge.corpora import Corpus
from ctxgauge.engines import REFERENCE_ENGINES, engine_available, get_engine
from ctxgauge.errors import EngineError, UserError
from ctxgauge.git import Repo
from ctxgauge.sample import materialize_sample
from ctxgauge.suites._requests import recent_requests


def run_demo(*, engines: list[str] | None = None, n_queries: int = 6, k: int = 5, progress: bool = True) -> dict:
    """Build every engine on the sample's HEAD and rank files for its most recent commit subjects."""
    from rich.progress import Progress

    specs = list(engines or REFERENCE_ENGINES)
    with tempfile.TemporaryDirectory(prefix="ctxgauge-demo-") as tmp:
        repo = Repo(materialize_sample(Path(tmp) / "shelfd"))
        corpus = Corpus.from_git(repo, "HEAD")
        requests = recent_requests(corpus, n_queries)
        rows = []
        with Progress(disable=not progress, transient=True) as bar:
            task = bar.add_task("engines", total=len(specs))
            for spec in specs:
                row = {"engine": spec, "available": True, "reason": None, "build_seconds": None,
                       "identity": None, "error": None, "results": []}
                try:
                    eng = get_engine(spec)
                except UserError as exc:  # an engine whose module or extra is missing is skipped, not fatal
                    row.update(available=False, reason=str(exc))
                    rows.append(row)
                    bar.advance(task)
                    continue
                row["engine"] = eng.name
                bar.update(task, description=f"building {eng.name}")
                ok, why = engine_available(eng)
                if not ok:
                    row.update(available=False, reason=why)
                    rows.append(row)
                    bar.advance(task)
                    continue
                out = Path(tmp) / "index" / spec.replace("/", "_")
                out.mkdir(parents=True)
                try:
                    t0 = time.perf_counter()
                    call_engine("build", eng, eng.build, corpus, out)
                    row["build_seconds"] = time.perf_counter() - t0
                    for req in requests:
                        hits = checked_hits(call_engine("query", eng, eng.query, out, req, k), corpus, k, eng.name)
                        row["results"].append({"request": req, "hits": [h.to_dict() for h in hits]})
                    row["identity"] = eng.identity()
                except EngineError as exc:
                    row["error"] = str(exc)
                finally:
                    getattr(eng, "close", lambda: None)()
                rows.append(row)
                bar.advance(task)
        repo.close()
    return {"corpus": corpus.summary(), "requests": requests, "k": k, "engines": rows}
