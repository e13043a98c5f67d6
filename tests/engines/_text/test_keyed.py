import numpy as np

from ctxgauge.engines._text.keyed import RADIX_FROM, stable_order, sum_by_key


def test_the_radix_order_is_the_stable_argsort():
    # A stable order is unique: the radix passes must give numpy's own permutation, ties included.
    rng = np.random.default_rng(11)
    for top in (1, 2, 1000, 65535, 65536, 70_000, 1 << 20, 1 << 33, 1 << 47):
        for n in (0, 1, 7, RADIX_FROM - 1, RADIX_FROM, 5000):
            keys = rng.integers(0, top, n, dtype=np.int64)
            if n > 2:
                keys[-1] = top - 1  # the widest key present
            assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable")), (top, n)


def test_sum_by_key_adds_each_keys_values():
    rng = np.random.default_rng(5)
    for n in (0, 3, 10_000):
        keys = rng.integers(0, 1 << 40, n, dtype=np.int64) % 977 * (1 << 30)
        values = rng.integers(-5, 6, n, dtype=np.int64)
        got_keys, got = sum_by_key(keys, values)
        want: dict[int, int] = {}
        for k, v in zip(keys.tolist(), values.tolist()):
            want[k] = want.get(k, 0) + v
        assert got_keys.tolist() == sorted(want)
        assert got.tolist() == [want[k] for k in sorted(want)]
