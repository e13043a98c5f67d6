"""The `ctxgauge` command: one Typer app, one module per sub-command, each a thin layer over the API.

Sub-command modules import their heavy dependencies inside the command function, so `--help` stays
instant. Every user error (ctxgauge.errors.UserError) becomes one line on stderr and exit code 2; any other
exception is a bug: one line naming a log file that holds its traceback, and exit code 70.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from ctxgauge.cli import (
    battery, cache, cases, check, demo, determinism, engines, export, fingerprint, qa, query, replay, report, runs,
)
from ctxgauge.cli._common import crash
from ctxgauge.errors import EngineError, UserError


class _Root(TyperGroup):
    """The root command: an unexpected exception in any sub-command is a bug, so it becomes `crash` (exit 70,
    its traceback in a log file named in one line) here, once for every command and for `CliRunner` alike.
    What the user can mend, and Typer's own exits and usage errors, pass on unchanged."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (UserError, EngineError, TyperException, typer.Exit, typer.Abort):
            raise
        except Exception as exc:
            crash(exc)


app = typer.Typer(
    cls=_Root,
    name="ctxgauge",
    help="Measure AI context engines: is it right, is it the same every time, does it help a model answer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for module in (query, engines, check, demo, determinism, fingerprint, qa, battery, replay, cases, report, export, runs,
               cache):
    module.register(app)


def _print_version(value: bool) -> None:
    # A parameter callback runs while the options are parsed, before Typer asks for a sub-command: in the
    # group callback itself, `ctxgauge --version` stopped at "Missing command." (exit 2).
    if value:
        import ctxgauge

        typer.echo(ctxgauge.__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version, expose_value=False),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="The work cache's directory (per-file tokens, parses, embeddings shared across runs; default: CTXGAUGE_CACHE, else the user's cache directory)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Read and write no work cache: every file is read, tokenised and embedded again."),
) -> None:
    # The choice travels in the environment so worker processes a command starts make the same one.
    if no_cache:
        os.environ["CTXGAUGE_CACHE"] = "off"
    elif cache_dir is not None:
        os.environ["CTXGAUGE_CACHE"] = str(cache_dir.expanduser().absolute())


def main() -> None:
    """Entry point of the `ctxgauge` script and `python -m ctxgauge`."""
    from ctxgauge.cli._common import fail

    _unwind_on_sigterm()
    try:
        app()
    except UserError as exc:
        fail(str(exc))
    except EngineError as exc:
        fail(f"engine failed: {exc}")
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except SystemExit as exc:
        # Typer turns Ctrl-C into a silent exit 130; the KeyboardInterrupt is still in the exception chain.
        interrupt = _in_chain(exc, KeyboardInterrupt)
        if interrupt is None:
            raise
        _interrupted(interrupt)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill PID`, a scheduler stopping a job), raised where the process is so that it unwinds as
    Ctrl-C does: the run is recorded `cancelled` (resumable), temporary directories are removed and engine
    processes closed. Python's default action for SIGTERM ends the process at once, which left the run
    `started` and every suite's temporary directory (a cases run's indexes: hundreds of MB) behind."""


def _unwind_on_sigterm() -> None:
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # a parent chose (e.g. SIG_IGN): keep its choice

    def raise_once(signum, frame):
        # A second SIGTERM while unwinding must not break off the cleanup the first one started.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated()

    signal.signal(signal.SIGTERM, raise_once)


def _in_chain(exc: BaseException | None, kind: type) -> BaseException | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _interrupted(exc: BaseException) -> None:
    from ctxgauge.cli._common import fail

    run_dir = getattr(exc, "run_dir", None)
    # 143 = 128 + SIGTERM, what a shell reports for a process ended by that signal; 130 for Ctrl-C.
    what, code = ("terminated", 143) if _in_chain(exc, Terminated) is not None else ("interrupted", 130)
    fail(f"{what}; the run is recorded as cancelled in {run_dir}: add --out {run_dir} --resume to the same "
         "command to continue it" if run_dir else what, code=code)
