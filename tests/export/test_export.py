"""`ctxgauge export`: the hash-chained tree, byte-for-byte regeneration, --check naming the changed file,
did-not-finish runs published as such, and the secret scan stopping everything before a write."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.export import IntegrityError, check_export, export_runs
from ctxgauge.records import SecretFound, file_sha256, read_run, verify_files


@pytest.fixture
def store(tmp_path, factory) -> Path:
    f = factory
    root = tmp_path / "runs"
    f.replay_run(root, "replay-a", [1, 2, None], [2, 2, 1])
    f.determinism_run(root, "det-a", {"bm25": {"level": 3, "drift": {"prose": 0.0}}})
    f.qa_run(root, "qa/a", {"none": ["pass", "fail"]}, tokens={"none": 10})
    f.unfinished_run(root, "replay-crashed")
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _flip(path: Path, at: int = 10) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_tree_layout_and_hash_chain(store, tmp_path):
    out = tmp_path / "pub"
    result = export_runs(store, out, environ={})
    manifest = json.loads((out / "manifest.json").read_text())
    assert result.manifest_sha256 == file_sha256(out / "manifest.json")
    assert [r["path"] for r in manifest["runs"]] == ["runs/det-a", "runs/qa/a", "runs/replay-a", "runs/replay-crashed"]
    for entry in manifest["runs"]:
        assert entry["run_json_sha256"] == file_sha256(out / entry["path"] / "run.json")
        record = json.loads((out / entry["path"] / "run.json").read_text())
        for name, digest in (record["files"] or entry.get("files", {})).items():
            assert file_sha256(out / entry["path"] / name) == digest  # run.json (or manifest) -> every file
    for name, digest in manifest["derived"].items():
        assert file_sha256(out / name) == digest
    assert set(manifest["derived"]) == {"leaderboard.csv", "per-case.csv", "per-question.csv", "runs.json",
                                        "adoption.json", "rate-tables.json", "report.html", "report.md"}
    assert (out / "runs/det-a/fingerprints/bm25.fingerprint.json").is_file()
    assert (out / "runs/qa/a/arms/none/rep01/record.json").is_file()


def test_did_not_finish_is_published_as_such_and_never_in_a_mean(store, tmp_path):
    out = tmp_path / "pub"
    export_runs(store, out, environ={})
    manifest = json.loads((out / "manifest.json").read_text())
    crashed = next(r for r in manifest["runs"] if r["path"] == "runs/replay-crashed")
    assert crashed["published_as"] == "did-not-finish" and set(crashed["files"]) == {"units.jsonl"}
    assert manifest["counts"] == {"runs": 4, "did_not_finish": 1}
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    hit = next(r for r in rows if r["suite"] == "replay" and r["system"] == "bm25" and r["metric"] == "hit@1")
    assert (hit["runs"], hit["dnf"], hit["mean"]) == ("2", "1", f"{1 / 3:.6f}")  # the crashed unit's 1.0 is not in it
    assert "did not finish (started)" in (out / "report.html").read_text()


def test_an_unchanged_store_exports_byte_identical_trees(store, tmp_path):
    export_runs(store, tmp_path / "one", environ={})
    export_runs(store, tmp_path / "two", environ={})
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")
    check = check_export(store, tmp_path / "one", environ={})
    assert check.ok and check.compared == len(_tree(tmp_path / "one"))


def test_check_names_the_one_flipped_byte(store, tmp_path):
    out = tmp_path / "pub"
    export_runs(store, out, environ={})
    _flip(out / "runs/replay-a/units.jsonl")
    check = check_export(store, out, environ={})
    assert not check.ok and check.first == "runs/replay-a/units.jsonl"
    assert check.differences == ["runs/replay-a/units.jsonl: differs from a fresh export of the runs"]


def test_check_names_a_run_file_changed_in_the_store(store, tmp_path):
    out = tmp_path / "pub"
    export_runs(store, out, environ={})
    _flip(store / "det-a/fingerprints/bm25.fingerprint.json", at=2)
    check = check_export(store, out, environ={})
    assert not check.ok and check.first == "runs/det-a/fingerprints/bm25.fingerprint.json"
    assert "does not match" in check.differences[0]
    with pytest.raises(IntegrityError, match="runs/det-a/fingerprints/bm25.fingerprint.json"):
        export_runs(store, tmp_path / "again", environ={})
    assert verify_files(store / "det-a", read_run(store / "det-a"))[
        "fingerprints/bm25.fingerprint.json"] == "changed"


def test_check_reports_missing_and_extra_files(store, tmp_path):
    out = tmp_path / "pub"
    export_runs(store, out, environ={})
    (out / "per-case.csv").unlink()
    (out / "stray.txt").write_text("x")
    check = check_export(store, out, environ={})
    assert check.first == "per-case.csv"
    assert "stray.txt: in" in check.differences[1]


def test_a_secret_stops_the_export_before_any_write(store, tmp_path):
    answer = store / "qa/a/arms/none/rep01/answers/q01.md"
    answer.parent.mkdir()
    answer.write_text("The handler reads\nOPENAI_API_KEY=sk-proj-" + "Z" * 30 + "\n")
    # Hash it into the record, as a run whose model echoed the key would have.
    record = json.loads((store / "qa/a/run.json").read_text())
    record["files"]["arms/none/rep01/answers/q01.md"] = file_sha256(answer)
    (store / "qa/a/run.json").write_text(json.dumps(record))
    out = tmp_path / "pub"
    with pytest.raises(SecretFound, match=r"runs/qa/a/arms/none/rep01/answers/q01.md:2: OpenAI"):
        export_runs(store, out, environ={})
    assert not out.exists() and not list(tmp_path.glob(".pub*"))


def test_an_environment_token_in_a_run_stops_it(store, tmp_path):
    with pytest.raises(SecretFound, match="environment value of MY_SERVICE_TOKEN"):
        export_runs(store, tmp_path / "pub", environ={"MY_SERVICE_TOKEN": "replay-a"})  # a value the runs hold


def test_a_directory_that_is_not_an_export_is_never_replaced(store, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="not a ctxgauge export"):
        export_runs(store, out, environ={})
    export_runs(store, tmp_path / "pub", environ={})
    export_runs(store, tmp_path / "pub", environ={})  # a previous export is replaced
    assert (out / "notes.txt").read_text() == "keep me"


def test_exporting_again_never_deletes_a_file_someone_added(store, tmp_path):
    out = tmp_path / "pub"
    export_runs(store, out, environ={})
    (out / "README.md").write_text("our notes on these runs\n")
    (out / "runs" / "replay-a" / "comments.txt").write_text("a reviewer's comment\n")
    with pytest.raises(UserError, match=r"holds files the export did not write \(README.md, "
                                        r"runs/replay-a/comments.txt\)"):
        export_runs(store, out, environ={})
    assert (out / "README.md").read_text() == "our notes on these runs\n"
    assert (out / "runs" / "replay-a" / "comments.txt").is_file()
    assert check_export(store, out, environ={}).ok is False  # the tree still is the old export plus the files
    (out / "README.md").unlink()
    (out / "runs" / "replay-a" / "comments.txt").unlink()
    export_runs(store, out, environ={})  # only what the export wrote: replaced as before


def _cli(*args: str) -> subprocess.CompletedProcess:
    # Child environment without HOME-like secrets: the runs were written under a temporary directory.
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True)


def test_cli_export_then_check_exit_codes(store, tmp_path):
    out = tmp_path / "pub"
    r = _cli("export", str(store), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "exported 4 runs (1 did not finish" in r.stdout
    r = _cli("export", str(store), "--out", str(out), "--check")
    assert r.returncode == 0 and "ok" in r.stdout
    _flip(out / "runs/qa/a/units.jsonl")
    r = _cli("export", str(store), "--out", str(out), "--check")
    assert r.returncode == 1
    assert "runs/qa/a/units.jsonl" in r.stderr
    r = _cli("export", str(store), "--out", str(out), "--check", "--json")
    assert json.loads(r.stdout)["first"] == "runs/qa/a/units.jsonl"


def test_the_export_vocabulary_is_written_once():
    # dc65eaf wrote the manifest's name and kind twice (records/_export.py and report/_runs.py).
    import ast

    src = Path(__file__).resolve().parents[2] / "src" / "ctxgauge"
    for literal in ("ctxgauge.export", "manifest.json"):
        found = [p.relative_to(src).as_posix() for p in sorted(src.rglob("*.py"))
                 for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                 if isinstance(n, ast.Constant) and n.value == literal]
        assert found == ["records/_discover.py"], literal
