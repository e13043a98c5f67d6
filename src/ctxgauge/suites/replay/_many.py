"""`replay --repos FILE`: many repositories in one go, one run each, and a combined summary.

The file holds one repository a line, `#` starting a comment:

    PATH [REV [COMMITS [LABEL]]]

PATH is a local clone (a work tree or a bare git directory; relative to the file's folder), REV the
revision to walk (default HEAD), COMMITS how many eligible commits to replay (default `--commits`; 0: all),
LABEL the name in the summary (default the repository's name). `-` keeps a field's default. A LABEL may
be a URL: it is only a name, nothing is ever cloned or fetched.

Every repository is planned before anything is written (so a bad line fails the whole command with
nothing half-done), then all their units go to one executor, so the workers stay busy across
repositories. Under `--out DIR` each repository's run is `DIR/<label>/` (the same record a single
`ctxgauge replay` writes), and `DIR/summary.json` combines them: each repository's figures, and pooled
figures whose intervals resample repositories, then commits within them (`clustered_bootstrap_ci`,
seeded). `--resume` resumes the whole: finished runs are read, unfinished ones continue.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ctxgauge._output import EnvironmentProblem, environment_reason
from ctxgauge._io import InputError, read_text, write_json_atomic
from ctxgauge.errors import Interrupted, UserError
from ctxgauge.executors import open_executor
from ctxgauge.metrics.ranking import mean_over
from ctxgauge.metrics.stats import ClusteredDraws
from ctxgauge.records import RUN_FILE, default_run_dir, is_empty_dir, lock_dir, read_run, read_units, \
    spec_differences
from ctxgauge.results import PooledFigure, RepoFigures, ReplayManySummary
from ctxgauge.suites._retrieval import ContextSpec, macro_names, micro_names
from ctxgauge.suites.replay._finish import finish, start_run
from ctxgauge.suites.replay._plan import SUITE, Plan, ReplayConfig, plan
from ctxgauge.suites.replay._report import ReplayResult
from ctxgauge.suites.replay._run import RepoRun, execute_many

SUMMARY_FILE = "summary.json"
"""The combined summary inside the `--out` folder of `replay --repos`."""


@dataclass(frozen=True)
class RepoLine:
    """One line of a `--repos` file."""

    path: Path
    rev: str
    commits: int | None
    """None: every eligible commit."""
    label: str
    line: int
    """1-based line number in the file, for messages."""

    @property
    def folder(self) -> str:
        """The run directory's name: the label with anything but letters, digits, `.`, `_` and `-` made `+`
        (a URL's scheme and host dropped), so `https://github.com/pallets/click` is `pallets+click`."""
        name = re.sub(r"^[a-z][a-z0-9+.-]*://[^/]*/?", "", self.label.strip(), flags=re.I).rstrip("/")
        name = re.sub(r"\.git$", "", name)
        return re.sub(r"[^A-Za-z0-9._-]+", "+", name).strip("+.") or "repo"


def read_repos_file(path: Path, default_commits: int | None) -> list[RepoLine]:
    """The repositories a `--repos` file names; UserError naming the line for anything wrong."""
    try:
        text = read_text(path, "--repos")
    except InputError as exc:
        hint = "; write one repository a line (PATH [REV [COMMITS [LABEL]]])" if exc.problem == "no such file" else ""
        raise UserError(f"{exc}{hint}") from None
    out: list[RepoLine] = []
    for no, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) > 4:
            raise UserError(f"--repos {path}:{no}: {len(fields)} fields; a line is PATH [REV [COMMITS [LABEL]]] "
                            "(a label without blanks)")
        fields += ["-"] * (4 - len(fields))
        where, rev, count, label = fields
        repo = Path(where)
        if not repo.is_absolute():
            repo = Path(path).parent / repo
        commits = default_commits
        if count != "-":
            if not count.isdigit():
                raise UserError(f"--repos {path}:{no}: COMMITS {count!r} is not a number (0: all, -: --commits)")
            commits = int(count) or None
        out.append(RepoLine(repo, "HEAD" if rev == "-" else rev, commits, "" if label == "-" else label, no))
    if not out:
        raise UserError(f"--repos {path}: names no repository; write one a line (PATH [REV [COMMITS [LABEL]]])")
    return out


@dataclass
class ManyResult:
    """What `replay --repos` measured: one result per repository and the combined summary."""

    out: Path
    """The folder holding every repository's run and `summary.json`."""
    results: list[tuple[RepoLine, ReplayResult]]
    summary: ReplayManySummary
    """What `summary.json` holds (see `combined_summary`)."""

    def to_dict(self) -> dict:
        """The `--json` shape: the combined summary and where it is."""
        return {**self.summary.to_json(), "out": str(self.out)}


def combined_summary(results: list[tuple[RepoLine, ReplayResult, list[dict]]], metrics: list[str],
                     seed: int, context: ContextSpec | None = None) -> ReplayManySummary:
    """`summary.json` (typed: `results.ReplayManySummary`), from units only.

    `pooled[metric]` = {mean (every scored commit weighs the same), macro_mean (every repository weighs the
    same), ci_low, ci_high (two-stage bootstrap, seeded), commits, repositories}; None where no commit of
    any repository defines the metric. With `context`, the context metrics too: macro families pooled as
    the ranking metrics are (the mean of the commits' values), `_micro` families as ratios of pooled sums
    of each commit's [numerator, denominator] (`context.pairs`), resampled on the same draws."""
    macro, micro = (macro_names(context), micro_names(context)) if context is not None else ([], [])
    draws: dict[tuple[int, ...], ClusteredDraws] = {}

    def drawn(groups: list) -> ClusteredDraws:
        # Draws depend only on the group sizes and the seed: metrics defined on the same commits share them.
        sizes = tuple(len(g) for g in groups)
        if sizes not in draws:
            draws[sizes] = ClusteredDraws(sizes, seed)
        return draws[sizes]

    def side_of(u: dict, side: str | None) -> dict | None:
        if u.get("status") != "ok":
            return None
        return u.get("vs") if side else u

    def pooled(side: str | None) -> dict[str, PooledFigure | None]:
        out: dict[str, PooledFigure | None] = {}
        for name in [*metrics, *macro]:
            groups = []
            for _, _, units in results:
                values = [part["figures"].get(name) for u in units if (part := side_of(u, side)) is not None]
                values = [float(v) for v in values if v is not None]
                if values:
                    groups.append(values)
            if not groups:
                out[name] = None
                continue
            mean, low, high = drawn(groups).mean_ci(groups)
            out[name] = PooledFigure(mean=mean, macro_mean=mean_over(math.fsum(g) / len(g) for g in groups),
                                     ci_low=low, ci_high=high, commits=sum(map(len, groups)),
                                     repositories=len(groups))
        for name in micro:
            groups = []
            for _, _, units in results:
                pairs = [((part.get("context") or {}).get("pairs") or {}).get(name) for u in units
                         if (part := side_of(u, side)) is not None]
                pairs = [(float(n), float(d)) for n, d in (p for p in pairs if p is not None)]
                if pairs:
                    groups.append(pairs)
            if not groups:
                out[name] = None
                continue
            ratio, low, high = drawn(groups).ratio_ci([[n for n, _ in g] for g in groups],
                                                      [[d for _, d in g] for g in groups])
            own = []
            for g in groups:
                den = math.fsum(d for _, d in g)
                own.append(math.fsum(n for n, _ in g) / den if den else 0.0)
            out[name] = PooledFigure(mean=ratio, macro_mean=mean_over(own), ci_low=low, ci_high=high,
                                     commits=sum(map(len, groups)), repositories=len(groups))
        return out

    first = results[0][1].results
    return ReplayManySummary(
        engine=first.engine, vs=first.vs, seed=seed, metrics=list(metrics), context_metrics=[*macro, *micro],
        budgets=list(context.budgets) if context is not None else None,
        repositories=[RepoFigures(label=line.label, run=line.folder, counts=r.results.counts,
                                  summary=r.results.summary, vs_summary=r.results.vs_summary)
                      for line, r, _ in results],
        pooled=pooled(None),
        vs_pooled=pooled("vs") if first.vs else None,
    )


def replay_many(template: ReplayConfig, lines: list[RepoLine], out: Path | None = None,
                progress: Callable[[int, int, str], None] | None = None) -> ManyResult:
    """Replay every repository of `lines` with `template`'s options; record one run each and the summary.

    `progress(done, total, label)` after each commit of any repository."""
    if template.baseline is not None or template.trec is not None:
        raise UserError("--baseline and --trec work on one repository; leave them out with --repos")
    if template.resume and out is None:
        raise UserError("--resume needs --out DIR (the folder of the runs to continue)")
    out = Path(out) if out is not None else default_run_dir(SUITE + "-many")
    def refuse_not_empty() -> None:
        if not template.resume and out.is_dir() and not is_empty_dir(out):
            raise UserError(f"{out}: exists and is not empty; pass --resume to continue it or choose another --out")

    refuse_not_empty()
    folders = [line.folder for line in lines]
    twice = sorted({f for f in folders if folders.count(f) > 1})
    if twice:
        raise UserError(f"--repos: two lines share the run folder {twice[0]!r}; give them different labels")
    plans: list[Plan] = []
    lock = None
    try:
        for line in lines:
            config = dataclasses.replace(template, repo=line.path, rev=line.rev, commits=line.commits,
                                         out=out / line.folder, resume=template.resume)
            try:
                plans.append(plan(config))
            except UserError as exc:
                raise UserError(f"--repos line {line.line} ({line.path}): {exc}") from None
        lines = [dataclasses.replace(line, label=line.label or p.spec["repo"]) for line, p in zip(lines, plans)]
        # Planned, nothing written yet: now the folder's writer lock (each repository's run also locks its own
        # directory), and the emptiness check again under it (another `--repos` may have started meanwhile).
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{out}: cannot make the folder ({exc.strerror or exc}); choose another --out") from None
        lock = lock_dir(out)
        refuse_not_empty()
        total = sum(len(p.selection.eligible) for p in plans)
        counted: dict[str, int] = {}

        def tick(label: str) -> Callable[[int, int, str], None]:
            def on_commit(done: int, _total: int, _sha: str) -> None:
                counted[label] = done
                if progress is not None:
                    progress(sum(counted.values()), total, label)
            return on_commit

        done: dict[int, tuple[ReplayResult, list[dict]]] = {}
        with open_executor(template.executor) as executor:
            runs: list[RepoRun] = []
            owner: dict[int, int] = {}  # id(run) -> its line's index
            try:
                for i, (line, p) in enumerate(zip(lines, plans)):
                    run_dir = out / line.folder
                    record = read_run(run_dir) if (run_dir / RUN_FILE).exists() else None
                    # A finished run is read back as it is, unless it has failed units: those are retried.
                    if record is not None and record.status == "success" and not record.counts.get("failed"):
                        done[i] = _finished_run(run_dir, p, line)
                        counted[line.label] = len(p.selection.eligible)
                        continue
                    run = start_run(p, run_dir, (run_dir / RUN_FILE).exists(), context={"label": line.label})
                    runs.append(RepoRun(p, run, tick(line.label)))
                    owner[id(runs[-1])] = i

                def finished(r: RepoRun) -> None:
                    units = r.ordered_units()
                    done[owner[id(r)]] = (finish(r.plan, r.run, units), units)
                    r.run.close()

                execute_many(runs, executor, template.slice_size, on_finished=finished)
            except BaseException as exc:
                # As `with RunDir` would: every unfinished run is marked cancelled (Ctrl-C) or error; a Ctrl-C
                # then names the whole folder, which is what `--resume` continues.
                for r in runs:
                    if r.run.record.status == "started":
                        try:
                            r.run.__exit__(type(exc), exc, None)
                        except (Interrupted, EnvironmentProblem):
                            pass
                if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Interrupted):
                    raise Interrupted(out) from exc
                # A full disk or a read-only target names the whole folder too: `--resume` continues that.
                reason = environment_reason(exc) if runs else None
                if reason is not None:
                    raise EnvironmentProblem(out, reason) from exc
                raise
            finally:
                for r in runs:
                    r.run.close()
        results = [(line, *done[i]) for i, line in enumerate(lines)]
        summary = combined_summary(results, plans[0].metrics, template.seed, plans[0].context)
        try:
            write_json_atomic(out / SUMMARY_FILE, summary.to_json())
        except OSError as exc:
            # Every run is recorded; `--resume` on the folder reads them back and writes the summary again.
            reason = environment_reason(exc)
            if reason is None:
                raise
            raise EnvironmentProblem(out, reason) from exc
        return ManyResult(out, [(line, r) for line, r, _ in results], summary)
    finally:
        if lock is not None:
            lock.release()
        for p in plans:
            p.close()


def _finished_run(run_dir: Path, p: Plan, line: RepoLine) -> tuple[ReplayResult, list[dict]]:
    """A finished run read back (a resumed `--repos` whose run was done), its units in the plan's order, so
    the combined summary is the same as if it had just been run."""
    from ctxgauge.results import ReplayResults, ReplayUnit

    record = read_run(run_dir)
    if record.spec != json.loads(json.dumps(p.spec)):
        differ = "; ".join(spec_differences(record.spec, json.loads(json.dumps(p.spec)))) or "the spec"
        raise UserError(f"{run_dir}: recorded with different options than --repos line {line.line}: {differ}; "
                        "--resume needs the same command, or choose another --out")
    by_id = {u.id: u.to_json() for u in read_units(run_dir)}
    order = [c.sha for c in p.selection.eligible] + [sha for sha, _ in p.selection.skipped]
    units = [by_id[sha] for sha in order if sha in by_id]
    results = ReplayResults.from_json(record.results, str(run_dir / "run.json"), "results")
    typed = [ReplayUnit.from_json(u, str(run_dir)) for u in units]
    result = ReplayResult(run_dir=run_dir, results=results,
                          commits=[u for u in typed if u.status in ("ok", "failed")])
    return result, units
