"""Choose the graph engine's query parameters on the TUNE half of `quality_split.json` only.

    python benchmarks/quality.py --mirror /work/.mirror --half tune --engines bm25 --commits 30 --no-swebench --out OUT
    python benchmarks/graph_tune.py --mirror /work/.mirror --out OUT \
        --grid '{"content_weight": [0.5, 1, 1.5], "text_weight": [1, 1.5], "graph_weight": [0.1, 0.2, 0.3]}'

Takes the commits (request, expected files) that `quality.py` scored for bm25 on each tune repository, so
both engines are judged on the same requests, and for each commit brings one graph engine to the parent
tree (a build, then updates from commit to commit); every configuration of the grid then queries that same
artifact (only query parameters may vary: k1, b, content_weight, text_weight, damping, forward, backward,
graph_weight, degree_exponent; build parameters go in `--build`). Ranks are read at depth 100, as replay
does. Prints every configuration's pooled hit@1/5/10 and MRR and per-repository hit@5, best first (pooled
hit@5, then MRR). The report half is never read.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from quality import SPLIT, _slug, find_clone  # noqa: E402

QUERY_PARAMS = {"k1", "b", "content_weight", "text_weight", "damping", "forward", "backward", "graph_weight",
                "degree_exponent", "iterations", "tolerance"}


def figures(ranks: list[int | None]) -> dict:
    n = len(ranks)
    hit = lambda k: sum(1 for r in ranks if r is not None and r <= k) / n  # noqa: E731
    return {"n": n, "hit@1": hit(1), "hit@5": hit(5), "hit@10": hit(10),
            "mrr": sum(1 / r for r in ranks if r is not None) / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=None, help="directory holding clones (owner+name/repo, ...)")
    ap.add_argument("--paths", type=Path, default=None, help='JSON {"owner/name": "/local/clone"}')
    ap.add_argument("--out", type=Path, required=True, help="quality.py's --out holding the bm25 tune records")
    ap.add_argument("--grid", default="{}", help="JSON: query parameter -> list of values")
    ap.add_argument("--build", default="{}", help="JSON: build parameters fixed for the whole grid")
    args = ap.parse_args(argv)
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines.graph import GraphEngine
    from ctxgauge.git import Repo

    grid, build = json.loads(args.grid), json.loads(args.build)
    if set(grid) - QUERY_PARAMS:
        print(f"not query parameters: {sorted(set(grid) - QUERY_PARAMS)} (put build parameters in --build)",
              file=sys.stderr)
        return 2
    keys = sorted(grid)
    configs = [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]
    ranks: dict[int, dict[str, list]] = {i: {} for i in range(len(configs))}
    paths = json.loads(args.paths.read_text()) if args.paths else {}
    for name in json.loads(SPLIT.read_text())["replay"]["tune"]:
        clone = find_clone(name, paths, args.mirror)
        record = args.out / _slug(name) / "bm25.json"
        if clone is None or not record.is_file():
            print(f"{name}: no clone or no bm25 record, skipped", file=sys.stderr)
            continue
        units = [u for u in json.loads(record.read_text())["units"] if (u.get("figures") or {}).get("mrr") is not None]
        repo = Repo(clone)
        base = GraphEngine(**build)
        engines = [GraphEngine(**build, **c) for c in configs]
        with tempfile.TemporaryDirectory(prefix="graph-tune-") as tmp:
            out, previous = Path(tmp), None
            for u in units:
                parent = repo.run_bytes(["rev-parse", u["id"] + "^"]).decode().strip()
                corpus = previous.at(parent) if previous is not None else Corpus.from_git(repo, parent)
                if previous is None:
                    base.build(corpus, out)
                else:
                    base.update(out, corpus, previous.changes_to(corpus))
                previous = corpus
                relevant = {p for p in u["expected"] if p in corpus}
                for i, eng in enumerate(engines):
                    eng._loaded = base._loaded  # the one artifact every configuration queries
                    top = [h.path for h in eng.query(out, u["request"], 100)]
                    ranks[i].setdefault(name, []).append(next((j + 1 for j, p in enumerate(top) if p in relevant), None))
        shutil.rmtree(out, ignore_errors=True)
        repo.close()
        print(f"{name}: {len(units)} commits", file=sys.stderr, flush=True)
    rows = [(figures([r for rs in ranks[i].values() for r in rs]), i) for i in ranks if ranks[i]]
    rows.sort(key=lambda x: (-x[0]["hit@5"], -x[0]["mrr"], x[1]))
    for f, i in rows:
        per = " ".join(f"{repo.split('/')[1]} {figures(rs)['hit@5']:.2f}" for repo, rs in ranks[i].items())
        print(f"{json.dumps(configs[i], sort_keys=True)}  hit@5 {f['hit@5']:.3f} mrr {f['mrr']:.3f} "
              f"hit@1 {f['hit@1']:.3f} hit@10 {f['hit@10']:.3f} n {f['n']}  | {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
