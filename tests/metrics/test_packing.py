"""The one packing function, pinned by hand-computed cases under a counter whose rule is plain (one token
per word, one per line break), and once under the real tokenizer."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ctxgauge.metrics.packing import header, pack
from ctxgauge.metrics.tokens import default_tokenizer


class Words:
    """One token per blank-separated word, one per `\\n`: `a:1-2\\n` is 2 tokens, `x y\\n` is 3."""

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


@dataclass
class H:
    path: str
    spans: tuple = ()


FILES = {
    "a.py": b"one\ntwo two\nthree three three\n",       # lines cost 2, 3, 4
    "b.py": b"b1\nb2\nb3\nb4",                            # no final \n: 4 lines, each 2
    "empty.txt": b"",
}


def read(path: str) -> bytes:
    return FILES[path]


def test_whole_files_in_rank_order_when_they_fit() -> None:
    p = pack([H("a.py"), H("b.py")], read, 100, Words())
    # a.py:1-3 header 2 + lines 9 = 11; b.py:1-4 header 2 + 8 = 10.
    assert p.tokens == 21 and p.ran_out
    assert p.text == "a.py:1-3\none\ntwo two\nthree three three\nb.py:1-4\nb1\nb2\nb3\nb4\n"
    assert p.included == (("a.py", ((1, 3),)), ("b.py", ((1, 4),)))


def test_spans_in_the_engines_order_each_with_its_header() -> None:
    p = pack([H("b.py", ((3, 4), (1, 1))), H("a.py", ((2, 2),))], read, 100, Words())
    assert p.text == "b.py:3-4\nb3\nb4\nb.py:1-1\nb1\na.py:2-2\ntwo two\n"
    assert p.tokens == (2 + 4) + (2 + 2) + (2 + 3)
    assert p.lines() == {"b.py": frozenset({1, 3, 4}), "a.py": frozenset({2})}


def test_a_span_that_does_not_fit_is_cut_after_its_last_whole_line_and_packing_stops() -> None:
    # a.py whole costs 11; 2 tokens left for b.py: its header alone. Budget 17: header 2 + b1 b2 b3 (6).
    p = pack([H("a.py"), H("b.py"), H("empty.txt")], read, 11 + 2 + 6 + 1, Words())
    assert p.included == (("a.py", ((1, 3),)), ("b.py", ((1, 3),)))
    assert p.text.endswith("b.py:1-3\nb1\nb2\nb3\n")  # the header names the lines kept
    assert p.tokens == 19 and not p.ran_out


def test_a_span_of_which_no_line_fits_is_left_out_and_stops_packing() -> None:
    p = pack([H("a.py", ((3, 3),)), H("b.py")], read, 5, Words())  # header 2 + line 4 = 6 > 5
    assert p.included == () and p.text == "" and p.tokens == 0 and not p.ran_out


def test_exact_fit_and_empty_files() -> None:
    p = pack([H("empty.txt"), H("a.py")], read, 11, Words())
    assert p.included == (("a.py", ((1, 3),)),) and p.tokens == 11 and p.ran_out
    assert pack([], read, 10, Words()).ran_out


def test_budget_must_be_a_count() -> None:
    with pytest.raises(ValueError):
        pack([], read, -1, Words())


def test_real_tokens_hold_the_budget() -> None:
    tok = default_tokenizer()
    big = {"big.py": "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(200)).encode()}
    for budget in (0, 7, 50, 333, 1000):
        p = pack([H("big.py")], big.__getitem__, budget, tok)
        assert p.tokens <= budget
        (_, spans), = p.included or (("big.py", ((1, 0),)),)
        kept = spans[0][1]
        # One more line would not have fitted: only whole lines, cut as late as the budget allows.
        more = tok.count(header("big.py", 1, kept + 1)) + sum(
            tok.count(ln + "\n") for ln in big["big.py"].decode().split("\n")[:kept + 1])
        assert more > budget
