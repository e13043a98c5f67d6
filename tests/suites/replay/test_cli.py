"""`ctxgauge replay` as a user meets it: the --json shape, exit codes, one-line errors, nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def ctxgauge(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def small_repo(repo_builder):
    b = repo_builder("small")
    b.commit("init", {"src/loans.py": "def overdue_fee(): pass\n", "src/members.py": "class Member: pass\n"})
    b.commit("Fix overdue fee", {"src/loans.py": "def overdue_fee(): return 1\n"})
    b.commit("Add member email", {"src/members.py": "class Member:\n    email = ''\n"})
    return b.path


def test_json_shape(tmp_path, small_repo):
    r = ctxgauge("replay", str(small_repo), "--engine", "bm25", "--vs", "grep", "-k", "5", "--json",
                 "--out", str(tmp_path / "run"), "--seed", "3")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"summary", "commits", "skipped", "comparison", "run_dir"} <= set(out)
    assert {"hit@5", "recall@5", "precision@5", "ndcg@5", "mrr", "pack_recall@5", "coverage_gap"} <= set(out["summary"])
    assert [c["request"] for c in out["commits"]] == ["Add member email", "Fix overdue fee"]
    first = out["commits"][1]
    assert {"sha", "request", "expected", "coverage_gap", "ranking"} <= set(first)
    top = first["ranking"][0]
    assert first["expected"] == ["src/loans.py"] and top == {"path": "src/loans.py", "score": top["score"],
                                                             "spans": top["spans"]}
    assert top["spans"] and all(1 <= s <= e for s, e in top["spans"])  # spans by default: [s, e] pairs
    assert out["skipped"]["root"] == 1
    assert out["comparison"]["seed"] == 3 and "recall@5" in out["comparison"]["metrics"]
    assert out["run_dir"] == str(tmp_path / "run")


def test_terminal_report_and_baseline_gate_exit_codes(tmp_path, small_repo):
    r = ctxgauge("replay", str(small_repo), "--engine", "grep", "--out", str(tmp_path / "base"))
    assert r.returncode == 0, r.stderr
    # The command prints its run's report: byte for byte what `ctxgauge report` prints for that run.
    assert r.stdout == ctxgauge("report", str(tmp_path / "base")).stdout
    assert "Replay: the repository's own commits as requests" in r.stdout and "skipped 1 (root 1)" in r.stdout
    assert r.stderr.strip().endswith(f"run recorded in {tmp_path / 'base'}")
    again = ctxgauge("replay", str(small_repo), "--engine", "grep", "--out", str(tmp_path / "again"),
                     "--baseline", str(tmp_path / "base"), "--max-drop", "0")
    assert again.returncode == 0, again.stderr
    assert "Regression gate against" in again.stdout


@pytest.mark.parametrize("args, message", [
    (["/no/such/repo", "--engine", "bm25"], "no such file or directory"),
    (["{repo}", "--engine", "nope"], "unknown engine 'nope'"),
    (["{repo}", "--engine", "bm25", "--vs", "bm25(k1="], "bad engine spec"),
    (["{repo}", "--engine", "bm25", "--rev", "no-such-rev"], "no commit named 'no-such-rev'"),
    (["{plain}", "--engine", "bm25"], "not a git repository"),
    (["{repo}", "--engine", "bm25", "--baseline", "{plain}"], "not a run directory"),
    (["{repo}", "--engine", "bm25", "--vs", "bm25"], "--vs bm25 is the engine measured"),
    (["{repo}", "--engine", "bm25", "--vs", "bm25(k1=1.2)"], "both are bm25"),
    (["{repo}", "--engine", "grep", "--vs", "grep"], "compare against another engine, e.g. --vs bm25"),
    (["{repo}", "--engine", "bm25", "--since", "notadate"], "--since 'notadate' is not a date in the past"),
    (["{repo}", "--engine", "bm25", "--since", "next year"], "is not a date in the past"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, small_repo, args, message):
    (tmp_path / "plain").mkdir()
    args = [a.replace("{repo}", str(small_repo)).replace("{plain}", str(tmp_path / "plain")) for a in args]
    r = ctxgauge("replay", *args, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_real_since_date_still_selects(tmp_path, small_repo):
    # The builder dates its commits in 2023 (a fixed clock): a date before them keeps every commit.
    r = ctxgauge("replay", str(small_repo), "--engine", "grep", "--since", "2020-01-01", "--json",
                 "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["commits"]) == 2


def test_a_replay_whose_every_unit_failed_exits_7_and_says_so(tmp_path, small_repo):
    # An engine that builds but fails every query: before, the run was `success` with exit 0.
    engine = tmp_path / "engine.py"
    engine.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req['op'] == 'identity':\n"
        "        print(json.dumps({'ok': True, 'identity': {'id': 'x', 'source': 'declared'}}), flush=True)\n"
        "    elif req['op'] == 'build':\n"
        "        os.makedirs(req['out'], exist_ok=True)\n"
        "        print(json.dumps({'ok': True}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'ok': False, 'error': 'index lost'}), flush=True)\n")
    r = ctxgauge("replay", str(small_repo), "--engine", f"command(cmd='{sys.executable} {engine}')",
                 "--out", str(tmp_path / "run"))
    assert r.returncode == 7, r.stderr
    assert "nothing measured" in r.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["headline"].startswith("nothing measured")


@pytest.mark.parametrize("flags, said", [
    (("--exit-at-start",), "identity: the process exited with status 3 before answering; stderr: engine: no config "
                           "file found"),
    (("--exit-on=identity",), "identity: the process exited with status 4 before answering; stderr: Traceback"),
    (("--hang-on=identity",), "identity: timed out after 2s (process killed)"),
])
def test_an_engine_that_fails_at_once_is_a_recorded_run_that_resumes(tmp_path, small_repo, script_engine,
                                                                    flags, said):
    # It used to end the replay with exit 2 and no record (the identity request failed in the plan).
    engine = script_engine(*flags, timeout=2)
    r = ctxgauge("replay", str(small_repo), "--engine", engine, "--out", str(tmp_path / "run"))
    assert r.returncode == 7, r.stderr
    assert "Traceback" not in r.stderr.replace("stderr: Traceback", "")
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["headline"].startswith("nothing measured") and record["counts"] == {"ok": 0, "failed": 2,
                                                                                      "skipped": 1}
    units = [json.loads(line) for line in (tmp_path / "run" / "units.jsonl").read_text().splitlines()]
    failed = [u for u in units if u["status"] == "failed"]
    assert len(failed) == 2 and all(said in u["reason"] and "\n" not in u["reason"] for u in failed)
    assert {u["request"] for u in failed} == {"Fix overdue fee", "Add member email"}  # labels kept
    script_engine.mend()
    again = ctxgauge("replay", str(small_repo), "--engine", engine, "--out", str(tmp_path / "run"), "--resume")
    assert again.returncode == 0, again.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["counts"] == {"ok": 2, "failed": 0, "skipped": 1} and not record["headline"].startswith("nothing")
    assert record["spec"]["engine_identity"] == {"id": "script-engine-1", "source": "declared"}


def test_a_replay_with_some_failed_commits_is_unfinished_exit_6(tmp_path, small_repo, script_engine):
    r = ctxgauge("replay", str(small_repo), "--engine", script_engine("--fail-on=member"),
                 "--out", str(tmp_path / "run"))
    assert r.returncode == 6, r.stderr
    assert "unfinished: 1 of 3 unit(s) failed" in r.stderr


def test_repos_end_by_the_outcome_rule_and_resume_their_failed_units(tmp_path, small_repo, repo_builder,
                                                                     script_engine):
    # Before: `--repos` exited 0 whatever failed, and --resume read a finished run with failed units back as done.
    other = repo_builder("other")
    other.commit("init", {"src/shelf.py": "class Shelf: pass\n"})
    other.commit("Fix shelf order", {"src/shelf.py": "class Shelf:\n    order = 1\n"})
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{small_repo} - - small\n{other.path} - - other\n")
    engine = script_engine("--exit-at-start")
    r = ctxgauge("replay", "--repos", str(listing), "--engine", engine, "--out", str(tmp_path / "many"))
    assert r.returncode == 7, r.stderr
    assert "nothing measured: 3 of 5 unit(s) failed" in r.stderr
    script_engine.mend()
    again = ctxgauge("replay", "--repos", str(listing), "--engine", engine, "--out", str(tmp_path / "many"),
                     "--resume", "--json")
    assert again.returncode == 0, again.stderr
    assert [repo["counts"]["ok"] for repo in json.loads(again.stdout)["repositories"]] == [2, 1]
