"""Fixtures for the mcp engine's tests: real MCP servers (tests/engines/mcp/servers/) written with the SDK."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

SERVERS = Path(__file__).with_name("servers")


def _word_spec(mode: str = "structured", *extra: str, timeout: float = 20, **params: str) -> str:
    """The spec of tests/engines/mcp/servers/word_server.py in `mode`, over stdio."""
    cmd = " ".join([sys.executable, str(SERVERS / "word_server.py"), "--mode", mode, *extra])
    inner = ",".join([f"cmd={cmd!r}".replace("'", '"'), *(f"{k}={v!r}".replace("'", '"') for k, v in params.items()),
                      f"timeout={timeout}"])
    return f"mcp({inner})"


@pytest.fixture(autouse=True)
def _pythonpath(monkeypatch):
    # The servers import ctxgauge (bm25_server) from this checkout, whatever is installed.
    src = str(Path(__file__).resolve().parents[3] / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])))


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "src").mkdir(parents=True)
    # Long enough for the servers' second range of a file (lines 5-6 of loans.py, 12-14 of members.py).
    (root / "src" / "loans.py").write_text("def overdue_fee():\n    return round(fee, 2)\n" + "\n" * 4 + "# end\n")
    (root / "src" / "members.py").write_text("class Member:\n    email = ''\n" + "\n" * 14 + "# end\n")
    (root / "README.md").write_text("# library\nfee rules\n")
    return root


@pytest.fixture
def word_spec():
    """`word_spec(mode, *flags, timeout=20, **params)`: the spec of servers/word_server.py over stdio."""
    return _word_spec


@pytest.fixture
def servers() -> Path:
    return SERVERS
