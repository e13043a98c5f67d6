"""`ctxgauge determinism` as a user meets it: the --json shape, the table, errors, ContextBenchmark's corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.fingerprints import read_fingerprint

INTEROP = (Path(__file__).resolve().parents[3] / "../shared/interop/contextbenchmark").resolve()
REFERENCE = Path("/work/.mirror/aabhisrv+contextbenchmark/repo")


def ctxgauge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # A wide terminal, so table cells are not wrapped mid-figure.
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd, env=env)


FAST = ["--rebuilds", "2", "--trials", "2", "-k", "5"]


def test_json_shape(library_repo: Path, tmp_path: Path) -> None:
    done = ctxgauge("determinism", str(library_repo), "-e", "grep", "-e", "bm25", *FAST, "--out", str(tmp_path / "run"),
                    "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["run_dir"] == str(tmp_path / "run")
    assert set(out["engines"]) == {"grep", "bm25"}
    bm25 = out["engines"]["bm25"]
    assert set(bm25) >= {"level", "families", "flags", "fingerprint"}
    assert (bm25["level"], bm25["label"], bm25["flags"]) == (3, "CTL 3", [])
    assert set(bm25["families"]) == {"rebuild", "query", "drift", "update", "cross-machine"}
    assert bm25["families"]["query"]["figures"]["exact_match_rate"] == 1.0
    assert bm25["drift"] == {"prose": bm25["families"]["drift"]["figures"]["prose"]["drift"]}
    assert bm25["fingerprint"] == str(tmp_path / "run" / "fingerprints" / "bm25.fingerprint.json")


def test_terminal_output_is_the_runs_report(plain_library: Path, tmp_path: Path) -> None:
    done = ctxgauge("determinism", str(plain_library), "-e", "grep", *FAST, "--noise", "prose,near-duplicate",
                    "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    # The command prints its run's report: byte for byte what `ctxgauge report` prints for that run.
    assert done.stdout == ctxgauge("report", str(tmp_path / "run")).stdout
    for expected in ("Context Trust Level per engine", "CTL 3", "1.000 / 1.000 / 1.000", "1 hash / 2 builds",
                     "near-duplicate", "prose", "grep: CTL 4 not measured"):
        assert expected in done.stdout, expected
    # Where this invocation wrote things goes to stderr, the run directory last.
    assert f"grep: fingerprint {tmp_path / 'run' / 'fingerprints' / 'grep.fingerprint.json'}" in done.stderr
    assert done.stderr.strip().endswith(f"run recorded in {tmp_path / 'run'}")


def test_unavailable_engine_is_shown_as_skipped(library_repo: Path, tmp_path: Path) -> None:
    done = ctxgauge("determinism", str(library_repo), "-e", "hybrid(engines=\"bm25,nosuch\")", *FAST,
                    "--families", "query", "--out", str(tmp_path / "run"), "--json")
    if done.returncode == 2:
        pytest.skip(f"hybrid refuses an unknown sub-engine up front here: {done.stderr.strip()}")
    e = next(iter(json.loads(done.stdout)["engines"].values()))
    assert (e["status"], e["level"], e["label"]) == ("skipped", None, "skipped") and e["reason"]


@pytest.mark.parametrize("args, message", [
    (["--engine", "nope"], "unknown engine 'nope'"),
    (["--rebuilds", "1"], "--rebuilds must be at least 2"),
    (["--families", "rebuild,fast"], "unknown family 'fast'"),
    (["--noise-dir", "src/shared"], "not a directory of the corpus"),
])
def test_bad_options_are_one_line_and_exit_2(library_repo: Path, tmp_path: Path, args: list[str], message: str) -> None:
    done = ctxgauge("determinism", str(library_repo), *args, "--out", str(tmp_path / "run"), "--trials", "2")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_queries_file_and_a_bad_one(library_repo: Path, tmp_path: Path) -> None:
    good = tmp_path / "queries.json"
    good.write_text(json.dumps(["overdue fee rounding", "isbn validation"]))
    done = ctxgauge("determinism", str(library_repo), "--queries", str(good), "--families", "query", "--trials", "2",
                    "--out", str(tmp_path / "run"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["queries"] == ["overdue fee rounding", "isbn validation"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"queries": ["x"]}))
    done = ctxgauge("determinism", str(library_repo), "--queries", str(bad), "--out", str(tmp_path / "run2"))
    assert done.returncode == 2 and "expected a JSON list of strings" in done.stderr


@pytest.fixture
def micro_app(tmp_path: Path) -> Path:
    """ContextBenchmark's micro-app corpus (from its repository) and the published fingerprints."""
    if not INTEROP.is_dir() or not REFERENCE.is_dir():
        pytest.skip("ContextBenchmark's repository or published fingerprints are not present")
    dest = tmp_path / "micro-app"
    dest.mkdir()
    archive = subprocess.run(["git", f"--git-dir={REFERENCE}", "archive", "HEAD", "corpora/micro-app"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "--strip-components=2", "-C", str(dest)], input=archive, check=True)
    return dest


def test_against_contextbenchmark_bm25_is_not_comparable_by_design(micro_app: Path, tmp_path: Path) -> None:
    theirs = INTEROP / "bm25.micro-app.linux-x64.fingerprint.json"
    done = ctxgauge("determinism", str(micro_app), "--queries", str(micro_app / "queries.json"), "--families",
                    "rebuild,query,cross-machine", *FAST[:4], "--against", str(theirs), "--out", str(tmp_path / "run"),
                    "--json")
    assert done.returncode == 0, done.stderr
    bm25 = json.loads(done.stdout)["engines"]["bm25"]
    cross = bm25["families"]["cross-machine"]["figures"]
    # Different systems and different corpus hashes: the right verdict, and CTL 4 stays open.
    assert cross["verdict"] == "NOT COMPARABLE"
    assert bm25["level"] == 3 and bm25["grade"]["not_measured"][0]["level"] == 4
    ours = read_fingerprint(bm25["fingerprint"])
    assert ours.corpus.name == "micro-app" and ours.k == 10
    assert list(ours.query_hashes) == json.loads((micro_app / "queries.json").read_text())


def test_every_unit_failed_exits_7_and_the_headline_says_nothing_was_measured(plain_library: Path, tmp_path: Path,
                                                                             script_engine) -> None:
    done = ctxgauge("determinism", str(plain_library), "-e", script_engine("--exit-on=build"), *FAST,
                    "--out", str(tmp_path / "run"))
    assert done.returncode == 7, done.stderr
    assert "nothing measured: 5 of 5 unit(s) failed" in done.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["headline"].startswith("nothing measured") and record["counts"]["ok"] == 0
    reasons = [json.loads(line)["reason"] for line in (tmp_path / "run" / "units.jsonl").read_text().splitlines()]
    assert all("build: the process exited with status 4 before answering; stderr: Traceback" in r for r in reasons)
    assert not any("\n" in r for r in reasons)


def test_one_engine_of_two_failed_exits_6_and_resume_fills_it(plain_library: Path, tmp_path: Path,
                                                              script_engine) -> None:
    engine = script_engine("--exit-at-start")
    done = ctxgauge("determinism", str(plain_library), "-e", "grep", "-e", engine, *FAST,
                    "--out", str(tmp_path / "run"))
    assert done.returncode == 6, done.stderr
    assert "unfinished: 5 of 10 unit(s) failed" in done.stderr
    script_engine.mend()
    again = ctxgauge("determinism", str(plain_library), "-e", "grep", "-e", engine, *FAST,
                     "--out", str(tmp_path / "run"), "--resume", "--json")
    assert again.returncode == 0, again.stderr  # before: "that run already finished; nothing to resume"
    engines = json.loads(again.stdout)["engines"]
    assert [e["status"] for e in engines.values()] == ["measured", "measured"]
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["counts"]["failed"] == 0
