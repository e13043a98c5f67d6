"""`pack_budgets` (every budget in one walk) equals a plain one-budget walk written here from the packing rules
(`pack` is `pack_budgets` with one budget), and the paired comparison of a micro average
(`paired_ratio_comparison`) compares ratios of sums, by hand."""

from __future__ import annotations

import pytest

from ctxgauge.metrics._lines import split_lines
from ctxgauge.metrics.packing import Packed, header, pack, pack_budgets
from ctxgauge.metrics.stats import paired_ratio_comparison
from ctxgauge.metrics.tokens import default_tokenizer

from tests.metrics.test_packing import FILES, H, Words, read


HITS = [
    [H("a.py"), H("b.py")],
    [H("b.py", ((3, 4), (1, 1))), H("empty.txt"), H("a.py", ((2, 3),))],
    [H("a.py", ((1, 1), (3, 3))), H("b.py")],
    [],
]


def _one_walk(hits, read_file, budget, counter) -> Packed:
    """The module's rules, one budget, line by line: each span (or the whole file) after its `path:s-e`
    header, every header and line counted; a span that does not fit whole is cut after its last line that
    fits with its (shorter) header, and packing stops there."""
    parts, included, used = [], [], 0
    for hit in hits:
        lines = [ln.rstrip(b"\n").decode("utf-8", "replace") + "\n" for ln in split_lines(read_file(hit.path))]
        for start, end in tuple(hit.spans) or ((((1, len(lines)),) if lines else ())):
            kept, cost = start - 1, 0
            for last in range(end, start - 1, -1):
                c = counter.count(header(hit.path, start, last)) + sum(counter.count(x) for x in lines[start - 1:last])
                if used + c <= budget:
                    kept, cost = last, c
                    break
            if kept >= start:
                parts.append(header(hit.path, start, kept) + "".join(lines[start - 1:kept]))
                used += cost
                if included and included[-1][0] == hit.path:
                    included[-1][1].append((start, kept))
                else:
                    included.append((hit.path, [(start, kept)]))
            if kept < end:
                return Packed("".join(parts), used, tuple((p, tuple(x)) for p, x in included), budget,
                              ran_out=False)
    return Packed("".join(parts), used, tuple((p, tuple(x)) for p, x in included), budget, ran_out=True)


@pytest.mark.parametrize("hits", HITS)
@pytest.mark.parametrize("counter", [Words(), default_tokenizer()], ids=["words", "o200k"])
def test_every_budget_in_one_walk_equals_pack_per_budget(hits, counter):
    budgets = list(range(0, 40)) + [100, 1000]
    many = pack_budgets(hits, read, budgets, counter)
    assert set(many) == set(budgets)
    for b in budgets:
        assert many[b] == _one_walk(hits, read, b, counter) == pack(hits, read, b, counter), b


def test_a_file_is_read_once_whatever_the_budgets():
    seen: list[str] = []

    def counting_read(path: str) -> bytes:
        seen.append(path)
        return FILES[path]

    pack_budgets([H("a.py"), H("b.py")], counting_read, [3, 12, 100], Words())
    assert seen == ["a.py", "b.py"]


def test_a_micro_comparison_is_a_difference_of_ratios_of_sums():
    a = [(1, 2), (3, 4)]  # 4 / 6
    b = [(1, 4), (1, 4)]  # 2 / 8
    c = paired_ratio_comparison(a, b, seed=0, n_resamples=2000)
    assert c.mean_a == pytest.approx(4 / 6) and c.mean_b == pytest.approx(2 / 8)
    assert c.mean_diff == pytest.approx(4 / 6 - 2 / 8)
    # Per unit: 0.5 vs 0.25 and 0.75 vs 0.25: two wins. Every resample keeps a ahead.
    assert (c.wins, c.ties, c.losses) == (2, 0, 0) and c.ci_low > 0
    # Not the mean of unit ratios (0.625 - 0.25): the micro figure weighs every gold line the same.
    assert c.mean_diff != pytest.approx(0.625 - 0.25)
    same = paired_ratio_comparison(a, a, seed=0, n_resamples=500)
    assert same.mean_diff == 0 and same.p_value == 1.0 and same.ci_low == same.ci_high == 0
    assert paired_ratio_comparison(a, b, seed=0, n_resamples=2000) == c  # seeded
    zero = paired_ratio_comparison([(0, 0)], [(1, 2)], seed=0, n_resamples=100)
    assert zero.mean_a == 0.0  # an empty context scores 0
