"""A commit as a labelled case: expected files by their path in the parent, tests for pack recall only,
changelogs never, and the coverage gap against the parent's actual corpus."""

from __future__ import annotations

from ctxgauge.corpus import Corpus
from ctxgauge.git import Commit, FileChange, Repo
from ctxgauge.suites.replay import case_from_commit, label


def test_expected_files_are_the_parent_paths_of_what_changed():
    c = Commit("s", ("p",), "Ada", "a@x", 0, "fix(loans): ✨ Round fees (#12)", (
        FileChange("M", "src/loans.py"),
        FileChange("R", "src/mailer.py", "src/email.py"),   # a rename: its path in the parent
        FileChange("D", "src/clock.py"),
        FileChange("T", "bin/run"),
        FileChange("A", "src/new.py"),                       # did not exist in the parent
        FileChange("M", "tests/test_loans.py"),              # pack recall only
        FileChange("M", "CHANGELOG.md"),                     # never
        FileChange("M", "README.md"),                        # other files do count
    ))
    case = case_from_commit(c)
    assert case.request == "Round fees"
    assert case.parent == "p"
    assert case.expected == ("README.md", "bin/run", "src/clock.py", "src/email.py", "src/loans.py")
    assert case.tests == ("tests/test_loans.py",)
    assert case.pack == case.expected[:2] + ("src/clock.py", "src/email.py", "src/loans.py", "tests/test_loans.py")
    assert case.code is True


def test_a_docs_and_lockfile_commit_is_not_a_code_commit():
    c = Commit("s", ("p",), "Ada", "a@x", 0, "chore: bump typescript to 5.4",
               (FileChange("M", "web/package.json"), FileChange("M", "web/package-lock.json")))
    case = case_from_commit(c)
    assert case.expected == ("web/package-lock.json", "web/package.json") and case.code is False


def test_coverage_gap_is_what_the_parent_corpus_does_not_index(repo_builder):
    b = repo_builder()
    parent = b.commit("init", {"src/a.py": "a = 1\n", "logo.png": b"\x89PNG\0\0binary", "src/b.py": "b\n",
                               "tests/test_a.py": "t\n", "data.bin": b"\0\0"})
    sha = b.commit("Fix logo and code", {"src/a.py": "a = 2\n", "logo.png": b"\x89PNG\0\0new",
                                         "tests/test_a.py": "t2\n", "data.bin": b"\0\1"})
    with Repo(b.path) as repo:
        commit = repo.log(sha, max_count=1)[0]
        case = case_from_commit(commit)
        corpus = Corpus.from_git(repo, parent)
        labelled = label(case, corpus)
    assert case.expected == ("data.bin", "logo.png", "src/a.py")
    assert labelled.gap == ("data.bin", "logo.png")
    assert labelled.labels.relevant == {"src/a.py"}
    assert labelled.labels.pack == {"src/a.py", "tests/test_a.py"}
    assert labelled.gap_share == 2 / 3
