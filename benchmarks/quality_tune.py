"""Choose the fusion engine's weights on the TUNE half of `quality_split.json` only.

    python benchmarks/quality_tune.py --mirror /work/.mirror [--commits 50] [--no-swe | --no-replay] [--jobs 3]

Replays the tune repositories' newest eligible commits (the replay suite's own selection and labels) and
the tune half of SWE-bench Lite, recording every fusion component per request once (`FusionEngine.
components`), then searches the weights by coordinate descent over a fixed grid (three passes, bm25's
weight fixed at 1), objective mean(hit@5) + mean(MRR): the short-request weights and the path multipliers
on the replayed subjects, then the `long_*` weights on the SWE-bench issue texts.
Prints the chosen weights and the objective at each step. The report half is never read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from quality import SPLIT, find_clone, swebench_instances  # noqa: E402

GRID = {
    "graph": (0.0, 0.15, 0.3, 0.5, 0.75, 1.0),
    "vote": (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0),
    "vote_rare": (0.0, 0.25, 0.5, 0.75, 1.0, 1.5),
    "prior": (0.0, 0.05, 0.1, 0.2, 0.3, 0.5),
    "cochange": (0.0, 0.1, 0.2, 0.3, 0.5),
    "mention": (0.0, 0.5, 1.0, 2.0, 4.0),
    "define": (0.0, 0.25, 0.5, 1.0, 2.0),
    "rule": (0.0, 1.0, 2.0, 4.0),
    "literal": (0.0, 0.25, 0.5, 1.0, 2.0, 4.0),
    "title": (0.0, 0.25, 0.5, 1.0, 2.0, 4.0),
    "tests": (0.3, 0.5, 0.7, 0.85, 1.0),
    "generated": (0.1, 0.3, 0.6, 1.0),
    "docs": (0.3, 0.5, 0.7, 0.85, 1.0),
    "manifests": (0.3, 0.5, 0.7, 0.85, 1.0),
    "ci": (0.3, 0.5, 0.7, 0.85, 1.0),
    "locales": (0.3, 0.5, 0.7, 0.85, 1.0),
}
TOP = 300  # entries of each component kept per request (the rest cannot reach a top 100)


def _trim(comp: dict) -> dict:
    return {n: dict(sorted(c.items(), key=lambda x: (-x[1], x[0]))[:TOP]) for n, c in comp.items()}


def replay_components(clone: Path, commits: int) -> list[dict]:
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines.fusion._engine import is_long
    from ctxgauge.suites.replay import ReplayConfig, label, plan

    p = plan(ReplayConfig(repo=clone, engine="fusion", commits=commits))
    eng = p.engines[0]
    out, rows, cache, prev = Path(tempfile.mkdtemp(prefix="tune-")), [], {}, None
    for case in reversed(p.selection.eligible):
        corpus = Corpus.from_git(p.repo, case.parent, binary_cache=cache)
        if prev is None:
            eng.build(corpus, out)
        else:
            eng.update(out, corpus, prev.changes_to(corpus))
        prev = corpus
        rel = sorted(label(case, corpus).labels.relevant)
        if rel:
            rows.append({"id": case.sha, "request": case.request, "relevant": rel,
                         "long": is_long(case.request, eng.params["long_words"]),
                         "comp": _trim(eng.components(out, case.request))})
    p.close()
    return rows


def swe_components(instances: Path, paths: dict, mirror: Path | None) -> list[dict]:
    from ctxgauge.corpus import open_corpus
    from ctxgauge.engines import get_engine
    from ctxgauge.suites.cases import patch_files

    eng, rows = get_engine("fusion"), []
    for inst in json.loads(instances.read_text()):
        text = inst["problem_statement"].strip()  # the cases suite's query (load_swebench)
        corpus = open_corpus(find_clone(inst["repo"], paths, mirror), inst["base_commit"])
        rel = sorted(set(patch_files(inst["patch"])) & set(corpus.paths))
        if not rel:
            continue
        with tempfile.TemporaryDirectory(prefix="tune-swe-") as tmp:
            eng.build(corpus, Path(tmp))
            rows.append({"id": inst["instance_id"], "relevant": rel, "long": True,
                         "request": text, "comp": _trim(eng.components(Path(tmp), text))})
        print(f"  {inst['instance_id']}", file=sys.stderr, flush=True)
    return rows


def code_identity(eng) -> str:
    """The fusion engine's code and sub-engines, not its weights: what the recorded components depend on
    (the co-change seeds also follow the weights the components were recorded with: the defaults)."""
    import hashlib
    import inspect

    h = hashlib.sha256()
    for mod in sorted({type(eng).__module__, *eng.identity_modules}):
        h.update(mod.encode() + b"\0" + inspect.getsource(sys.modules[mod]).encode() + b"\0")
    h.update(json.dumps({n: e.identity() for n, e in sorted(eng.subs.items())}, sort_keys=True).encode())
    return h.hexdigest()


def fused(row: dict, weights: dict, long: bool = False) -> tuple[dict[str, float], list[str]]:
    """fusion's sum over a recorded row's components with `weights`, and its ranking (top 100, ties by path)."""
    from ctxgauge.engines.fusion._request import asked_kinds
    from ctxgauge.engines.fusion._engine import fuse

    total = fuse(row["comp"], weights, long=row.get("long", long), asked=asked_kinds(row.get("request", "")))
    return total, [f for f, s in sorted(total.items(), key=lambda x: (-x[1], x[0])) if s > 0][:100]


def hit5_mrr(orders: list[list[str]], rows: list[dict]) -> tuple[float, float]:
    """Mean hit@5 and MRR of rankings against each row's relevant files."""
    hits, rrs = [], []
    for order, r in zip(orders, rows):
        rel = set(r["relevant"])
        first = next((i for i, f in enumerate(order) if f in rel), None)
        hits.append(1.0 if first is not None and first < 5 else 0.0)
        rrs.append(1.0 / (first + 1) if first is not None else 0.0)
    return (statistics.fmean(hits), statistics.fmean(rrs)) if rows else (0.0, 0.0)


def evaluate(rows: list[dict], weights: dict, long: bool = False) -> tuple[float, float]:
    return hit5_mrr([fused(r, weights, long)[1] for r in rows], rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path)
    ap.add_argument("--paths", type=Path)
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--no-swe", action="store_true")
    ap.add_argument("--no-replay", action="store_true", help="record and tune SWE-bench (the long_ weights) only")
    ap.add_argument("--cache", type=Path, default=HERE / ".quality-out" / "tune-components.json")
    ap.add_argument("--jobs", type=int, default=1, help="repositories recorded at once (one process each)")
    ap.add_argument("--keep-components", action="store_true",
                    help="reuse the recorded components although fusion's code changed (for a change to `fuse` "
                         "alone: multipliers, path kinds; the components themselves must be the same)")
    args = ap.parse_args()
    from ctxgauge.engines import get_engine
    from ctxgauge.engines.fusion._engine import FusionEngine

    split = json.loads(SPLIT.read_text())
    paths = json.loads(args.paths.read_text()) if args.paths else {}
    data = json.loads(args.cache.read_text()) if args.cache.is_file() else {}
    # Components recorded by other fusion code (another rule, another sub-engine) are not reused.
    identity = code_identity(get_engine("fusion"))
    if data.get("identity") != identity and not (args.keep_components and data):
        if data:
            print("components were recorded by another fusion engine: recording them again", file=sys.stderr)
        data = {"identity": identity}
    todo = [(f"{repo}@{args.commits}", clone) for repo in ([] if args.no_replay else split["replay"]["tune"])
            if (clone := find_clone(repo, paths, args.mirror)) is not None and f"{repo}@{args.commits}" not in data]
    # Repositories are independent: --jobs records several at once (one process each; same rows as one by one).
    with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, len(todo) or 1))) as pool:
        futures = {key: pool.submit(replay_components, clone, args.commits) for key, clone in todo}
        for key, fut in futures.items():
            print(f"components: {key}", file=sys.stderr, flush=True)
            data[key] = fut.result()
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            args.cache.write_text(json.dumps(data))
    if not args.no_swe and "swebench" not in data:
        inst = swebench_instances(split, paths, args.mirror, split["swebench"]["tune"], args.cache.parent)
        if inst is not None:
            data["swebench"] = swe_components(inst, paths, args.mirror)
            args.cache.write_text(json.dumps(data))
    replay_rows = [] if args.no_replay else [
        r for k, rows in data.items() if k not in ("swebench", "identity") for r in rows]
    swe_rows = data.get("swebench", [])
    for r in swe_rows:
        r.setdefault("long", True)  # issue texts: collected before rows carried the flag
    weights = {k: float(v) for k, v in FusionEngine.defaults.items() if k in GRID or k.startswith("long_")
               or k == "bm25"}
    # Short weights and the path multipliers on replay (subjects); the long_* weights on SWE-bench issues.
    grids = [(replay_rows, {**GRID}), (swe_rows, {f"long_{n}": g for n, g in GRID.items() if f"long_{n}" in weights})]
    for rows, grid in grids:
        if not rows:
            continue
        best = sum(evaluate(rows, weights))
        print(f"start objective {best:.4f} on {len(rows)} requests")
        for rnd in range(3):
            changed = False
            for name, values in grid.items():
                for v in values:
                    trial = {**weights, name: v}
                    o = sum(evaluate(rows, trial))
                    if o > best + 1e-9:
                        best, weights, changed = o, trial, True
                print(f"pass {rnd + 1} {name}: {weights[name]} objective {best:.4f}")
            if not changed:
                break
    for label_, rows in (("replay", replay_rows), ("swebench", swe_rows)):
        h, m = evaluate(rows, weights)
        hb, mb = evaluate(rows, {"bm25": 1.0, "long_bm25": 1.0})
        print(f"{label_}: n={len(rows)} hit@5 {h:.3f} MRR {m:.3f}   (bm25 alone through the same path {hb:.3f} {mb:.3f})")
    print("weights:", json.dumps(weights))
    return 0


if __name__ == "__main__":
    sys.exit(main())
