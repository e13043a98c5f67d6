"""Scoring a ranking against labels: one labelled request, the mean over many, pass lines and paired
comparisons.

One idea shared by the `cases` and `replay` suites (a replayed commit is a labelled case the repository
wrote itself), so it lives beside the metrics rather than inside either suite. The metrics themselves come
from the metric registry; this module only decides which relevant set each one reads:

- `relevant`: the expected files the corpus indexes (files it cannot index are a coverage gap, reported
  apart and left out of every denominator, since no ranking could name them);
- `any_of`: groups of alternative files, each counted as ONE relevant item found at the rank of its
  best-ranked member (a later member of a found group counts as a miss, never twice);
- `pack`: for replay, every changed file that existed in the parent, tests included; `pack_recall@k` is
  recall@k against that set. It is computed here rather than registered as a metric because it reads a
  second relevant set, which the metric registry's (ranking, relevant, k) signature has no room for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from ctxgauge.metrics._registry import parse_metric
from ctxgauge.metrics.ranking import evaluate, mean_over
from ctxgauge.metrics.stats import paired_comparison

PACK_RECALL = "pack_recall"

HEADLINE_METRICS = ("hit", "recall", "ndcg", "mrr")
"""The headline figures every view shows, in this order: these families at the smallest cutoff the run
scored (`mrr` without one). One tuple for the single replay, `replay --repos`, the demo and the report."""


def headline_metrics(names: Iterable[str]) -> list[str]:
    """The headline metrics among the reported `names`: `HEADLINE_METRICS` at the smallest k any of them
    has, in `HEADLINE_METRICS` order, those present only."""
    have = [str(n) for n in names]
    ks = [int(k) for n in have for name, _, k in [n.partition("@")] if name in HEADLINE_METRICS and k.isdigit()]
    k0 = min(ks) if ks else None
    wanted = [f"{n}@{k0}" if n != "mrr" else n for n in HEADLINE_METRICS]
    return [w for w in wanted if w in have]


@dataclass(frozen=True)
class Labels:
    """What one request should find."""

    relevant: frozenset[str]
    """Expected files the corpus indexes (scored)."""
    any_of: tuple[frozenset[str], ...] = ()
    """Groups of alternatives; finding any member finds the group (one relevant item each)."""
    pack: frozenset[str] | None = None
    """Files for pack recall (replay: changed files of the parent, tests included); None: not measured."""

    @property
    def scorable(self) -> bool:
        """Whether any metric is defined: at least one relevant file or group."""
        return bool(self.relevant or self.any_of)


def metric_names(ks: Sequence[int], *, pack: bool = False, extra: Iterable[str] = ()) -> list[str]:
    """The metrics a suite reports, in report order: per k hit, recall, precision, nDCG (and pack recall),
    then MRR over the whole queried depth, then any `extra` spec (pass lines), each once."""
    names: list[str] = []
    for k in ks:
        names += [f"hit@{k}", f"recall@{k}", f"precision@{k}", f"ndcg@{k}"]
        if pack:
            names.append(f"{PACK_RECALL}@{k}")
    names.append("mrr")
    for spec in extra:
        names.append(str(parse_metric(spec)))
    return list(dict.fromkeys(names))


def higher_is_better(name: str) -> bool:
    """Direction of a reported metric (pack recall, like recall, is better higher)."""
    return True if name.startswith(PACK_RECALL + "@") else parse_metric(name).higher_is_better


def _collapse(ranking: Sequence[str], labels: Labels) -> tuple[list[str], set[str]]:
    # Each any-of group becomes one token at its best member's rank; later members become placeholders
    # that match nothing, so positions (and so precision@k and nDCG discounts) are unchanged. NUL cannot
    # occur in a repository path, so the tokens cannot collide with a real file.
    relevant = set(labels.relevant)
    if not labels.any_of:
        return list(ranking), relevant
    owner = {}
    for i, group in enumerate(labels.any_of):
        relevant.add(f"\0group{i}")
        for path in group:
            owner.setdefault(path, i)
    seen: set[int] = set()
    out = []
    for pos, path in enumerate(ranking):
        g = owner.get(path)
        if g is None or path in labels.relevant:
            out.append(path)
        elif g in seen:
            out.append(f"\0repeat{pos}")
        else:
            seen.add(g)
            out.append(f"\0group{g}")
    return out, relevant


def score(ranking: Sequence[str], labels: Labels, names: Sequence[str]) -> dict[str, float | None]:
    """Every metric in `names` for one ranking (paths best first); None where undefined (nothing relevant)."""
    ranked, relevant = _collapse(ranking, labels)
    plain = [n for n in names if not n.startswith(PACK_RECALL + "@")]
    figures = evaluate(plain, ranked, relevant)
    for name in names:
        if name.startswith(PACK_RECALL + "@"):
            k = int(name.split("@", 1)[1])
            figures[name] = evaluate([f"recall@{k}"], ranking, labels.pack or ())[f"recall@{k}"]
    return {n: figures[n] for n in names}


def summarise(figures: Iterable[Mapping[str, float | None]], names: Sequence[str]) -> dict[str, float | None]:
    """Mean of each metric over the units where it is defined (None where it is defined nowhere)."""
    rows = list(figures)
    return {n: mean_over(r.get(n) for r in rows) for n in names}


@dataclass(frozen=True)
class PassLine:
    """A threshold a suite must hold: the mean of `metric` at least (or, lower-is-better, at most) `value`."""

    metric: str
    """Canonical metric spec, e.g. `recall@5`."""
    value: float
    """The threshold."""
    higher_is_better: bool = field(default=True)
    """Direction: True means the mean must be >= value."""

    def holds(self, mean: float | None) -> bool:
        """Whether a measured mean keeps the line (an unmeasured one never does)."""
        if mean is None:
            return False
        return mean >= self.value if self.higher_is_better else mean <= self.value


def compare(a: Sequence[Mapping[str, float | None]], b: Sequence[Mapping[str, float | None]],
            names: Sequence[str], seed: int, n_resamples: int = 10000) -> dict[str, dict]:
    """Paired comparison of engine A against B per metric, over the units where both values are defined:
    mean difference (a - b), seeded bootstrap 95% interval, randomization p-value, win/tie/loss. Metrics
    with no paired unit are left out."""
    if len(a) != len(b):
        raise ValueError(f"paired figures differ in length: {len(a)} vs {len(b)}")
    out = {}
    for name in names:
        pairs = [(x[name], y[name]) for x, y in zip(a, b) if x.get(name) is not None and y.get(name) is not None]
        if not pairs:
            continue
        xs, ys = [float(p[0]) for p in pairs], [float(p[1]) for p in pairs]
        out[name] = paired_comparison(xs, ys, seed, n_resamples, higher_is_better=higher_is_better(name)).to_dict()
    return out
