"""Rebuild Identity: R cold builds of one corpus into fresh directories; are the artifacts the same bytes?

The artifact hash is SHA-256 of the engine's declared `artifact_file`, else of the whole out directory
(fingerprints.artifact_hash_of_dir). Every build uses a fresh engine object (Workspace.new_engine): an engine
that caches per blob would otherwise serve builds 2..R from the memory of build 1, and the family would
measure the cache instead of the build. Figures:

    rebuilds         R, the number of builds compared (the base build counts as the first)
    distinct_hashes  how many different artifact hashes they gave (1 is identity)
    identical        distinct_hashes == 1
    hashes           the distinct hashes, in the order first seen
    hashed           what was hashed: `artifact file <name>` or `out directory`
    work_cache       `off`: every build (the base one too) ran with no work cache and a fresh engine object
"""

from __future__ import annotations

from ctxgauge.errors import EngineError

from ._work import FAILED, OK, FamilyResult, Workspace, remove_dir

__all__ = ["run_rebuild"]


def run_rebuild(ws: Workspace, base_hash: str, rebuilds: int) -> FamilyResult:
    """Compare the base build's hash (`base_hash`, itself a cold build) with rebuilds - 1 more cold builds."""
    hashes = [base_hash]
    artifact_file = None
    try:
        for i in range(1, rebuilds):
            engine = ws.new_engine()
            artifact_file = getattr(engine, "artifact_file", None)
            ws.progress(f"{ws.spec}: rebuild {i + 1}/{rebuilds}", 0)
            out, digest = ws.build(engine, ws.corpus, f"rebuild-{i}")
            hashes.append(digest)
            remove_dir(out)
            ws.discard(engine)  # used for one build; a command engine's process ends here
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
