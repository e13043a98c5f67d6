"""Small run directories written with RunDir, in each suite's documented record shape.

Replay and cases results are computed with those suites' own summary and comparison functions, so the
records carry exactly what a real run would; qa and determinism results follow the shapes documented in
`ctxgauge.suites.qa._summary` and `ctxgauge.suites.determinism._results`. Tests are not a package, so
this module is loaded by path (`load_run_factory()` and the `factory` fixture in tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ctxgauge.records import RunDir, Subject, figures_headline

METRICS = ["hit@1", "recall@1", "ndcg@1", "hit@3", "recall@3", "ndcg@3", "mrr"]


def figures(rank: int | None) -> dict[str, float | None]:
    """Every metric of a ranking whose one relevant file is at `rank` (None: not found; 0: nothing to score)."""
    if rank == 0:
        return {m: None for m in METRICS}
    out: dict[str, float | None] = {}
    for k in (1, 3):
        found = rank is not None and rank <= k
        out[f"hit@{k}"] = 1.0 if found else 0.0
        out[f"recall@{k}"] = 1.0 if found else 0.0
        # One relevant file: DCG = 1/log2(rank+1), ideal DCG = 1.
        import math
        out[f"ndcg@{k}"] = 1.0 / math.log2(rank + 1) if found else 0.0
    out["mrr"] = 1.0 / rank if rank else 0.0
    return out


def replay_run(root: Path, name: str, ranks: Sequence[int | None], vs_ranks: Sequence[int | None] | None = None, *,
               engine: str = "bm25", vs: str | None = "grep", repo: str = "demo", seed: int = 0,
               failed: Sequence[int] = (), suite: str = "replay", gaps: Sequence[int] = ()) -> Path:
    """A finished replay (or cases) run: unit i has the measured engine's relevant file at ranks[i] (and the
    vs engine's at vs_ranks[i]); indexes in `failed` are failed units, in `gaps` known-gap cases."""
    from ctxgauge.metrics.scoring import compare, summarise

    vs = vs if vs_ranks is not None else None
    spec = {"engine": engine, "vs": vs, "ks": [1, 3], "seed": seed, "metrics": METRICS,
            ("repo" if suite == "replay" else "source"): repo}
    subject = Subject(repo, [engine] + ([vs] if vs else []))
    run = RunDir.start(root / name, suite=suite, suite_version=1, subject=subject, spec=spec)
    units = []
    for i, rank in enumerate(ranks):
        uid = f"{i:02d}" + "c0ffee" * 6 + f"{i:02d}"
        if i in failed:
            run.add_unit(uid, "failed", reason="engine crashed", request=f"request {i}", figures={})
            continue
        extra = {"request": f"request <{i}>", "expected": [f"f{i}.py"],
                 "coverage_gap": [], "code": i % 2 == 0, "known_gap": i in gaps}
        if vs is not None:
            extra["vs"] = {"engine": vs, "figures": figures(vs_ranks[i]), "ranking": []}
        units.append(run.add_unit(uid, "ok", figures=figures(rank), ranking=[], **extra))
    counted = [u for u in units if not u.get("known_gap")]
    results = {"engine": engine, "vs": vs, "summary": {**summarise([u["figures"] for u in counted], METRICS),
                                                        "coverage_gap": 0.0}}
    if vs is not None:
        metrics = compare([u["figures"] for u in counted], [u["vs"]["figures"] for u in counted], METRICS, seed)
        results["comparison"] = {"engine": engine, "vs": vs, "seed": seed, "commits": len(counted), "metrics": metrics}
        results["vs_summary"] = summarise([u["vs"]["figures"] for u in counted], METRICS)
    if suite == "replay":
        results["counts"] = {"walked": len(ranks) + 1, "replayed": len(ranks), "ok": len(units),
                             "scored": len(units), "failed": len(failed), "skipped": 1}
        results["skipped"] = {"merge": 1}
    else:
        results["pass"] = [{"metric": "recall@3", "threshold": 0.5, "value": results["summary"]["recall@3"],
                            "higher_is_better": True, "holds": (results["summary"]["recall@3"] or 0) >= 0.5}]
    run.finish("success", results=results, headline=figures_headline(results["summary"], METRICS))
    return run.path


def determinism_run(root: Path, name: str, engines: dict[str, dict], corpus: str = "demo") -> Path:
    """A finished determinism run; `engines` maps a spec to {level, drift, status, reason, emr, span_emr}
    (no span_emr: a run from before spans)."""
    out = {}
    spec = {"engines": list(engines), "corpus": {"name": corpus, "rev": "ab" * 20}, "k": 10}
    subject = Subject(f"{corpus}@{'ab' * 5}", list(engines))
    run = RunDir.start(root / name, suite="determinism", suite_version=1, subject=subject, spec=spec)
    (run.path / "fingerprints").mkdir()
    for eng, e in engines.items():
        status = e.get("status", "measured")
        fp = f"fingerprints/{eng}.fingerprint.json"
        (run.path / fp).write_text('{"format": 2}\n')
        level = e.get("level")
        fams = {"rebuild": {"status": "ok", "reason": None, "figures": {"distinct_hashes": 1, "rebuilds": 3,
                                                                        "identical": True}},
                "query": {"status": "ok", "reason": None, "figures": {"exact_match_rate": e.get("emr", 1.0),
                                                                      "mean_jaccard": 1.0, "mean_kendall_tau": 1.0,
                                                                      **({"span_exact_match_rate": e["span_emr"]}
                                                                         if "span_emr" in e else {})}},
                "drift": {"status": "ok", "reason": None, "figures": {k: {"drift": v} for k, v in e.get("drift", {}).items()}},
                "update": {"status": "ok", "reason": None, "figures": {"identical": True}},
                "cross-machine": {"status": "not measured", "reason": "no fingerprint from another machine",
                                  "figures": {}}}
        if status == "skipped":
            fams = {f: {"status": "not measured", "reason": "engine unavailable", "figures": {}} for f in fams}
        out[eng] = {"status": status, "reason": e.get("reason"), "identity": {"id": "sha256:0", "source": "declared"},
                    "level": None if status == "skipped" else level,
                    "label": "skipped" if status == "skipped" else (f"CTL {level}" if level is not None else "not measured"),
                    "grade": {"level": level, "reasons": [f"CTL 4 not measured: no fingerprint ({eng})"]},
                    "drift": {} if status == "skipped" else e.get("drift", {}), "families": fams, "flags": [],
                    "fingerprint": None if status == "skipped" else fp}
        run.add_unit(f"{eng}/rebuild", "ok", engine=eng, family="rebuild")
    run.finish("success", results={"corpus": {"name": corpus, "rev": "ab" * 20, "files": 3}, "queries": ["q"],
                                   "k": 10, "engines": out},
               headline=", ".join(f"{e} {r['label']}" for e, r in out.items()))
    return run.path


def qa_run(root: Path, name: str, arms: dict[str, list[str | None]], *, tokens: dict[str, int] | None = None,
           cost: dict[str, float | None] | None = None, battery: str = "mini", model: str | None = "m-1",
           skipped: Sequence[str] = ()) -> Path:
    """A finished qa run, one repetition: `arms` maps an arm to one verdict per question (None: not asked)."""
    tokens, cost = tokens or {}, cost or {}
    qids = [f"q{i + 1:02d}" for i in range(len(next(iter(arms.values()))))]
    spec = {"arms": list(arms), "model": model, "judge": model, "protocol": "zero-shot", "repeat": 1, "source": battery}
    run = RunDir.start(root / name, suite="qa", suite_version=1, subject=Subject(battery, list(arms), model),
                       spec=spec, context={"source_identity": {"name": battery, "questions": len(qids)}})
    summary, runs = {}, []
    for arm, verdicts in arms.items():
        slug = arm.replace(":", "_")
        passed = sum(v == "pass" for v in verdicts)
        decided = all(v in ("pass", "fail", "adjudicate") for v in verdicts)
        is_skipped = arm in skipped
        for qid, v in zip(qids, verdicts):
            if v is not None:
                run.add_unit(f"{slug}/rep01/{qid}", "ok", arm=arm, rep=1, qid=qid, verdict={"result": v},
                             answer_status="skipped" if is_skipped else "ok")
        rec_dir = run.path / "arms" / slug / "rep01"
        rec_dir.mkdir(parents=True)
        t = tokens.get(arm, 0)
        econ = {"tokens_input": t, "tokens_output": 0, "tokens_cache_read": 0, "tokens_cache_write": 0,
                "cost_usd": cost.get(arm)}
        (rec_dir / "record.json").write_text(__import__("json").dumps({"economics": econ}) + "\n")
        valid = not is_skipped
        runs.append({"arm": arm, "repetition": 1, "path": f"arms/{slug}/rep01",
                     "validity": {"ok": valid, "reason": "run_ok" if valid else "skipped"},
                     "scoring": {"total": passed if valid and decided else None, "denominator": len(qids)}})
        summary[arm] = {"status": "skipped" if is_skipped else "measured",
                        "reason": "no model configured" if is_skipped else None,
                        "questions": 0 if is_skipped else len(verdicts), "passed": 0 if is_skipped else passed,
                        "accuracy": passed / len(verdicts) if valid and decided else None,
                        "tokens": {"tokens_input": t, "tokens_output": 0, "tokens_cache_read": 0,
                                   "tokens_cache_write": 0},
                        "cost_usd": cost.get(arm), "retrieval_hit_rate": 0.5 if arm.startswith("context") else None,
                        "runs": 1, "valid_runs": int(valid)}
    questions = [{"qid": qid, "difficulty": 1, "categories": ["c"],
                  "arms": {arm: [v[i]] if v[i] is not None else [] for arm, v in arms.items()}}
                 for i, qid in enumerate(qids)]
    trust = {"status": "pass", "not_measured": 1,
             "checks": [{"name": "questions_scored", "arm": None, "status": "pass", "value": len(qids),
                         "threshold": ">= 10", "detail": ""}]}
    from ctxgauge.suites.qa._record import headline

    run.finish("success", results={"summary": summary, "questions": questions, "runs": runs, "trust": trust,
                                   "skipped": [], "arms": [], "notes": []}, headline=headline({"summary": summary}, list(arms)))
    return run.path


def unfinished_run(root: Path, name: str, suite: str = "replay", status: str = "started") -> Path:
    """A run that did not finish: `started` (crashed: no results, no hashes), or cancelled / error."""
    spec = {"engine": "bm25", "vs": None, "repo": "demo", "ks": [1, 3], "metrics": METRICS, "seed": 0}
    subject = Subject("demo", ["bm25"])
    if suite == "qa":
        # The same battery, protocol and judge as qa_run's: the leaderboard counts it with those runs.
        spec = {"arms": ["none"], "model": "m-1", "judge": "m-1", "protocol": "zero-shot", "repeat": 2, "source": "mini"}
        subject = Subject("mini", ["none"], "m-1")
    run = RunDir.start(root / name, suite=suite, suite_version=1, subject=subject, spec=spec)
    run.add_unit("u1", "ok", figures={"hit@1": 1.0})
    if status != "started":
        run.finish(status, error="EngineError: boom")
    return run.path
