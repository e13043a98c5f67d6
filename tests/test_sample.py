"""The bundled sample repository: its history pinned commit by commit, and varied enough to replay.

The bundle is data (src/ctxgauge/data/SAMPLE.md, "Changing it"): nothing regenerates it, so these
figures say which history it holds. Every commit id hashes its tree, message, identities, dates and
parents, so the sorted list of ids pins the whole history; the pack bytes may differ between git versions
and are not pinned.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.sample import materialize_sample, sample_bundle_path

ROOT = Path(__file__).resolve().parent.parent

# Read-only git calls; isolated so a developer's config cannot change answers.
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}

# What the committed bundle holds. A change to the sample's history changes these (and every run record,
# battery and expected figure made on the sample): update them in the same commit as the new bundle.
COMMITS = 102
HEADS = {
    "HEAD": "8b70c4f7871cd0cb365f1dcb68ec9ae4a0aaf854",
    "refs/heads/main": "8b70c4f7871cd0cb365f1dcb68ec9ae4a0aaf854",
    "refs/tags/v0.1.0": "4a8b3ede2e5bf8b8fb32fc5e7b4c8811673da932",
    "refs/tags/v0.2.0": "72f1a2d1b750618a8583e29b8e59cc91cdb05d18",
}
ROOT_COMMIT = "91efe5604d5b912a158aa4beea5778b5e16a7a5f"
MERGE_COMMIT = "6af8ebade05b064c7a45edb44bad102731032f02"  # Merge pull request #34 from tnowak/holds
# sha256 of every commit id, sorted, one a line: `git rev-list --all | LC_ALL=C sort | sha256sum`.
ALL_COMMITS_SHA256 = "e7b651a822618e2d6d86bdd77be0cc3591e73e3978ece364a7d2ae4ccd5db910"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def test_bundle_heads_and_tags_are_pinned():
    listed = git(ROOT, "bundle", "list-heads", str(sample_bundle_path()))
    heads = {name: commit for commit, name in (line.split() for line in listed.splitlines())}
    assert heads == HEADS


def test_every_commit_id_of_the_bundle_is_pinned(sample_repo):
    commits = sorted(git(sample_repo, "rev-list", "--all").split())
    assert len(commits) == COMMITS
    assert git(sample_repo, "rev-list", "--max-parents=0", "--all").split() == [ROOT_COMMIT]
    assert git(sample_repo, "rev-list", "--merges", "--all").split() == [MERGE_COMMIT]
    listing = "".join(f"{commit}\n" for commit in commits)
    assert hashlib.sha256(listing.encode()).hexdigest() == ALL_COMMITS_SHA256


def test_bundle_path_points_at_a_git_bundle():
    path = sample_bundle_path()
    assert path.is_file()
    assert path.read_bytes().startswith(b"# v2 git bundle\n")


def test_sample_has_at_least_80_commits(sample_repo):
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
