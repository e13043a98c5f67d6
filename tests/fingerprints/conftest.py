"""Shared fixtures: the interop folder (skipped when absent), Node (skipped when absent), fingerprint factory."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxgauge.fingerprints import CorpusRef, Fingerprint, SystemIdentity

DATA = Path(__file__).resolve().parent / "data"
# tests/fingerprints/conftest.py -> parents[2] is the repository root; the shared folder sits beside it.
INTEROP = (Path(__file__).resolve().parents[2] / "../shared/interop/contextbenchmark").resolve()

BM25_WIN = "bm25.micro-app.win32-x64.fingerprint.json"
BM25_LINUX = "bm25.micro-app.linux-x64.fingerprint.json"
MINILM_WIN = "emb-minilm.micro-app.win32-x64.fingerprint.json"
SPIDERBRAIN_WIN = "spiderbrain.micro-app.win32-x64.fingerprint.json"
INTEROP_FILES = (BM25_WIN, BM25_LINUX, MINILM_WIN, SPIDERBRAIN_WIN)


@pytest.fixture
def interop() -> Path:
    """The folder of ContextBenchmark's published fingerprints; skips when a clone has no ../shared."""
    if not INTEROP.is_dir():
        pytest.skip(f"interop data not present: {INTEROP}")
    return INTEROP


@pytest.fixture
def node() -> Callable[[str, Any], str]:
    """Run a Node.js snippet that reads JSON `input` on stdin; returns its stdout. Skips without node."""
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is not on PATH")

    def run(script: str, data: Any = None) -> str:
        # The input travels as ASCII-only JSON, so Node receives exactly the values Python holds.
        stdin = json.dumps(data, ensure_ascii=True)
        prelude = "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        done = subprocess.run([exe, "-e", prelude + script], input=stdin.encode(), capture_output=True, check=True)
        return done.stdout.decode("utf-8")

    return run


def make(**over: Any) -> Fingerprint:
    """A format 2 fingerprint like the reference's test helper `v2()`, with fields overridden."""
    fields: dict[str, Any] = dict(
        format=2,
        benchmark_version="0.1.0",
        adapter="bm25",
        system=SystemIdentity("sha256:abc", "content-hash"),
        corpus=CorpusRef("micro-app", "c0ffee"),
        k=10,
        env={"os": "linux 6.8", "arch": "x64", "node": "v24.14.0"},
        artifact_hash="art1",
        query_hashes={"q1": "aaa", "q2": "bbb"},
    )
    fields.update(over)
    return Fingerprint(**fields)


ENV_B = {"os": "win32 10.0.19045", "arch": "x64", "node": "v24.14.0"}


@pytest.fixture
def fp_factory() -> Callable[..., Fingerprint]:
    """`make` as a fixture."""
    return make
