"""Errors the user can mend: the CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input: a missing path, an unknown engine, a malformed spec. Printed as one line, exit code 2."""


class EngineError(Exception):
    """An engine failed at its work (crashed, timed out, answered garbage).

    In a suite this fails one unit and the run goes on; in a single `ctxgauge query` it is exit 2.
    """
