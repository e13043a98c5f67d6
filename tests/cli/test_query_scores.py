"""`query` prints its scores with one precision (issue 39 item 9: fusion's `1` beside `0.01639`)."""

from ctxgauge.cli.query import score_cells


def test_scores_print_with_one_precision():
    cells = score_cells([1.0, 0.016393442622950820, 12.5])
    assert cells == ["1.0000", "0.0164", "12.5000"]
    assert len({c.split(".")[1].__len__() for c in cells}) == 1
