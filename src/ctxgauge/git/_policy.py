"""The one git invocation policy: how every git process ctxgauge starts is spelled, with what environment,
and how its failure becomes one line for the user.

Every git process goes through `git_command` and `git_env` (and, for a plain call, `run_git`): the user's
and the system's configuration are switched off, output-changing settings are pinned, and nothing a
repository's own configuration names is ever run or fetched:
- `protocol.allow=never` and GIT_NO_LAZY_FETCH=1: a partial clone (`--filter=blob:none`) would otherwise
  fetch a missing blob on `ls-tree --long` or `cat-file`, running the repository's `core.sshCommand` or
  `remote.*.uploadpack` (both switches: git 2.39 honours the first, newer ones the second).
- `core.fsmonitor=false`, `core.hooksPath=/dev/null`, `core.pager=cat`, `--no-pager`: programs a
  repository may name for index reads, hooks and paging.
- `--no-textconv --no-ext-diff` on every diff (see `DIFF_SAFE`): textconv and external diff drivers;
  `cat-file --batch` without `--filters` runs no clean/smudge filter; `log.showSignature=false` keeps
  `gpg.program` out; aliases cannot shadow the built-in commands called here.
- every path-valued key a repository's config may set (`PATH_KEYS`) is pinned to a harmless value: git would
  otherwise open the named file outside the repository (or block forever on a FIFO there); `include.path`
  cannot be pinned by `-c` and is refused by confinement instead (`NOT_PINNABLE`).
- `core.bare=true`: no work tree, so git reads no `.gitattributes`, `.mailmap` or `core.worktree` folder
  outside the git directory; with `GIT_DIR` and `GIT_CEILING_DIRECTORIES` pinned by the caller to what the
  locator found (`Location.env`), git never looks for a repository itself.
A user's `diff.renames`, `core.quotepath` would otherwise change which files a commit is said to change.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ctxgauge.errors import UserError

_PINNED = [
    "--no-pager",
    "-c", "core.quotepath=false",
    "-c", "diff.renames=false",
    "-c", "diff.noprefix=false",
    "-c", "log.showSignature=false",
    "-c", "safe.directory=*",
    "-c", "core.fsmonitor=false",
    "-c", "core.pager=cat",
    "-c", "protocol.allow=never",
    "-c", "core.bare=true",
]

PATH_KEYS = {
    "core.hooksPath": os.devnull,
    "core.attributesFile": os.devnull,
    "core.excludesFile": os.devnull,
    "mailmap.file": os.devnull,
    "mailmap.blob": "",
    "diff.orderFile": os.devnull,
    "blame.ignoreRevsFile": "",
    "commit.template": "",
    "core.sharedIndexFile": "",
    "init.templateDir": "",
    "gpg.ssh.allowedSignersFile": "",
    "gpg.ssh.revocationFile": "",
    "http.cookieFile": "",
    "core.notesRef": "refs/notes/commits",
}
"""Every path-valued key of a repository's configuration git could act on, and the value every git call pins
it to with `-c` (command-line configuration outranks the repository's): git then opens no file the
repository names outside itself, and waits on no FIFO there. `/dev/null` where git refuses an empty path."""

NOT_PINNABLE = {
    "include.path": "refused by confinement (`_confine`): an include cannot be switched off by `-c`",
    "includeIf.<condition>.path": "refused by confinement, as include.path",
    "core.worktree": "moot: every call runs with core.bare=true, so no work tree is opened",
}
"""Path-valued keys `-c` cannot neutralise, and what happens to each instead (docs/security.md lists both)."""

NO_REPOSITORY = {"GIT_DIR": "/dev/null/no-repository", "GIT_CEILING_DIRECTORIES": "/"}
"""The pinned environment of a git call that must open no repository at all (`git config --file`): GIT_DIR
names a path that cannot exist, so git reads no repository's configuration on the way."""
DIFF_SAFE = ["--no-textconv", "--no-ext-diff", "--no-color"]
"""Options every diff-producing call carries: no textconv, no external diff driver, no colour codes."""

RENAME_THRESHOLD = "-M50%"
"""The rename similarity every name-status diff uses (copies are never detected)."""

# Environment a caller's shell may carry that would point git at other repositories, object stores,
# programs or configuration: removed from every call.
_ENV_DROP = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_EDITOR", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_TRACE", "GIT_REPLACE_REF_BASE", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_ATTR_SOURCE", "GIT_CONFIG_SYSTEM", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_NOTES_REF",
    "GIT_NOTES_DISPLAY_REF", "GIT_MAILMAP", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF",
)


def git_env(pinned: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every git process ctxgauge starts (see the policy above); `pinned` is the
    repository's `GIT_DIR` and `GIT_CEILING_DIRECTORIES` (`Location.env()`, or `NO_REPOSITORY`)."""
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROP and not k.startswith("GIT_CONFIG_KEY_")
           and not k.startswith("GIT_CONFIG_VALUE_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",  # refs/replace/ would make a blob id name other bytes
        GIT_OPTIONAL_LOCKS="0",  # a reader must not take the index lock
        GIT_PROTOCOL_FROM_USER="0",
        LC_ALL="C",
    )
    env.update(pinned or {})
    return env


def git_command(*args: str) -> list[str]:
    """The argv of one git call under the policy: `git <pinned options> <args>`."""
    return ["git", *_PINNED, *(a for k, v in PATH_KEYS.items() for a in ("-c", f"{k}={v}")), *args]


def run_git(cwd: Path, args: list[str], *, input: bytes | None = None, pinned: dict[str, str] | None = None) -> bytes:
    """Run one git command under the policy in `cwd` (with `pinned`: the repository's GIT_DIR and ceiling)
    and return its standard output; a failure is one user-error line (the missing-object line when that is why
    git stopped, else git's last line)."""
    proc = subprocess.run(git_command(*args), cwd=cwd, input=input, capture_output=True, env=git_env(pinned),
                          check=False, stdin=None if input is not None else subprocess.DEVNULL)
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace")
        missing = missing_object_message(stderr)
        if missing:
            raise UserError(missing)
        msg = stderr.strip().splitlines()
        raise UserError(f"git {args[0]} failed in {show(cwd)}: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
    return proc.stdout


def missing_object_message(stderr: str) -> str | None:
    """The one line to print when git stopped because an object is absent (a partial clone's missing blob:
    ctxgauge never fetches), or None when stderr says something else."""
    m = re.search(r"could not fetch ([0-9a-f]{40,64}) from promisor remote", stderr)
    if m is None:
        m = re.search(r"(?:unable to read|missing (?:blob|tree|object)|bad object) ([0-9a-f]{40,64})", stderr)
        if m is None:
            return None
    return (f"object {m.group(1)} is missing from the repository (a partial or shallow clone? ctxgauge never "
            "fetches: clone it without --filter, or run `git fetch --refetch` yourself)")


def show(path: Path | str) -> str:
    """A path for a one-line message: control characters (a newline would split the line) escaped."""
    return str(path).encode("unicode_escape", "backslashreplace").decode("ascii") if not str(path).isprintable() \
        else str(path)
