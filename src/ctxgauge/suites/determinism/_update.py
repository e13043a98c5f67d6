"""Update Identity: build at revision A, `update` to revision B, and compare with a fresh build at B.

New in ctxgauge (on ContextBenchmark's roadmap as "determinism under update"). An engine whose incremental
update leaves different bytes, or different answers, than a fresh build serves a replay (or a developer
whose index is updated on every commit) something no fresh build reproduces. The update runs on a fresh
engine object, so it starts from the artifact on disk, as an index updated tomorrow would. Figures:

    from_rev, to_rev        the two revisions (full commit ids)
    changes                 changed paths by status (added, modified, deleted)
    update_hash             artifact hash after build(A) + update(B)
    rebuild_hash            artifact hash of the fresh build at B (the base build)
    artifact_identical      update_hash == rebuild_hash
    queries                 how many queries were compared
    queries_identical       how many ranked lists equal the fresh build's (files, and spans when the base
                            answers with spans are given)
    mean_jaccard            mean Jaccard@k of updated vs fresh answers
    identical               artifact_identical and every ranked list equal
    work_cache              {update: on|off, rebuild: off}: the update path may read the work cache; the
                            fresh build it is compared with never does
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import ctxgauge.cache as work_cache
from ctxgauge.engines import call_engine
from ctxgauge.corpus import Corpus
from ctxgauge.errors import EngineError
from ctxgauge.fingerprints import artifact_hash_of_dir
from ctxgauge.metrics import jaccard_at_k

from ._work import FAILED, NOT_MEASURED, OK, Answer, FamilyResult, Workspace, mean, remove_dir

__all__ = ["run_update"]


def run_update(ws: Workspace, old: Corpus | None, why_not: str | None, rebuild_hash: str,
               base_rankings: Mapping[str, Sequence[str]],
               base_answers: Mapping[str, Answer] | None = None) -> FamilyResult:
    """Update an index of `old` to ws.corpus and compare it with the base build (`rebuild_hash`, rankings).

    `old` None means the family does not apply (a plain directory has no past); `why_not` says so.
    """
    if old is None:
        return FamilyResult("update", NOT_MEASURED, why_not or "no older revision to update from")
    engine = ws.new_engine()
    if not callable(getattr(engine, "update", None)):
        return FamilyResult("update", NOT_MEASURED, f"{engine.name} has no update(); it is rebuilt on every change")
    changes = old.changes_to(ws.corpus)
    figures = {
        "from_rev": old.rev,
        "to_rev": ws.corpus.rev,
        "changes": dict(sorted(Counter(c.status for c in changes).items())),
    }
    try:
        ws.progress(f"{ws.spec}: update, build at {str(old.rev)[:10]}", 0)
        # The update path may use the work cache, as an index updated on every commit would; the fresh
        # build it is compared with (the base build) used none.
        out, _ = ws.build(engine, old, "update", cached=True)
        ws.progress(f"{ws.spec}: update to {str(ws.corpus.rev)[:10]}", 0)
        call_engine("update", engine, engine.update, out, ws.corpus, changes)
        update_hash = artifact_hash_of_dir(out, getattr(engine, "artifact_file", None))
        full = ws.answer_all(engine, out)
        answers = {q: [path for path, _ in a] for q, a in full.items()}
        ws.progress(f"{ws.spec}: update", 1)
        remove_dir(out)
    except EngineError as exc:
        return FamilyResult("update", FAILED, str(exc), figures)
    finally:
        ws.discard(engine)
    same = sum(1 for q in ws.queries if list(answers[q]) == list(base_rankings.get(q, []))
               and (base_answers is None or q not in base_answers or full[q] == base_answers[q]))
    figures.update(
        update_hash=update_hash,
        rebuild_hash=rebuild_hash,
        artifact_identical=update_hash == rebuild_hash,
        queries=len(ws.queries),
        queries_identical=same,
        mean_jaccard=mean([jaccard_at_k(answers[q], base_rankings.get(q, []), ws.k) for q in ws.queries])
        if ws.queries else 1.0,
        identical=update_hash == rebuild_hash and same == len(ws.queries),
        work_cache={"update": "on" if work_cache.current() is not None else "off", "rebuild": "off"},
    )
    return FamilyResult("update", OK, None, figures)
