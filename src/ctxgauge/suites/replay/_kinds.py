"""The one table of what a repository path is: changelog-like, a test, code, or something else.

Replay reads a commit's changed files through this table: changelog-like files are never expected (every
release touches them, and no request names them), tests count toward pack recall only, and a commit is a
"code commit" when one of its expected files is code. Keeping the rules here, in one documented place,
means the report, the docs and the tests cannot disagree about them.

Rules are applied to the POSIX path relative to the repository root, case-insensitively, in this order:

| kind | rule | examples |
| --- | --- | --- |
| changelog | file stem in `CHANGELOG_STEMS`, text extension (`CHANGELOG_EXTENSIONS`) | `CHANGELOG.md`, `docs/HISTORY.rst`, `NEWS`, `RELEASE_NOTES.txt` |
| changelog | top directory (or one under `doc/`, `docs/`) in `CHANGELOG_DIRS`: news and changelog fragments | `news/1234.bugfix.rst`, `changelog.d/x.md`, `releasenotes/notes/a.yaml` |
| test | a directory in `TEST_DIRS` | `tests/test_a.py`, `src/__tests__/a.js`, `spec/a_spec.rb` |
| test | a file name matching `TEST_FILE_PATTERNS` | `test_a.py`, `a_test.go`, `a.spec.ts`, `FooTest.java`, `conftest.py` |
| code | the extension is in `CODE_EXTENSIONS` | `.py`, `.ts`, `.go`, `.rs`, `.java`, `.c`, `.sh` |
| other | anything else | `README.md`, `pyproject.toml`, `uv.lock`, `.github/workflows/ci.yml` |

A test file with a code extension is a test, not code. Manifests, lockfiles, docs and CI files are `other`:
they stay expected files (a dependency bump is a real request) but do not make a commit a code commit.
"""

from __future__ import annotations

import re
from typing import Literal

PathKind = Literal["changelog", "test", "code", "other"]
"""What a path is, by the table above."""

CHANGELOG_STEMS = frozenset({
    "changelog", "changes", "history", "news", "releasenotes", "release_notes", "release-notes", "releases",
    "whatsnew", "whats_new", "whats-new",
})
"""File stems (name before the first dot, lowercased) of changelog-like files, when the file is text."""

CHANGELOG_EXTENSIONS = frozenset({"", "md", "markdown", "rst", "txt", "adoc", "asciidoc", "org", "textile"})
"""Extensions a changelog-like file may have: `changes.py` or `history.ts` is code, not release notes."""

CHANGELOG_DIRS = frozenset({
    "news", "changelog.d", "changes", "changelog", "changelogs", "releasenotes", "release-notes",
    "release_notes", ".changeset", ".changes", "newsfragments", "unreleased",
})
"""Directory names whose files are changelog fragments (towncrier, reno, changesets); only at the top of the
repository or right under `doc/` or `docs/`, since `src/news/` is more likely a module than release notes."""

TEST_DIRS = frozenset({
    "test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "testdata", "test_data", "fixtures",
    "__snapshots__",
})
"""Directory names whose files are tests or test data."""

TEST_FILE_PATTERNS = (
    re.compile(r"^test_.+\.[a-z0-9]+$"),                 # test_loans.py
    re.compile(r"^.+_tests?\.[a-z0-9]+$"),                # loans_test.go, loans_tests.rs
    re.compile(r"^.+\.(test|spec)\.[a-z0-9]+$"),          # loans.test.ts, loans.spec.js
    re.compile(r"^.+_spec\.[a-z0-9]+$"),                  # loans_spec.rb
    re.compile(r"^conftest\.py$"),
)
"""File-name patterns (matched against the lowercased name) of tests outside test directories."""

CASED_TEST_FILE_PATTERNS = (
    re.compile(r"^(Test[A-Z0-9_]\w*|\w*[a-z0-9]Tests?)\.(java|kt|scala|cs|swift|groovy)$"),  # LoansTest.java
)
"""File-name patterns matched case-sensitively, where only the capital T tells `LoansTest` from `Contest`."""

CODE_EXTENSIONS = frozenset({
    "py", "pyi", "pyx", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs", "java", "kt", "kts",
    "scala", "groovy", "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "m", "mm", "cs", "fs", "vb", "rb",
    "php", "swift", "dart", "lua", "pl", "pm", "r", "jl", "ex", "exs", "erl", "hrl", "clj", "cljs", "hs",
    "ml", "mli", "elm", "zig", "nim", "sh", "bash", "zsh", "fish", "ps1", "sql", "vue", "svelte", "sol",
    "proto", "graphql", "cu", "f90", "asm", "s",
})
"""Extensions (lowercased, without the dot) of source code."""


def _parts(path: str) -> tuple[list[str], str]:
    parts = path.lower().strip("/").split("/")
    return parts[:-1], parts[-1]


def is_changelog(path: str) -> bool:
    """A changelog-like file: release notes, history, news, or a changelog fragment."""
    dirs, name = _parts(path)
    stem, _, ext = name.partition(".")
    if stem in CHANGELOG_STEMS and ext.rsplit(".", 1)[-1] in CHANGELOG_EXTENSIONS:
        return True
    fragment_dir = dirs[1] if len(dirs) > 1 and dirs[0] in ("doc", "docs") else dirs[0] if dirs else None
    return fragment_dir in CHANGELOG_DIRS


def is_test(path: str) -> bool:
    """A test file or test data, by its directory or its name."""
    dirs, name = _parts(path)
    if any(d in TEST_DIRS for d in dirs) or any(p.match(name) for p in TEST_FILE_PATTERNS):
        return True
    original = path.rsplit("/", 1)[-1]
    return any(p.match(original) for p in CASED_TEST_FILE_PATTERNS)


def is_code(path: str) -> bool:
    """Source code by extension (a test with a code extension is still a test: see `classify`)."""
    _, name = _parts(path)
    return "." in name and name.rsplit(".", 1)[1] in CODE_EXTENSIONS


def classify(path: str) -> PathKind:
    """The kind of a path, the first rule of the table that matches: changelog, test, code, other."""
    if is_changelog(path):
        return "changelog"
    if is_test(path):
        return "test"
    if is_code(path):
        return "code"
    return "other"
