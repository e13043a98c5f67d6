"""The retrieval suites' part of a report: replay (commits as cases) and cases (hand-labelled requests).

Both record a unit per request with `figures` (metric -> value, None where nothing was scorable) for the
measured engine and, with `--vs`, `vs: {engine, figures}` for the other; `results.comparison` holds the
paired comparison. Means and intervals are recomputed here from the ok units, so a figure on the page is
exactly what the units say (the interval seeded with the run's own `spec.seed`).

A cases run is read the same way (the cases suite shares replay's scoring; every unit names its request
`request`); a unit with `known_gap: true` is in the known-gaps lane: drawn in the per-case grid and listed
in per-case.csv, kept out of every mean, as that suite's pass lines do. `results.pass` holds the pass lines
({metric, threshold, value, holds}). The measured engine is the first of the subject's systems, the `--vs`
engine the second.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from ctxgauge.metrics.ranking import mean_over
from ctxgauge.metrics.spans import middle_budget
from ctxgauge.results import RetrievalUnit, TypedRun
from ctxgauge.report._budget import budget_figure
from ctxgauge.report._common import started_at, defined, dnf_note, fmt, interval, label_systems, merge_same, num, pct
from ctxgauge.report._leaderboard import Attempt, Value
from ctxgauge.report._misses import misses_table
from ctxgauge.report._model import Bar, BarsFigure, Cell, GridFigure, GridRow, PairedFigure, PairedRow, Panel, \
    Section, Table

KNOWN_GAPS = "known-gaps"

def known_gap(unit: RetrievalUnit) -> bool:
    """Whether a unit is in the known-gaps lane (reported, never averaged)."""
    return unit.in_known_gaps


COVERAGE_GAP = "coverage_gap"
"""The summary's entry beside the metrics: expected files not indexed over all expected files."""
MRR = "mrr"
"""The rank metric the by-kind table shows beside hit and recall."""
KINDS = ("code", "other")
"""replay's `results.by_kind` parts, in the order shown."""


HIT_LEGEND = {
    "hit": "expected file in the top {k0}",
    "near": "in the top {k1}, not the top {k0}",
    "miss": "not in the top {k1}",
    "unscorable": "nothing scorable (only a coverage gap)",
    "failed": "engine failed on this commit",
    "absent": "not replayed in this run",
}


@dataclass
class EngineFigures:
    """One engine's figures in one run: per ok unit id, metric -> value."""

    engine: str
    run: TypedRun
    units: dict[str, dict[str, float | None]]
    failed: set[str]
    role: str = "engine"
    """`engine` (the measured one) or `vs` (the one compared against)."""
    also: list[TypedRun] = field(default_factory=list)
    """Other runs that measured exactly this (same engine, seed, units and figures): shown once, from all."""

    @property
    def sources(self) -> list[str]:
        """Every run this engine's figures come from, as relative paths."""
        return [self.run.rel] + [r.rel for r in self.also]

    def same_as(self) -> tuple:
        """What makes two runs' figures of an engine one measurement: the engine, the interval seed, which
        units failed and every unit's figures."""
        return (self.engine, int(self.run.spec.seed or 0), tuple(sorted(self.failed)),
                json.dumps(self.units, sort_keys=True))

    def values(self, metric: str) -> list[float]:
        """The metric's defined values over the ok units."""
        return defined(f.get(metric) for f in self.units.values())

    @property
    def scored(self) -> int:
        """Units with something to score (at least one figure defined): the run's `counts.scored` for the
        measured engine, the misses' denominator, the table's `scored` row."""
        return sum(1 for f in self.units.values() if any(v is not None for v in f.values()))

    def mean(self, metric: str) -> float | None:
        """The metric's mean as the suite stored it (`results.summary`, or `vs_summary` for the --vs engine),
        computed once by the suite; the units' `mean_over` only for a record without it."""
        summary = self.summary
        return summary[metric] if metric in summary else mean_over(self.values(metric))

    @property
    def summary(self) -> dict[str, float | None]:
        """The suite's stored means for this engine (`results.summary`, or `vs_summary` for the --vs engine;
        a cases run has no vs summary: {})."""
        if self.role == "engine":
            return self.run.results.summary
        return vs_summary(self.run.results) or {}


def vs_summary(results: object) -> dict[str, float | None] | None:
    """The --vs engine's stored means: replay's results have them, cases' do not (None)."""
    from ctxgauge.results import ReplayResults

    return results.vs_summary if isinstance(results, ReplayResults) else None


def engine_name(run: TypedRun) -> str:
    """The measured engine's spec (the subject's first system; a cases run scoring an external ranking
    names its run file there)."""
    return run.subject.systems[0] if run.subject.systems else "engine"


def vs_name(run: TypedRun) -> str | None:
    """The engine compared against (`--vs`: the subject's second system), or None."""
    return run.subject.systems[1] if len(run.subject.systems) > 1 else None


def metrics_of(run: TypedRun) -> list[str]:
    """The run's metrics in report order (its spec, else whatever its summary holds)."""
    names = run.spec.metrics or list(run.results.summary.keys())
    return [m for m in names if m != COVERAGE_GAP]


def ks_of(run: TypedRun) -> list[int]:
    """The run's cutoffs, smallest first."""
    ks = run.spec.ks or sorted({int(m.split("@")[1]) for m in metrics_of(run) if m.startswith("hit@")})
    return sorted(int(k) for k in ks) or [5]


def engine_figures(run: TypedRun, *, gaps: bool = False) -> list[EngineFigures]:
    """The measured engine (and the --vs engine) of a finished run, from its units (known-gaps lane units
    only with `gaps`: they are reported, never averaged)."""
    main = EngineFigures(engine_name(run), run, {}, set())
    vs = vs_name(run)
    other = EngineFigures(vs, run, {}, set(), role="vs") if vs else None
    for u in run.units():
        if known_gap(u) and not gaps:
            continue
        if u.status == "failed":
            main.failed.add(u.id)
            if other:
                other.failed.add(u.id)
        elif u.status == "ok":
            main.units[u.id] = u.figures
            if other and u.vs is not None:
                other.units[u.id] = u.vs.figures
    return [main] + ([other] if other else [])


def distinct(engines: Sequence[EngineFigures]) -> list[EngineFigures]:
    """Each measurement once: an engine measured the same way in two runs (the demo replays bm25 alone and
    again against grep, on the same commits) is one bar, one column and one grid row, from both runs."""
    # A bar, a column and a grid row link to the run that measured the engine itself, not to a run that
    # only compared against it: the demo's hybrid row linked to `replay-fusion-vs-hybrid`, the first run
    # holding hybrid's figures in path order, instead of `replay-hybrid` (issue 39).
    own: dict[tuple, EngineFigures] = {}
    for e in engines:
        if e.role == "engine":
            own.setdefault(e.same_as(), e)
    out = []
    for e, runs in merge_same(engines, EngineFigures.same_as, lambda e: e.run):
        measured = own.get(e.same_as())
        if measured is not None and measured is not e:
            runs = [measured.run] + [r for r in runs if r.rel != measured.run.rel]
            e = measured
        e.also = runs[1:]
        out.append(e)
    return out


def headline(run: TypedRun) -> list[str]:
    """The metrics drawn as bars: `HEADLINE_METRICS` at the run's smallest k (those the run has)."""
    from ctxgauge.metrics.scoring import headline_metrics

    return headline_metrics(metrics_of(run))


def _bars(engines: Sequence[EngineFigures], metrics: Sequence[str], title: str) -> BarsFigure:
    labels = label_systems([(e.engine, e.run) for e in engines])
    panels = []
    for metric in metrics:
        bars = []
        for label, e in zip(labels, engines):
            mean, low, high = interval(e.values(metric), int(e.run.spec.seed or 0))
            bars.append(Bar(label, mean, low, high, run=e.run.rel))
        panels.append(Panel(metric, bars))
    sources = list(dict.fromkeys(rel for e in engines for rel in e.sources))
    return BarsFigure(title, panels, sources, caption="Mean over the scored units, with the seeded 95% bootstrap "
                      "interval of the mean (seed = the run's --seed) drawn as a whisker.")


def context_metric(run: TypedRun) -> str | None:
    """The context figure the table shows: line coverage at the run's middle token budget
    (`line_coverage_tokens@4000` by default); None for a run without budgets (recorded before them)."""
    budget = middle_budget(run.spec.budgets)
    return None if budget is None else f"line_coverage_tokens@{budget}"


def paired_context_metrics(run: TypedRun) -> list[str]:
    """The context figures the paired comparison lists after the ranking ones (those `results.comparison`
    holds): line and block coverage at the run's middle budget and the area under line coverage. A few, not
    every family: the table stays readable at 80 columns (the rest are in `--json`)."""
    budget = middle_budget(run.spec.budgets)
    if budget is None:
        return []
    return [f"line_coverage_tokens@{budget}", f"block_coverage_tokens@{budget}", "line_coverage_auc"]


def _table(engines: Sequence[EngineFigures], unit: str) -> Table:
    # A row per metric and a column per engine: eleven metrics fit down a page, not across it.
    metrics = list(dict.fromkeys(m for e in engines for m in metrics_of(e.run)))
    metrics += [m for m in dict.fromkeys(context_metric(e.run) for e in engines) if m is not None]
    labels = label_systems([(e.engine, e.run) for e in engines])
    rows = [[Cell(f"{unit}s scored")] + [num(e.scored, 0) for e in engines]]
    for m in metrics:
        rows.append([Cell(m)] + [num(e.mean(m)) for e in engines])
    gaps = [e.summary[COVERAGE_GAP] if COVERAGE_GAP in e.summary else _gap_share(e) for e in engines]
    rows.append([Cell("coverage gap")] + [Cell(pct(g), num=True) for g in gaps])
    caption = "Coverage gap: expected files the corpus does not index, left out of every denominator."
    tied = _tied_row(engines, unit)
    if tied is not None:
        rows.append(tied[0])
        caption += tied[1]
    return Table(f"Every metric, mean over scored {unit}s", ["metric"] + labels, rows,
                 sources=list(dict.fromkeys(rel for e in engines for rel in e.sources)), caption=caption)


def _gap_share(e: EngineFigures) -> float | None:
    """The coverage-gap share replay stores (expected files not indexed / all expected, over the ok units),
    for a run that stores none (cases): `-` there and `0.0%` in replay read as two things for one "no gap"."""
    units = [u for u in e.run.units() if u.id in e.units]
    expected = sum(len(u.expected or ()) for u in units)
    return sum(len(u.coverage_gap or ()) for u in units) / expected if expected else None


def _tied_row(engines: Sequence[EngineFigures], unit: str) -> tuple[list[Cell], str] | None:
    """The rank-group row of the table where more than two engines are compared: on the headline metric
    (hit at the smallest k), over the units every engine shares, by `_leaderboard.cross_groups` (an engine
    in several runs: each unit's newest value). None with two engines or fewer, or no unit shared."""
    from ctxgauge.report._leaderboard import Scored, cross_groups

    names = list(dict.fromkeys(e.engine for e in engines))
    if len(names) <= 2:
        return None
    metric = headline(engines[0].run)[0] if headline(engines[0].run) else None
    if metric is None:
        return None
    scored: dict[str, list[Scored]] = {}
    for e in engines:
        for r in [e.run, *e.also]:
            pairs = [(uid, float(f[metric])) for uid, f in e.units.items() if f.get(metric) is not None]
            value = Value(metric, None, tuple(v for _, v in pairs), unit_ids=tuple(u for u, _ in pairs),
                          higher_is_better=_direction(metric))
            scored.setdefault(e.engine, []).append(Scored(value, (started_at(r), r.rel)))
    groups, n = cross_groups(scored)
    if not groups:
        return None
    row = [Cell(f"{metric} tied group (n {n})")] + [num(groups.get(e.engine), 0) for e in engines]
    return row, (f" Tied group: on {metric} over the {n} {unit}s every engine shares, group 1 is the best engine "
                 "and every engine whose Holm-adjusted paired sign-flip p against it is at least 0.05; then the "
                 "best of the rest anchors group 2, and so on.")


def _paired(run: TypedRun) -> PairedFigure | None:
    comp = run.results.comparison
    if comp is None or not comp.metrics:
        return None
    metrics = comp.metrics
    context = [m for m in paired_context_metrics(run) if metrics.get(m)]
    names = [*metrics_of(run), *context]
    rows = [PairedRow(m, c.mean_a, c.mean_b, c.mean_diff, c.ci_low, c.ci_high, c.p_value,
                      c.wins, c.ties, c.losses) for m in names if (c := metrics.get(m))]
    a, b = str(comp.engine), str(comp.vs)
    # n: units where both engines had a value (a case with nothing scorable pairs nothing).
    n = max((r.wins + r.ties + r.losses for r in rows), default=0)
    return PairedFigure(f"{a} vs {b}, paired on the same {n} units", a, b, n, rows, [run.rel],
                        caption=f"Difference {a} − {b} per metric with its seeded 95% bootstrap interval "
                        f"(seed {comp.seed}); p: paired randomization test; win/tie/loss: units where "
                        f"{a} scored higher / the same / lower."
                        + (" Context figures (line and block coverage under the middle token budget, the area under "
                           "line coverage) pair the units with gold lines only." if context else ""))


def _cell_state(figures: dict | None, failed: bool, k0: int, k1: int) -> str:
    if failed:
        return "failed"
    if figures is None:
        return "absent"
    if all(v is None for v in figures.values()):
        return "unscorable"
    if figures.get(f"hit@{k0}"):
        return "hit"
    if figures.get(f"hit@{k1}"):
        return "near"
    return "miss"


def _grid(engines: Sequence[EngineFigures], unit: str) -> GridFigure:
    ks = ks_of(engines[0].run)
    k0, k1 = ks[0], ks[-1]
    order: dict[str, str] = {}
    for e in engines:
        for u in e.run.units():
            if u.status in ("ok", "failed"):
                name = u.id[:10] if unit == "commit" else u.id
                gap = " [known gap: not counted]" if known_gap(u) else ""
                expected = ", ".join(u.expected or [])
                order.setdefault(u.id, f"{name} {u.request or ''}".strip() + gap
                                 + (f" | expected: {expected}" if expected else ""))
    labels = label_systems([(e.engine, e.run) for e in engines])
    rows = [GridRow(label, [_cell_state(e.units.get(uid), uid in e.failed, k0, k1) for uid in order], run=e.run.rel)
            for label, e in zip(labels, engines)]
    legend = {s: d.format(k0=k0, k1=k1) for s, d in HIT_LEGEND.items()}
    used = {c for r in rows for c in r.cells}
    legend = {s: d for s, d in legend.items() if s in used or s in ("hit", "near", "miss")}
    return GridFigure(f"Per-{unit} hits ({len(order)} {unit}s, in the order run)", list(order.items()), rows,
                      legend, list(dict.fromkeys(rel for e in engines for rel in e.sources)),
                      caption=f"One cell per {unit}.", hover="Hover a cell for its id and request.")


def _pass_lines(runs: Sequence[TypedRun]) -> Table | None:
    from ctxgauge.results import CasesResults

    rows = []
    for run in runs:
        for line in run.results.pass_lines if isinstance(run.results, CasesResults) else []:
            op = ">=" if line.higher_is_better else "<="
            holds = line.holds
            rows.append([Cell(engine_name(run), run=run.rel), Cell(line.metric),
                         Cell(f"{op} {line.threshold}"), num(line.value),
                         Cell("holds" if holds else "fails", style="good" if holds else "bad")])
    if not rows:
        return None
    return Table("Pass lines (known-gaps lane not counted)", ["engine", "metric", "needs", "mean", "verdict"], rows,
                 sources=[r.rel for r in runs])


def _gate(run: TypedRun) -> Table | None:
    from ctxgauge.results import ReplayResults

    gate = run.results.gate if isinstance(run.results, ReplayResults) else None
    if gate is None or not gate.lines:
        return None
    rows = [[Cell(line.metric), num(line.baseline), num(line.current),
             Cell(f"{line.drop:+.3f}", num=True),
             Cell("holds" if line.holds else "fails", style="good" if line.holds else "bad"),
             Cell(", ".join(s[:10] for s in line.worse[:5]) or "-")] for line in gate.lines]
    verdict = "passed" if gate.passed else "FAILED"
    return Table(f"Regression gate against {gate.baseline}: {verdict} (max drop {gate.max_drop}, "
                 f"{gate.commits} commits)", ["metric", "baseline", "now", "drop", "verdict", "worse on"],
                 rows, sources=[run.rel])


def _skips(run: TypedRun) -> str | None:
    from ctxgauge.results import ReplayResults

    if not isinstance(run.results, ReplayResults):
        return None
    counts, skipped = run.results.counts, run.results.skipped
    reasons = ", ".join(f"{r} {n}" for r, n in sorted(skipped.items(), key=lambda x: (-x[1], x[0])) if n)
    return (f"walked {counts.walked} commits; replayed {counts.replayed}, "
            f"scored {counts.scored}, failed {counts.failed}, skipped "
            f"{counts.skipped}" + (f" ({reasons})." if reasons else "."))


def _by_kind(runs: Sequence[TypedRun]) -> Table | None:
    rows = []
    # The measured engine of each run, each measurement once (a run and its --vs twin walked the same commits).
    measured = distinct([engine_figures(r)[0] for r in runs])
    labels = label_systems([(e.engine, e.run) for e in measured])
    for label, run in zip(labels, (e.run for e in measured)):
        kinds = run.results.by_kind
        k0 = ks_of(run)[0]
        for kind in KINDS:
            part = kinds.get(kind)
            if part:
                s = part.summary
                rows.append([Cell(label, run=run.rel), Cell(kind), num(part.commits, 0),
                             num(s.get(f"hit@{k0}")), num(s.get(f"recall@{k0}")), num(s.get(MRR))])
    if not rows:
        return None
    k0 = ks_of(runs[0])[0]
    return Table("Commits touching code vs the rest (measured engine)",
                 ["engine", "commits touching", "commits", f"hit@{k0}", f"recall@{k0}", "mrr"], rows,
                 sources=list(dict.fromkeys(rel for e in measured for rel in e.sources)))


def section(suite: str, title: str, runs: Sequence[TypedRun], *, unit: str, by_kind: bool = False) -> Section:
    """A retrieval suite's section: per dataset, bars with intervals, every metric, the paired comparisons,
    (with `by_kind`) commits touching code against the rest, the per-unit hit map; runs that did not
    finish are named and left out. `unit` names a unit in captions (`commit`, `case`)."""
    sec = Section(suite, title, notes=dnf_note(runs))
    done = [r for r in runs if r.finished]
    for name in dict.fromkeys(r.subject.dataset for r in done):
        group = [r for r in done if r.subject.dataset == name]
        engines = distinct([e for r in group for e in engine_figures(r)])
        sec.blocks.append(_bars(engines, headline(group[0]), f"{name}: per-engine metrics"))
        sec.blocks.append(_table(engines, unit))
        curve = budget_figure(group, f"{name}: line coverage by context budget")
        if curve is not None:  # only runs that record `results.budget_curve` (issue 37); older ones: nothing
            sec.blocks.append(curve)
        for r in group:
            for extra in (_paired(r), _gate(r)):
                if extra is not None:
                    sec.blocks.append(extra)
        if by_kind:
            kinds = _by_kind(group)
            if kinds is not None:
                sec.blocks.append(kinds)
        sec.blocks.append(_grid(distinct([e for r in group for e in engine_figures(r, gaps=True)]), unit))
        lines = _pass_lines(group)
        if lines is not None:
            sec.blocks.insert(len(sec.blocks) - 1, lines)
        for r in group:
            names = [engine_name(r)] + ([vs_name(r)] if vs_name(r) else [])
            sec.blocks.append(misses_table(r, ks_of(r)[0], names, unit))
        # Runs of one repository usually walk the same commits: one line per distinct account.
        accounts: dict[str, list[str]] = {}
        for r in group:
            if (text := _skips(r)) is not None:
                accounts.setdefault(text, []).append(r.rel)
        sec.notes += [f"{', '.join(rels)}: {text}" for text, rels in accounts.items()]
    return sec


def leaderboard(run: TypedRun) -> list[Attempt]:
    """One valid attempt per engine of a finished run, with every metric's mean over its units (and the
    units' values and ids, for the leaderboard's interval and tied groups)."""
    seed = int(run.spec.seed or 0)
    out = []
    for e in engine_figures(run):
        values = []
        for m in metrics_of(run):
            pairs = [(uid, float(f[m])) for uid, f in e.units.items() if f.get(m) is not None]
            units = tuple(v for _, v in pairs)
            values.append(Value(m, mean_over(units), units, seed, unit_ids=tuple(u for u, _ in pairs),
                                higher_is_better=_direction(m)))
        out.append(Attempt(e.engine, "valid", tuple(values)))
    return out


def _direction(metric: str) -> bool:
    from ctxgauge.metrics import higher_is_better

    try:
        return higher_is_better(metric)
    except ValueError:  # a metric this version cannot parse: ranked as a score
        return True


@dataclass(frozen=True)
class CaseRow:
    """One request and engine of a finished retrieval run (a per-case.csv input)."""

    case: str
    """The unit's id (a commit, a case)."""
    request: str
    """Its request text."""
    system: str
    """The engine."""
    scored: bool
    """Whether it had something to score."""
    passed: bool
    """Whether it passed `pass_metric`."""
    pass_metric: str
    """Hit at the run's smallest k."""
    lane: str
    """`known-gaps` for the known-gaps lane, else ''."""


def item_rows(run: TypedRun) -> list[CaseRow]:
    """Per unit and engine: scored or not, and whether it passed (hit at the smallest k)."""
    k0 = ks_of(run)[0]
    rows = []
    by_id = {u.id: u for u in run.units()}
    for e in engine_figures(run, gaps=True):
        for uid in list(e.units) + sorted(e.failed):
            figures = e.units.get(uid)
            scored = figures is not None and any(v is not None for v in figures.values())
            unit = by_id.get(uid)
            rows.append(CaseRow(uid, (unit.request if unit else None) or "", e.engine, scored,
                                bool(scored and figures.get(f"hit@{k0}")), f"hit@{k0}",
                                KNOWN_GAPS if unit is not None and known_gap(unit) else ""))
    return rows


__all__ = ["engine_name", "fmt", "item_rows", "leaderboard", "section", "vs_name"]
