"""`ctxgauge replay REPO --engine E [--vs E2]`: a repository's own commits as requests, scored."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ctxgauge.cli._common import MISSES_HELP, console, err_console, misses_json, print_json, print_misses


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
        _render(result)
        if misses:
            print_misses(result.run_dir)
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


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def _render(r) -> None:
    from rich.table import Table

    c = r.counts
    console.print(f"[bold]replay[/] {r.engine}" + (f" vs {r.vs}" if r.vs else "")
                  + f": {c['ok']} commits replayed ({c['scored']} scored, {c['failed']} failed), "
                  f"{c['skipped']} skipped of {c['walked']} walked")
    kinds = r.by_kind
    table = Table("metric", f"all ({c['ok']})", f"code ({kinds['code']['commits']})",
                  f"other ({kinds['other']['commits']})", title=f"summary: {r.engine}")
    if r.vs_summary is not None:
        table.add_column(f"{r.vs} (all)")
    for name, value in r.summary.items():
        row = [name, _fmt(value), _fmt(kinds["code"]["summary"].get(name)), _fmt(kinds["other"]["summary"].get(name))]
        if r.vs_summary is not None:
            row.append(_fmt(r.vs_summary.get(name)))
        table.add_row(*row)
    console.print(table)
    skipped = {reason: n for reason, n in r.skipped.items() if n}
    if skipped:
        st = Table("reason", "commits", title="skipped")
        for reason, n in skipped.items():
            st.add_row(reason, str(n))
        console.print(st)
    if r.comparison:
        ct = Table("metric", r.engine, r.vs, "diff", "95% CI", "p", "W/T/L",
                   title=f"{r.engine} vs {r.vs}: paired over {r.comparison['commits']} commits, seed {r.comparison['seed']}")
        for name, m in r.comparison["metrics"].items():
            ct.add_row(name, _fmt(m["mean_a"]), _fmt(m["mean_b"]), f"{m['mean_diff']:+.3f}",
                       f"[{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]", f"{m['p_value']:.3g}",
                       f"{m['wins']}/{m['ties']}/{m['losses']}")
        console.print(ct)
    failed = [x for x in r.commits if x["status"] == "failed"]
    for x in failed[:10]:
        console.print(f"[red]failed[/] {x['sha'][:10]} {x['request']!r}: {x['reason']}", soft_wrap=True)
    if len(failed) > 10:
        console.print(f"[red]... and {len(failed) - 10} more failed commits (see the run's units)[/]")
    if r.gate is not None:
        g = r.gate
        gt = Table("metric", "baseline", "now", "drop", "", "worse commits",
                   title=f"gate against {g['baseline']}: {g['commits']} common commits, max drop {g['max_drop']}")
        for line in g["lines"]:
            worse = " ".join(s[:10] for s in line["worse"][:5]) + (" ..." if len(line["worse"]) > 5 else "")
            gt.add_row(line["metric"], _fmt(line["baseline"]), _fmt(line["current"]), f"{line['drop']:+.3f}",
                       "[green]ok[/]" if line["holds"] else "[red]FAIL[/]", worse if not line["holds"] else "")
        console.print(gt)
    console.print(f"run recorded in {r.run_dir}")
