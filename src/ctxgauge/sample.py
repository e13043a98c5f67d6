"""The bundled sample repository, ctxgauge's demo and test fixture.

The sample is "shelfd", a small book-lending service (Python backend,
TypeScript web client) with about a hundred commits of history, shipped as a
git bundle in ``ctxgauge/data``. The bundle is data, committed as it is:
``data/SAMPLE.md`` describes it and how to change it (unbundle, commit,
re-bundle), and ``tests/test_sample.py`` pins its commit ids.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from .errors import UserError

BUNDLE_NAME = "sample.bundle"

# Settings for every git call here; see _git_env for the environment side.
# autocrlf off: checked-out files must be byte-identical to the committed ones
# on every platform, or offsets and hashes computed from them drift.
_GIT_CONFIG = (
    "-c", "core.autocrlf=false",
    "-c", "init.defaultBranch=main",
    "-c", "advice.detachedHead=false",
)


def sample_bundle_path() -> Path:
    """Return the filesystem path of the bundled sample repository (a git bundle).

    Raises FileNotFoundError if ctxgauge was installed without its data files.
    """
    resource = resources.files("ctxgauge") / "data" / BUNDLE_NAME
    # ctxgauge installs as a plain directory, so the resource is a real file.
    # A zipped install would need as_file() and a temporary copy; unsupported.
    path = Path(str(resource))
    if not path.is_file():
        raise FileNotFoundError(f"the sample bundle is missing from the ctxgauge package: {path}")
    return path


def _git_env(home: str) -> dict[str, str]:
    """The caller's environment minus anything that would steer git.

    Inherited GIT_* variables (GIT_DIR set by a hook, for one) would point the
    clone somewhere else; user and system config could rewrite line endings or
    URLs. HOME goes to an empty directory so ~/.gitconfig is never read.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        {
            "HOME": home,
            "XDG_CONFIG_HOME": home,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }
    )
    return env


def materialize_sample(dest: Path) -> Path:
    """Clone the sample bundle into ``dest`` and return the repository's path.

    The clone is an ordinary (non-bare) repository with ``main`` checked out
    and the tags ``v0.1.0`` and ``v0.2.0``. ``dest`` must not exist yet, or be
    an empty directory, as for ``git clone``. Git runs isolated from the
    user's and the system's configuration, so every clone is identical.

    Raises UserError if ``dest`` is in the way or git is not installed.
    """
    dest = Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UserError(f"cannot put the sample repository in {dest}: it exists and is not empty")
    bundle = sample_bundle_path()
    with tempfile.TemporaryDirectory(prefix="ctxgauge-git-home-") as home:
        cmd = ["git", *_GIT_CONFIG, "clone", "--quiet", str(bundle), str(dest)]
        try:
            result = subprocess.run(
                cmd, env=_git_env(home), capture_output=True, encoding="utf-8", errors="replace"
            )
        except FileNotFoundError:
            raise UserError("git is not installed, or not on PATH; the sample needs it") from None
    if result.returncode != 0:
        raise RuntimeError(f"git clone of the sample bundle failed: {result.stderr.strip()}")
    return dest
