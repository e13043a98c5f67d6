"""`ctxgauge check ENGINE`: run the engine contract and report every breach."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ctxgauge.cli._common import console, err_console, plain, print_json


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(
    engine: str = typer.Argument(..., help="Engine spec, e.g. bm25 or 'command(cmd=\"node engine.js\")'."),
    source: Optional[Path] = typer.Option(None, "--source", help="A git repository to check on (default: the bundled sample)."),
    rev: str = typer.Option("HEAD", "--rev", help="Revision to build at."),
    old_rev: Optional[str] = typer.Option(None, "--old-rev", help="Older revision the update check starts from (default: REV~5, or the oldest ancestor of a shorter history)."),
    queries: int = typer.Option(8, "--queries", min=1, help="How many requests (recent commit subjects) to query."),
    k: int = typer.Option(10, "-k", min=1, help="How many files each request asks for."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {engine, identity, passed, checks: [{name, status, detail}]}."),
) -> None:
    """Build twice, query, update and watch writes: exit 0 when the engine keeps the contract, 1 when not."""
    import tempfile

    from ctxgauge.engines import check_engine
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines import get_engine
    from ctxgauge.git import Repo
    from ctxgauge.sample import materialize_sample
    from ctxgauge.suites._requests import recent_requests

    eng = get_engine(engine)
    with tempfile.TemporaryDirectory(prefix="ctxgauge-check-src-") as tmp:
        path = source if source is not None else materialize_sample(Path(tmp) / "shelfd")
        repo = Repo(path)
        new = Corpus.from_git(repo, rev)
        from ctxgauge.corpus import count_uncommitted

        if source is not None and repo.location.work_tree is not None and new.rev == repo.resolve("HEAD"):
            new.uncommitted = count_uncommitted(repo, new.rev, new.subtree)
        err_console.print(new.source_line(), soft_wrap=True, markup=False)
        if old_rev is None:
            # REV~5, or the oldest first-parent ancestor of a shorter history (REV itself for a single
            # commit: an update with no change must still equal a rebuild).
            chain = repo.run(["rev-list", "--first-parent", "--max-count=6", str(new.rev)]).split()
            old_rev = chain[min(5, len(chain) - 1)]
        old = Corpus.from_git(repo, old_rev)
        try:
            report = check_engine(eng, old, new, recent_requests(new, queries), k=k, watch=[Path(path)])
        finally:
            repo.close()
            # An MCP server's tools: those it listed and those used (`tools_report`, read before close).
            tools = getattr(eng, "tools_report", lambda: None)()
            getattr(eng, "close", lambda: None)()
    if json_out:
        print_json({**report.to_dict(), **({"tools": tools} if tools else {})})
    else:
        from ctxgauge.report._fit import FREE, WHOLE, Col, Fitted

        # The engine spec and each detail (an engine's own error message) are user text: `plain`.
        colour = {"pass": "green", "fail": "red", "skip": "yellow"}
        rows = [[plain(c.name), f"[{colour[c.status]}]{c.status}[/]", plain(c.detail)] for c in report.checks]
        console.print(Fitted([Col("check", WHOLE), Col("result", WHOLE), Col("detail", FREE)], rows,
                             title=f"contract of {plain(report.engine)}"))
        if tools:
            used = ", ".join(f"{k}={v}" for k, v in tools["used"].items() if v)
            console.print(f"tools found: {plain(', '.join(tools['found']))}; used: {plain(used)}")
    raise typer.Exit(0 if report.passed and all(c.status != "skip" for c in report.checks[:1]) else 1)
