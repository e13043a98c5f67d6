"""bm25's term counts of a changed blob from the lines that changed, not from the whole file.

A token is made of one word (`tokens.word_counts`: a run of ASCII word bytes), and no word spans a line: a
newline byte is not a word byte, nor is any byte of a multi-byte UTF-8 sequence one. So a blob's multiset
of words is the sum of its lines' multisets, and a new version's is the old one's, less the words of the
lines it lost, plus those of the lines it gained, whatever order the lines are in. The lines both versions
start and end with are cut off (compared in numpy), and what is left between, when large, is compared as
two multisets of lines (no diff alignment needed: counted in C by `Counter`, compared as `dict.items()`
sets). CRLF endings, a missing last newline and long lines change nothing (`\\r` is not a word byte
either; the last line is a line like the others).

The counts so derived are the counts a fresh tokenisation gives, exactly (tested against it on real edits):
the term ids are the engine object's interned ids, whichever way they were first met, and no score, ranking
or artifact depends on an id's number (the vocabulary is ordered by term).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ctxgauge.engines._text.keyed import sum_by_key

Counts = tuple[np.ndarray, np.ndarray, int]
"""(term ids, sorted; their counts; number of tokens): `terms.Counts`."""

MAX_CHANGED = 0.5
"""A delta is used while the changed lines hold at most this share of the new version's bytes: beyond, a
full count of the new version reads fewer bytes (a minified file is one long line, lost and gained)."""
SMALL_MIDDLE = 8192
"""Bytes of the changed middle (between the common first and last lines) below which it is taken as the
lines lost and gained as it is, without comparing its lines one by one."""


def _first_difference(a: np.ndarray, b: np.ndarray) -> int:
    """How many leading bytes two equally long byte arrays share."""
    if not len(a):
        return 0
    ne = a != b
    i = int(ne.argmax())
    return i if ne[i] else len(a)


def line_delta(old: bytes, new: bytes) -> tuple[bytes, bytes] | None:
    """(text whose words `new` lost, text whose words it gained) from `old`; None when the changed lines
    hold more than MAX_CHANGED of `new`'s bytes.

    The lines both share at the start and at the end are cut off first (compared in numpy; each cut made at
    a newline, so no word is split), which is the whole of most edits; a middle of more than SMALL_MIDDLE
    bytes (edits far apart) is compared as multisets of lines: a line kept twice and now thrice is gained once."""
    n = min(len(old), len(new))
    x, y = np.frombuffer(old, dtype=np.uint8), np.frombuffer(new, dtype=np.uint8)
    same = _first_difference(x[:n], y[:n])
    cut = old.rfind(b"\n", 0, same) + 1  # the prefix ends just after a newline (or is empty)
    room = n - cut
    tail = _first_difference(x[len(old) - room:][::-1], y[len(new) - room:][::-1]) if room else 0
    nl = old.find(b"\n", len(old) - tail) if tail else -1
    keep = len(old) - nl if nl >= 0 else 0  # the suffix starts at a newline (or is empty)
    lost, gained = old[cut:len(old) - keep], new[cut:len(new) - keep]
    limit = len(new) * MAX_CHANGED
    if len(lost) + len(gained) <= SMALL_MIDDLE:
        return (lost, gained) if len(lost) + len(gained) <= limit else None
    a, b = Counter(lost.split(b"\n")), Counter(gained.split(b"\n"))
    out: tuple[list[bytes], list[bytes]] = ([], [])
    size = 0
    for items, other, lines in ((a.items() - b.items(), b, out[0]), (b.items() - a.items(), a, out[1])):
        for line, count in items:
            extra = count - other.get(line, 0)
            if extra > 0:
                lines.extend([line] * extra)
                size += (len(line) + 1) * extra
                if size > limit:
                    return None
    return b"\n".join(out[0]), b"\n".join(out[1])


def apply_delta(old: Counts, lost: Counts, gained: Counts) -> Counts:
    """The counts of a version whose old counts are `old`, less the counts of the lines it `lost`, plus
    those of the lines it `gained`: terms left with no occurrence dropped, ids sorted."""
    ids, total = sum_by_key(np.concatenate([old[0], lost[0], gained[0]]),
                            np.concatenate([old[1], -lost[1], gained[1]]))
    keep = total != 0
    if (total < 0).any():  # a line lost that the old version did not hold: the old counts were not its
        raise ValueError("a line delta removed terms the old counts do not hold")
    return ids[keep], total[keep], old[2] - lost[2] + gained[2]

