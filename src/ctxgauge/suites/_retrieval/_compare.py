"""`--vs`: the paired comparison of two engines over the same cases, read from units only.

A case counts when both engines scored it (a failed unit has no figures for either engine, so the two
engines are always compared on exactly the same cases)."""

from __future__ import annotations

from typing import Sequence

from ctxgauge.metrics.scoring import compare


def comparison(units: Sequence[dict], metrics: Sequence[str], seed: int, engine: str,
               counted: str = "commits") -> dict | None:
    """`{engine, vs, seed, <counted>: n, metrics: {name: PairedComparison fields}}` over the ok units
    holding both engines' figures; None when no unit does. `counted` names the count (replay: commits,
    cases: cases)."""
    paired = [u for u in units if u.get("status") == "ok" and "vs" in u]
    if not paired:
        return None
    result = compare([u["figures"] for u in paired], [u["vs"]["figures"] for u in paired], metrics, seed)
    return {"engine": engine, "vs": paired[0]["vs"]["engine"], "seed": seed, counted: len(paired),
            "metrics": result}
