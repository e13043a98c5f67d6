"""The bundled sample repository: reproducible, and varied enough to replay."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.sample import materialize_sample, sample_bundle_path

ROOT = Path(__file__).resolve().parent.parent
MAKE_SAMPLE = ROOT / "scripts" / "make_sample.py"

# Read-only git calls; isolated so a developer's config cannot change answers.
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two bundles from two independent runs of scripts/make_sample.py."""
    out = tmp_path_factory.mktemp("regenerated")
    bundles = (out / "first.bundle", out / "second.bundle")
    for bundle in bundles:
        subprocess.run([sys.executable, str(MAKE_SAMPLE), "--out", str(bundle)],
                       check=True, capture_output=True, text=True)
    return bundles


def test_two_runs_give_byte_identical_bundles(regenerated):
    first, second = regenerated
    assert sha256(first) == sha256(second)


def test_regenerated_bundle_matches_the_committed_one(regenerated):
    fresh, committed = regenerated[0], sample_bundle_path()
    if sha256(fresh) == sha256(committed):
        return
    # Say which kind of difference it is: the history (edit the data or
    # regenerate) or only the pack encoding (another git or zlib version).
    same_commits = git(ROOT, "bundle", "list-heads", str(fresh)) == git(
        ROOT, "bundle", "list-heads", str(committed))
    pytest.fail(
        "scripts/make_sample.py no longer reproduces src/ctxgauge/data/sample.bundle: "
        + ("same commits, different pack bytes (git/zlib version?); regenerate and commit"
           if same_commits else "the history differs; regenerate and commit the bundle")
    )


def test_bundle_path_points_at_a_git_bundle():
    path = sample_bundle_path()
    assert path.is_file()
    assert path.read_bytes().startswith(b"# v2 git bundle\n")


def test_sample_history_is_long_enough(sample_repo):
    assert int(git(sample_repo, "rev-list", "--count", "HEAD")) >= 80


def test_sample_tree_is_big_enough_and_has_two_languages(sample_repo):
    files = git(sample_repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert len(files) >= 40
    assert any(name.endswith(".py") for name in files)
    assert any(name.endswith(".ts") for name in files)


def test_sample_has_a_binary_file(sample_repo):
    files = git(sample_repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert any(b"\0" in (sample_repo / name).read_bytes() for name in files)


def test_sample_has_a_merge_commit(sample_repo):
    assert int(git(sample_repo, "rev-list", "--merges", "--count", "HEAD")) >= 1


def test_sample_has_a_rename_at_50_percent(sample_repo):
    out = git(sample_repo, "log", "-M50%", "--name-status", "--diff-filter=R", "--format=")
    assert any(line.startswith("R") for line in out.splitlines())


def test_sample_has_a_bot_commit(sample_repo):
    authors = git(sample_repo, "log", "--format=%an").splitlines()
    assert any(author.endswith("[bot]") for author in authors)


def test_materialized_sample_is_a_working_clone(sample_repo):
    assert git(sample_repo, "rev-parse", "--is-bare-repository").strip() == "false"
    assert git(sample_repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(sample_repo, "status", "--porcelain") == ""
    assert (sample_repo / "shelfd" / "app.py").is_file()


def test_materialize_refuses_a_non_empty_destination(tmp_path):
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "file.txt").write_text("mine\n")
    with pytest.raises(UserError, match="not empty"):
        materialize_sample(tmp_path / "occupied")


def test_materialize_accepts_an_empty_directory(tmp_path):
    (tmp_path / "empty").mkdir()
    repo = materialize_sample(tmp_path / "empty")
    assert repo == (tmp_path / "empty").resolve()
    assert (repo / "README.md").is_file()
