"""History as git prints it: commits and name-status changes, parsed from `git log -z` and `git diff-tree -z`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ctxgauge.errors import UserError

LOG_FORMAT = "%x1e%H%x00%P%x00%an%x00%ae%x00%at%x00%s"
"""The `--format` whose output `parse_log` reads (with `-z --name-status`)."""


@dataclass(frozen=True)
class FileChange:
    """One line of a name-status diff: status letter (A, M, D, R, T), path, and the old path of a rename."""

    status: str
    path: str
    old_path: str | None = None


@dataclass(frozen=True)
class Commit:
    """A commit as history shows it. `changes` is the diff against the first parent (empty for merges)."""

    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    timestamp: int
    subject: str
    changes: tuple[FileChange, ...] = field(default=())


def _read_change(tokens: list[str], i: int, status: str) -> tuple[FileChange, int]:
    """The name-status change whose status token is at `i`, and the index after it (a rename or copy holds
    two paths, old then new)."""
    if status in "RC":
        return FileChange(status, tokens[i + 2], tokens[i + 1]), i + 3
    return FileChange(status, tokens[i + 1]), i + 2


def parse_changes(tokens: list[str]) -> list[FileChange]:
    """The changes of `git diff-tree -z --name-status` output, split on NUL."""
    out: list[FileChange] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip("\n")
        if not tok:
            i += 1
            continue
        change, i = _read_change(tokens, i, tok[0])
        out.append(change)
    return out


_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def parse_log(raw: str) -> list[Commit]:
    """Parse `git log -z --format=LOG_FORMAT --name-status`.

    Read token by token rather than split on the record byte: a subject, an author or a path may hold
    `\x1e` (only NUL cannot occur), so each commit takes exactly its six fields, then each change exactly
    its status and one or two paths, and only a token in commit position starts the next commit.
    """
    tokens = raw.split("\0")
    commits: list[Commit] = []
    i = 0
    while i < len(tokens):
        head = tokens[i].lstrip("\n")
        if not head:
            i += 1
            continue
        if not head.startswith("\x1e") or not _SHA.fullmatch(head[1:]) or i + 5 >= len(tokens):
            raise UserError(f"git log printed something unexpected ({head[:40]!r}); is the repository intact?")
        sha, parents, name, email, ts, subject = head[1:], *tokens[i + 1:i + 6]
        i += 6
        changes: list[FileChange] = []
        while i < len(tokens):
            tok = tokens[i].lstrip("\n")
            if tok.startswith("\x1e") and _SHA.fullmatch(tok[1:]):
                break
            if not tok:
                i += 1
                continue
            change, i = _read_change(tokens, i, tok[0])
            changes.append(change)
        # A malformed author date (`git fsck` calls it badDate: a hand-made or ancient commit) prints as an
        # empty %at; git's own log shows it as the epoch, and so does this (int('') would end the whole run).
        commits.append(Commit(sha=sha, parents=tuple(parents.split()), author_name=name, author_email=email,
                              timestamp=int(ts) if ts.isdigit() else 0, subject=subject, changes=tuple(changes)))
    return commits
