"""`ctxgauge replay REPO --engine E [--vs E2]`: a repository's own commits as requests, scored."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ctxgauge.cli._common import MISSES_HELP, err_console, misses_json, print_json, print_run_report


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)


def replay(
    repo: Path = typer.Argument(..., help="A git repository (work tree or bare)."),
    engine: str = typer.Option(..., "--engine", "-e", help="Engine spec, e.g. bm25 or 'bm25(k1=1.2)'."),
    vs: Optional[str] = typer.Option(None, "--vs", help="A second engine, run on exactly the same commits and compared."),
    rev: str = typer.Option("HEAD", "--rev", help="Walk the ancestors of this revision (git rev-list order)."),
    k: List[int] = typer.Option([5, 10], "-k", help="Cutoff to score at; repeat for several (default 5 and 10)."),
    depth: int = typer.Option(100, "--depth", help="Files each query asks for (MRR reads all of them)."),
    commits: int = typer.Option(100, "--commits", help="Replay the N newest eligible commits (0: all)."),
    max_files: int = typer.Option(8, "--max-files", help="Skip commits with more expected files than this."),
    since: Optional[str] = typer.Option(None, "--since", help="Only commits newer than this date (as git log --since)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap interval and randomization test (--vs)."),
    trec: Optional[Path] = typer.Option(None, "--trec", help="Also write run.trec and qrels.txt into this directory."),
    out: Optional[Path] = typer.Option(None, "--out", help="Run directory (default ctxgauge-runs/replay-<time>-<id>)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the unfinished run in --out, skipping commits done."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="A stored replay run: exit 1 if a metric drops against it."),
    max_drop: float = typer.Option(0.02, "--max-drop", help="Largest drop of a metric's mean against --baseline that passes."),
    misses: bool = typer.Option(False, "--misses", help=MISSES_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {summary, commits, skipped, comparison?, run_dir, misses? ...}."),
) -> None:
    """Replay REPO's commits: each commit's subject is a request, the files it changed are the answer."""
    from ctxgauge.suites.replay import ReplayConfig
    from ctxgauge.suites.replay import replay as run_replay

    config = ReplayConfig(
        repo=repo, engine=engine, vs=vs, rev=rev, ks=tuple(dict.fromkeys(k)), depth=depth,
        commits=commits or None, max_files=max_files, since=since, seed=seed, out=out, resume=resume,
        trec=trec, baseline=baseline, max_drop=max_drop,
    )
    with _progress() as on_commit:
        result = run_replay(config, progress=on_commit)
    if json_out:
        print_json({**result.to_dict(), **({"misses": misses_json(result.run_dir)} if misses else {})})
    else:
        print_run_report(result.run_dir, misses=misses)
        failed = [x for x in result.commits if x["status"] == "failed"]
        for x in failed[:10]:
            err_console.print(f"failed {x['sha'][:10]} {x['request']!r}: {x['reason']}", soft_wrap=True, markup=False)
        if len(failed) > 10:
            err_console.print(f"... and {len(failed) - 10} more failed commits (see the run's units)")
        err_console.print(f"run recorded in {result.run_dir}", markup=False, soft_wrap=True)
    raise typer.Exit(0 if result.passed else 1)


class _progress:
    """A Rich progress bar over commits on stderr, shown only on a terminal."""

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                             TimeElapsedColumn(), console=err_console, transient=True,
                             disable=not err_console.is_terminal)
        self._bar.__enter__()
        self._task = self._bar.add_task("", total=None)
        return self._update

    def _update(self, done: int, total: int, sha: str) -> None:
        self._bar.update(self._task, completed=done, total=total, description=sha)

    def __exit__(self, *exc) -> None:
        self._bar.__exit__(*exc)
