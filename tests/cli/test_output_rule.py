"""The one output rule, seen from the command line (issue 36 items 4 and F8, F9, F16, F18; issue 39 item 3).

Every test runs the real `ctxgauge` in a child process. Read-only targets are a read-only tmpfs, a full disk
a tiny tmpfs filled to the last byte (both need root to mount: skipped otherwise), a file too large an
RLIMIT_FSIZE child that ignores SIGXFSZ, a wrong-type target a directory where a file belongs. Before a run is
recorded such a failure is one line and exit 2 with nothing left behind; after, exit 6, the run `error` with
the reason, and the one line holds the `--resume` command that continues it.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge._io import MAX_NAME_BYTES
from ctxgauge._output import GENERATOR_MARK

TIMEOUT = 120


def cli(*args: str, cwd: Path, timeout: float = TIMEOUT, preexec=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The single `error:` line of a refusal: no traceback, no bug report, nothing else on stderr."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def _mount(where: Path, options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.decode(errors='replace').strip()}")


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def ro_dir(tmp_path: Path):
    """An empty read-only file system (EROFS for every write)."""
    where = tmp_path / "ro"
    _mount(where, "size=64k,ro")
    yield where
    _umount(where)


@pytest.fixture
def full_dir(tmp_path: Path):
    """A file system with no byte left (ENOSPC for every write of data)."""
    where = tmp_path / "full"
    _mount(where, "size=16k")
    try:
        with open(where / "filler", "wb") as fh:
            while True:
                fh.write(b"x" * 512)
                fh.flush()
    except OSError:
        pass
    yield where
    _umount(where)


def fsize_limit(limit: int = 2048):
    """A preexec_fn: files the child writes may not exceed `limit` bytes, and SIGXFSZ is ignored so the write
    fails with EFBIG instead of killing the child."""
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@pytest.fixture(scope="module")
def recorded(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished replay run (two commits) of the bundled sample, shared by the tests that only read it."""
    where = tmp_path_factory.mktemp("recorded")
    proc = cli("replay", str(sample_repo), "--engine", "bm25", "--commits", "2", "--out", str(where / "run"),
               cwd=where)
    assert proc.returncode == 0, proc.stderr
    return where / "run"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- report --md / --html onto files it did not write (issue 39 item 3) ---------------------------------------
@pytest.mark.parametrize("option", ["--md", "--html"])
def test_report_onto_the_reported_runs_own_record_is_refused_even_with_force(recorded, tmp_path, option):
    before = snapshot(recorded)
    for force in ([], ["--force"]):
        proc = cli("report", str(recorded), option, str(recorded / "run.json"), *force, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "input of this command" in one_error_line(proc)
    assert snapshot(recorded) == before
    assert cli("report", str(recorded), "--json", cwd=tmp_path).returncode == 0  # still loads


@pytest.mark.parametrize("option", ["--md", "--html"])
def test_report_onto_a_case_file_or_an_unrelated_file_is_refused_and_force_replaces_it(recorded, tmp_path, option):
    cases = tmp_path / "cases.yaml"
    cases.write_text("cases:\n  - name: a\n    request: find it\n    expected: [a.py]\n")
    notes = tmp_path / "notes.md"
    notes.write_text("my own notes\n")
    for target in (cases, notes):
        before = target.read_bytes()
        proc = cli("report", str(recorded), option, str(target), cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "not written by ctxgauge" in one_error_line(proc) and "--force" in proc.stderr
        assert target.read_bytes() == before
    proc = cli("report", str(recorded), option, str(notes), "--force", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert GENERATOR_MARK in notes.read_text()


@pytest.mark.parametrize("option", ["--md", "--html"])
def test_an_earlier_report_is_replaced_without_force(recorded, tmp_path, option):
    target = tmp_path / "out" / "report.txt"
    assert cli("report", str(recorded), option, str(target), "--title", "Title-One", cwd=tmp_path).returncode == 0
    assert GENERATOR_MARK in target.read_text()
    proc = cli("report", str(recorded), option, str(target), "--title", "Title-Two", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Title-Two" in target.read_text() and "Title-One" not in target.read_text()


def test_report_never_writes_through_a_symlink_found_at_its_target(recorded, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "report.md"
    link.symlink_to(victim)
    for force in ([], ["--force"]):
        proc = cli("report", str(recorded), "--md", str(link), *force, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "symbolic link" in one_error_line(proc)
    assert victim.read_text() == "keep me\n" and link.is_symlink()


def test_report_into_a_reported_run_directory_is_refused(recorded, tmp_path):
    before = snapshot(recorded)
    proc = cli("report", str(recorded), "--html", str(recorded / "report.html"), "--force", cwd=tmp_path)
    assert proc.returncode == 2 and "input of this command" in one_error_line(proc)
    assert snapshot(recorded) == before


# -- environment errors before a run is recorded: one line, exit 2, nothing left behind ----------------------
def test_report_md_on_a_read_only_file_system(recorded, tmp_path, ro_dir):
    proc = cli("report", str(recorded), "--md", str(ro_dir / "r.md"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "read-only file system" in one_error_line(proc) and "r.md" in proc.stderr
    assert list(ro_dir.iterdir()) == []


def test_report_html_on_a_full_disk(recorded, tmp_path, full_dir):
    proc = cli("report", str(recorded), "--html", str(full_dir / "r.html"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "no space left on device" in one_error_line(proc) and "r.html" in proc.stderr
    assert sorted(p.name for p in full_dir.iterdir()) == ["filler"]


def test_report_html_onto_a_directory(recorded, tmp_path):
    (tmp_path / "r.html").mkdir()
    proc = cli("report", str(recorded), "--html", str(tmp_path / "r.html"), cwd=tmp_path)
    assert proc.returncode == 2 and "is a directory" in one_error_line(proc)
    assert list((tmp_path / "r.html").iterdir()) == []


def test_report_md_over_the_file_size_limit(recorded, tmp_path):
    proc = cli("report", str(recorded), "--md", str(tmp_path / "r.md"), cwd=tmp_path, preexec=fsize_limit())
    assert proc.returncode == 2
    assert "file too large" in one_error_line(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_export_out_on_a_read_only_file_system(recorded, tmp_path, ro_dir):
    proc = cli("export", str(recorded.parent), "--out", str(ro_dir / "pub"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "read-only file system" in one_error_line(proc) and "pub" in proc.stderr
    assert list(ro_dir.iterdir()) == []


def test_export_out_on_a_full_disk(recorded, tmp_path, full_dir):
    proc = cli("export", str(recorded.parent), "--out", str(full_dir / "pub"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "no space left on device" in one_error_line(proc)
    assert sorted(p.name for p in full_dir.iterdir()) == ["filler"]


def test_keygen_on_a_read_only_file_system(tmp_path, ro_dir):
    proc = cli("keygen", str(ro_dir / "key"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "read-only file system" in one_error_line(proc)
    assert list(ro_dir.iterdir()) == []


def test_keygen_on_a_full_disk(tmp_path, full_dir):
    proc = cli("keygen", str(full_dir / "key"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "no space left on device" in one_error_line(proc)
    assert sorted(p.name for p in full_dir.iterdir()) == ["filler"]


def test_query_index_dir_on_a_read_only_file_system(sample_repo, tmp_path, ro_dir):
    proc = cli("query", str(sample_repo), "add a book", "--engine", "bm25", "--index-dir", str(ro_dir / "idx"),
               cwd=tmp_path)
    assert proc.returncode == 2
    assert "read-only file system" in one_error_line(proc)
    assert list(ro_dir.iterdir()) == []


def test_query_index_dir_on_a_full_disk(sample_repo, tmp_path, full_dir):
    proc = cli("query", str(sample_repo), "add a book", "--engine", "bm25", "--index-dir", str(full_dir / "idx"),
               cwd=tmp_path)
    assert proc.returncode == 2
    assert "no space left on device" in one_error_line(proc)


# -- environment errors after a run is recorded: exit 6, run `error`, the --resume command --------------------
def resume_args(line: str) -> list[str]:
    """The arguments of the `ctxgauge ...` command a one-line error ends with."""
    command = line.split("continue it with: ", 1)[1]
    args = shlex.split(command)
    assert args[0] == "ctxgauge" and "--resume" in args
    return args[1:]


def test_replay_trec_on_a_read_only_file_system_leaves_a_resumable_run(sample_repo, tmp_path, ro_dir):
    run = tmp_path / "run"
    args = ["replay", str(sample_repo), "--engine", "bm25", "--commits", "2", "--trec", str(ro_dir / "trec"),
            "--out", str(run)]
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 6, proc.stderr
    line = one_error_line(proc)
    assert f"read-only file system: {ro_dir / 'trec'}" in line
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "error" and record["error"] == f"read-only file system: {ro_dir / 'trec'}"
    subprocess.run(["mount", "-o", "remount,rw", str(ro_dir)], check=True)
    again = cli(*resume_args(line), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads((run / "run.json").read_text())["status"] == "success"
    assert sorted(p.name for p in (ro_dir / "trec").iterdir()) == ["qrels.txt", "run.trec"]


def test_replay_trec_onto_a_file_names_the_default_run_folder_in_the_resume_command(sample_repo, tmp_path):
    (tmp_path / "trec").write_text("a file where a folder belongs\n")
    proc = cli("replay", str(sample_repo), "--engine", "bm25", "--commits", "2", "--trec", "trec", cwd=tmp_path)
    assert proc.returncode == 6, proc.stderr
    args = resume_args(one_error_line(proc))
    run = tmp_path / args[args.index("--out") + 1]
    assert json.loads((run / "run.json").read_text())["status"] == "error"


def test_determinism_fingerprint_dir_on_a_read_only_file_system(sample_repo, tmp_path, ro_dir):
    proc = cli("determinism", str(sample_repo), "--engine", "bm25", "--fingerprint-dir", str(ro_dir / "fp"),
               "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert proc.returncode == 6, proc.stderr
    line = one_error_line(proc)
    assert "read-only file system" in line and "--resume" in line
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "error"


def test_replay_repos_summary_json_that_cannot_be_written(sample_repo, tmp_path):
    (tmp_path / "repos.txt").write_text(f"{sample_repo} - 2 lab\n")
    args = ["replay", "--repos", "repos.txt", "--engine", "bm25", "--out", "many"]
    assert cli(*args, cwd=tmp_path).returncode == 0
    (tmp_path / "many" / "summary.json").unlink()
    (tmp_path / "many" / "summary.json").mkdir()  # a wrong-type target
    proc = cli(*args, "--resume", cwd=tmp_path)
    assert proc.returncode == 6, proc.stderr
    line = one_error_line(proc)
    assert "is a directory" in line and "summary.json" in line
    (tmp_path / "many" / "summary.json").rmdir()
    again = cli(*resume_args(line), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "many" / "summary.json").read_text())["repositories"]


# -- F18: long data-derived names ------------------------------------------------------------------------------
def test_a_command_engine_with_a_long_command_gets_a_bounded_fingerprint_name(sample_repo, tmp_path, script_engine):
    spec = script_engine("--pad=" + "p" * 220)
    assert len(spec) > 250
    proc = cli("determinism", str(sample_repo), "--engine", spec, "--out", str(tmp_path / "run"),
               "--fingerprint-dir", str(tmp_path / "fp"), cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    [name] = [p.name for p in (tmp_path / "fp").iterdir()]
    stem = name[: -len(".fingerprint.json")]
    assert len(stem.encode()) == MAX_NAME_BYTES and stem[-13] == "-"
    assert (tmp_path / "run" / "fingerprints" / name).is_file()


# -- F16: report opening a units.jsonl that is not a file ---------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_report_refuses_a_units_file_that_is_not_a_regular_file(recorded, tmp_path, kind):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    (run / "units.jsonl").unlink()
    if kind == "fifo":
        os.mkfifo(run / "units.jsonl")
    else:
        (run / "units.jsonl").symlink_to("/dev/zero")
    proc = cli("report", str(run), cwd=tmp_path, timeout=5)
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc)
    assert "units.jsonl" in line and ("not a regular file" in line or "symbolic link" in line)
