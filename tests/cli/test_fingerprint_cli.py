"""`ctxgauge compare`, `sign`, `verify`, `keygen`: one exit code per verdict, none shared with a crash."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxgauge.cli import app
from ctxgauge.cli.fingerprint import CRASH_EXIT
from ctxgauge.fingerprints import CorpusRef, Fingerprint, SystemIdentity, write_fingerprint

INTEROP = (Path(__file__).resolve().parents[2] / "../shared/interop/contextbenchmark").resolve()
runner = CliRunner()


def _fp(**over: object) -> Fingerprint:
    fields: dict[str, object] = dict(
        format=2, benchmark_version="0.1.0", adapter="bm25", system=SystemIdentity("sha256:abc", "content-hash"),
        corpus=CorpusRef("shelf", "c0ffee"), k=10, env={"os": "linux 6.8", "arch": "x64"},
        artifact_hash="art1", query_hashes={"q1": "aaa", "q2": "bbb"},
    )
    fields.update(over)
    return Fingerprint(**fields)  # type: ignore[arg-type]


OTHER_MACHINE = {"os": "darwin 23.4.0", "arch": "arm64"}


def _pair(tmp_path: Path, **b_over: object) -> tuple[str, str]:
    a = write_fingerprint(_fp(), tmp_path / "a.fingerprint.json")
    b = write_fingerprint(_fp(env=OTHER_MACHINE, **b_over), tmp_path / "b.fingerprint.json")
    return str(a), str(b)


@pytest.mark.parametrize("b_over, verdict, code", [
    ({}, "PASS", 0),
    ({"query_hashes": {"q1": "aaa", "q2": "zzz"}}, "FAIL", 1),
    ({"artifact_hash": "art2"}, "FAIL", 1),
    ({"system": None, "artifact_hash": "art2"}, "INCONCLUSIVE", 3),
    ({"system": None}, "PASS (UNVERIFIED)", 0),
    ({"query_hashes": {"q1": "aaa"}}, "INCONCLUSIVE", 3),
    ({"k": 5}, "NOT COMPARABLE", 4),
    ({"corpus": CorpusRef("shelf", "beef")}, "NOT COMPARABLE", 4),
])
def test_each_verdict_has_its_exit_code(tmp_path: Path, b_over: dict, verdict: str, code: int) -> None:
    a, b = _pair(tmp_path, **b_over)
    for first, second in ((a, b), (b, a)):  # symmetric
        result = runner.invoke(app, ["compare", first, second, "--json"])
        assert result.exit_code == code, result.output
        out = json.loads(result.stdout)
        assert (out["verdict"], out["exitCode"]) == (verdict, code)
    text = runner.invoke(app, ["compare", a, b])
    assert text.stdout.startswith(verdict)


def test_a_file_compared_with_itself_or_its_copy_is_refused(tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    assert runner.invoke(app, ["compare", a, a]).exit_code == 5
    copy = tmp_path / "copy.json"
    shutil.copyfile(a, copy)
    result = runner.invoke(app, ["compare", a, str(copy)])
    assert result.exit_code == 5 and "REFUSED" in result.stdout and "byte-identical" in result.stdout


def test_json_lists_every_query_of_either_file(tmp_path: Path) -> None:
    a, b = _pair(tmp_path, query_hashes={"q1": "aaa", "q2": "zzz", "q3": "ccc"})
    out = json.loads(runner.invoke(app, ["compare", a, b, "--json"]).stdout)
    assert [(q["query"], q["status"]) for q in out["queries"]] == [("q1", "match"), ("q2", "differ"),
                                                                   ("q3", "only in B")]
    assert set(out) == {"verdict", "exitCode", "verified", "reasons", "blockers", "unknowns", "warnings",
                        "artifactMatch", "queries"}


def test_a_crash_exits_70_never_1_which_is_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxgauge.fingerprints

    def broken(a: object, b: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(ctxgauge.fingerprints, "compare", broken)
    # The crash log goes where a command's outer temporary directory is: here the test's own, so `make test`
    # leaves no log in the machine's temporary directory.
    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setattr("ctxgauge.cli._scratch._outer", str(logs))
    a, b = _pair(tmp_path)
    result = runner.invoke(app, ["compare", a, b])
    assert result.exit_code == CRASH_EXIT == 70
    assert "internal error: RuntimeError: bug" in result.stderr
    assert [p.name.startswith("ctxgauge-crash-") for p in logs.iterdir()] == [True]


def _ctxgauge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True)


def test_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for args in (["compare", a, str(tmp_path / "missing.json")], ["compare", a, str(bad)], ["compare", a]):
        done = _ctxgauge(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_real_process_exit_codes_match_the_verdicts(tmp_path: Path) -> None:
    a, b = _pair(tmp_path, k=5)
    assert _ctxgauge("compare", a, b).returncode == 4


def test_keygen_sign_verify_round_trip(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    made = runner.invoke(app, ["keygen", str(keys), "--json"])
    assert made.exit_code == 0, made.output
    paths = json.loads(made.stdout)
    private, public = Path(paths["private_key"]), Path(paths["public_key"])
    assert private.stat().st_mode & 0o777 == 0o600 and public.is_file()
    again = _ctxgauge("keygen", str(keys))
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr

    fp, _ = _pair(tmp_path)
    signed = runner.invoke(app, ["sign", fp, "--key", str(private), "--json"])
    assert signed.exit_code == 0, signed.output
    assert Path(json.loads(signed.stdout)["signature"]) == Path(fp + ".sig")

    ok = runner.invoke(app, ["verify", fp, "--trusted-key", str(public), "--json"])
    assert ok.exit_code == 0
    assert json.loads(ok.stdout)["valid"] is True and json.loads(ok.stdout)["trusted"] is True
    assert "VALID" in runner.invoke(app, ["verify", fp]).stdout

    runner.invoke(app, ["keygen", str(keys), "--name", "mallory"])
    wrong_key = runner.invoke(app, ["verify", fp, "--trusted-key", str(keys / "mallory.pub.pem")])
    assert wrong_key.exit_code == 1 and "not the trusted key" in wrong_key.stderr

    Path(fp).write_text(Path(fp).read_text().replace("art1", "art9"))
    tampered = runner.invoke(app, ["verify", fp, "--json"])
    assert tampered.exit_code == 1
    assert "modified after signing" in json.loads(tampered.stdout)["reason"]


def test_verify_without_a_signature_file_is_a_usage_error(tmp_path: Path) -> None:
    fp, _ = _pair(tmp_path)
    done = _ctxgauge("verify", fp)
    assert done.returncode == 2 and "cannot read signature file" in done.stderr


@pytest.fixture
def interop() -> Path:
    if not INTEROP.is_dir():
        pytest.skip(f"interop data not present: {INTEROP}")
    return INTEROP


def test_contextbenchmark_published_fingerprints(interop: Path) -> None:
    linux, win = interop / "bm25.micro-app.linux-x64.fingerprint.json", interop / "bm25.micro-app.win32-x64.fingerprint.json"
    done = runner.invoke(app, ["compare", str(linux), str(win), "--json"])
    assert done.exit_code == 0 and json.loads(done.stdout)["verdict"] == "PASS"
    other = runner.invoke(app, ["compare", str(win), str(interop / "spiderbrain.micro-app.win32-x64.fingerprint.json")])
    assert other.exit_code == 4 and other.stdout.startswith("NOT COMPARABLE")


def test_dataclass_copy_of_a_read_file_is_not_refused_as_the_same_file(tmp_path: Path) -> None:
    # compare() refuses by path or bytes; a modified copy written elsewhere is a real comparison.
    a, _ = _pair(tmp_path)
    b = write_fingerprint(dataclasses.replace(_fp(), env=OTHER_MACHINE), tmp_path / "c.json")
    assert runner.invoke(app, ["compare", a, str(b)]).exit_code == 0


def test_a_format_1_file_compares_as_unverified(interop: Path) -> None:
    v1 = Path(__file__).resolve().parents[1] / "fingerprints" / "data" / "contextbenchmark-v1.bm25.fingerprint.json"
    done = runner.invoke(app, ["compare", str(v1), str(interop / "bm25.micro-app.linux-x64.fingerprint.json"), "--json"])
    out = json.loads(done.stdout)
    assert (done.exit_code, out["verdict"], out["verified"]) == (0, "PASS (UNVERIFIED)", False)
    assert out["unknowns"] == ["corpus content", "benchmark version", "system identity"]
