"""Path helpers shared by the graph engine's resolvers (corpus paths are POSIX and relative)."""

from __future__ import annotations

import posixpath
from typing import Iterable

from ctxgauge.corpus import path_key


def dirname(path: str) -> str:
    return posixpath.dirname(path)


def join(*parts: str) -> str:
    return posixpath.join(*[p for p in parts if p]) if any(parts) else ""


def norm(path: str) -> str | None:
    """A corpus-relative path normalised, or None if it climbs out of the corpus."""
    out = posixpath.normpath(path)
    if out == ".":
        return ""
    return None if out.startswith("../") or out == ".." or out.startswith("/") else out


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/")):
        if x != y:
            break
        n += 1
    return n


def nearest(importer: str, candidates: Iterable[str]) -> str:
    """The candidate sharing the most leading directories with the importer; ties by path bytes."""
    return min(candidates, key=lambda c: (-_common(importer, c), path_key(c)))
