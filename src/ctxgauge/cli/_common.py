"""What every sub-command shares: consoles, JSON output, the one-line error, common options."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, NoReturn

import typer
from rich.markup import escape

from ctxgauge.cli._console import SafeConsole
from ctxgauge.cli._crash import crash_line
from ctxgauge.cli._text import json_text, printable
from ctxgauge.errors import EXIT_INTERNAL, EXIT_NOTHING_MEASURED, EXIT_UNFINISHED  # noqa: F401 (the one table)

console = SafeConsole(highlight=False)
err_console = SafeConsole(stderr=True, highlight=False)
"""Every command prints through these two: data reaches the terminal with its control characters escaped
(`_console.SafeConsole`)."""


def print_json(obj: Any) -> None:
    """Machine output: one JSON document on stdout (sorted keys, so scripts and diffs see stable text). JSON
    escapes the C0 controls itself; the C1 and bidirectional controls and U+2028/2029 it would leave raw are
    written as `\\uXXXX` too (`_text.json_text`): the same document to a parser, inert on a terminal."""
    sys.stdout.write(json_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)) + "\n")
    sys.stdout.flush()


def plain(text: object) -> str:
    """User text (a path, a revision, an engine's message) made safe to print through Rich: markup escaped
    (`a[/b]` would raise MarkupError, `[bold]` would vanish), and made one printable line (`_text.printable`:
    a newline in a path would split a one-line error)."""
    return escape(printable(text))


MEND_RUN = "repair or remove its run.json to include it"
"""How to mend a run left out because its record cannot be read (`print_unreadable`, `report`'s error)."""


def print_unreadable(unreadable: list[str]) -> None:
    """One stderr line per run left out because its run.json cannot be read (`path: why`, from
    `records.read_found`): how `runs list` and `report` over a directory name the runs they skip."""
    for why in unreadable:
        err_console.print(f"[yellow]skipped[/] {plain(why)}; {MEND_RUN}", soft_wrap=True)


def fail(message: str, code: int = 2) -> None:
    """Print one line to stderr and exit: the shape of every user error (the message is user text: never
    read as markup, never split over lines)."""
    err_console.print(f"[bold red]error:[/] {plain(message)}", soft_wrap=True)
    raise SystemExit(code)


def crash(exc: BaseException) -> NoReturn:
    """A bug in ctxgauge: its traceback to a log file in the temporary directory, one line naming the file, and
    exit EXIT_INTERNAL (`_crash.crash_line`). Python's own exit for an uncaught exception, 1 with the traceback
    on the terminal, would read as a failed gate. When no log file can be written the traceback goes to stderr
    instead, so it is never lost."""
    line, unwritten = crash_line(exc)
    if unwritten is not None:
        err_console.print(unwritten, markup=False, highlight=False)
    err_console.print(f"[bold red]error:[/] {escape(line)}", soft_wrap=True)
    raise typer.Exit(EXIT_INTERNAL)


MISSES_HELP = ("List every missed request: its expected files, the rank where each landed (or 'not in the top N'), "
               "and the top k instead.")


def print_misses(run_dir: Any) -> None:
    """The misses view of one recorded run (replay or cases), through the report model."""
    from ctxgauge.report import build_report, load_runs, render_details

    render_details(build_report(load_runs([run_dir])), console)


def print_run_report(run_dir: Any, *, misses: bool = False) -> None:
    """A suite command's terminal output: the report model's rendering of the run it recorded, so it is
    byte for byte what `ctxgauge report RUN_DIR` prints (where the run lies goes to stderr)."""
    from ctxgauge.report import build_report, load_runs, render_terminal

    render_terminal(build_report(load_runs([run_dir])), console, details=misses)


def misses_json(run_dir: Any) -> list[dict]:
    """The misses of one recorded run as `--json` rows: {unit, request, engine, expected: [{path, rank,
    indexed, gold, returned}], top, depth, top_spans} (`gold`: the unit's gold lines in that file, `returned`:
    the spans the engine returned for it, null when not returned; `top_spans`: the spans of each of `top`,
    empty when the ranking records none)."""
    from dataclasses import asdict

    from ctxgauge.report import load_runs, misses
    from ctxgauge.report._retrieval import engine_name, ks_of, vs_name

    out = []
    for run in load_runs([run_dir]):
        names = [engine_name(run)] + ([vs_name(run)] if vs_name(run) else [])
        out += [asdict(m) for m in misses(run, ks_of(run)[0], names)]
    return out


def run_exit(run_dir) -> tuple[int | None, str | None]:
    """The exit code a recorded run ends its command with, by the one outcome rule (records._outcome): 7 when
    it measured nothing, 6 when it is unfinished, each with its one line; (None, None) when it measured what
    it was asked to (its gates then decide between 0 and 1). A list of run directories (the runs of one
    `replay --repos`) is judged as one: their units together."""
    from ctxgauge.records import outcome_of, read_units

    # From the units, not the record's counts alone: a skipped unit that holds a figure measured something.
    dirs = run_dir if isinstance(run_dir, (list, tuple)) else [run_dir]
    verdict = outcome_of([u for d in dirs for u in read_units(d)])
    return verdict.exit_code, verdict.message


def exit_for_run(run_dir, gates_held: bool) -> None:
    """End a suite command: 7 when the run measured nothing, 6 when it is unfinished (one line to stderr
    each), else 0 or 1 by its gates. Every suite command ends here (records decide, see records._outcome)."""
    import typer

    code, message = run_exit(run_dir)
    if code is not None:
        err_console.print(f"[yellow]{plain(message)}[/]", soft_wrap=True)
        raise typer.Exit(code)
    raise typer.Exit(0 if gates_held else 1)
