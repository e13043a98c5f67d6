"""Errors the user can mend: the CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input: a missing path, an unknown engine, a malformed spec. Printed as one line, exit code 2."""


class EngineError(Exception):
    """An engine failed at its work (crashed, timed out, answered garbage).

    In a suite this fails one unit and the run goes on; in a single `ctxgauge query` it is exit 2.
    """


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while a run was being recorded: the run is marked cancelled and `run_dir` is where it lies, so
    the one line the CLI prints can say how to resume it (its default name holds a time stamp the user never
    saw)."""

    def __init__(self, run_dir):
        super().__init__(str(run_dir))
        self.run_dir = run_dir


EXIT_UNFINISHED = 6
"""Exit code of a run that did not finish (DESIGN.md's table): some units are gaps; --resume fills them."""
EXIT_NOTHING_MEASURED = 7
"""Exit code of a run that measured nothing: every unit failed or was skipped."""
EXIT_INTERNAL = 70
"""Exit code of an internal error (a bug in ctxgauge, sysexits' EX_SOFTWARE): never 1, which reads as a failed
gate, nor 2, which blames the input. The CLI writes the traceback to a log file and names it in one line."""
