"""Baselines: save a run's per-arm figures, and compare a later run against them.

A baseline file holds, per arm, the accuracy (pass/fail mode) or mean score (rubric mode) on a 0-100
scale, the number of questions, and the trust gate's status, with the battery's hash and the answer and
judge models: comparing runs over different batteries, answer models or judges is refused, since the
numbers would not measure the same thing (a new judge moves every score without the engine changing).
A drop of more than `tolerance` points on an arm is a regression; an arm without a score on either side
is `not-measured`. A version-1 baseline recorded no models and is refused with the fix (save it again).
"""

from __future__ import annotations

from pathlib import Path

from ctxgauge._io import read_data, write_json_atomic
from ctxgauge.errors import UserError
from ctxgauge.report import read_checked
from ctxgauge.results import QAResults, QASpec
from ctxgauge.suites.qa._config import SUITE

BASELINE_KIND = "ctxgauge.qa.baseline"
BASELINE_VERSION = 2
MODEL_KEYS = ("model", "judge")
"""The spec fields a baseline and a run must share, beside the battery hash (`QASpec.model`, `.judge`)."""


def _figures(run_dir: Path) -> tuple[dict, dict]:
    record = read_checked(run_dir).record
    if record.suite != SUITE or not record.finished:
        raise UserError(f"{run_dir}: not a finished qa run")
    where = str(run_dir / "run.json")
    results = QAResults.from_json(record.results or {}, where, "results")
    spec = QASpec.from_json(record.spec or {}, where, "spec")
    arms = {}
    for name, s in results.summary.items():
        score = s.accuracy * 100 if s.accuracy is not None else s.mean_score
        arms[name] = {"score": None if score is None else round(score, 4), "questions": s.questions,
                      "status": s.status}
    source = record.context.get("source_identity") or {}
    return arms, {"source": source, "trust": results.trust.status if results.trust is not None else None,
                  "run_id": record.run_id, "models": {"model": spec.model, "judge": spec.judge}}


def save_baseline(run_dir: str | Path, path: str | Path) -> dict:
    """Write the run's per-arm figures to `path` and return them."""
    arms, meta = _figures(Path(run_dir))
    data = {"kind": BASELINE_KIND, "version": BASELINE_VERSION, "source": meta["source"], "run_id": meta["run_id"],
            "models": meta["models"], "trust": meta["trust"], "arms": arms}
    write_json_atomic(path, data)
    return data


def compare_baseline(run_dir: str | Path, path: str | Path, *, tolerance: float = 5.0) -> dict:
    """Per-arm deltas of the run against the baseline; `regressions` lists arms that fell by more than
    `tolerance` points."""
    base = read_data(path, "qa baseline", fmt="json", expect=dict)
    if base.get("kind") != BASELINE_KIND or not isinstance(base.get("source"), dict) \
            or not isinstance(base.get("arms"), dict):
        raise UserError(f"{path}: not a ctxgauge qa baseline")
    arms, meta = _figures(Path(run_dir))
    if base["source"].get("hash") and meta["source"].get("hash") != base["source"]["hash"]:
        raise UserError(f"{path}: baseline is for battery hash {base['source']['hash']}, the run asked "
                        f"{meta['source'].get('hash')}; the numbers are not comparable")
    if not isinstance(base.get("models"), dict):
        raise UserError(f"{path}: the baseline records no answer model or judge (written by an older ctxgauge); "
                        f"save it again with `ctxgauge qa baseline save RUN {path}`")
    for key in MODEL_KEYS:
        if base["models"].get(key) != meta["models"][key]:
            raise UserError(f"{path}: baseline {key} is {base['models'].get(key)!r}, the run's is "
                            f"{meta['models'][key]!r}; the numbers are not comparable (rerun with the same {key})")
    rows, regressions = [], []
    for name in sorted(set(base["arms"]) | set(arms)):
        old = (base["arms"].get(name) or {}).get("score")
        new = (arms.get(name) or {}).get("score")
        if old is None or new is None:
            rows.append({"arm": name, "baseline": old, "run": new, "delta": None, "status": "not-measured"})
            continue
        delta = round(new - old, 4)
        status = "regression" if delta < -tolerance else "ok"
        rows.append({"arm": name, "baseline": old, "run": new, "delta": delta, "status": status})
        if status == "regression":
            regressions.append(name)
    return {"baseline": str(path), "run_dir": str(run_dir), "tolerance": tolerance, "arms": rows,
            "regressions": regressions, "trust": {"baseline": base.get("trust"), "run": meta["trust"]}}
