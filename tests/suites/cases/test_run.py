"""Running cases: figures by hand, the known-gaps lane, pass lines, corpora at a revision, external runs."""

from __future__ import annotations

import subprocess

from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import read_run as _read_run, read_units as _read_units
from ctxgauge.suites.cases import CasesConfig, PassLine, load_cases, run_cases, score_external


# These tests check the JSON layout the suite wrote: the typed record and units in their JSON form.
def read_run(run_dir):
    return _read_run(run_dir).to_json()


def read_units(run_dir):
    return [u.to_json() for u in _read_units(run_dir)]


FILES = {
    "src/loans.py": "def charge(loan):\n    return overdue(loan) * fee\n",   # overdue, fee
    "src/report.py": "# overdue fee rounding report\n",                      # overdue, fee, rounding
    "src/money.py": "CENTS = 100\n",
    "docs/guide.md": "How to lend books.\n",
    "docs/lending.png": b"\x89PNG\r\n\x1a\n\x00\x00",  # in the tree, not indexed (binary): a coverage gap
}


@pytest.fixture
def lib(tmp_path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / "lib" / rel).parent.mkdir(parents=True, exist_ok=True)
        data = text if isinstance(text, bytes) else text.encode()
        (tmp_path / "lib" / rel).write_bytes(data)
    (tmp_path / "cases.yaml").write_text("""
pass:
  recall@5: 0.5
corpus: lib
cases:
  - name: fees
    query: overdue fee rounding
    expected: [src/loans.py, src/money.py]
  - name: lending
    query: how to lend books
    expected: [docs/guide.md, docs/lending.png]
  - name: hard
    query: cents
    expected: [src/loans.py]
    known_gap: true
""")
    return tmp_path


def test_figures_by_hand_and_the_known_gaps_lane(lib):
    result = run_cases(load_cases(lib / "cases.yaml"), CasesConfig(engine="grep", ks=(5,), out=lib / "run"))
    cases = {c["name"]: c for c in result.to_dict()["cases"]}
    fees = cases["fees"]
    assert [h["path"] for h in fees["ranking"]] == ["src/report.py", "src/loans.py"]
    assert fees["figures"]["recall@5"] == 1 / 2 and fees["figures"]["mrr"] == 1 / 2
    assert fees["figures"]["precision@5"] == 1 / 5
    lending = cases["lending"]
    assert lending["coverage_gap"] == ["docs/lending.png"] and lending["figures"]["recall@5"] == 1.0
    # The known gap runs and is reported, but the summary and pass lines read the counted cases only.
    assert cases["hard"]["known_gap"] and cases["hard"]["figures"]["recall@5"] == 0.0
    assert result.results.summary["recall@5"] == (1 / 2 + 1.0) / 2
    assert result.results.known_gap_summary["recall@5"] == 0.0
    assert [line.to_json() for line in result.results.pass_lines] == [{"metric": "recall@5", "threshold": 0.5, "value": 0.75, "higher_is_better": True,
                                  "holds": True}]
    assert result.passed
    record = read_run(lib / "run")
    assert record["suite"] == "cases" and record["results"]["passed"] is True
    units = read_units(lib / "run")
    assert {u["id"] for u in units} == {"fees", "lending", "hard"}
    assert all("/" not in u["corpus"]["name"] for u in units)  # corpus by name and hash, never a path


def test_a_failing_line_and_a_command_line_line(lib):
    config = CasesConfig(engine="grep", ks=(5,), out=lib / "run", pass_lines=(PassLine("mrr", 0.9),))
    result = run_cases(load_cases(lib / "cases.yaml"), config)
    lines = {line.metric: line.to_json() for line in result.results.pass_lines}
    assert lines["mrr"]["value"] == (1 / 2 + 1.0) / 2 and not lines["mrr"]["holds"]
    assert lines["recall@5"]["holds"] and not result.passed


def test_vs_compares_the_same_counted_cases_and_trec_files(lib):
    result = run_cases(load_cases(lib / "cases.yaml"),
                       CasesConfig(engine="grep", vs="bm25", ks=(5,), out=lib / "run", trec=lib / "trec", seed=4))
    assert result.results.comparison.cases == 2 and result.results.comparison.seed == 4
    assert result.results.comparison.metrics["recall@5"].n == 2
    assert {p.name for p in (lib / "trec").iterdir()} == {"run.trec", "run-vs.trec", "qrels.txt"}
    assert (lib / "trec" / "qrels.txt").read_text().count("\n") == 2 + 1 + 1  # lending.png is a gap: not judged


def test_an_expected_file_the_corpus_lacks_is_an_error_not_a_silent_gap(lib):
    text = (lib / "cases.yaml").read_text().replace("[src/loans.py, src/money.py]", "[src/loans.py, src/mony.py]")
    (lib / "cases.yaml").write_text(text)
    with pytest.raises(UserError) as err:
        run_cases(load_cases(lib / "cases.yaml"), CasesConfig(engine="grep", ks=(5,), out=lib / "run"))
    assert str(err.value) == ("cases.yaml: case 'fees': expected file 'src/mony.py' (did you mean 'src/money.py'?) "
                              "is not in corpus lib; fix the path, or pass --missing-as-miss to count it as a miss")
    assert not (lib / "run").exists()  # refused before anything was written
    # With the flag it is reported and counts as a miss (recall 1/2, as if the file were never ranked).
    result = run_cases(load_cases(lib / "cases.yaml"),
                       CasesConfig(engine="grep", ks=(5,), out=lib / "run", missing_as_miss=True))
    fees = {c["name"]: c for c in result.to_dict()["cases"]}["fees"]
    assert fees["missing"] == ["src/mony.py"] and fees["coverage_gap"] == []
    assert fees["figures"]["recall@5"] == 1 / 2


def test_corpus_at_a_git_revision(repo_builder, tmp_path):
    b = repo_builder("lib")
    old = b.commit("one", {"src/fees.py": "overdue fee\n"})
    b.commit("two", {"src/fees.py": None, "src/charges.py": "overdue fee\n"})
    (tmp_path / "c.yaml").write_text(f"cases:\n  - {{name: old, query: overdue fee, corpus: lib@{old[:10]}, "
                                     "expected: [src/fees.py]}\n  - {name: new, query: overdue fee, corpus: lib, "
                                     "expected: [src/charges.py]}\n")
    result = run_cases(load_cases(tmp_path / "c.yaml"), CasesConfig(engine="grep", out=tmp_path / "run"))
    assert [c["figures"]["hit@5"] for c in result.to_dict()["cases"]] == [1.0, 1.0]
    (tmp_path / "bad.yaml").write_text("cases:\n  - {name: x, query: q, corpus: lib@nosuch, expected: [a]}\n")
    with pytest.raises(UserError, match="no commit named 'nosuch'"):
        run_cases(load_cases(tmp_path / "bad.yaml"), CasesConfig(engine="grep", out=tmp_path / "never"))
    assert not (tmp_path / "never").exists()
    # A second revision of a repository is listed from the first (Corpus.at): a full id that names no
    # commit, or names a tree, is refused the same way.
    tree = subprocess.run(["git", "rev-parse", f"{old}^{{tree}}"], cwd=b.path, capture_output=True, text=True,
                          check=True).stdout.strip()
    for bad in ["0" * 40, tree]:
        (tmp_path / "bad2.yaml").write_text(f"cases:\n  - {{name: x, query: q, corpus: lib@{old}, expected: [src/fees.py]}}\n"
                                            f"  - {{name: y, query: q, corpus: lib@{bad}, expected: [a]}}\n")
        with pytest.raises(UserError, match=f"case 'y': corpus .*no commit named '{bad}'"):
            run_cases(load_cases(tmp_path / "bad2.yaml"), CasesConfig(engine="grep", out=tmp_path / "never"))
        assert not (tmp_path / "never").exists()


def test_external_run_scores_as_ir_measures_does(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    (tmp_path / "qrels").write_text("q1 0 a.py 1\nq1 0 b.py 1\nq2 0 c.py 1\nq3 0 d.py 1\nq4 0 e.py 0\n")
    (tmp_path / "run").write_text("q1 Q0 x.py 1 3 t\nq1 Q0 b.py 2 2 t\nq1 Q0 a.py 3 1 t\n"
                                  "q2 Q0 c.py 1 5 t\nq2 Q0 y.py 2 5 t\n")  # q3 unranked: scored as empty
    result = score_external(tmp_path / "qrels", tmp_path / "run", CasesConfig(ks=(2,), out=tmp_path / "out"))
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels")))
    run = list(ir_measures.read_trec_run(str(tmp_path / "run")))
    per_query = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        [ir_measures.R @ 2, ir_measures.RR, ir_measures.nDCG @ 2, ir_measures.P @ 2], qrels, run)}
    ours = {c["name"]: c["figures"] for c in result.to_dict()["cases"]}
    assert set(ours) == {"q1", "q2", "q3"}  # q4 has no relevant file: undefined, left out
    for q in ("q1", "q2"):
        assert ours[q]["recall@2"] == pytest.approx(per_query[(q, "R@2")], abs=1e-9)
        assert ours[q]["mrr"] == pytest.approx(per_query[(q, "RR")], abs=1e-9)
        assert ours[q]["ndcg@2"] == pytest.approx(per_query[(q, "nDCG@2")], abs=1e-9)
        assert ours[q]["precision@2"] == pytest.approx(per_query[(q, "P@2")], abs=1e-9)
    assert ours["q3"]["recall@2"] == 0.0  # trec_eval -c: a judged query the run skipped scores 0
