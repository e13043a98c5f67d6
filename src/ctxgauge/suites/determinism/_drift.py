"""Drift Under Noise: add one file the queries are not about, rebuild, and see how far the answers move.

For each noise kind asked for (see _noise): the corpus plus the noise file (Corpus.overlay: the source is
never touched) is built into a fresh directory, each query is run on the base build and on the noisy build,
and per kind:

    noise_file            the path of the added file
    noise_bytes           its size
    about                 what it is
    mean_jaccard_vs_base  mean over queries of Jaccard@k(base, noisy)
    mean_kendall_tau      mean over queries of Kendall tau-a(base, noisy)
    noise_in_top_k        how many queries list the noise file in their top k
    queries               how many queries were run
    drift                 1 - mean_jaccard_vs_base
    work_cache            `off`: the noisy build ran with no work cache, on its own fresh engine object

Drift is reported beside the level, never folded into it. The base rankings are re-run here rather than
taken from the query family, so base and noisy answers are asked at the same time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxgauge.errors import EngineError, UserError
from ctxgauge.metrics import jaccard_at_k, kendall_tau_a

from ._noise import make_noise
from ._work import FAILED, NOT_MEASURED, OK, FamilyResult, Workspace, mean, remove_dir

__all__ = ["run_drift"]


def run_drift(ws: Workspace, engine: Any, base_dir: Path, base_rankings: Mapping[str, Sequence[str]],
              kinds: Sequence[str], noise_dir: str | None) -> FamilyResult:
    """Run the family with the shared engine object on the base build in `base_dir`."""
    if not ws.queries:
        return FamilyResult("drift", NOT_MEASURED, "no queries to run")
    figures: dict[str, Any] = {}
    for kind in kinds:
        try:
            noise = make_noise(kind, ws.corpus, ws.queries, base_rankings, noise_dir)
        except UserError as exc:
            figures[kind] = {"status": NOT_MEASURED, "reason": str(exc)}
            continue
        noisy = ws.corpus.overlay({noise.path: noise.data})
        noisy_engine = None
        try:
            ws.progress(f"{ws.spec}: drift ({kind}) build", 0)
            # A fresh engine object and no work cache: the noisy build shares nothing with the base build.
            noisy_engine = ws.new_engine()
            noisy_dir, _ = ws.build(noisy_engine, noisy, f"drift-{kind}")
            jaccards, taus, surfaced = [], [], 0
            for query in ws.queries:
                base = ws.rank(engine, base_dir, query)
                moved = ws.rank(noisy_engine, noisy_dir, query, noisy)
                jaccards.append(jaccard_at_k(base, moved, ws.k))
                taus.append(kendall_tau_a(base, moved))
                surfaced += noise.path in moved
                ws.progress(f"{ws.spec}: drift ({kind})", 1)
            remove_dir(noisy_dir)
        except EngineError as exc:
            return FamilyResult("drift", FAILED, f"{kind}: {exc}", figures)
        finally:
            if noisy_engine is not None:
                ws.discard(noisy_engine)
        jaccard = mean(jaccards)
        figures[kind] = {
            "noise_file": noise.path,
            "noise_bytes": len(noise.data),
            "about": noise.about,
            "mean_jaccard_vs_base": jaccard,
            "mean_kendall_tau": mean(taus),
            "noise_in_top_k": surfaced,
            "queries": len(jaccards),
            "drift": 1.0 - jaccard,
            "work_cache": "off",
        }
    measured = [k for k in kinds if "drift" in figures.get(k, {})]
    if not measured:
        return FamilyResult("drift", NOT_MEASURED, "; ".join(f"{k}: {figures[k]['reason']}" for k in kinds), figures)
    return FamilyResult("drift", OK, None, figures)
