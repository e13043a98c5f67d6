"""The command line lets numpy's idle BLAS workers sleep at once (`ctxgauge.cli.BLAS_THREAD_TIMEOUT`): set
before numpy is imported, so OpenBLAS reads it when it starts its workers, and never over a user's value."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, os, sys
import ctxgauge.cli as cli
loaded_before = "numpy" in sys.modules
sys.argv = ["ctxgauge", "--version"]
try:
    cli.main()
except SystemExit:
    pass
print(json.dumps({"numpy_before_main": loaded_before, "timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}),
      file=sys.stderr)
"""


def _probe(**env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    r = subprocess.run([sys.executable, "-c", PROBE], env={**base, **env}, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stderr.strip().splitlines()[-1])


def test_the_timeout_is_set_before_numpy_is_imported():
    from ctxgauge.cli import BLAS_THREAD_TIMEOUT

    got = _probe()
    assert got == {"numpy_before_main": False, "timeout": BLAS_THREAD_TIMEOUT}


def test_a_value_the_user_set_is_kept():
    assert _probe(OPENBLAS_THREAD_TIMEOUT="20")["timeout"] == "20"
