"""Sums and stable orders over non-negative integer keys: the one sort bm25's counting is built on.

`stable_order` is `np.argsort(keys, kind="stable")` made of 16-bit radix passes (numpy sorts 16-bit keys
stably by radix, in linear time; about 10x its merge sort of the int64 keys of a cold build). A stable
order is unique, so both give the same permutation whatever the keys (tested); small arrays keep numpy's
own sort, which is quicker there and fast on keys made of a few sorted runs (an update's delta).
"""

from __future__ import annotations

import numpy as np

RADIX_FROM = 4096
"""Keys below which `stable_order` uses numpy's stable sort directly (radix passes cost more on few keys)."""


def stable_order(keys: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")` of non-negative integer keys, 16 bits at a time from the lowest."""
    if len(keys) < RADIX_FROM:
        return np.argsort(keys, kind="stable")
    top = int(keys.max())
    if top < 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    k = keys.astype(np.uint64)
    order = np.argsort((k & np.uint64(0xFFFF)).astype(np.uint16), kind="stable")
    shift = 16
    while top >> shift:
        digit = ((k[order] >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def sum_by_key(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct `keys`, ascending, and the sum of `values` over each: one stable order, then one
    `np.add.reduceat` over the runs of equal keys."""
    order = stable_order(keys)
    keys, values = keys[order], values[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(first)
    return keys[starts], (np.add.reduceat(values, starts) if len(starts) else values[:0])
