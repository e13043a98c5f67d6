"""Gold lines: the pre-image lines a change touched, read from git's own unified diff.

The rule (docs/replay.md "Gold lines"), per file that existed before the change, keyed by its old path:
- a removed or replaced line is gold (its line number in the old file);
- a pure insertion (added lines with no removed line in the same change block) contributes the old line
  it is inserted after, or line 1 when it is inserted at the top of the file;
- a deleted file contributes every line (a deleted binary or empty file: none);
- a file with no pre-image lines (a pure rename, a mode change, a binary file) maps to an empty list: it
  counts at file level only and is left out of line denominators;
- a file the change adds has no pre-image and no entry.

A replayed commit's diff is `git diff -U0` against its first parent, renames at the same 50% similarity
the name-status diff uses (`RENAME_THRESHOLD`): git's diff, never a re-implementation. A patch text (a
SWE-bench gold patch, with its context lines) is read by the same walker, context lines counted but never
gold.
"""

from __future__ import annotations

import re
from typing import Any

from ctxgauge._untrusted import parse_int
from ctxgauge.git._policy import DIFF_SAFE, RENAME_THRESHOLD

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}

Span = tuple[int, int]


def unquote_path(path: str) -> str:
    """A path as git prints it: C-quoted (`"a/caf\\303\\251.py"`) when it holds unusual bytes."""
    if not (len(path) >= 2 and path[0] == path[-1] == '"'):
        return path
    raw, out, i = path[1:-1], bytearray(), 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if re.fullmatch(r"[0-7]{3}", raw[i + 1:i + 4]):
                out.append(int(raw[i + 1:i + 4], 8))
                i += 4
                continue
            out.extend(_ESCAPES.get(nxt, nxt).encode())
            i += 2
            continue
        out.extend(ch.encode())
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _side(path: str) -> str | None:
    """A `---`/`+++` path without its `a/`/`b/` prefix; None for /dev/null."""
    path = unquote_path(path.split("\t", 1)[0].rstrip())
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


def _runs(lines: set[int]) -> list[Span]:
    out: list[list[int]] = []
    for line in sorted(lines):
        if out and line == out[-1][1] + 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return [(s, e) for s, e in out]


def pre_image_lines(diff: str) -> dict[str, list[Span]]:
    """`{old_path: [(start, end), ...]}` of a unified diff (git's, or a plain `---`/`+++` one), by the rule
    above; runs of consecutive lines merged, sorted. Files the diff adds are left out."""
    return dict(sorted(pre_image(diff).items()))


def pre_image(diff: str) -> dict[str, list[Span]]:
    """`pre_image_lines` in the diff's own file order: its keys are the files the diff modifies, deletes or
    renames, by their old path, each once (a SWE-bench case's expected files)."""
    lines = diff.split("\n")
    gold: dict[str, set[int]] = {}
    old: str | None = None
    added = False
    in_git_block = pair_seen = False
    i = 0

    def start_file() -> None:
        if old is not None and not added:
            gold.setdefault(old, set())

    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            start_file()
            old, added, in_git_block, pair_seen = None, False, True, False
            m = re.match(r'^diff --git ("(?:[^"\\]|\\.)*"|\S+) ', line)
            if m:
                old = _side(m.group(1))
            else:  # an unquoted path with a blank: "a/P b/P" halves are equal for anything but a rename
                rest = line[len("diff --git "):]
                half = (len(rest) - 1) // 2
                if rest[:2] == "a/" and rest[half:half + 3] == " b/" and rest[2:half] == rest[half + 3:]:
                    old = rest[2:half]
        elif in_git_block and line.startswith("new file mode"):
            added = True
        elif in_git_block and line.startswith("rename from "):
            old = unquote_path(line[len("rename from "):])
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if not in_git_block or pair_seen:  # a plain unified diff: each ---/+++ pair is a new file
                start_file()
                old, added, in_git_block = None, False, False
            pair_seen = True
            side = _side(line[4:])
            if side is None:
                added = True
            else:
                old = side
            i += 2
            continue
        else:
            m = _HUNK.match(line)
            if m:
                # A hunk of an added file is walked too (into nothing): its body, a removed line starting with
                # `--` included, is never read as a file header.
                into = gold.setdefault(old, set()) if old is not None and not added else set()
                i = _walk_hunk(lines, i + 1, m, into)
                continue
        i += 1
    start_file()
    return {path: _runs(found) for path, found in gold.items()}


def _walk_hunk(lines: list[str], i: int, m: re.Match, found: set[int]) -> int:
    """Add the gold lines of the hunk whose header `m` matched the line before `i`; return the index after
    its body. The header's old start is the first old line of the hunk, or, when the hunk has no old lines
    (`-S,0`), the line the insertion follows."""
    what = f"hunk header {lines[i - 1][:40]!r}"
    start, left = parse_int(m.group(1), what), parse_int(m.group(2) or "1", what)
    right = parse_int(m.group(3) or "1", what)
    line_no = start if left > 0 else start + 1  # the old line the next body line stands at
    removed_in_block = False
    while i < len(lines) and (left > 0 or right > 0):
        tag = lines[i][:1]
        if tag == "-":
            found.add(line_no)
            line_no += 1
            left -= 1
            removed_in_block = True
        elif tag == "+":
            if not removed_in_block:
                found.add(max(line_no - 1, 1))  # inserted after line_no - 1; at the top: line 1
                removed_in_block = True  # one anchor per inserted block
            right -= 1
        elif tag == "\\":  # "\ No newline at end of file"
            pass
        else:  # a context line (a patch's, never git -U0's): it ends the change block
            line_no += 1
            left -= 1
            right -= 1
            removed_in_block = False
        i += 1
    return i


def commit_pre_image_lines(repo: Any, parent: str, commit: str) -> dict[str, list[Span]]:
    """Gold lines of `commit` against `parent` (its first parent in replay): git's `diff -U0` with renames
    at `RENAME_THRESHOLD`, read by `pre_image_lines`, through the repository's one git policy."""
    raw = repo.run(["diff", "-U0", RENAME_THRESHOLD, *DIFF_SAFE, "--end-of-options", parent, commit, "--"])
    return pre_image_lines(raw)
