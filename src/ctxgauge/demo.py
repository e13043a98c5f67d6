"""The main job on the bundled sample: what `make demo` and `ctxgauge demo` run, with no network and no key.

A pipeline of named phases, each writing its run through the one record layout into the demo directory:

1. replay: every reference engine available here replays the sample's newest eligible commits;
2. compare: the best two engines (by the headline metrics in order, `metrics.scoring.HEADLINE_METRICS`,
   then name) replayed on the same commits
   with `--vs`, for the paired intervals, p-value and win/tie/loss;
3. determinism: the suite on the sample's HEAD for every engine replayed, fingerprints written beside it;
4. qa: the bundled battery with the arms that need no model (the model arms are listed as skipped, with
   the reason);
5. report: `report.html` (self-contained) and `report.md` over all of it.

`resume=True` skips phases whose run finished and continues the one that did not.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from dataclasses import dataclass, field
from typing import TypeVar
from pathlib import Path

from ctxgauge.engines import REFERENCE_ENGINES, engine_available, get_engine
from ctxgauge.errors import UserError
from ctxgauge.records import default_run_dir, is_empty_dir, lock_dir, read_run
from ctxgauge.results import DeterminismResults, EngineResult, QAResults, Record, ReplayComparison, ReplayResults
from ctxgauge.sample import materialize_sample
from ctxgauge.suites._progress import Progress, silent
from ctxgauge.suites.determinism import SUITE as DETERMINISM
from ctxgauge.suites.qa import SUITE as QA
from ctxgauge.suites.replay import SUITE as REPLAY

@dataclass
class DemoConfig:
    """Options of `ctxgauge demo`."""

    out: Path | None = None
    """The demo directory (default `ctxgauge-runs/demo-<utc time>-<id>/`)."""
    engines: tuple[str, ...] = REFERENCE_ENGINES
    """Engines to replay and grade; unavailable ones are reported as skipped."""
    commits: int = 40
    """How many of the sample's newest eligible commits replay scores."""
    determinism_engines: tuple[str, ...] | None = None
    """Engines the determinism suite grades (default: every engine replayed)."""
    rebuilds: int = 2
    trials: int = 3
    seed: int = 0
    resume: bool = False


@dataclass
class DemoResult:
    """What the demo measured and where it wrote it."""

    out: Path
    runs: dict[str, Path] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    replay: dict[str, dict[str, float | None]] = field(default_factory=dict)
    """Engine -> its replay summary (metric -> mean)."""
    best_two: tuple[str, str] | None = None
    comparison: ReplayComparison | None = None
    """The best two engines paired on the same commits, or None."""
    determinism: dict[str, EngineResult] = field(default_factory=dict)
    """Engine -> its determinism result."""
    qa: QAResults | None = None
    """The qa run's results (the arms that need no model), or None."""
    report_html: Path | None = None
    report_md: Path | None = None

    def to_dict(self) -> dict:
        return {
            "out": str(self.out), "runs": {k: str(v) for k, v in self.runs.items()}, "skipped": self.skipped,
            REPLAY: self.replay, "best_two": list(self.best_two) if self.best_two else None,
            "comparison": self.comparison.to_json() if self.comparison is not None else None,
            DETERMINISM: {name: _pick(e.to_json(), ("status", "level", "drift", "flags"))
                          for name, e in self.determinism.items()},
            QA: _pick(self.qa.to_json(), ("summary", "skipped")) if self.qa is not None else None,
            "report_html": str(self.report_html) if self.report_html else None,
            "report_md": str(self.report_md) if self.report_md else None,
        }


R = TypeVar("R", bound=Record)


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", spec).strip("-")


def _finished(path: Path) -> bool:
    try:
        return read_run(path).finished
    except UserError:
        return False


def _pick(data: dict, keys: tuple[str, ...]) -> dict:
    """The `keys` of a typed record's JSON form."""
    return {k: data[k] for k in keys}


def _results(path: Path, cls: type[R]) -> R | None:
    """The typed results a finished run recorded (None when there is no finished run there)."""
    if not _finished(path):
        return None
    return cls.from_json(read_run(path).results or {}, str(path / "run.json"), "results")


def _available(specs: tuple[str, ...], skipped: dict[str, str]) -> list[str]:
    out = []
    for spec in specs:
        try:
            ok, why = engine_available(get_engine(spec))
        except UserError as exc:
            ok, why = False, str(exc)
        if ok:
            out.append(spec)
        else:
            skipped[spec] = why or "not available"
    return out


def _rank_key(name: str, summary: dict) -> tuple:
    from ctxgauge.metrics.scoring import headline_metrics

    return (*(-(summary.get(m) or 0.0) for m in headline_metrics(summary)), name)


PHASE_UNITS = (("replay ", "commits"), ("determinism: ", "steps"), ("qa: ", "answers"))
"""What the progress of each phase counts, by the label prefix `_run_demo` gives it."""


def phase_unit(label: str) -> str:
    """The unit a demo progress label counts (`replay bm25 a1b2c3`: commits; `determinism: ...`: steps;
    `qa: ...`: answers; the report: steps), for the command line's progress lines."""
    return next((word for prefix, word in PHASE_UNITS if label.startswith(prefix)), "steps")


def run_demo(config: DemoConfig, progress: Progress = silent) -> DemoResult:
    """Run every phase on the bundled sample; see the module docstring. `progress(done, total, label)` is
    told each phase's steps (suites/_progress.py)."""
    out = Path(config.out) if config.out is not None else default_run_dir("demo")

    def refuse_not_empty() -> None:
        if out.is_dir() and not is_empty_dir(out) and not config.resume:
            raise UserError(f"{out}: exists and is not empty; pass --resume to continue that demo or choose another --out")

    refuse_not_empty()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{out}: cannot make the demo directory ({exc.strerror or exc}); choose another --out") from None
    # One demo writes a directory at a time (each of its runs also locks its own); checked again under the lock.
    with lock_dir(out):
        refuse_not_empty()
        return _run_demo(config, out, progress)


def _run_demo(config: DemoConfig, out: Path, progress: Progress) -> DemoResult:
    from ctxgauge.report import build_report, load_runs, write_html, write_markdown
    from ctxgauge.suites.determinism import DeterminismConfig, run_determinism
    from ctxgauge.suites.qa import QAConfig, run_qa
    from ctxgauge.suites.replay import ReplayConfig, replay

    result = DemoResult(out=out)
    engines = _available(tuple(config.engines), result.skipped)
    if not engines:
        raise UserError("no engine is available here; install ctxgauge with its extras (make demo does)")

    with tempfile.TemporaryDirectory(prefix="ctxgauge-demo-") as tmp, _sharing() as share:
        sample = materialize_sample(Path(tmp) / "shelfd")

        def one_replay(name: str, engine: str, vs: str | None = None) -> ReplayResults:
            path = out / name
            result.runs[name] = path
            done = _results(path, ReplayResults)
            if done is not None:
                return done
            cfg = ReplayConfig(repo=sample, engine=engine, vs=vs, commits=config.commits, seed=config.seed,
                               out=path, resume=(path / "run.json").exists())
            label = f"replay {engine}" + (f" vs {vs}" if vs else "")
            progress(0, 1, label)  # building the index takes most of a replay: say what runs before the first commit
            return replay(cfg, progress=lambda done, total, sha: progress(done, total, f"{label} {sha}")).results

        # 1. replay; embeddings shared between engine objects (minilm, hybrid's minilm, the --vs pair)
        with share():
            # Numbered in the order given (grep, bm25, minilm, graph, hybrid, fusion): a report lists runs,
            # so engines, in path order, and `replay-bm25` before `replay-grep` put the HTML and Markdown in
            # another order than this terminal's table. The comparison run sorts after them.
            width = len(str(len(engines)))
            for n, engine in enumerate(engines, 1):
                res = one_replay(f"replay-{n:0{width}d}-{_slug(engine)}", engine)
                result.replay[engine] = res.summary
            # 2. the best two, paired on the same commits
            if len(engines) >= 2:
                a, b = sorted(engines, key=lambda e: _rank_key(e, result.replay[e]))[:2]
                result.best_two = (a, b)
                res = one_replay(f"replay-{_slug(a)}-vs-{_slug(b)}", a, b)
                result.comparison = res.comparison
        # 3. determinism: never inside share(), Rebuild Identity must build cold
        det_engines = [e for e in (config.determinism_engines or tuple(engines)) if e in engines]
        det_path = out / DETERMINISM
        result.runs[DETERMINISM] = det_path
        if det_engines and not _finished(det_path):
            run_determinism(DeterminismConfig(
                source=sample, engines=tuple(det_engines), rebuilds=config.rebuilds, trials=config.trials,
                corpus_name="shelfd", out=det_path, resume=(det_path / "run.json").exists()),
                progress=lambda done, total, what: progress(done, total, f"determinism: {what}"))
        # Read back from the record, whether measured now or by the run a --resume found finished.
        det = _results(det_path, DeterminismResults)
        result.determinism = dict(det.engines) if det is not None else {}
        # 4. qa: the arms that need no model
        qa_path = out / QA
        result.runs[QA] = qa_path
        if not _finished(qa_path):
            arms = ["none"] + [f"context:{e}@5" for e in engines if e in ("bm25", "graph", "hybrid")]
            with share():
                run_qa(QAConfig(source="shelfd", arms=arms, out=qa_path, resume=(qa_path / "run.json").exists(),
                                repo=sample), progress=lambda done, total, what: progress(done, total, f"qa: {what}"))
        result.qa = _results(qa_path, QAResults)

    # 5. report over every run of the demo
    progress(0, 1, "report")
    report = build_report(load_runs([out]), title="ctxgauge demo: the bundled sample (shelfd)")
    result.report_html = write_html(report, out / "report.html")
    result.report_md = write_markdown(report, out / "report.md")
    progress(1, 1, "report")
    return result


@contextlib.contextmanager
def _sharing():
    """Yields a context-manager factory: minilm's shared embeddings when minilm can load, else a no-op."""
    try:
        from ctxgauge.engines.minilm._engine import shared_embeddings
    except ImportError:  # the [embed] extra is not installed: nothing to share
        shared_embeddings = contextlib.nullcontext
    yield shared_embeddings
