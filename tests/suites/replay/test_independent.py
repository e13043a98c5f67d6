"""An independent reading of the sample's history: `git log --name-status -M50%` parsed here with plain
code (no ctxgauge.git, no ctxgauge.paths, no replay rules), and the eligible commits, requests and expected
files compared with what replay computed."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path


def _log(repo: Path) -> list[dict]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
    out = subprocess.run(
        ["git", "-c", "core.quotepath=false", "-c", "diff.renames=false", "log", "--name-status", "-M50%",
         "--format=@@@%H|%P|%an|%ae|%s", "HEAD"],
        cwd=repo, env=env, check=True, capture_output=True, text=True).stdout
    commits = []
    for line in out.splitlines():
        if line.startswith("@@@"):
            sha, parents, name, email, subject = line[3:].split("|", 4)
            commits.append({"sha": sha, "parents": parents.split(), "author": f"{name} {email}",
                            "subject": subject, "changes": []})
        elif line.strip():
            commits[-1]["changes"].append(line.split("\t"))
    return commits


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") or name.startswith("test_") or ".test." in name or "/__tests__/" in path


def _is_changelog(path: str) -> bool:
    return path.rsplit("/", 1)[-1].split(".")[0].upper() in {"CHANGELOG", "CHANGES", "HISTORY", "NEWS"}


def _request(subject: str) -> str:
    s = re.sub(r"^[a-z]+(\([^)]*\))?!?: ", "", subject)
    return re.sub(r" \(#\d+\)$", "", s).strip()


def _independent_reading(repo: Path, max_files: int = 8) -> dict[str, tuple[str, list[str]]]:
    """sha -> (request, expected files) of every eligible commit, by the rules as the issue words them."""
    eligible, seen = {}, set()
    for c in _log(repo):
        if len(c["parents"]) != 1 or "[bot]" in c["author"] or "[skip ci]" in c["subject"]:
            continue
        request = _request(c["subject"])
        # the sample's releases and own-version bumps: "Release 0.1.0", "chore: start 0.2.0 development"
        if re.match(r"^(release|start) .*\d+\.\d+", request, re.I):
            continue
        expected = set()
        for status, *paths in c["changes"]:
            if status[0] in "MDT":
                path = paths[0]
            elif status[0] == "R":
                path = paths[0]  # the old path: the file as the parent has it
            else:
                continue  # added
            if not _is_test(path) and not _is_changelog(path):
                expected.add(path)
        if not expected or len(expected) > max_files or request.lower() in seen:
            continue
        seen.add(request.lower())
        eligible[c["sha"]] = (request, sorted(expected))
    return eligible


def test_replay_agrees_with_an_independent_reading_of_git_log(sample_replay, sample_repo):
    ours = {c["sha"]: (c["request"], sorted(c["expected"])) for c in sample_replay.to_dict()["commits"]}
    theirs = _independent_reading(sample_repo)
    assert list(ours) == list(theirs)  # the same commits, in the same (newest first) order
    assert ours == theirs
    # the sample's landmarks, read independently too
    renamed = [sha for sha, (req, _) in theirs.items() if req == "Rename notify.email to notify.mailer"]
    assert renamed and "shelfd/notify/email.py" in theirs[renamed[0]][1]


def test_replay_walked_every_commit_of_the_sample(sample_replay, sample_repo):
    walked = sample_replay.results.counts.walked
    assert walked == len(_log(sample_repo))
    assert walked == sample_replay.results.counts.replayed + sum(sample_replay.results.skipped.values())
    assert sample_replay.results.skipped["merge"] == 1 and sample_replay.results.skipped["root"] == 1
    assert sample_replay.results.skipped["bot"] == 2 and sample_replay.results.skipped["release"] == 3
    assert sample_replay.results.skipped["skip-ci"] == 1
