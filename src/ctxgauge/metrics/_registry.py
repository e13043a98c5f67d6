"""The one registry of ranking metrics, and `Metric`, the spec that names an entry in it.

What a metric *is* (its name, cutoff, direction, description) lives here; how it is *computed* is a plain
function registered with `register_metric` (the built-ins in `ranking.py` register themselves the same
way a plugin would). Records, CLI flags, report labels and docs all derive from the canonical spec string
`str(metric)`, e.g. ``"recall@10"`` or ``"mrr"``; no other table of names exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ctxgauge.errors import UserError
from ctxgauge.metrics._validate import as_path_set, check_ranking

KRule = Literal["required", "optional", "none"]
"""Whether a metric family takes a cutoff: always (`recall@10`), optionally (`mrr`, `mrr@10`), or never."""

ComputeFn = Callable[[tuple[str, ...], frozenset[str], "int | None"], float]
"""A metric's implementation: (ranking, relevant, k) -> score.

It is only called with a non-empty ranking of unique paths and a non-empty relevant set; `Metric.compute`
handles the edge cases once for every metric, so implementations cannot disagree about them.
"""

Reads = Literal["ranking", "context"]
"""What a metric family scores (see `MetricKind.reads`)."""

Aggregate = Literal["mean", "ratio"]
"""How a metric family combines units (see `MetricKind.aggregate`)."""

_NAME = re.compile(r"[a-z][a-z0-9_]*")
# Tolerant of case and of blanks around the parts, strict about everything else: "Recall @ 10" parses,
# "recall@10x" and "recall@@10" do not.
_SPEC = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:@\s*([0-9]+)\s*)?")


class MetricSpecError(UserError, ValueError):
    """A metric spec that names no registered metric, or gives it a cutoff it cannot take.

    A `UserError`, so the CLI prints it as one line and exits with code 2; also a `ValueError`, so library
    callers can treat it as any other bad argument.
    """


@dataclass(frozen=True)
class MetricKind:
    """One registry entry: a metric family such as `recall`, with its rules and its implementation."""

    name: str
    """Lowercase base name, the part of the spec before ``@``."""
    k: KRule
    """Whether the family takes a cutoff (see `KRule`)."""
    description: str
    """One sentence for docs and reports; ``{top}`` is replaced by "top k" or "whole ranking"."""
    higher_is_better: bool
    """Direction of improvement, read by comparisons (wins and losses)."""
    compute: ComputeFn = field(repr=False, compare=False)
    """The implementation (see `ComputeFn`; a context metric's is a `spans.ContextFn`)."""
    reads: Reads = "ranking"
    """What it scores: a ranking of paths against relevant paths, or a context (spans, packed under a
    budget) against gold files and lines (`ctxgauge.metrics.spans`)."""
    aggregate: Aggregate = "mean"
    """How units combine: the mean of per-unit values (macro), or the ratio of sums (micro)."""
    formula: str = ""
    """The formula for docs/metrics.md (Markdown; `k` is the cutoff, `B` the token budget)."""
    ir_measures: str | None = None
    """Its ir_measures name, ``{k}`` standing for the cutoff (``"R@{k}"``; ``"@{k}"`` is dropped for a spec
    without one), where one computes the same value per unit."""
    trec_eval: str | None = None
    """Its trec_eval measure, ``{k}`` for the cutoff (``"recall_{k}"``); one without ``{k}`` names the spec
    without a cutoff only."""
    departures: tuple["Departure", ...] = ()
    """Where it differs from ir_measures / trec_eval (or the benchmark it comes from) beyond `DEPARTURES`."""

    def ir_measures_name(self, k: int | None) -> str | None:
        """The ir_measures measure computing this family at cutoff `k` (None: the spec without one)."""
        if self.ir_measures is None:
            return None
        return self.ir_measures.replace("@{k}", "") if k is None else self.ir_measures.format(k=k)

    def trec_eval_name(self, k: int | None) -> str | None:
        """The trec_eval measure for cutoff `k`, where there is one."""
        if self.trec_eval is None or (k is None) == ("{k}" in self.trec_eval):
            return None
        return self.trec_eval.format(k=k)

    def describe(self, k: int | None) -> str:
        """The description with its cutoff filled in."""
        return self.description.format(top=f"top {k}" if k is not None else "whole ranking")


@dataclass(frozen=True)
class Departure:
    """A documented difference from ir_measures / trec_eval (or the metric's source), and the test showing it."""

    text: str
    """One or two sentences (Markdown) for docs/metrics.md."""
    test: str
    """The test that shows it, ``tests/...py::test_name``."""


DEPARTURES: tuple[Departure, ...] = (
    Departure("A request with no relevant file is undefined (None) and left out of every mean; ir_measures "
              "(trec_eval) scores a judged query with nothing relevant 0 and counts it, so its means are lower "
              "on suites with such requests.",
              "tests/metrics/test_metrics_doc.py::test_departure_no_relevant_file_is_left_out"),
    Departure("The ranking is scored in the order the engine returned it; ir_measures re-sorts a run by score "
              "(and trec_eval breaks ties by document id), so equal scores can reorder there.",
              "tests/metrics/test_metrics_doc.py::test_departure_order_is_the_engines_not_the_scores"),
    Departure("A path listed twice is refused (ValueError); a pytrec_eval run is a dict, where a repeated "
              "document silently collapses into one.",
              "tests/metrics/test_metrics_doc.py::test_departure_duplicate_paths_are_refused"),
)
"""Departures every ranking metric shares (`Metric.compute` decides these once for all of them)."""

_REGISTRY: dict[str, MetricKind] = {}


def register_metric(
    name: str, *, k: KRule, description: str, higher_is_better: bool = True, reads: Reads = "ranking",
    aggregate: Aggregate = "mean", formula: str = "", ir_measures: str | None = None, trec_eval: str | None = None,
    departures: tuple[Departure, ...] = (),
) -> Callable[[ComputeFn], ComputeFn]:
    """Register a metric family under `name`; use as a decorator on its compute function.

    Built-in and third-party metrics register the same way. Registering a name twice raises `ValueError`:
    a silent override would change what an existing spec string means.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"metric name {name!r} must be lowercase letters, digits and _, starting with a letter")
    if k not in ("required", "optional", "none"):
        raise ValueError(f"k must be 'required', 'optional' or 'none', got {k!r}")

    def decorator(fn: ComputeFn) -> ComputeFn:
        if name in _REGISTRY:
            raise ValueError(f"metric {name!r} is already registered")
        _REGISTRY[name] = MetricKind(name, k, description, higher_is_better, fn, reads, aggregate, formula,
                                     ir_measures, trec_eval, tuple(departures))
        return fn

    return decorator


def metric_kinds() -> tuple[MetricKind, ...]:
    """Every registered metric family, in registration order (for docs, `--help` and sweeping tests)."""
    return tuple(_REGISTRY.values())


def get_metric_kind(name: str) -> MetricKind:
    """The registry entry for a base name such as ``"recall"``; `MetricSpecError` if there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise MetricSpecError(f"unknown metric {name!r}; known metrics: {known}") from None


@dataclass(frozen=True)
class Metric:
    """A measure to take: a registered metric family plus its cutoff. Its identity is `str(metric)`.

    Construct it directly (``Metric("recall", 10)``) or from a spec (``parse_metric("recall@10")``); both
    give equal objects whose `str()` is the canonical lowercase spec. `higher_is_better` and `description`
    are filled in from the registry, never per instance, so two objects with one spec cannot disagree.
    """

    name: str
    """Lowercase base name of a registered family, e.g. ``"ndcg"``."""
    k: int | None = None
    """Cutoff: only the first k paths are scored. None means the whole ranking (only where allowed)."""
    higher_is_better: bool = field(init=False, compare=False)
    """Direction of improvement, from the registry."""
    description: str = field(init=False, compare=False)
    """One sentence saying what is measured, from the registry."""

    def __post_init__(self) -> None:
        kind = get_metric_kind(self.name)
        if self.k is not None:
            # bool is an int subclass; True would otherwise read as k=1.
            if isinstance(self.k, bool) or not isinstance(self.k, int):
                raise MetricSpecError(f"{self.name}: k must be an int, got {type(self.k).__name__}")
            if self.k < 1:
                raise MetricSpecError(f"{self.name}@{self.k}: k must be at least 1")
            if kind.k == "none":
                raise MetricSpecError(f"{self.name} takes no cutoff; write {self.name!r}")
        elif kind.k == "required":
            raise MetricSpecError(f"{self.name} needs a cutoff, e.g. '{self.name}@10'")
        # Frozen dataclass: the registry-derived fields are set once, here.
        object.__setattr__(self, "higher_is_better", kind.higher_is_better)
        object.__setattr__(self, "description", kind.describe(self.k))

    def __str__(self) -> str:
        return self.spec

    @property
    def spec(self) -> str:
        """The canonical spec string, e.g. ``"recall@10"``; `parse_metric` reads it back into this metric."""
        return self.name if self.k is None else f"{self.name}@{self.k}"

    def compute(self, ranking: Sequence[str], relevant: Collection[str]) -> float | None:
        """Score one ranking against one relevant set.

        Edge cases, the same for every metric:
          - no relevant file: the metric is undefined and the result is None. Callers leave such a unit
            out of a mean (`mean_over` does). This differs from ir_measures/trec_eval, which score a query
            whose judgments hold no relevant document as 0 on every measure and count it in the mean, and
            drop a query with no judgments at all; see `ctxgauge.metrics.ranking`.
          - empty ranking (and at least one relevant file): 0.0, as in ir_measures.
          - a path listed twice: ValueError (see `check_ranking`).

        Paths are compared as exact strings; normalise them before calling.
        """
        if get_metric_kind(self.name).reads != "ranking":
            raise TypeError(f"{self} scores a context, not a ranking: use ctxgauge.metrics.spans.context_figures")
        ranked = check_ranking(ranking)
        rel = as_path_set(relevant)
        if not rel:
            return None
        if not ranked:
            return 0.0
        return float(get_metric_kind(self.name).compute(ranked, rel, self.k))


def parse_metric(spec: str | Metric) -> Metric:
    """Read a spec such as ``"recall@10"``, ``"MRR"`` or ``" nDCG @ 5 "`` into a `Metric`.

    Case and blanks are tolerated; `str()` of the result is the canonical lowercase form, which parses back
    into an equal Metric. A `Metric` is returned unchanged. Raises `MetricSpecError` for anything else.
    """
    if isinstance(spec, Metric):
        return spec
    if not isinstance(spec, str):
        raise MetricSpecError(f"a metric spec must be a str such as 'recall@10', got {type(spec).__name__}")
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise MetricSpecError(f"malformed metric spec {spec!r}; expected NAME or NAME@K, e.g. 'recall@10'")
    name, k = match.group(1).lower(), match.group(2)
    return Metric(name, int(k) if k is not None else None)
