"""One packing function: a ranking's spans as the context a model reads, under a token budget.

`pack(hits, read_file, budget, tokenizer)` takes hits in rank order and, for each, its spans in the
engine's order (no spans: the whole file), and writes each span as a header line `path:start-end` followed
by the span's lines. Rules (shared by replay, cases and qa, so their budgets mean one thing):
- the header counts toward the budget;
- only whole lines count: a span that does not fit is cut after its last line that fits, its header
  naming the lines kept, and packing stops there; a span of which not one line fits is left out whole;
- a ranking that runs out before the budget does gives a shorter context, and the result says so
  (`ran_out`);
- tokens are counted piece by piece, each header and each line (with its `\\n`) on its own, so a line
  costs the same wherever it lands and a cut never re-counts what came before; the sum is what the budget
  holds. A line's count is at least what it adds to the whole text in all but rare merges across a line
  break (BPE rarely joins across `\\n`);
- an empty file has no lines and adds nothing; a file's bytes are decoded as UTF-8 (invalid bytes replaced)
  and its lines split on `\\n` only, a final line without `\\n` given one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ctxgauge.metrics._lines import Span, split_lines, whole


@dataclass(frozen=True)
class Packed:
    """A packed context."""

    text: str
    """What the model reads: headers and lines."""
    tokens: int
    """Tokens of the context, counted piece by piece (what the budget holds)."""
    included: tuple[tuple[str, tuple[Span, ...]], ...]
    """Each file in the context, in context order, with the spans (whole lines) of it included."""
    budget: int
    """The budget packed to."""
    ran_out: bool
    """True when every hit fitted: the ranking ran out before the budget did (a shorter context)."""

    def lines(self) -> dict[str, frozenset[int]]:
        """Lines in the context, by path."""
        out: dict[str, set[int]] = {}
        for path, spans in self.included:
            out.setdefault(path, set()).update(x for s, e in spans for x in range(s, e + 1))
        return {p: frozenset(v) for p, v in out.items()}


def header(path: str, start: int, end: int) -> str:
    """The line that precedes a span in a packed context."""
    return f"{path}:{start}-{end}\n"


def pack(hits: Sequence[Any], read_file: Callable[[str], bytes], budget: int, tokenizer: Any) -> Packed:
    """The context of `hits` (objects with `path` and `spans`, rank order) under `budget` tokens, files read
    with `read_file(path) -> bytes`, tokens counted by `tokenizer.count(text)` (see the module rules): the
    one budget of `pack_budgets`, the one packer."""
    return pack_budgets(hits, read_file, [budget], tokenizer)[budget]


def _add(included: list[tuple[str, list[Span]]], path: str, span: Span) -> None:
    if included and included[-1][0] == path:
        included[-1][1].append(span)
    else:
        included.append((path, [span]))


def pack_budgets(hits: Sequence[Any], read_file: Callable[[str], bytes], budgets: Sequence[int],
                 tokenizer: Any) -> dict[int, Packed]:
    """`{budget: the context of hits under budget}` for every budget, in one walk of the ranking.

    Equal to packing once per budget (tested against a plain one-budget walk): until a budget stops, every budget still packing has
    taken the same whole spans, so they share one prefix; a span that does not fit whole under the smallest
    budget left is cut for that budget (`_fit`, as `pack` cuts it) and that budget stops there. Each file is
    read and split once and each line counted once, whatever the number of budgets."""
    for budget in budgets:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise ValueError(f"budget must be a whole number of tokens, got {budget!r}")
    count = tokenizer.count
    pending = sorted(set(budgets))
    out: dict[int, Packed] = {}
    parts: list[str] = []
    included: list[tuple[str, list[Span]]] = []
    used = 0

    def stop(budget: int, path: str, start: int, end: int, lines: list[str]) -> None:
        kept, cost = _fit(path, start, end, lines, budget - used, count)
        text, spans = "".join(parts), [(p, list(x)) for p, x in included]
        if kept >= start:
            text += header(path, start, kept) + "".join(lines[start - 1:kept])
            _add(spans, path, (start, kept))
        out[budget] = Packed(text, used + (cost if kept >= start else 0), _frozen(spans), budget, ran_out=False)

    for hit in hits:
        if not pending:
            break
        path = hit.path
        lines = [ln.rstrip(b"\n").decode("utf-8", "replace") + "\n" for ln in split_lines(read_file(path))]
        for start, end in (tuple(getattr(hit, "spans", ()) or ()) or whole(len(lines))):
            cost = count(header(path, start, end)) + sum(count(lines[i - 1]) for i in range(start, end + 1))
            while pending and used + cost > pending[0]:
                stop(pending.pop(0), path, start, end, lines)
            if not pending:
                break
            parts.append(header(path, start, end) + "".join(lines[start - 1:end]))
            used += cost
            _add(included, path, (start, end))
    text, frozen = "".join(parts), _frozen(included)
    for budget in pending:
        out[budget] = Packed(text, used, frozen, budget, ran_out=True)
    return out


def _fit(path: str, start: int, end: int, lines: list[str], room: int, count) -> tuple[int, int]:
    """The last line of `start..end` that fits in `room` tokens with its header, and the cost of the span
    so cut; `start - 1` when not one line fits. Lines are counted only until their sum alone overflows
    (a 10,000-line file is not counted to fill the last 50 tokens); the header, whose count may change with
    its end line, is then tried from the longest candidate down."""
    prefix = [0]
    for line_no in range(start, end + 1):
        prefix.append(prefix[-1] + count(lines[line_no - 1]))
        if prefix[-1] > room:
            prefix.pop()
            break
    for n in range(len(prefix) - 1, 0, -1):
        cost = count(header(path, start, start + n - 1)) + prefix[n]
        if cost <= room:
            return start + n - 1, cost
    return start - 1, 0


def _frozen(included: list[tuple[str, list[Span]]]) -> tuple[tuple[str, tuple[Span, ...]], ...]:
    return tuple((p, tuple(spans)) for p, spans in included)
