"""The one table of path kinds: every row of the documented table, and the near misses it must not take."""

from __future__ import annotations

import pytest

from ctxgauge.suites.replay._kinds import classify, is_changelog, is_code, is_test


@pytest.mark.parametrize("path, kind", [
    # changelog-like: stems with a text extension, anywhere
    ("CHANGELOG.md", "changelog"), ("docs/HISTORY.rst", "changelog"), ("NEWS", "changelog"),
    ("CHANGES.rst", "changelog"), ("RELEASE_NOTES.txt", "changelog"), ("release-notes.md", "changelog"),
    # changelog fragments: top directory, or under docs/
    ("news/1234.bugfix.rst", "changelog"), ("changelog.d/x.md", "changelog"),
    ("releasenotes/notes/fix-a.yaml", "changelog"), (".changeset/brave-cats.md", "changelog"),
    ("docs/changelog/1.0.md", "changelog"),
    # tests: by directory, by name
    ("tests/test_loans.py", "test"), ("src/__tests__/a.js", "test"), ("spec/a_spec.rb", "test"),
    ("src/loans_test.go", "test"), ("web/a.spec.ts", "test"), ("web/a.test.jsx", "test"),
    ("conftest.py", "test"), ("src/LoansTest.java", "test"), ("tests/data/sample.json", "test"),
    # code by extension
    ("src/loans.py", "code"), ("web/app.tsx", "code"), ("cmd/main.go", "code"), ("build.sh", "code"),
    # the rest
    ("README.md", "other"), ("pyproject.toml", "other"), ("uv.lock", "other"),
    (".github/workflows/ci.yml", "other"), ("docs/index.rst", "other"), ("Makefile", "other"),
])
def test_every_row_of_the_table(path, kind):
    assert classify(path) == kind


@pytest.mark.parametrize("path, kind", [
    ("src/news/app.py", "code"),         # a module named news, not release notes
    ("src/changes.py", "code"),          # a changelog stem with a code extension is code
    ("history.ts", "code"),
    ("src/Contest.java", "code"),        # only a capital T makes `...Test.java` a test
    ("src/latest.py", "code"),
    ("docs/news-and-events.md", "other"),
])
def test_near_misses(path, kind):
    assert classify(path) == kind


def test_predicates_agree_with_classify_and_ignore_case():
    assert is_changelog("Changelog.MD") and is_test("Tests/Test_A.py") and is_code("SRC/A.PY")
    # a test with a code extension is a test first: classify applies the rules in table order
    assert is_code("tests/test_a.py") and classify("tests/test_a.py") == "test"
