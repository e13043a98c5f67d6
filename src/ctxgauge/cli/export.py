"""`ctxgauge export RUNS_DIR --out DIR [--check]`: publish runs as a hash-chained tree with summaries.

Exit codes: 0 written (or, with --check, DIR equals a fresh export); 1 with --check when DIR differs (the
first differing file is named); 2 for bad input, a secret found, or a finished run whose files no longer
match its record.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ctxgauge.cli._common import console, err_console, plain, print_json


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    runs_dir: Path = typer.Argument(..., help="A directory of runs (or one run directory)."),
    out: Path = typer.Option(..., "--out", "-o", help="The export's directory (a previous export there is replaced)."),
    check: bool = typer.Option(False, "--check", help="Re-export into a temporary directory and compare with --out; "
                               "write nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: the export's result, or the check's."),
) -> None:
    """Export every run with its files, a manifest of SHA-256s and derived summaries; or check an export."""
    from ctxgauge.export import check_export, export_runs

    if check:
        result = check_export(runs_dir, out)
        if json_out:
            print_json({"ok": result.ok, "compared": result.compared, "first": result.first,
                        "differences": result.differences})
        elif result.ok:
            console.print(f"[green]ok[/]: {plain(out)} {plain(result.message())}", soft_wrap=True)
        else:
            err_console.print(f"[bold red]export --check failed:[/] {plain(out)}/{plain(result.message())}", soft_wrap=True)
        raise typer.Exit(0 if result.ok else 1)
    done = export_runs(runs_dir, out)
    if json_out:
        print_json({"out": str(done.out), "runs": done.runs, "did_not_finish": done.did_not_finish,
                    "files": done.files, "manifest_sha256": done.manifest_sha256, "warnings": done.warnings})
        return
    for warning in done.warnings:
        err_console.print(f"[yellow]warning:[/] {plain(warning)}", soft_wrap=True)
    dnf = f" ({done.did_not_finish} did not finish, published as such)" if done.did_not_finish else ""
    console.print(f"exported {done.runs} run{'s' if done.runs != 1 else ''}{dnf}: {done.files} files in {plain(done.out)}",
                  soft_wrap=True)
    console.print(f"manifest.json sha256 {done.manifest_sha256}", soft_wrap=True)  # one line, to copy whole
    console.print(f"report: {plain(done.out / 'report.html')}", soft_wrap=True)
