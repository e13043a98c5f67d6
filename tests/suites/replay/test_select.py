"""Which commits replay: one reason per skipped commit, the first rule that applies, N newest eligible."""

from __future__ import annotations

import pytest

from ctxgauge.git import Commit, FileChange, Repo
from ctxgauge.suites._requests import clean_subject
from ctxgauge.suites.replay import SKIP_REASONS, is_bot, is_release, select_commits, select_from_log


def commit(sha: str, subject: str, changes=(("M", "src/a.py"),), parents=("p",), author=("Ada", "ada@x.org")):
    return Commit(sha=sha, parents=tuple(parents), author_name=author[0], author_email=author[1], timestamp=0,
                  subject=subject, changes=tuple(FileChange(*c) for c in changes))


def test_each_rule_gives_its_reason():
    log = [
        commit("c01", "Add a feature"),
        commit("c02", "Merge pull request #3", parents=("a", "b"), changes=()),
        commit("c03", "Bump lodash from 1 to 2", author=("dependabot[bot]", "bot@github.com")),
        commit("c04", "Release 2.0.0 (#9)"),
        commit("c05", "Fix typo [skip ci]"),
        commit("c06", ":sparkles:"),
        commit("c07", "Add new module", changes=(("A", "src/new.py"),)),
        commit("c08", "Update changelog", changes=(("M", "CHANGELOG.md"), ("M", "tests/test_a.py"))),
        commit("c09", "Sweep", changes=tuple(("M", f"src/f{i}.py") for i in range(9))),
        commit("c10", "add a feature"),  # the same request as c01, which is newer
        commit("c11", "Initial commit", parents=()),
    ]
    sel = select_from_log(log, commits=None, max_files=8)
    assert [c.sha for c in sel.eligible] == ["c01"]
    assert dict(sel.skipped) == {"c02": "merge", "c03": "bot", "c04": "release", "c05": "skip-ci",
                                 "c06": "empty-request", "c07": "no-expected-file", "c08": "no-expected-file",
                                 "c09": "too-many-files", "c10": "repeated-subject", "c11": "root"}
    counts = sel.counts()
    assert list(counts) == list(SKIP_REASONS) and sum(counts.values()) == len(log) - 1
    assert counts["missing-object"] == 0  # decided while replaying, not by the walk


def test_the_first_rule_wins_and_repeats_count_only_among_eligible_commits():
    log = [
        commit("c1", "Fix the parser", changes=tuple(("M", f"f{i}.py") for i in range(9))),  # too many files
        commit("c2", "Fix the parser"),   # not a repeat: the newer one was not eligible
        commit("c3", "fix  THE parser"),  # a repeat, compared case- and blank-insensitively
        commit("c4", "Release 1.0", author=("renovate[bot]", "bot@x")),  # bot before release
    ]
    sel = select_from_log(log, commits=None, max_files=8)
    assert [c.sha for c in sel.eligible] == ["c2"]
    assert dict(sel.skipped) == {"c1": "too-many-files", "c3": "repeated-subject", "c4": "bot"}


def test_n_newest_eligible_and_the_walk_stops_there():
    log = [commit(f"c{i}", f"Change number {i}") for i in range(10)]
    log.insert(1, commit("m", "Merge", parents=("a", "b"), changes=()))
    sel = select_from_log(log, commits=3, max_files=8)
    assert [c.sha for c in sel.eligible] == ["c0", "c1", "c2"]
    assert sel.walked == 4 and dict(sel.skipped) == {"m": "merge"}


def test_max_files_counts_expected_files_only():
    changes = [("M", f"src/f{i}.py") for i in range(8)] + [("M", "tests/test_x.py"), ("M", "CHANGES.rst"),
                                                          ("A", "src/new.py")]
    sel = select_from_log([commit("c", "Big but fine", changes=changes)], commits=None, max_files=8)
    assert len(sel.eligible) == 1 and len(sel.eligible[0].expected) == 8


@pytest.mark.parametrize("name, email, bot", [
    ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com", True),
    ("renovate-bot", "bot@renovateapp.com", True),
    ("github-actions", "41898282+github-actions[bot]@users.noreply.github.com", True),
    ("pre-commit-ci[bot]", "x@y", True),
    ("Ada Lovelace", "ada@example.org", False),
])
def test_bots(name, email, bot):
    assert is_bot(name, email) is bot


@pytest.mark.parametrize("subject, release", [
    ("v1.2.3", True), ("1.2.3", True), ("Release 2.0", True), ("Release v1.2.3 (#45)", True),
    ("Bump version to 2.1", True), ("bump version: 1.2.3 → 1.2.4", True), ("chore(release): 1.2.0", True),
    ("release: v2", True), ("Version 1.2.3", True), ("Prepare release 1.4", True), ("Bump to 2.1.0", True),
    ("chore: start 0.2.0 development", True), ("🔖 v1.0.0", True), ("Bump for release", True),
    ("Bump for development", True), ("Prepare for release", True),
    # dependency updates and ordinary requests stay eligible
    ("Bump requests from 2.1 to 2.2", False), ("chore(deps): bump lodash to 4.17.21", False),
    ("chore: bump pytest to 8.0", False), ("Bump version of requests to 2.2", False),
    ("Release connection when the pool closes", False), ("Fix release notes link", False),
])
def test_releases_and_own_version_bumps(subject, release):
    assert is_release(subject, clean_subject(subject)) is release


@pytest.mark.parametrize("subject", ["Fix x [skip ci]", "[ci skip] docs", "Tweak [no ci]", "y [skip actions]",
                                     "z ***NO_CI***", "Fix x [SKIP CI]"])
def test_skip_ci_markers(subject):
    sel = select_from_log([commit("c", subject)], commits=None, max_files=8)
    assert dict(sel.skipped) == {"c": "skip-ci"}


def test_walk_in_windows_over_a_real_repository_matches_one_full_walk(repo_builder):
    b = repo_builder()
    b.commit("init", {"a.py": "a\n"})
    for i in range(12):
        b.commit(f"Change {i}" if i % 3 else "Update CHANGELOG", {"a.py": f"a{i}\n"} if i % 3 else {"CHANGELOG.md": f"{i}\n"})
    with Repo(b.path) as repo:
        head = repo.resolve("HEAD")
        full = select_from_log(repo.log(head), commits=5, max_files=8)
        walked = select_commits(repo, head, commits=5, max_files=8)
        assert walked == full
        assert [c.request for c in walked.eligible] == ["Change 11", "Change 10", "Change 8", "Change 7", "Change 5"]
