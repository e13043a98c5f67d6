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
from ctxgauge.results import RecordError
from ctxgauge.results._qa_files import (
    BaselineArm, BaselineComparison, BaselineModels, BaselineRow, BaselineTrust, QABaseline, QAContext,
    SourceIdentity,
)
from ctxgauge.suites.qa._config import SUITE

BASELINE_KIND = "ctxgauge.qa.baseline"
BASELINE_VERSION = 2


def _figures(run_dir: Path) -> QABaseline:
    """The run's baseline (read through the suite's typed classes)."""
    run = read_checked(run_dir)
    if run.suite != SUITE or not run.finished:
        raise UserError(f"{run_dir}: not a finished qa run")
    where = str(run_dir / "run.json")
    results, spec = run.results, run.spec
    arms: dict[str, BaselineArm | None] = {}
    for name, s in results.summary.items():
        score = s.accuracy * 100 if s.accuracy is not None else s.mean_score
        arms[name] = BaselineArm(score=None if score is None else round(score, 4), questions=s.questions,
                                 status=s.status)
    context = QAContext.from_json(run.record.context or {}, where, "context")
    return QABaseline(kind=BASELINE_KIND, version=BASELINE_VERSION,
                      source=context.source_identity or SourceIdentity(), run_id=run.run_id,
                      models=BaselineModels(model=spec.model, judge=spec.judge),
                      trust=results.trust.status if results.trust is not None else None, arms=arms)


def save_baseline(run_dir: str | Path, path: str | Path) -> QABaseline:
    """Write the run's per-arm figures to `path` and return them."""
    data = _figures(Path(run_dir))
    write_json_atomic(path, data.to_json())
    return data


def _score(arm: BaselineArm | None) -> float | None:
    return arm.score if arm is not None else None


def compare_baseline(run_dir: str | Path, path: str | Path, *, tolerance: float = 5.0) -> BaselineComparison:
    """Per-arm deltas of the run against the baseline; `regressions` lists arms that fell by more than
    `tolerance` points."""
    raw = read_data(path, "qa baseline", fmt="json", expect=dict)
    try:
        base = QABaseline.from_json(raw, str(path), "baseline")
    except RecordError:
        base = None
    if base is None or base.kind != BASELINE_KIND:
        raise UserError(f"{path}: not a ctxgauge qa baseline")
    run = _figures(Path(run_dir))
    if base.source.hash and run.source.hash != base.source.hash:
        raise UserError(f"{path}: baseline is for battery hash {base.source.hash}, the run asked "
                        f"{run.source.hash}; the numbers are not comparable")
    if base.models is None:
        raise UserError(f"{path}: the baseline records no answer model or judge (written by an older ctxgauge); "
                        f"save it again with `ctxgauge qa baseline save RUN {path}`")
    run_models = run.models or BaselineModels()
    for key, old, new in (("model", base.models.model, run_models.model),
                          ("judge", base.models.judge, run_models.judge)):
        if old != new:
            raise UserError(f"{path}: baseline {key} is {old!r}, the run's is {new!r}; the numbers are not "
                            f"comparable (rerun with the same {key})")
    rows, regressions = [], []
    for name in sorted(set(base.arms) | set(run.arms)):
        old, new = _score(base.arms.get(name)), _score(run.arms.get(name))
        if old is None or new is None:
            rows.append(BaselineRow(arm=name, baseline=old, run=new, delta=None, status="not-measured"))
            continue
        delta = round(new - old, 4)
        status = "regression" if delta < -tolerance else "ok"
        rows.append(BaselineRow(arm=name, baseline=old, run=new, delta=delta, status=status))
        if status == "regression":
            regressions.append(name)
    return BaselineComparison(baseline=str(path), run_dir=str(run_dir), tolerance=tolerance, arms=rows,
                              regressions=regressions, trust=BaselineTrust(baseline=base.trust, run=run.trust))
