"""Batteries: the shipped shelfd battery (shape, and every gold fact's evidence at the pinned commit),
and broken batteries failing with one clear line (exit 2 from `battery validate`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.suites.qa import bundled_batteries, check_evidence, load_battery, open_battery_corpus


def test_shipped_battery_shape():
    b = load_battery("shelfd")
    assert "shelfd" in bundled_batteries()
    assert len(b.questions) == 18 and [q.position for q in b.questions] == list(range(1, 19))
    assert b.questions[0].qid == "q01" and b.questions[9].qid == "q10" and b.questions[-1].qid == "r04"
    cats = {c for q in b.questions for c in q.categories}
    assert {"endpoints", "definitions", "call-paths", "false-premise"} <= cats
    assert sum("false-premise" in q.categories for q in b.questions) == 4
    assert all(b.gold[q.qid].evidence for q in b.questions)  # every fact checkable with grep
    assert all(b.gold[q.qid].honesty_trap for q in b.questions if q.qid.startswith("r"))
    assert b.repository == {"sample": "shelfd"} and len(b.commit) == 40 and b.rev == "v0.2.0"
    assert len(b.digest) == 12 and b.digest == load_battery("shelfd").digest


def test_shipped_battery_gold_is_true_of_the_sample(tmp_path):
    pytest.importorskip("ctxgauge.sample", reason="the bundled sample is not in this build yet")
    b = load_battery("shelfd")
    corpus = open_battery_corpus(b, tmp_path)
    assert corpus.rev == b.commit
    assert check_evidence(b, corpus) == []


def copy_battery(tmp_path: Path) -> Path:
    src = Path(load_battery("shelfd").path)
    dst = tmp_path / "b"
    shutil.copytree(src, dst)
    return dst


def edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


BROKEN = [
    ("missing file", lambda d: (d / "exemplars.json").unlink(), "exemplars.json: missing"),
    ("bad json", lambda d: (d / "gold.json").write_text("{"), "gold.json: not valid JSON"),
    ("duplicate qid", lambda d: edit(d / "questions.json", lambda x: x["questions"][1].update(qid="q01")),
     "record 1 (q01): qid 'q01' appears twice"),
    ("difficulty", lambda d: edit(d / "questions.json", lambda x: x["questions"][0].update(difficulty=9)),
     "difficulty must be 1 (easy) to 5"),
    ("unknown gold qid", lambda d: edit(d / "gold.json", lambda x: x["gold"][0].update(qid="zz")),
     "no question has qid 'zz'"),
    ("no gold", lambda d: edit(d / "gold.json", lambda x: x["gold"].pop()), "no gold for r04"),
    ("empty gold", lambda d: edit(d / "gold.json", lambda x: x["gold"][2].update(answer_gold=" ")),
     "record 2 (q03): 'answer_gold' is empty"),
    ("exemplar kind", lambda d: edit(d / "exemplars.json", lambda x: x["exemplars"][0].update(kind="great")),
     "kind must be one of correct, incorrect, partial"),
    ("short commit", lambda d: edit(d / "battery.json", lambda x: x.update(commit="abc123")),
     "commit must be a full 40-hex-digit commit id"),
    ("no repository", lambda d: edit(d / "battery.json", lambda x: x.update(repository={})),
     "repository needs 'sample'"),
]


@pytest.mark.parametrize("name,breaks,message", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_battery_fails_with_one_line(tmp_path, name, breaks, message):
    d = copy_battery(tmp_path)
    breaks(d)
    with pytest.raises(UserError) as err:
        load_battery(d)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_newest_gold_revision_wins(tmp_path):
    d = copy_battery(tmp_path)
    edit(d / "gold.json", lambda x: x["gold"].append({**x["gold"][0], "gold_rev": 2, "answer_gold": "revised"}))
    assert load_battery(d).gold["q01"].answer_gold == "revised"


def test_wrong_evidence_is_reported(mini_battery):
    from ctxgauge.corpus import open_corpus

    b = load_battery(mini_battery.path)
    b.gold["q01"].evidence[0]["quote"] = "return 'something else'"
    problems = check_evidence(b, open_corpus(mini_battery.repo, b.commit))
    assert len(problems) == 1 and "does not contain" in problems[0]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"})


def test_cli_validate_ok_and_broken(mini_battery, tmp_path):
    ok = cli("battery", "validate", str(mini_battery.path), "--json")
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["questions"] == 10 and data["evidence_checked"] and data["evidence_items"] == 10
    broken = copy_battery(tmp_path)
    (broken / "policies.json").write_text("[{\"id\": \"S1\"}]")
    bad = cli("battery", "validate", str(broken), "--no-evidence")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().count("\n") == 0 and "policies.json: record 0: missing 'rule'" in bad.stderr


def test_cli_validate_evidence_mismatch_exits_2(mini_battery):
    edit(mini_battery.path / "gold.json",
         lambda x: x["gold"][3]["evidence"][0].update(path="pkg/nowhere.py"))
    bad = cli("battery", "validate", str(mini_battery.path))
    assert bad.returncode == 2 and "evidence file 'pkg/nowhere.py' is not in the corpus" in bad.stderr


def test_cli_validate_shipped_battery():
    pytest.importorskip("ctxgauge.sample", reason="the bundled sample is not in this build yet")
    ok = cli("battery", "validate", "shelfd")
    assert ok.returncode == 0, ok.stderr
    assert "18 questions" in ok.stdout and "evidence checked" in ok.stdout


# -- hostile input (issue 36) -----------------------------------------------------------------------------------
def cli_env(*args: str) -> subprocess.CompletedProcess:
    """`cli` with this process's environment (PYTHONPATH included, so the code under test runs)."""
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("sample", ["{outside}", "../../escaped", "a/b", ".."])
def test_the_sample_is_cloned_only_inside_the_work_folder(tmp_path, sample):
    # F7: an absolute or climbing sample made `battery validate` clone there (a write outside), or read a
    # repository already there instead
    b = copy_battery(tmp_path)
    outside = tmp_path / "outside"
    edit(b / "battery.json", lambda x: x.update(repository={"sample": sample.format(outside=outside)}))
    proc = cli_env("battery", "validate", str(b))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not a plain name" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not outside.exists() and not (tmp_path / "escaped").exists()


def test_a_gold_anchor_with_a_huge_line_number_is_one_line(tmp_path):
    # F6: more than 4,300 digits in an anchor's line number raised ValueError (exit 70)
    b = copy_battery(tmp_path)
    edit(b / "gold.json", lambda x: x["gold"][0].update(facet_guide="see shelfd/app.py:" + "7" * 5000))
    proc = cli_env("battery", "validate", str(b))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "5000 digits" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
