"""Per-query latency of one engine (bm25) three ways, in one run: in-process, through `command(...)` (a
JSON-lines shim) and through `mcp(...)` (tests/engines/mcp/servers/bm25_server.py over stdio).

    PYTHONPATH=src python benchmarks/mcp_overhead.py [--queries 60]

The requests are the bundled sample's recent commit subjects, each asked once per way after a warm-up
query; builds are not timed. Prints the median and 90th percentile per way and the overhead against
in-process. The three rankings are checked equal first: the overhead is of the same answers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.git import Repo
from ctxgauge.sample import materialize_sample
from ctxgauge.suites._requests import recent_requests

ROOT = Path(__file__).resolve().parents[1]
SHIM = '''
import json, sys
from ctxgauge.engines import get_engine
from ctxgauge.corpus import Corpus
engine = get_engine("bm25")
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "identity":
        answer = {"identity": engine.identity()}
    elif req["op"] == "build":
        engine.build(Corpus.from_directory(req["corpus"]), req["out"]); answer = {}
    else:
        answer = {"hits": [h.to_dict() for h in engine.query(req["out"], req["text"], req["k"])]}
    print(json.dumps({"ok": True, **answer}), flush=True)
'''


def timed(engine, out: Path, queries: list[str], k: int) -> tuple[list[float], list[list[tuple[str, float]]]]:
    engine.query(out, queries[0], k)  # warm-up
    seconds, answers = [], []
    for q in queries:
        t = time.perf_counter()
        hits = engine.query(out, q, k)
        seconds.append(time.perf_counter() - t)
        answers.append([(h.path, h.score) for h in hits])
    return seconds, answers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-overhead-") as tmp:
        tmp = Path(tmp)
        repo = Repo(materialize_sample(tmp / "shelfd"))
        corpus = Corpus.from_git(repo, "HEAD")
        queries = recent_requests(corpus, args.queries)
        (tmp / "shim.py").write_text(SHIM)
        ways = {
            "in-process": "bm25",
            "command(...)": f'command(cmd="{sys.executable} {tmp / "shim.py"}")',
            "mcp(...)": f'mcp(cmd="{sys.executable} {ROOT / "tests/engines/mcp/servers/bm25_server.py"}",tool="search")',
        }
        results = {}
        for label, spec in ways.items():
            engine = get_engine(spec)
            out = tmp / f"out-{len(results)}"
            out.mkdir()
            try:
                engine.build(corpus, out)
                results[label] = timed(engine, out, queries, args.k)
            finally:
                getattr(engine, "close", lambda: None)()
        repo.close()
    answers = [a for _, a in results.values()]
    assert all(a == answers[0] for a in answers), "the three ways ranked differently"
    base = statistics.median(results["in-process"][0])
    print(f"{len(queries)} queries, k={args.k}, bundled sample; same rankings all three ways")
    print(f"{'way':<14}{'median ms':>11}{'p90 ms':>9}{'x in-process':>14}")
    for label, (seconds, _) in results.items():
        med = statistics.median(seconds)
        p90 = statistics.quantiles(seconds, n=10)[-1]
        print(f"{label:<14}{med * 1e3:>11.2f}{p90 * 1e3:>9.2f}{med / base:>14.1f}")


if __name__ == "__main__":
    main()
