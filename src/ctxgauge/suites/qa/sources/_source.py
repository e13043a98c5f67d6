"""The code a battery is about: its repository at the pinned commit, as a Corpus.

A battery names a bundled sample (`{"sample": "shelfd"}`, cloned from the bundle shipped in ctxgauge), a
path (relative to the battery directory), or only a URL (a Corograph battery): `--repo` points at a local
clone or bare git directory of the same repository, and is required for a URL. Nothing is ever cloned.
The corpus is always read at the pinned commit, never at whatever is checked out, so gold stays true.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxgauge.corpus import Corpus, open_corpus
from ctxgauge.errors import UserError
from ctxgauge.suites.qa.sources._battery import Battery


def battery_repo_path(battery: Battery, work_dir: Path, repo: str | Path | None = None) -> Path:
    """A local git repository holding the battery's commit: `repo` if given, the cloned sample, or the
    battery's own path."""
    if repo is not None:
        return Path(repo)
    if "sample" in battery.repository:
        try:
            from ctxgauge.sample import materialize_sample
        except ImportError:
            raise UserError("the bundled sample repository is not part of this ctxgauge build; "
                            "pass --repo PATH to a checkout of it") from None
        name = str(battery.repository["sample"])
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) or name in (".", ".."):
            raise UserError(f"battery {battery.name}: repository sample {name[:80]!r} is not a plain name (letters, "
                            "digits, '.', '_', '-'): the sample is cloned inside the battery's work folder, never "
                            "elsewhere; name a bundled sample such as \"shelfd\"")
        target = work_dir / name
        if target.is_symlink() or target.resolve().parent != work_dir.resolve():
            raise UserError(f"battery {battery.name}: {target} is a symbolic link; the sample is cloned only inside "
                            "the battery's work folder: remove the link")
        return target if (target / ".git").exists() else materialize_sample(target)
    if "path" not in battery.repository:
        url = battery.repository.get("url") or "its repository"
        raise UserError(f"battery {battery.name} is about {url} at {battery.commit[:12]}, whose code ctxgauge does not "
                        "fetch: pass --repo PATH to a local clone (or bare git directory) holding that commit")
    path = Path(battery.repository["path"])
    return path if path.is_absolute() else (battery.path / path).resolve()


def open_battery_corpus(battery: Battery, work_dir: Path, repo: str | Path | None = None) -> Corpus:
    """The battery's repository read at its pinned commit."""
    path = battery_repo_path(battery, work_dir, repo)
    try:
        return open_corpus(path, battery.commit)
    except UserError as exc:
        raise UserError(f"battery {battery.name}: cannot read {path} at commit {battery.commit[:12]}: {exc}") from None
