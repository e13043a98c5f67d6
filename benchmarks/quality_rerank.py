"""Would a learned reranker beat fusion's weighted sum? LambdaRank (LightGBM) over fusion's components, left
one tune repository out.

    pip install lightgbm                                           # not a ctxgauge dependency
    python benchmarks/quality_tune.py --mirror /work/.mirror --no-swe                  # records @50
    python benchmarks/quality_tune.py --mirror /work/.mirror --no-swe --commits 200    # optional: more rows
    python benchmarks/quality_rerank.py [--train-commits 200]

Reads the components `quality_tune.py` recorded for the TUNE half's replayed subjects (its cache file; the
report half is never read). For each tune repository in turn, a LambdaRank model is trained on the other
repositories' requests (`--train-commits`: the rows recorded with that many commits, default the same 50)
and reranks the held-out repository's 50 newest subjects: the top `--candidates` files of fusion's own
ranking, each described by fusion's score and rank, every component's score and rank within the component,
its path kind, depth, how many of its file-name and folder words the request holds, and the request's
length. Printed per repository and pooled: fusion's defaults (tuned on all five, so in-sample) and the
reranker held out, hit@5 and MRR as `quality_tune.hit5_mrr` computes them.

Measured at stop 30 (main a1c353d, lightgbm 4.7.0, 50 commits each of the five tune repositories): fusion
.820 / .665 in-sample; the reranker held out .824 / .654 (100 trees, 7 leaves), .796 / .610 (200 trees, 15
leaves); trained on 200 commits of the four other repositories (pydantic not recorded), .790 / .643 to
.790 / .649 against fusion's .810 / .648 on the same four. Left-one-out of the weighted sum's own grid
search gave .804 / .644 (stop 27): the reranker is no better, so fusion stays a weighted sum.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from quality_tune import fused, hit5_mrr  # noqa: E402

KINDS = ("test", "generated", "docs", "ci", "locale", "manifest")
PARAMS = {
    "small": {"n_estimators": 100, "learning_rate": 0.05, "num_leaves": 7, "min_child_samples": 20},
    "medium": {"n_estimators": 200, "learning_rate": 0.05, "num_leaves": 15, "min_child_samples": 20},
    "regularised": {"n_estimators": 500, "learning_rate": 0.02, "num_leaves": 7, "min_child_samples": 50,
                    "reg_lambda": 5.0},
}


def features(row: dict, candidates: int):
    """fusion's ranking of `row` (top 100), its top `candidates`, their feature rows and labels."""
    import numpy as np

    import ctxgauge.engines._text.path_kinds as pk
    from ctxgauge.engines._text.tokens import code_tokens
    from ctxgauge.engines.fusion._engine import COMPONENTS, FusionEngine

    comp, request = row["comp"], row["request"]
    total, order = fused(row, FusionEngine.defaults)
    cand = order[:candidates]
    top = total[order[0]] if order else 1.0
    ranks = {n: {f: i for i, (f, _) in enumerate(sorted(comp.get(n, {}).items(), key=lambda x: (-x[1], x[0])))}
             for n in COMPONENTS}
    words = {t.lower() for t in code_tokens(request)}
    rows = []
    for i, f in enumerate(cand):
        x = [total[f] / top, 1.0 / (1 + i), math.log1p(i)]
        for n in COMPONENTS:
            rk = ranks[n].get(f)
            x += [comp.get(n, {}).get(f, 0.0), 0.0 if rk is None else 1.0 / (1 + rk)]
        kind = pk.path_kind(f)
        x += [1.0 if kind == k else 0.0 for k in KINDS]
        folder, _, name = f.rpartition("/")
        stem = {t.lower() for t in code_tokens(name.rsplit(".", 1)[0])}
        dirs = {t.lower() for t in code_tokens(folder)}
        x += [float(f.count("/")), len(stem & words) / len(stem) if stem else 0.0,
              len(dirs & words) / len(dirs) if dirs else 0.0, math.log1p(len(request.split())),
              float(sum(1 for n in COMPONENTS if comp.get(n, {}).get(f)))]
        rows.append(x)
    relevant = set(row["relevant"])
    return order, cand, np.array(rows, dtype=float).reshape(len(cand), -1), np.array([f in relevant for f in cand])


def train(prepared: list, params: dict):
    import lightgbm as lgb
    import numpy as np

    use = [(x, y) for _, cand, x, y in prepared if len(cand) and y.any()]
    model = lgb.LGBMRanker(objective="lambdarank", deterministic=True, num_threads=1, seed=0, verbose=-1,
                           force_row_wise=True, **params)
    model.fit(np.vstack([x for x, _ in use]), np.concatenate([y for _, y in use]).astype(int),
              group=[len(y) for _, y in use])
    return model


def rerank(model, prepared: list) -> list[list[str]]:
    out = []
    for order, cand, x, _ in prepared:
        if not cand:
            out.append(order)
            continue
        s = model.predict(x)
        out.append([cand[i] for i in sorted(range(len(cand)), key=lambda i: (-s[i], i))] + order[len(cand):])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=HERE / ".quality-out" / "tune-components.json",
                    help="quality_tune.py's recorded components")
    ap.add_argument("--commits", type=int, default=50, help="held-out rows: those recorded with this many commits")
    ap.add_argument("--train-commits", type=int, default=None, help="training rows (default: --commits)")
    ap.add_argument("--candidates", type=int, default=50, help="top files of fusion's ranking reranked")
    ap.add_argument("--params", choices=sorted(PARAMS), action="append", help="LightGBM settings (repeatable)")
    args = ap.parse_args()
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        print("quality_rerank needs lightgbm (pip install lightgbm)", file=sys.stderr)
        return 2
    if not args.cache.is_file():
        print(f"no recorded components at {args.cache}: run benchmarks/quality_tune.py first", file=sys.stderr)
        return 2
    data = json.loads(args.cache.read_text())
    split = json.loads((HERE / "quality_split.json").read_text())
    tune = split["replay"]["tune"]  # only the tune half is ever read
    held = {r: data[f"{r}@{args.commits}"] for r in tune if f"{r}@{args.commits}" in data}
    train_n = args.train_commits or args.commits
    trains = {r: data[f"{r}@{train_n}"] for r in tune if f"{r}@{train_n}" in data}
    repos = [r for r in held if r in trains]
    if len(repos) < 2:
        print("fewer than two tune repositories recorded: nothing to hold out", file=sys.stderr)
        return 7
    prep_held = {r: [features(x, args.candidates) for x in held[r]] for r in repos}
    # The same rows (the default) are described once.
    prep_train = prep_held if train_n == args.commits else {
        r: [features(x, args.candidates) for x in trains[r]] for r in repos}
    base = {r: hit5_mrr([p[0] for p in prep_held[r]], held[r]) for r in repos}
    rows_all = [x for r in repos for x in held[r]]
    print(f"fusion defaults (in-sample), {len(rows_all)} subjects: hit@5 %.3f MRR %.3f"
          % hit5_mrr([p[0] for r in repos for p in prep_held[r]], rows_all))
    for name in args.params or ["small", "medium", "regularised"]:
        orders: list[list[str]] = []
        for r in repos:
            model = train([p for o in repos if o != r for p in prep_train[o]], PARAMS[name])
            got = rerank(model, prep_held[r])
            orders += got
            print(f"  {name:12s} {r:24s} fusion %.3f %.3f  reranker held out %.3f %.3f" % (*base[r], *hit5_mrr(got, held[r])))
        print(f"{name}: reranker left one repository out, pooled: hit@5 %.3f MRR %.3f" % hit5_mrr(orders, rows_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
