"""Rebuild Identity: R cold builds of one corpus into fresh directories; are the artifacts the same bytes?

The artifact hash is SHA-256 of the engine's declared `artifact_file`, else of the whole out directory
(fingerprints.artifact_hash_of_dir). Every build uses a fresh engine object (the workspace's factory): an
engine that caches per blob would otherwise serve builds 2..R from the memory of build 1, and the family
would measure the cache instead of the build. Builds 2..R are units of the run's executor (`cold_build`):
in this process one after another by default, or with `--executor local:N` in N - 1 worker processes while
this one makes the base build and queries it (each worker process is a fresh interpreter: a build there
shares not even a module's memory with any other). Figures:

    rebuilds         R, the number of builds compared (the base build counts as the first)
    distinct_hashes  how many different artifact hashes they gave (1 is identity)
    identical        distinct_hashes == 1
    hashes           the distinct hashes, in the order first seen
    hashed           what was hashed: `artifact file <name>` or `out directory`
    work_cache       `off`: every build (the base one too) ran with no work cache and a fresh engine object
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ctxgauge.corpus import Corpus
from ctxgauge.errors import EngineError
from ctxgauge.executors import Executor, Part

from ._work import FAILED, OK, FamilyResult, Workspace, build_into, close_engine, remove_dir

__all__ = ["cold_build", "run_rebuild", "start_rebuilds", "warm"]

BuildItem = tuple[Callable[[str], Any], str, Corpus, Path]
"""(engine factory, engine spec, corpus, out directory): one cold build."""


def cold_build(item: BuildItem) -> Iterator[tuple[str, str | None]]:
    """One unit: a fresh engine object builds the corpus into the (new) out directory with no work cache;
    yields (artifact hash, artifact file or None). The directory is deleted and the engine closed after."""
    factory, spec, corpus, out = item
    engine = factory(spec)
    try:
        out.mkdir(parents=True)
        digest = build_into(engine, corpus, out)
    finally:
        remove_dir(out)  # large repositories: R builds would fill a disk
        close_engine(engine)  # used for one build; a command engine's process ends here
    yield digest, getattr(engine, "artifact_file", None)


def warm(item: tuple[Callable[[str], Any], str]) -> Iterator[str]:
    """A unit that only readies a worker: imports what building the spec needs (an engine object is made and
    closed; nothing is built). A spec the plan will refuse fails here unseen: the plan says why."""
    factory, spec = item
    with contextlib.suppress(Exception):
        close_engine(factory(spec))
    yield spec


def start_rebuilds(ws: Workspace, executor: Executor, rebuilds: int) -> Iterator[Part]:
    """Hand builds 2..R to the executor (a pool starts them now) and return their parts, in build order."""
    items = [(ws.factory, ws.spec, ws.corpus, ws.scratch / f"rebuild-{i}") for i in range(1, rebuilds)]
    return executor.map(cold_build, items)


def run_rebuild(ws: Workspace, base_hash: str, rebuilds: int, started: Iterator[Part]) -> FamilyResult:
    """Compare the base build's hash (`base_hash`, itself a cold build) with the R - 1 cold builds
    `started` (`start_rebuilds`) gives."""
    hashes = [base_hash]
    artifact_file = None
    try:
        for i in range(1, rebuilds):
            ws.progress(f"{ws.spec}: rebuild {i + 1}/{rebuilds}", 0)
            digest, artifact_file = next(started).value
            hashes.append(digest)
            ws.progress(f"{ws.spec}: rebuild {i + 1}/{rebuilds}", 1)
    except EngineError as exc:
        return FamilyResult("rebuild", FAILED, str(exc), {"rebuilds_done": len(hashes)})
    distinct = list(dict.fromkeys(hashes))
    return FamilyResult("rebuild", OK, None, {
        "rebuilds": len(hashes),
        "distinct_hashes": len(distinct),
        "identical": len(distinct) == 1,
        "hashes": distinct,
        "hashed": f"artifact file {artifact_file}" if artifact_file else "out directory",
        "work_cache": "off",
    })
