"""TREC run and qrels files: round trips, trec_eval's ordering, and ir_measures reading what we write."""

from __future__ import annotations

import pytest

from ctxgauge.errors import UserError
from ctxgauge.metrics import evaluate
from ctxgauge.trec import decode_docno, encode_docno, format_run, read_qrels, read_run, write_qrels, write_run


def test_docno_encoding_round_trips_whitespace_and_percent():
    for path in ["a.py", "my file.py", "100%/x\ty.py", "a%20b.py", "ünï/cödé.py"]:
        enc = encode_docno(path)
        assert not any(ch.isspace() for ch in enc)
        assert decode_docno(enc) == path


def test_run_scores_strictly_decrease_with_rank():
    text = format_run({"q1": ["b.py", "a.py", "c.py"]}, "bm25(k1=1.2)")
    rows = [line.split() for line in text.splitlines()]
    assert [r[2] for r in rows] == ["b.py", "a.py", "c.py"]
    assert [int(r[3]) for r in rows] == [1, 2, 3]
    assert [float(r[4]) for r in rows] == [3 - 1 + 1, 3 - 2 + 1, 3 - 3 + 1]
    assert {r[5] for r in rows} == {"bm25(k1=1.2)"}


def test_write_then_read_keeps_our_order_and_relevance(tmp_path):
    # z.py before a.py: trec_eval would reverse two equal scores by DOCNO, so our order must survive
    # only because the written scores strictly decrease.
    write_run(tmp_path / "run.trec", {"q1": ["z.py", "a b.py", "m.py"], "q2": []}, "grep")
    write_qrels(tmp_path / "qrels.txt", {"q1": ["a b.py"], "q2": {"x.py": 2, "y.py": 0}})
    run = read_run(tmp_path / "run.trec")
    assert [d for d, _ in run["q1"]] == ["z.py", "a b.py", "m.py"]
    assert "q2" not in run  # an empty ranking writes no line
    assert read_qrels(tmp_path / "qrels.txt") == {"q1": {"a b.py": 1}, "q2": {"x.py": 2, "y.py": 0}}


def test_read_run_orders_ties_as_trec_eval(tmp_path):
    # trec_eval ignores RANK and sorts by score descending, ties by DOCNO in reverse byte order.
    (tmp_path / "r").write_text("q 0 a.py 1 1.0 t\nq 0 c.py 2 1.0 t\nq 0 b.py 3 2.0 t\nq 0 d.py 4 0.5 t\n")
    assert [d for d, _ in read_run(tmp_path / "r")["q"]] == ["b.py", "c.py", "a.py", "d.py"]


def test_our_reading_matches_ir_measures_on_ties(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    (tmp_path / "r").write_text("q 0 a 1 1.0 t\nq 0 c 2 1.0 t\nq 0 b 3 1.0 t\nq 0 d 4 0.5 t\n")
    (tmp_path / "q").write_text("q 0 a 1\nq 0 d 1\n")
    ranking = [d for d, _ in read_run(tmp_path / "r")["q"]]
    ours = evaluate(["mrr", "ndcg@3"], ranking, ["a", "d"])
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "q")))
    run = list(ir_measures.read_trec_run(str(tmp_path / "r")))
    theirs = ir_measures.calc_aggregate([ir_measures.RR, ir_measures.nDCG @ 3], qrels, run)
    assert ours["mrr"] == pytest.approx(theirs[ir_measures.RR], abs=1e-9)
    assert ours["ndcg@3"] == pytest.approx(theirs[ir_measures.nDCG @ 3], abs=1e-9)


@pytest.mark.parametrize("text, message", [
    ("q 0 a.py 1\n", "6 columns"),
    ("q 0 a.py 1 high t\n", "score must be a number"),
    ("q 0 a.py 1 1 t\nq 0 a.py 2 0 t\n", "listed twice"),
])
def test_malformed_run_names_the_line(tmp_path, text, message):
    (tmp_path / "r").write_text(text)
    with pytest.raises(UserError, match=message) as info:
        read_run(tmp_path / "r")
    assert ":1:" in str(info.value) or ":2:" in str(info.value)


def test_malformed_qrels_and_missing_file(tmp_path):
    (tmp_path / "q").write_text("# comment\nq 0 a.py yes\n")
    with pytest.raises(UserError, match=r"q:2: relevance must be an integer"):
        read_qrels(tmp_path / "q")
    with pytest.raises(UserError, match="no such file"):
        read_qrels(tmp_path / "nope")


def test_qid_with_whitespace_is_escaped_and_an_empty_one_refused():
    assert format_run({"a b": ["x"]}, "t") == "a%20b Q0 x 1 1 t\n"
    with pytest.raises(ValueError):
        format_run({"": ["x"]}, "t")


@pytest.mark.parametrize("name", ["late\u00a0fee", "a\u2028b", "c\x85d", "e\u3000f", "g\x1ch", "100%\u00a0x",
                                  "a%41b", "%C2%A0"])
def test_every_unicode_whitespace_round_trips_in_qids_and_docnos(tmp_path, name):
    write_run(tmp_path / "run.trec", {name: [name + ".py", "plain.py"]}, "grep")
    write_qrels(tmp_path / "qrels.txt", {name: [name + ".py"]})
    for line in (tmp_path / "run.trec").read_text().splitlines() + (tmp_path / "qrels.txt").read_text().splitlines():
        assert not any(ch.isspace() for ch in line.replace(" ", "")), line
    assert [d for d, _ in read_run(tmp_path / "run.trec")[name]] == [name + ".py", "plain.py"]
    assert read_qrels(tmp_path / "qrels.txt") == {name: {name + ".py": 1}}


def test_foreign_percent_sequences_stay_as_written():
    assert decode_docno("a%41b.py") == "a%41b.py" and decode_docno("a%41%20b") == "a%41 b"
    assert decode_docno("my%20file.py") == "my file.py" and decode_docno("100%") == "100%"
