"""`ctxgauge cases` as a user meets it: exit 0 only when every line holds, 1 when one fails, 2 on bad
input with one line naming the case and the fix, and nothing written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def ctxgauge(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "lib" / "src").mkdir(parents=True)
    (tmp_path / "lib" / "src" / "loans.py").write_text("def overdue_fee(): pass\n")
    (tmp_path / "lib" / "src" / "members.py").write_text("class Member: pass\n")
    (tmp_path / "ok.yaml").write_text("pass: {hit@5: 1.0}\ncorpus: lib\ncases:\n"
                                      "  - {name: fees, query: overdue fee, expected: [src/loans.py]}\n")
    (tmp_path / "strict.yaml").write_text("pass: {precision@5: 0.5}\ncorpus: lib\ncases:\n"
                                          "  - {name: fees, query: overdue fee, expected: [src/loans.py]}\n")
    return tmp_path


def test_vs_equal_to_engine_is_refused(suite):
    r = ctxgauge("cases", str(suite / "ok.yaml"), "--engine", "bm25(k1=1.2)", "--vs", "bm25", "--out", str(suite / "r"))
    assert r.returncode == 2 and "--vs bm25 is the engine measured" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (suite / "r").exists()
    assert "e.g. --vs grep" in r.stderr


def test_vs_grep_against_grep_names_another_engine(suite):
    # The hint names an engine other than the one measured: against grep, grep would be refused again.
    r = ctxgauge("cases", str(suite / "ok.yaml"), "--engine", "grep", "--vs", "grep", "--out", str(suite / "r"))
    assert r.returncode == 2 and "e.g. --vs bm25" in r.stderr and "--vs grep" in r.stderr


def test_exit_0_when_every_line_holds_1_when_one_fails(suite):
    ok = ctxgauge("cases", str(suite / "ok.yaml"), "--engine", "bm25", "--out", str(suite / "r1"))
    assert ok.returncode == 0, ok.stderr
    assert "holds" in ok.stdout and "PASS: every pass line holds" in ok.stderr
    assert ok.stdout == ctxgauge("report", str(suite / "r1")).stdout  # the run's report, byte for byte
    strict = ctxgauge("cases", str(suite / "strict.yaml"), "--engine", "bm25", "--out", str(suite / "r2"), "--json")
    assert strict.returncode == 1, strict.stderr
    out = json.loads(strict.stdout)
    assert {"summary", "cases", "pass", "passed", "run_dir"} <= set(out)
    assert out["passed"] is False and out["pass"][0]["value"] == 1 / 5
    assert out["cases"][0]["ranking"][0]["path"] == "src/loans.py"
    held = ctxgauge("cases", str(suite / "strict.yaml"), "--engine", "bm25", "--out", str(suite / "r3"),
                    "--pass", "precision@5=0.2")  # a command-line line replaces the file's on that metric
    assert held.returncode == 0, held.stdout + held.stderr


def test_qrels_and_an_external_run_without_any_engine(suite):
    (suite / "qrels").write_text("q1 0 src/loans.py 1\n")
    (suite / "run.jsonl").write_text('{"qid": "q1", "ranking": ["src/members.py", "src/loans.py"]}\n')
    r = ctxgauge("cases", "--qrels", str(suite / "qrels"), "--run", str(suite / "run.jsonl"), "--json",
                 "--out", str(suite / "r"), "--pass", "mrr=0.5")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["summary"]["mrr"] == 1 / 2


@pytest.mark.parametrize("case_file, extra, message", [
    ("cases:\n  - {name: fees, query: q, corpus: lib}\n", [], "case 1 ('fees'): needs `expected` files"),
    ("cases:\n  - {name: fees, query: q, corpus: nowhere, expected: [a]}\n", [], "no such file or directory"),
    ("pass: {recal@5: 1}\ncases:\n  - {name: fees, query: q, corpus: lib, expected: [a]}\n", [], "unknown metric"),
    ("cases:\n  - {name: fees, query: q, corpus: lib, expected: [a]}\n", ["--engine", "nope"], "unknown engine"),
    ("cases:\n  - {name: fees, query: q, corpus: lib, expected: [a]}\n", ["--pass", "mrr"], "write METRIC=VALUE"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(suite, case_file, extra, message):
    (suite / "bad.yaml").write_text(case_file)
    args = ["cases", str(suite / "bad.yaml"), *(extra or ["--engine", "bm25"]), "--out", str(suite / "out")]
    if extra and extra[0] == "--pass":
        args[2:2] = ["--engine", "bm25"]
    r = ctxgauge(*args, cwd=suite)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (suite / "out").exists()


@pytest.fixture
def two_cases(suite):
    (suite / "two.yaml").write_text("pass: {hit@5: 0.5}\ncorpus: lib\ncases:\n"
                                    "  - {name: fees, query: overdue fee, expected: [src/loans.py]}\n"
                                    "  - {name: members, query: member class, expected: [src/members.py]}\n")
    return suite / "two.yaml"


def test_every_case_failed_exits_7_and_the_headline_says_nothing_was_measured(suite, two_cases, script_engine):
    # Before: a run whose every case failed was a `success` (exit 1, "a pass line fails", figures of nothing).
    r = ctxgauge("cases", str(two_cases), "--engine", script_engine("--fail-on="), "--out", str(suite / "r"))
    assert r.returncode == 7, r.stderr
    assert "nothing measured: 2 of 2 unit(s) failed" in r.stderr and "pass line" not in r.stderr
    record = json.loads((suite / "r" / "run.json").read_text())
    assert record["headline"].startswith("nothing measured") and record["counts"]["failed"] == 2


def test_some_cases_failed_exits_6_and_resume_fills_them(suite, two_cases, script_engine):
    engine = script_engine("--fail-on=member")
    r = ctxgauge("cases", str(two_cases), "--engine", engine, "--out", str(suite / "r"))
    assert r.returncode == 6, r.stderr
    assert "unfinished: 1 of 2 unit(s) failed" in r.stderr and "failed members: engine" in r.stderr
    assert "1 counted case(s) failed" in r.stderr
    script_engine.mend()
    again = ctxgauge("cases", str(two_cases), "--engine", engine, "--out", str(suite / "r"), "--resume")
    assert again.returncode == 0, again.stderr  # before: "that run already finished; nothing to resume"
    assert json.loads((suite / "r" / "run.json").read_text())["counts"] == {"ok": 2, "failed": 0, "skipped": 0}


@pytest.mark.parametrize("flags, said", [
    (("--exit-at-start",), "identity: the process exited with status 3 before answering; stderr: engine: no config "
                           "file found"),
    (("--hang-on=identity",), "identity: timed out after 2s (process killed)"),
])
def test_an_engine_that_fails_at_once_is_a_recorded_run_that_resumes(suite, two_cases, script_engine, flags, said):
    # It used to end with exit 2 and no record.
    engine = script_engine(*flags, timeout=2)
    r = ctxgauge("cases", str(two_cases), "--engine", engine, "--out", str(suite / "r"))
    assert r.returncode == 7, r.stderr
    units = [json.loads(line) for line in (suite / "r" / "units.jsonl").read_text().splitlines()]
    assert [u["status"] for u in units] == ["failed", "failed"]
    assert all(said in u["reason"] and "\n" not in u["reason"] for u in units)
    script_engine.mend()
    again = ctxgauge("cases", str(two_cases), "--engine", engine, "--out", str(suite / "r"), "--resume")
    assert again.returncode == 0, again.stderr
    record = json.loads((suite / "r" / "run.json").read_text())
    assert record["counts"]["ok"] == 2 and record["spec"]["engine_identity"]["id"] == "script-engine-1"


def test_a_program_that_cannot_be_started_is_exit_2_before_any_run(suite, two_cases, tmp_path):
    # The user's to mend (a wrong path, a missing chmod +x): one line, and no run directory at all.
    script = tmp_path / "engine.py"
    script.write_text("print('never')\n")
    r = ctxgauge("cases", str(two_cases), "--engine", f"command(cmd={json.dumps(str(script))})",
                 "--out", str(suite / "r"))
    assert r.returncode == 2 and "is not executable (chmod +x it" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (suite / "r").exists()
