"""A commit read as a labelled case: the request it made and the files it should have found.

Expected files are the files the commit modified, deleted or renamed, named by their path in the parent
(the corpus the engine sees). Added files do not count (they did not exist), changelog-like files never
count, and changed tests count toward pack recall only (see `ctxgauge.suites.replay._kinds` for which path is which).
An expected file the parent's corpus does not index is a coverage gap (see `CommitLabels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxgauge.corpus import Corpus, path_key
from ctxgauge.git import Commit, commit_pre_image_lines
from ctxgauge.suites.replay._kinds import classify
from ctxgauge.suites._requests import clean_subject
from ctxgauge.metrics.scoring import Labels

# Name-status letters whose path existed in the parent: modified, type changed, deleted, renamed (by its
# old path). Added (A) and copied (C, never produced: copies are not detected) did not exist there.
_EXISTED = {"M": "path", "T": "path", "D": "path", "R": "old_path"}


def changed_in_parent(commit: Commit) -> list[str]:
    """Paths, as the parent names them, of every file the commit changed that existed in the parent."""
    out = []
    for ch in commit.changes:
        attr = _EXISTED.get(ch.status[:1])
        if attr is not None:
            path = getattr(ch, attr) or ch.path
            out.append(path)
    return sorted(set(out), key=path_key)


@dataclass(frozen=True)
class ReplayCase:
    """One replayable commit: what it asked and what it changed."""

    sha: str
    """The commit id."""
    parent: str
    """Its (only) parent: the corpus is this commit's tree."""
    subject: str
    """The subject as written."""
    request: str
    """The subject cleaned of a conventional-commit prefix, leading emoji and a trailing `(#123)`."""
    expected: tuple[str, ...]
    """Changed files that existed in the parent, neither tests nor changelog-like, sorted by path bytes."""
    tests: tuple[str, ...]
    """Changed test files that existed in the parent: pack recall only."""
    code: bool
    """Whether any expected file is code (by extension): the code-vs-rest split of the report."""

    @property
    def id(self) -> str:
        """The unit id: the commit id (`LabelledCase` of the retrieval pipeline)."""
        return self.sha

    def judge(self, corpus: Corpus) -> tuple[Labels, tuple[str, ...]]:
        """The labels scored against the parent's corpus and the coverage gap (see `label`)."""
        labelled = label(self, corpus)
        return labelled.labels, labelled.gap

    def gold_lines(self, corpus: Corpus, repo: Any) -> dict[str, list[tuple[int, int]]]:
        """The commit's gold lines in its expected files: the pre-image lines of `git diff -U0` against its
        parent (`git._hunks.commit_pre_image_lines`, the rule of docs/replay.md), by the parent's paths."""
        if repo is None or not self.parent:
            return {}
        lines = commit_pre_image_lines(repo, self.parent, self.sha)
        return {p: list(lines[p]) for p in self.expected if lines.get(p)}

    @property
    def pack(self) -> tuple[str, ...]:
        """Every changed file that existed in the parent (expected and tests), for pack recall."""
        return tuple(sorted(set(self.expected) | set(self.tests), key=path_key))


def case_from_commit(commit: Commit) -> ReplayCase:
    """The case a single-parent commit makes (eligibility is decided by `_select`, not here)."""
    expected, tests = [], []
    for path in changed_in_parent(commit):
        kind = classify(path)
        if kind == "test":
            tests.append(path)
        elif kind != "changelog":
            expected.append(path)
    return ReplayCase(
        sha=commit.sha,
        parent=commit.parents[0] if commit.parents else "",
        subject=commit.subject,
        request=clean_subject(commit.subject),
        expected=tuple(expected),
        tests=tuple(tests),
        code=any(classify(p) == "code" for p in expected),
    )


@dataclass(frozen=True)
class CommitLabels:
    """A case's labels against the parent's actual corpus."""

    gap: tuple[str, ...]
    """Expected files the corpus does not index (binary, too large, missing, a symlink...)."""
    labels: Labels
    """What is scored: expected files minus the gap; pack files minus the ones the corpus lacks."""

    @property
    def gap_share(self) -> float | None:
        """Share of expected files that are a gap (None when nothing was expected)."""
        n = len(self.gap) + len(self.labels.relevant)
        return len(self.gap) / n if n else None


def label(case: ReplayCase, corpus: Corpus) -> CommitLabels:
    """Split a case's expected files into scored ones and the coverage gap of `corpus`."""
    gap = tuple(p for p in case.expected if p not in corpus)
    relevant = frozenset(p for p in case.expected if p in corpus)
    pack = frozenset(p for p in case.pack if p in corpus)
    return CommitLabels(gap=gap, labels=Labels(relevant=relevant, pack=pack))
