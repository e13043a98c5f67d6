"""`ctxgauge replay REPO --engine E [--vs E2]`: a repository's own commits as requests, scored.
`ctxgauge replay --repos FILE --engine E`: many repositories, one run each and a combined summary."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ctxgauge.cli._common import MISSES_HELP, console, err_console, exit_for_run, misses_json, plain, print_json, print_run_report
from ctxgauge.cli._options import check_resume, out_option, resume_option
from ctxgauge.cli._progress import ProgressDisplay
from ctxgauge.executors._base import EXECUTOR_HELP


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)


def replay(
    repo: Optional[Path] = typer.Argument(None, help="A git repository (work tree or bare); or use --repos."),
    repos: Optional[Path] = typer.Option(None, "--repos", help="A file of repositories, one a line: PATH [REV [COMMITS [LABEL]]] ('-' keeps a default; a URL label is only a name)."),
    engine: str = typer.Option(..., "--engine", "-e", help="Engine spec, e.g. bm25 or 'bm25(k1=1.2)'."),
    vs: Optional[str] = typer.Option(None, "--vs", help="A second engine, run on exactly the same commits and compared."),
    rev: str = typer.Option("HEAD", "--rev", help="Walk the ancestors of this revision (git rev-list order)."),
    k: List[int] = typer.Option([5, 10], "-k", help="Cutoff to score at; repeat for several (default 5 and 10)."),
    depth: int = typer.Option(100, "--depth", help="Files each query asks for (MRR reads all of them)."),
    budget: List[int] = typer.Option([1000, 4000, 16000], "--budget", help="Token budget to pack each ranking's spans under for the context figures (line_coverage_tokens@B, ...); repeat for several (default 1000, 4000 and 16000)."),
    commits: int = typer.Option(100, "--commits", help="Replay the N newest eligible commits (0: all)."),
    max_files: int = typer.Option(8, "--max-files", help="Skip commits with more expected files than this."),
    since: Optional[str] = typer.Option(None, "--since", help="Only commits newer than this date (as git log --since)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap interval and randomization test (--vs)."),
    trec: Optional[Path] = typer.Option(None, "--trec", help="Also write run.trec and qrels.txt into this directory."),
    out: Optional[Path] = out_option("replay"),
    resume: bool = resume_option(),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="A stored replay run: exit 1 if a metric drops against it."),
    max_drop: float = typer.Option(0.02, "--max-drop", help="Largest drop of a metric's mean against --baseline that passes."),
    gate: List[str] = typer.Option([], "--gate", help="A metric the --baseline gate checks, ranking or context (e.g. --gate line_coverage_tokens@4000); repeat for several (default: every ranking metric)."),
    misses: bool = typer.Option(False, "--misses", help=MISSES_HELP),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    slice_size: int = typer.Option(0, "--slice", help="Commits per unit of work (0: about two slices per worker, one with a single worker; results do not depend on it)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {summary, commits, skipped, comparison?, run_dir, misses? ...}; with --repos {repositories, pooled, vs_pooled, out, ...}."),
) -> None:
    """Replay REPO's commits: each commit's subject is a request, the files it changed are the answer."""
    check_resume(resume, out)
    from ctxgauge.errors import UserError
    from ctxgauge.suites.replay import ReplayConfig, read_repos_file, replay_many
    from ctxgauge.suites.replay import replay as run_replay

    if (repo is None) == (repos is None):
        raise UserError("name one repository (REPO) or a file of them (--repos FILE), not both or neither")
    config = ReplayConfig(
        repo=repo or Path("."), engine=engine, vs=vs, rev=rev, ks=tuple(dict.fromkeys(k)), depth=depth,
        budgets=tuple(dict.fromkeys(budget)),
        commits=commits or None, max_files=max_files, since=since, seed=seed, out=out, resume=resume,
        trec=trec, baseline=baseline, max_drop=max_drop, gate=tuple(gate), executor=executor, slice_size=slice_size or None,
    )
    if repos is not None:
        lines = read_repos_file(repos, config.commits)
        with ProgressDisplay("replay", unit="commits") as progress:
            many = replay_many(config, lines, out, progress=progress)
        if json_out:
            print_json(many.to_dict())
        else:
            _render_many(many)
        # One rule for every suite command: 7 when no repository measured anything, 6 when some units failed.
        exit_for_run([result.run_dir for _, result in many.results], True)
    with ProgressDisplay("replay", unit="commits") as progress:
        result = run_replay(config, progress=progress)
    if json_out:
        print_json({**result.to_dict(), **({"misses": misses_json(result.run_dir)} if misses else {})})
    else:
        print_run_report(result.run_dir, misses=misses)
        failed = [x for x in result.commits if x.status == "failed"]
        for x in failed[:10]:
            err_console.print(f"failed {x.id[:10]} {x.request!r}: {x.reason}", soft_wrap=True, markup=False)
        if len(failed) > 10:
            err_console.print(f"... and {len(failed) - 10} more failed commits (see the run's units)")
        from ctxgauge.records import read_run
        from ctxgauge.results import ReplaySpec

        spec = ReplaySpec.from_json(read_run(result.run_dir).spec, str(result.run_dir / "run.json"), "spec")
        err_console.print(f"SOURCE {spec.repo}@{str(spec.head)[:10]}"
                          + (f", subtree {spec.subtree}/" if spec.subtree else "")
                          + " (committed trees; uncommitted changes are not measured)", markup=False, soft_wrap=True)
        err_console.print(f"run recorded in {result.run_dir}", markup=False, soft_wrap=True)
    exit_for_run(result.run_dir, result.passed)


def _render_many(m) -> None:
    """The `--repos` table, from the typed summary (`results.ReplayManySummary`): each repository's headline
    figures and line coverage at the middle budget, then the pooled ones with their intervals."""
    from ctxgauge.metrics.scoring import headline_metrics
    from ctxgauge.metrics.spans import middle_budget
    from ctxgauge.report._common import fmt, fmt_interval
    from ctxgauge.report._fit import WHOLE, Col, Fitted

    s = m.summary
    shown = headline_metrics(s.metrics)
    budget = middle_budget(s.budgets)
    middle = None if budget is None else f"line_coverage_tokens@{budget}"
    if middle is not None and middle in s.pooled:
        shown = [*shown, middle]
    sides = [(s.engine, "summary", s.pooled)]
    if s.vs:
        sides.append((s.vs, "vs_summary", s.vs_pooled or {}))
    title = " vs ".join(plain(name) for name, _, _ in sides)
    # The middle budget's line coverage goes first when the terminal is narrow (drop=1): the ranking
    # headline stays.
    cols = [Col("repository", WHOLE)] + ([Col("engine", WHOLE)] if len(sides) > 1 else []) + \
        [Col(name, WHOLE, right=True, drop=1 if name == middle else None) for name in ["commits", *shown]]
    engine = (lambda name: [plain(name)]) if len(sides) > 1 else (lambda name: [])
    rows = []
    for repo in s.repositories:
        for name, key, _ in sides:
            figures = getattr(repo, key) or {}
            rows.append([plain(repo.run), *engine(name), str(repo.counts.ok),
                         *(fmt(figures.get(n)) for n in shown)])
    commits = str(sum(r.counts.ok for r in s.repositories))
    for name, _, pooled in sides:
        rows.append(["[bold]pooled[/]", *engine(name), commits,
                     *(fmt(pooled[n].mean) if pooled.get(n) else "-" for n in shown)])
        rows.append(["95% CI", *engine(name), "",
                     *(fmt_interval(pooled[n].ci_low, pooled[n].ci_high) if pooled.get(n) else "-" for n in shown)])
    n_repos = len(s.repositories)
    console.print(Fitted(cols, rows, title=f"replay {title}: {n_repos} repositor{'y' if n_repos == 1 else 'ies'}"))
    console.print(f"pooled intervals resample repositories, then commits within them (seed {s.seed}); "
                  f"runs and summary.json in {plain(m.out)}", soft_wrap=True)
