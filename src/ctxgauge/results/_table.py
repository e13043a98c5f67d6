"""The one table suite -> typed classes (`SUITES`), re-exported by `ctxgauge.results`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ctxgauge.results._cases as _cases
import ctxgauge.results._determinism as _determinism
import ctxgauge.results._qa as _qa
import ctxgauge.results._replay as _replay
from ctxgauge.results._base import Record


@dataclass(frozen=True)
class SuiteClasses:
    """The typed classes of one suite's record."""

    spec: type[Record]
    """run.json's `spec`."""
    unit: type[Record]
    """A units.jsonl line."""
    results: type[Record]
    """run.json's `results`."""


def _entry(module: Any) -> tuple[str, SuiteClasses]:
    return module.SUITE, SuiteClasses(*module.CLASSES)


SUITES: dict[str, SuiteClasses] = dict(_entry(m) for m in (_replay, _cases, _determinism, _qa))
"""Suite name -> its classes (the names come from each module's SUITE)."""


def classes(suite: str) -> SuiteClasses | None:
    """The classes of `suite`, or None for a suite without typed classes (read as plain JSON)."""
    return SUITES.get(suite)
