"""A stage's identity: what must change whenever the work it produces could change.

The source of every module the stage runs, its configuration, and the versions of the libraries it calls.
Hashing source rather than trusting a hand-bumped version means an edit to a tokeniser can never be served
work its previous version produced.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import inspect
from typing import Any, Iterable

_source_hashes: dict[str, str] = {}


def _source_hash(module: str) -> str:
    if module not in _source_hashes:
        try:
            src = inspect.getsource(importlib.import_module(module))
        except (OSError, TypeError, ImportError):
            src = ""
        _source_hashes[module] = hashlib.sha256(src.encode()).hexdigest()
    return _source_hashes[module]


@functools.cache  # asked for every stage lookup, engine identity and record (~1 ms each uncached)
def distribution_version(dist: str) -> str | None:
    """The installed version of a distribution, None when it is not installed. Read once per process."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def stage_identity(modules: Iterable[str], config: dict[str, Any] | None = None,
                   libraries: Iterable[str] = ()) -> dict[str, Any]:
    """`{modules: {name: sha256 of source}, config, libraries: {dist: version}}`, sorted, JSON-ready."""
    return {
        "modules": {m: _source_hash(m) for m in sorted(set(modules))},
        "config": dict(sorted((config or {}).items())),
        "libraries": {d: distribution_version(d) for d in sorted(set(libraries))},
    }
