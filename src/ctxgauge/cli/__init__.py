"""The `ctxgauge` command: one Typer app (`_app`), one module per sub-command, each a thin layer over the API.

Sub-command modules import their heavy dependencies inside the command function, so `--help` stays
instant. Every user error (ctxgauge.errors.UserError) becomes one line on stderr and exit code 2; any other
exception is a bug: one line naming a log file that holds its traceback, and exit code 70 (`_crash`). That
holds for an exception raised while the app itself is imported too: this module imports only the standard
library until `main` imports the app inside its guard.
"""

from __future__ import annotations

import os
import signal
import sys

from ctxgauge.cli._crash import crash_before_app
from ctxgauge.cli._text import resume_command
from ctxgauge.cli._scratch import process_scratch
from ctxgauge.errors import EngineError, UserError


def __getattr__(name: str):
    # `from ctxgauge.cli import app` (tests, `typer.testing.CliRunner`): the app, imported when first asked for.
    if name == "app":
        from ctxgauge.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the `ctxgauge` script and `python -m ctxgauge`."""
    _quiet_blas_threads()
    _unwind_on_sigterm()
    with process_scratch():  # every temporary file of the command in one directory, removed at the end
        _run()


def _run() -> None:
    try:
        try:
            from ctxgauge.cli._app import app
        except Exception as exc:  # e.g. typer or rich broken by an incompatible upgrade: still a bug's one line
            crash_before_app(exc)
        app()
    except UserError as exc:
        _fail(str(exc))
    except EngineError as exc:
        _fail(f"engine failed: {exc}")
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except SystemExit as exc:
        if _in_chain(exc, BrokenPipeError) is not None:
            _reader_gone()
        # Typer turns Ctrl-C into a silent exit 130; the KeyboardInterrupt is still in the exception chain.
        interrupt = _in_chain(exc, KeyboardInterrupt)
        if interrupt is None:
            raise
        _interrupted(interrupt)


EXIT_READER_GONE = 141
"""128 + SIGPIPE, what a shell reports for `yes | head`: stdout's reader left before the output ended. Click
ends such a command with 1, which the exit-code table gives to a failed gate (a `compare` FAIL read through
`| head` looked like one)."""


def _reader_gone() -> None:
    # Click met EPIPE and exits 1 (its SystemExit carries the BrokenPipeError in its chain). What was printed
    # is all the reader took; a run is recorded before its report is printed. Later flushes of the closed
    # stdout (at interpreter exit) go to /dev/null, so no "Exception ignored" line follows.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    raise SystemExit(EXIT_READER_GONE)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill PID`, a scheduler stopping a job), raised where the process is so that it unwinds as
    Ctrl-C does: the run is recorded `cancelled` (resumable), temporary directories are removed and engine
    processes closed. Python's default action for SIGTERM ends the process at once, which left the run
    `started` and every suite's temporary directory (a cases run's indexes: hundreds of MB) behind."""


# OpenBLAS (numpy's BLAS) starts a worker per core when numpy is imported, and a worker with no work spins
# for 2^28 cycles (about 0.1 s here) before it sleeps: at import and after every product. A command that
# runs no product (bm25, graph, every suite's bookkeeping) paid that as CPU it never used: 0.1-0.14 CPU s of
# a 1.9 s determinism run on usememos/memos. 2^4 cycles lets idle workers sleep at once; the number of workers
# and how a product is split among them do not change, so no score does (minilm query on psf/requests: the
# same JSON with and without). A value the user set is kept.
BLAS_THREAD_TIMEOUT = "4"


def _quiet_blas_threads() -> None:
    """Before numpy is imported (nothing this module imports loads it)."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)


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


def _fail(message: str, code: int = 2) -> None:
    from ctxgauge.cli._common import fail  # Rich: imported once the app is (it is by the time this runs)

    fail(message, code=code)


def _interrupted(exc: BaseException) -> None:
    run_dir = getattr(exc, "run_dir", None)
    # 143 = 128 + SIGTERM, what a shell reports for a process ended by that signal; 130 for Ctrl-C.
    what, code = ("terminated", 143) if _in_chain(exc, Terminated) is not None else ("interrupted", 130)
    _fail(f"{what}; the run is recorded as cancelled in {run_dir}; to continue it: "
          f"{resume_command(sys.argv[1:], run_dir)}" if run_dir else what, code=code)


