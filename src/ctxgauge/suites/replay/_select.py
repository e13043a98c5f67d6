"""Which commits replay: walk `git rev-list REV` (newest first) and keep the N newest eligible commits.

Every commit walked is either eligible or skipped for exactly one reason, the first of `SKIP_REASONS`
that applies, so the reasons of a report add up to the commits walked (`BOT_MARKERS` and `RELEASE_PATTERNS`
live in `ctxgauge.suites._requests`, since default requests skip the same commits):

| reason | rule |
| --- | --- |
| root | no parent: nothing to search |
| merge | more than one parent (its branch's commits are replayed themselves) |
| bot | author name or e-mail holds a `BOT_MARKERS` entry (dependabot, renovate, github-actions, `[bot]`) |
| release | a release or a bump of the project's own version (`RELEASE_PATTERNS`); dependency updates stay |
| skip-ci | `[skip ci]`, `[ci skip]`, `[no ci]`, `[skip actions]` or `***NO_CI***` in the subject |
| empty-request | nothing left of the subject once cleaned (e.g. only an emoji) |
| no-expected-file | it only added files, or changed only tests and changelog-like files |
| outside-subtree | REPO is a folder inside a work tree (the subtree replayed) and every expected file lies outside it |
| too-many-files | more expected files than `max_files` (a sweep, not a request) |
| repeated-subject | an eligible newer commit made the same request (compared case- and blank-insensitively), so a re-landed change counts once, as its newest landing |
| missing-object | decided while replaying: the parent's tree or one of its blobs is not in the repository |

The walk reads `git log` in growing windows, so a long history is not diffed past the N-th eligible commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ctxgauge.git import Commit, Repo
from ctxgauge.suites._requests import is_bot, is_release
from ctxgauge.suites.replay._cases import ReplayCase, case_from_commit

SKIP_REASONS = ("root", "merge", "bot", "release", "skip-ci", "empty-request", "no-expected-file",
                "outside-subtree", "too-many-files", "repeated-subject", "missing-object")
"""Every reason a walked commit is not replayed, in the order the rules are tried."""

SKIP_CI = re.compile(r"\[(?:skip ci|ci skip|no ci|skip actions|actions skip|skip-ci)\]|\*\*\*no_ci\*\*\*", re.I)
"""Markers by which a commit says it is not a change worth checking."""


def request_key(request: str) -> str:
    """How requests are compared for `repeated-subject`: case-folded, blanks collapsed."""
    return " ".join(request.casefold().split())


def skip_reason(commit: Commit, case: ReplayCase, max_files: int, subtree: str = "") -> str | None:
    """The first rule of the table that excludes `commit`, or None (repeated subjects are decided by the
    walk, which knows what came before)."""
    if not commit.parents:
        return "root"
    if len(commit.parents) > 1:
        return "merge"
    if is_bot(commit.author_name, commit.author_email):
        return "bot"
    if is_release(commit.subject, case.request):
        return "release"
    if SKIP_CI.search(commit.subject):
        return "skip-ci"
    if not case.request:
        return "empty-request"
    if not case.expected:
        return "no-expected-file"
    if subtree and not any(p.startswith(subtree + "/") for p in case.expected):
        return "outside-subtree"
    if len(case.expected) > max_files:
        return "too-many-files"
    return None


@dataclass(frozen=True)
class Selection:
    """The outcome of the walk: eligible cases and skipped commits, both newest first."""

    eligible: tuple[ReplayCase, ...]
    """The N newest eligible commits as cases, newest first."""
    skipped: tuple[tuple[str, str], ...]
    """(sha, reason) of every commit walked and not eligible, newest first."""
    walked: int = field(default=0)
    """Commits looked at: up to the N-th eligible one, or all of them."""

    def counts(self) -> dict[str, int]:
        """Skipped commits by reason, every reason present (zero when none)."""
        out = {r: 0 for r in SKIP_REASONS}
        for _, reason in self.skipped:
            out[reason] += 1
        return out


def select_from_log(log: Sequence[Commit], *, commits: int | None, max_files: int, subtree: str = "") -> Selection:
    """Pure selection over commits in rev-list order (newest first); see the module's table."""
    eligible: list[ReplayCase] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    walked = 0
    for commit in log:
        if commits is not None and len(eligible) >= commits:
            break
        walked += 1
        case = case_from_commit(commit)
        reason = skip_reason(commit, case, max_files, subtree)
        if reason is None and request_key(case.request) in seen:
            reason = "repeated-subject"
        if reason is None:
            seen.add(request_key(case.request))
            eligible.append(case)
        else:
            skipped.append((commit.sha, reason))
    return Selection(tuple(eligible), tuple(skipped), walked)


def select_commits(repo: Repo, rev: str, *, commits: int | None, max_files: int,
                   since: str | None = None) -> Selection:
    """Walk the ancestors of `rev` and select the `commits` newest eligible ones (all when None); a repository
    opened at a folder inside its work tree replays that subtree (`outside-subtree`)."""
    subtree = repo.location.prefix.strip("/")
    window = None if commits is None else max(4 * commits, 200)
    while True:
        log = repo.log(rev, max_count=window, since=since)
        selection = select_from_log(log, commits=commits, max_files=max_files, subtree=subtree)
        if window is None or len(log) < window or len(selection.eligible) >= (commits or 0):
            return selection
        window *= 4
