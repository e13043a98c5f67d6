"""`report._fit`: a table laid out for its width keeps every id, path, number and interval whole.

Each test draws a table that Rich's own layout mangles at that width (folded ids, cut intervals, headers
ending in `…`), and asserts on the printed text: every token appears whole on one line, no line is wider
than the console, and only free-text cells end in `…`.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table as RichTable

from ctxgauge.report._fit import FREE, WHOLE, WORDS, Col, Fitted

RUN_IDS = [f"replay-2026120{i}-19342{i}-a{i}b{i}c{i}d{i}e{i}f{i}" for i in range(1, 5)]
INTERVALS = ["[0.250, 1.000]", "[-0.600, +0.300]", "[0.123, 0.987]", "[0.000, 0.750]"]


def draw(renderable, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    console.print(renderable)
    return console.file.getvalue()


def lines_fit(out: str, width: int) -> bool:
    return all(len(line) <= width for line in out.splitlines())


def runs_table(**drops) -> tuple[list[Col], list[list[str]]]:
    cols = [Col("run", WHOLE), Col("status", WORDS), Col("engines / arms", WORDS, drop=drops.get("engines")),
            Col("finished (UTC)", WHOLE, drop=drops.get("finished")), Col("units ok/failed/skipped", WHOLE, right=True),
            Col("95% interval", WHOLE, right=True), Col("note", FREE)]
    rows = [[rid, "finished", "grep, bm25, fusion(bm25,minilm)", "2026-12-06 19:34:28", "4/0/0", iv,
             "a commit subject long enough to be cut somewhere in a narrow terminal"]
            for rid, iv in zip(RUN_IDS, INTERVALS)]
    return cols, rows


def test_rich_alone_mangles_what_fitted_keeps_whole():
    cols, rows = runs_table()
    plain = RichTable(*[c.header for c in cols])
    for r in rows:
        plain.add_row(*r)
    old = draw(plain, 80)
    # The failure this module prevents: Rich folds the run ids and splits the intervals at 80 columns.
    assert not all(rid in old for rid in RUN_IDS) or not all(iv in old for iv in INTERVALS)
    for width in (80, 120, 200):
        new = draw(Fitted(cols, rows), width)
        assert lines_fit(new, width), new
        for token in RUN_IDS + INTERVALS + ["2026-12-06 19:34:28", "4/0/0", "fusion(bm25,minilm)", "ok/failed/skipped"]:
            assert token in new, (width, token, new)


def test_columns_are_left_out_by_rank_and_named():
    cols, rows = runs_table(finished=1, engines=2)
    out = draw(Fitted(cols, rows), 80)
    assert lines_fit(out, 80)
    assert "2026-12-06" not in out and "fusion(bm25,minilm)" not in out
    assert "left out at 80 columns: engines / arms, finished (UTC)" in " ".join(out.split())
    # Rank 1 goes first: where leaving out the time is enough, the engines stay.
    for width in range(80, 400):
        got = draw(Fitted(cols, rows), width)
        if "fusion(bm25,minilm)" in got:
            break
    assert "2026-12-06 19:34:28" not in got and "left out at" in got
    wide = draw(Fitted(cols, rows), 400)
    assert "left out" not in wide and "2026-12-06 19:34:28" in wide and "grep, bm25, fusion(bm25,minilm)" in wide


def test_only_free_text_ends_in_an_ellipsis():
    cols, rows = runs_table(finished=1, engines=2)
    out = draw(Fitted(cols, rows), 90)
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃").split("│")]
        for i, cell in enumerate(cells):
            if cell.endswith("…"):
                assert i == len(cells) - 1, line  # the note column, the only FREE one


def test_a_matrix_too_wide_is_split_into_tables_that_repeat_its_first_column():
    systems = [f"bm25 · demo/replay-{name}" for name in ("bm25", "grep", "grep-vs-bm25", "fusion", "hybrid")]
    cols = [Col("metric", WHOLE)] + [Col(s, WHOLE, right=True) for s in systems]
    rows = [[m] + [f"0.{i}{j}7" for j in range(len(systems))] for i, m in enumerate(("hit@5", "recall@10", "mrr"))]
    out = draw(Fitted(cols, rows), 80)
    assert lines_fit(out, 80)
    assert out.count("hit@5") >= 2  # the first column in every part
    for s in systems:
        assert s.split(" · ")[1] in out
    for row in rows:
        for value in row[1:]:
            assert value in out


def test_stacked_when_not_two_columns_fit():
    cols = [Col("run", WHOLE), Col("path", WHOLE)]
    rows = [[RUN_IDS[0], "src/" + "deep/" * 8 + "file.py"]]
    out = draw(Fitted(cols, rows), 60)
    assert RUN_IDS[0] in out and rows[0][1] in out and "path: " in out


def test_without_a_width_limit_every_row_is_one_line():
    cols, rows = runs_table()
    out = draw(Fitted(cols, rows), 100_000)
    body = [line for line in out.splitlines() if line.startswith("│")]
    assert len(body) == len(rows)
    assert all(rows[0][-1] in line or rows[0][-1] not in out for line in body)


def test_split_tables_repeat_what_tells_their_rows_apart():
    # `replay --misses` at 80 columns on logrus: one commit missed by two engines gave the first part two
    # identical rows (`c809995ec9 │ add tinygo test case`) with no engine to tell them apart.
    cols = [Col("commit", WHOLE), Col("request", FREE), Col("engine", WORDS), Col("expected file", WORDS),
            Col("top 5 instead", WORDS)]
    top = "README.md; terminal_check_notappengine.go; terminal_check_bsd.go; text_formatter.go; entry.go"
    rows = [["c809995ec9", "add tinygo test case to the continuous integration matrix", engine,
             f".github/workflows/ci.yaml (rank {rank})", top] for engine, rank in (("fusion", 29), ("bm25", 43))]
    rows.append(["13afddf9da", "replace TestLogrusInterfaces with compile-time assertions", "bm25",
                 "logrus.go (rank 6)", top])
    out = draw(Fitted(cols, rows), 80)
    assert lines_fit(out, 80)
    parts = out.split("┏")[1:]
    assert len(parts) >= 2, out
    for part in parts:
        body = [line for line in part.splitlines() if line.startswith("│ c809995ec9")]
        assert len(body) == 2 and "fusion" in body[0] and "bm25" in body[1], part
    # A first column whose cells differ is the only one repeated (the matrix case above).
    assert Fitted(cols, rows[1:]).keys([0, 1, 2, 3, 4]) == [0]


def test_a_column_with_a_separator_wraps_after_it_only():
    figures = ["hit@5 0.925, recall@5 0.912, ndcg@5 0.838", "none 38.9%, context:bm25@3 61.1%"]
    cols = [Col("run", WHOLE), Col("figures", WORDS, sep=", ")]
    rows = [[rid, f] for rid, f in zip(RUN_IDS, figures)]
    for width in (68, 80, 200):
        out = draw(Fitted(cols, rows), width)
        assert lines_fit(out, width), out
        for f in figures:
            for piece in f.split(", "):
                assert piece in out, (width, piece, out)  # a figure never split from its value
    out = draw(Fitted(cols, rows), 200)
    assert all(f in out for f in figures)  # room enough: one line, as given
    assert "recall@5 0.912" not in draw(Fitted([Col("run", WHOLE), Col("figures", WORDS)], rows), 68)


def test_the_left_out_note_fits_and_counts_its_columns():
    # `engines` at 80 columns: `left out at 80 columns: identity (a wider terminal shows them; --json holds
    # every value)` wrapped at 80 itself and said "them" for one column.
    cols = [Col("engine", WHOLE), Col("status", WORDS), Col("identity", WHOLE, drop=1)]
    rows = [[f"engine{i}", "available", "sha256:" + "ab" * 32] for i in range(3)]
    one = draw(Fitted(cols, rows), 80)
    assert lines_fit(one, 80)
    note = [line for line in one.splitlines() if line.startswith("left out at")]
    assert note == ["left out at 80 columns: identity (a wider terminal or --json shows it)"], one
    cols, rows = runs_table(finished=1, engines=1)
    two = " ".join(draw(Fitted(cols, rows), 80).split())
    assert "left out at 80 columns: engines / arms, finished (UTC) (a wider terminal or --json shows them)" in two
