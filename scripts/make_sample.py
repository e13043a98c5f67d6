#!/usr/bin/env python3
"""Build the shelfd sample repository and write it as a git bundle.

The sample is ctxgauge's demo and test fixture: a small book-lending service
("shelfd", Python backend plus TypeScript web client) with about a hundred
commits of believable history. ctxgauge replays those commits: each subject is
a request, the files it changed are the expected answer.

The history itself is data, in the ``sample_history`` package beside this
script; this file only knows how to turn those steps into git objects. Everything that could
make two runs differ is pinned: author and committer identities and dates, the
branch name, git configuration (user and system config are ignored), locale,
timezone and pack threading. Two runs with the same git and zlib therefore give
a byte-identical bundle.

Usage::

    python scripts/make_sample.py                 # writes src/ctxgauge/data/sample.bundle
    python scripts/make_sample.py --out x.bundle  # anywhere else

Only the standard library and the ``git`` executable are needed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sample_history  # noqa: E402  (needs the path set above)
from sample_history import steps  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "src" / "ctxgauge" / "data" / "sample.bundle"

# The first commit's timestamp. Later ones follow at the gaps below.
START = dt.datetime(2024, 1, 8, 9, 14, tzinfo=dt.timezone.utc)

# Minutes between consecutive commits, used in turn. Irregular on purpose:
# bursts of work, overnight pauses and the odd long weekend, so the dates look
# like people at work rather than a cron job. Every gap is positive, so dates
# increase monotonically.
GAPS_MINUTES = [
    38, 122, 1185, 47, 263, 1340, 95, 21, 2790, 176,
    64, 1230, 310, 52, 4150, 143, 29, 1275, 388, 71,
]

# Passed as ``-c`` on every git invocation, so nothing depends on whatever
# configuration a developer's machine carries.
GIT_CONFIG = {
    "init.defaultBranch": "main",
    "core.autocrlf": "false",
    "core.fileMode": "true",
    "core.precomposeUnicode": "false",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "gc.auto": "0",
    "pack.threads": "1",
    "merge.renames": "true",
    "advice.detachedHead": "false",
}


def git_env(home: Path) -> dict[str, str]:
    """An environment for git that ignores the caller's config and locale.

    Built from scratch rather than copied from ``os.environ`` so that stray
    variables (GIT_DIR from a hook, GIT_AUTHOR_* from a shell) cannot leak in.
    """
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LC_ALL": "C",
        "LANG": "C",
        "TZ": "UTC",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


def commit_dates(start: dt.datetime = START) -> Iterator[str]:
    """Yield git date strings (``<epoch> +0000``), one per commit, increasing."""
    when = start
    index = 0
    while True:
        yield f"{int(when.timestamp())} +0000"
        gap = GAPS_MINUTES[index % len(GAPS_MINUTES)]
        when += dt.timedelta(minutes=gap)
        if not 8 <= when.hour < 20:
            # Past the working day: carry on the next morning instead. Only
            # ever moves forward, so the order is kept.
            next_day = when.date() + dt.timedelta(days=1 if when.hour >= 20 else 0)
            when = dt.datetime.combine(next_day, dt.time(8, 0), dt.timezone.utc)
            # Vary the start of the day so the pattern does not repeat.
            when += dt.timedelta(minutes=(gap * 7 + index * 53) % 150)
        index += 1


class SampleBuilder:
    """Replays ``sample_history.HISTORY`` into a fresh repository."""

    def __init__(self, repo: Path, home: Path) -> None:
        self.repo = repo
        self.env = git_env(home)
        self.dates = commit_dates()
        self.commits = 0

    def git(self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
        cmd = ["git"]
        for key, value in GIT_CONFIG.items():
            cmd += ["-c", f"{key}={value}"]
        cmd += list(args)
        result = subprocess.run(
            cmd,
            cwd=self.repo,
            env={**self.env, **(env or {})},
            input=stdin,
            capture_output=True,
            # Explicit, not the locale's: messages and paths are UTF-8 everywhere.
            encoding="utf-8",
            errors="replace",
        )
        if result.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
        return result.stdout

    def init(self, template: Path) -> None:
        # An empty template directory: no sample hooks, no info/exclude, so
        # the repository depends on nothing installed with git.
        self.git("init", "--quiet", f"--template={template}", ".")

    def identity_env(self, author: steps.Author, committer: steps.Author) -> dict[str, str]:
        date = next(self.dates)
        return {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": committer.name,
            "GIT_COMMITTER_EMAIL": committer.email,
            "GIT_COMMITTER_DATE": date,
        }

    # -- edits ---------------------------------------------------------

    def path(self, rel: str) -> Path:
        return self.repo / rel

    def apply(self, edit: steps.Edit) -> None:
        if isinstance(edit, steps.Write):
            target = self.path(edit.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            # Bytes, not text mode: no newline translation on any platform.
            target.write_bytes(edit.data)
        elif isinstance(edit, steps.Replace):
            target = self.path(edit.path)
            text = target.read_bytes().decode("utf-8")
            count = text.count(edit.old)
            if count != 1:
                raise ValueError(
                    f"{edit.path}: expected the old text once, found it {count} times:\n{edit.old}"
                )
            target.write_bytes(text.replace(edit.old, edit.new).encode("utf-8"))
        elif isinstance(edit, steps.Append):
            target = self.path(edit.path)
            with target.open("ab") as fh:
                fh.write(edit.text.encode("utf-8"))
        elif isinstance(edit, steps.Move):
            self.path(edit.dst).parent.mkdir(parents=True, exist_ok=True)
            self.git("mv", edit.src, edit.dst)
        elif isinstance(edit, steps.Delete):
            self.git("rm", "--quiet", edit.path)
        else:  # pragma: no cover - a new edit type without a case here
            raise TypeError(f"unknown edit {edit!r}")

    # -- steps ---------------------------------------------------------

    def run_step(self, step: steps.Step) -> None:
        if isinstance(step, steps.Commit):
            for edit in step.edits:
                self.apply(edit)
            self.git("add", "--all")
            env = self.identity_env(step.author, step.committer or step.author)
            # whitespace cleanup keeps lines starting with '#' (issue refs).
            self.git("commit", "--quiet", "--no-verify", "--cleanup=whitespace", "-F", "-",
                     env=env, stdin=step.message)
            self.commits += 1
        elif isinstance(step, steps.Branch):
            self.git("checkout", "--quiet", "-b", step.name)
        elif isinstance(step, steps.Checkout):
            self.git("checkout", "--quiet", step.name)
        elif isinstance(step, steps.Merge):
            env = self.identity_env(step.author, step.committer or step.author)
            self.git("merge", "--quiet", "--no-ff", "--no-verify", "--cleanup=whitespace",
                     "-m", step.message, step.branch, env=env)
            # The branch is gone after a merged pull request; only main ships.
            self.git("branch", "--quiet", "-d", step.branch)
            self.commits += 1
        elif isinstance(step, steps.Tag):
            self.git("tag", step.name)
        else:  # pragma: no cover
            raise TypeError(f"unknown step {step!r}")

    def bundle(self, out: Path) -> None:
        self.git("bundle", "create", "--quiet", str(out), "--all")


def build(out: Path) -> int:
    """Build the sample repository and write its bundle to ``out``.

    Returns the number of commits. ``out`` is replaced atomically, so a failed
    run never leaves a half-written bundle behind.
    """
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="shelfd-sample-") as tmp:
        tmp_path = Path(tmp)
        repo, home, template = tmp_path / "shelfd", tmp_path / "home", tmp_path / "template"
        for directory in (repo, home, template):
            directory.mkdir()
        builder = SampleBuilder(repo, home)
        builder.init(template)
        for step in sample_history.HISTORY:
            builder.run_step(step)
        partial = tmp_path / "sample.bundle"
        builder.bundle(partial)
        # Stage beside the target, then rename: atomic on the same filesystem.
        staged = out.with_name(f".{out.name}.part")
        staged.write_bytes(partial.read_bytes())
        os.replace(staged, out)
        return builder.commits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the bundle")
    args = parser.parse_args(argv)
    commits = build(args.out)
    print(f"wrote {args.out} ({commits} commits)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
