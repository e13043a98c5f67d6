"""`ctxgauge report RUNS_DIR... [--html FILE] [--md FILE] [--json]`: one report of any set of runs.

Printed to the terminal unless --html, --md or --json is given. The HTML page is one self-contained file
(inline CSS and SVG, no script, no request) whose figures link to their runs by relative paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from ctxgauge.cli._common import MEND_RUN, console, err_console, plain, print_json, print_unreadable


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    runs: List[Path] = typer.Argument(..., help="Run directories, directories of runs, or export trees."),
    html: Optional[Path] = typer.Option(None, "--html", help="Write the self-contained HTML report here."),
    md: Optional[Path] = typer.Option(None, "--md", help="Write the Markdown report here."),
    title: str = typer.Option("ctxgauge report", "--title", help="The report's title."),
    misses: bool = typer.Option(False, "--misses", help="Also print (and write into --md) every missed request: its expected files, where each landed, the top k instead."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --html/--md file ctxgauge did not write (a file a run reads, or any file inside a run being reported, is never replaced)."),
    json_out: bool = typer.Option(False, "--json", help="Print the report model as JSON."),
) -> None:
    """Report on runs: per-suite tables and figures, every one naming the run it comes from."""
    from ctxgauge._output import check_output_target
    from ctxgauge.errors import UserError
    from ctxgauge.report import build_report, load_runs, render_terminal, write_html, write_markdown

    # A damaged run.json below a named directory leaves that run out (named on stderr), as `runs list` does;
    # a damaged run named itself still refuses (load_runs raises).
    unreadable: list[str] = []
    found = load_runs(runs, unreadable=unreadable)
    where = ", ".join(str(r) for r in runs)
    if not found and unreadable:
        more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
        raise UserError(f"no readable run under {where}: {unreadable[0]}{more}; {MEND_RUN}")
    if not found:
        raise UserError(f"no run directories under {where}")
    print_unreadable(unreadable)
    # The output rule (`_output`): checked before anything is written, so a refusal leaves every file as it was.
    inputs = [ref.path for ref in found]
    for option, target in (("--html", html), ("--md", md)):
        if target is not None:
            check_output_target(target, option=option, inputs=inputs, force=force)
    if html is not None and md is not None and os.path.realpath(html) == os.path.realpath(md):
        raise UserError("--html and --md name the same file; give each its own")
    model = build_report(found, title=title)
    if json_out:
        print_json(model.to_dict())
    # With --json, stdout holds only the JSON document; where files went goes to stderr.
    say = err_console if json_out else console
    if html is not None:
        say.print(f"wrote {plain(write_html(model, html))}", highlight=False, soft_wrap=True)
    if md is not None:
        say.print(f"wrote {plain(write_markdown(model, md, details=misses))}", highlight=False, soft_wrap=True)
    if html is None and md is None and not json_out:
        render_terminal(model, console, details=misses)
