"""Case files: YAML and JSON read the same; every malformed file names the case and the fix."""

from __future__ import annotations

import json

import pytest

from ctxgauge.errors import UserError
from ctxgauge.suites.cases import Case, load_cases, split_corpus

YAML = """
pass:
  recall@5: 0.6
  MRR: 0.5
corpus: ./lib
cases:
  - name: fees
    query: fix overdue fee rounding
    expected: [src/loans.py]
  - name: docs
    query: where are fees explained
    corpus: repo@v1.2
    expected_any_of: [docs/fees.md, README.md]
    known_gap: true
"""


def test_yaml_and_json_read_the_same(tmp_path):
    (tmp_path / "c.yaml").write_text(YAML)
    import yaml

    (tmp_path / "c.json").write_text(json.dumps(yaml.safe_load(YAML)))
    a, b = load_cases(tmp_path / "c.yaml"), load_cases(tmp_path / "c.json")
    assert a.cases == b.cases and a.pass_lines == b.pass_lines
    fees, docs = a.cases
    assert fees == Case("fees", "fix overdue fee rounding", str(tmp_path / "lib"), ("src/loans.py",))
    assert docs.corpus == f"{tmp_path / 'repo'}@v1.2" and docs.known_gap
    assert docs.any_of == (("docs/fees.md", "README.md"),)
    assert [(p.metric, p.value) for p in a.pass_lines] == [("recall@5", 0.6), ("mrr", 0.5)]


def test_labels_against_a_corpus_split_the_gap():
    case = Case("c", "q", "x", ("a.py", "logo.png"), (("d1.md", "d2.md"), ("gone.md",)))
    labels, gap = case.labels({"a.py", "d2.md"})
    assert labels.relevant == {"a.py"} and labels.any_of == (frozenset({"d2.md"}),)
    assert gap == ("logo.png", "gone.md")


def test_corpus_specs():
    assert split_corpus("repo@v1.2") == ("repo", "v1.2")
    assert split_corpus("some/dir") == ("some/dir", None)
    assert split_corpus("repo@HEAD~3") == ("repo", "HEAD~3")


@pytest.mark.parametrize("text, message", [
    ("cases: []", "a case file holds `cases:`"),
    ("cases:\n  - query: q\n    corpus: .\n    expected: [a]", "case 1: needs a `name`"),
    ("cases:\n  - name: x\n    corpus: .\n    expected: [a]", "case 1 ('x'): needs a `query`"),
    ("cases:\n  - name: x\n    query: q\n    expected: [a]", "case 1 ('x'): needs a `corpus`"),
    ("cases:\n  - name: x\n    query: q\n    corpus: .", "case 1 ('x'): needs `expected` files"),
    ("cases:\n  - name: x\n    query: q\n    corpus: .\n    expected: 3", "`expected` must be a list"),
    ("cases:\n  - name: x\n    query: q\n    corpus: .\n    expected: [a]\n    expectd: [b]", "unknown field 'expectd'"),
    ("cases:\n  - name: x\n    query: q\n    corpus: .\n    expected: [a]\n    known_gap: maybe", "`known_gap` must be true or false"),
    ("cases:\n  - {name: x, query: q, corpus: ., expected: [a]}\n  - {name: x, query: r, corpus: ., expected: [b]}", "two cases are named 'x'"),
    ("pass: {recal@5: 0.5}\ncases:\n  - {name: x, query: q, corpus: ., expected: [a]}", "pass line 'recal@5'"),
    ("pass: {recall@5: high}\ncases:\n  - {name: x, query: q, corpus: ., expected: [a]}", "the threshold must be a number"),
    ("cases:\n  - name: x\n   query: bad indent", "not valid YAML at line"),
    ("cases:\n  - {name: x, query: q, corpus: ., expected: [a], lines: {b: [[1, 2]]}}", "`lines` names 'b', which is not an expected file"),
    ("cases:\n  - {name: x, query: q, corpus: ., expected: [a], lines: {a: [1, 2]}}", "`lines` of 'a' must be a list of [start, end] pairs"),
    ("cases:\n  - {name: x, query: q, corpus: ., expected: [a], lines: {a: [[3, 2]]}}", "[3, 2] must have 1 <= start <= end"),
    ("cases:\n  - {name: x, query: q, corpus: ., expected: [a], lines: {a: [[0, 2]]}}", "[0, 2] must have 1 <= start <= end"),
    ("cases:\n  - {name: x, query: q, corpus: ., expected: [a], lines: {a: [[5, 9], [1, 5]]}}", "[1, 5] and [5, 9] overlap"),
])
def test_malformed_files_name_the_case_and_the_fix(tmp_path, text, message):
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_cases(tmp_path / "c.yaml")


def test_missing_file_and_bad_json(tmp_path):
    with pytest.raises(UserError, match="no such case file"):
        load_cases(tmp_path / "none.yaml")
    (tmp_path / "c.json").write_text("{oops")
    with pytest.raises(UserError, match="not valid JSON"):
        load_cases(tmp_path / "c.json")


def test_hand_labelled_lines_are_read_and_written_back(tmp_path):
    from ctxgauge.suites.cases import case_to_dict

    (tmp_path / "c.yaml").write_text("cases:\n  - name: x\n    query: q\n    corpus: .\n    expected: [a.py, b.py]\n"
                                     "    lines: {./b.py: [[30, 31], [4, 9]]}\n")
    (case,) = load_cases(tmp_path / "c.yaml").cases
    assert case.gold_lines() == {"b.py": [(4, 9), (30, 31)]}  # a.py: file level only
    assert case_to_dict(case)["lines"] == {"b.py": [[4, 9], [30, 31]]}
