"""The qa run record as Corograph's records carry it: exit codes for unfinished runs, verdicts for every
question, per-unit transcripts, human adjudication, and a rescore that finds its battery from anywhere."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from qa_helpers import ENV, MEMOS_COMMIT, corograph_folder, gold_harness, memos_repo, oracle, published  # type: ignore[import-not-found]
from ctxgauge.records import read_run
from ctxgauge.suites.qa import QAConfig, rescore_run, run_qa

RIGHT = {"q01", "q02", "q03", "q04", "q05", "q06", "q07"}


def config(source, server, tmp_path, **kw) -> QAConfig:
    base = dict(source=str(source), arms=["none"], model="gpt-4o-mini", judge="gpt-4o-mini",
                base_url=server.base_url, cache_dir=tmp_path / "cache", out=tmp_path / "run", retries=0,
                backoff=0.0, timeout=5.0)
    base.update(kw)
    return QAConfig(**base)


def test_rescore_finds_its_battery_from_any_working_directory(mini_battery, openai_server, tmp_path, monkeypatch):
    openai_server.route(oracle(RIGHT))
    monkeypatch.chdir(mini_battery.path.parent)
    run_qa(config("battery", openai_server, tmp_path, out="runs/one"), env=ENV)  # a relative battery path
    assert read_run(mini_battery.path.parent / "runs/one").context["source_from_run"] == "../../battery"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    again = rescore_run(mini_battery.path.parent / "runs/one", judge_base_url=openai_server.base_url,
                        cache_dir=tmp_path / "cache", env=ENV)
    assert again.reproduced
    # A battery that moved is found with --battery; a changed one is refused.
    moved = tmp_path / "moved"
    shutil.move(str(mini_battery.path), moved)
    with pytest.raises(Exception, match="cannot find the run's battery"):
        rescore_run(mini_battery.path.parent / "runs/one", judge_base_url=openai_server.base_url, env=ENV)
    assert rescore_run(mini_battery.path.parent / "runs/one", battery=moved, judge_base_url=openai_server.base_url,
                       cache_dir=tmp_path / "cache", env=ENV).reproduced


def cli(*args: str, cwd=None):
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **ENV}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, env=env, cwd=cwd)


def tier1_share(run_dir, arm_slug: str) -> float:
    got = json.loads((run_dir / "arms" / arm_slug / "rep01" / "verdicts.json").read_text())["verdicts"]
    return sum(v["result"] == "pass" and v["tier"] == 1 for v in got) / len(got)


def only_arm_slug(run_dir) -> str:
    (slug,) = [p.name for p in (run_dir / "arms").iterdir()]
    return slug


@pytest.mark.parametrize("layout", ["ctxgauge", "corograph"])
def test_a_command_arm_answering_with_the_gold_scores_high_on_tier1_alone(layout, mini_battery, tmp_path,
                                                                          repo_builder):
    if layout == "ctxgauge":
        bdir, extra = mini_battery.path, []
    else:
        folder, repo, _ = corograph_folder(tmp_path / "pub", repo_builder)
        bdir, extra = folder / "batteries" / "mini-hard", ["--repo", str(repo)]
    for shift, out in ((0, "gold"), (1, "other")):
        arm = gold_harness(tmp_path, bdir, shift=shift)
        r = cli("qa", "run", str(bdir), "--arm", arm, "--out", str(tmp_path / out), "--json", *extra)
        assert r.returncode == 0, r.stderr
        share = tier1_share(tmp_path / out, only_arm_slug(tmp_path / out))
        # No model and no judge: tier 1 alone decides. The gold passes; another question's gold does not.
        assert (share >= 0.9) if shift == 0 else (share <= 0.2)
    assert tier1_share(tmp_path / "gold", only_arm_slug(tmp_path / "gold")) == 1.0


def test_published_memos_battery_with_a_gold_command_arm(tmp_path):
    bdir = published() / "batteries" / "memos-hard"
    repo = memos_repo()
    if repo is None:
        pytest.skip(f"no local clone of usememos/memos at {MEMOS_COMMIT[:8]} (set CTXGAUGE_MEMOS_REPO)")
    for shift, out in ((0, "gold"), (3, "other")):
        r = cli("qa", "run", str(bdir), "--repo", str(repo), "--arm", gold_harness(tmp_path, bdir, shift=shift),
                "--out", str(tmp_path / out), "--json")
        assert r.returncode == 0, r.stderr
        share = tier1_share(tmp_path / out, only_arm_slug(tmp_path / out))
        assert share == 18 / 20 if shift == 0 else share <= 0.2  # h04 and h10 are ruling text


def test_an_unfinished_run_exits_6_and_resume_fills_it(mini_battery, tmp_path):
    flag = tmp_path / "broken"
    flag.write_text("")
    arm = gold_harness(tmp_path, mini_battery.path, fail_flag=flag, failing=("q03", "q07"))
    run_dir = tmp_path / "run"
    r = cli("qa", "run", str(mini_battery.path), "--arm", arm, "--out", str(run_dir), "--json")
    assert r.returncode == 6, r.stderr
    data = json.loads(r.stdout)
    assert data["finished"] is False and data["exit_code"] == 6
    slug = only_arm_slug(run_dir)
    assert data["unfinished"]["gaps"] == [f"{slug}/rep01/q03", f"{slug}/rep01/q07"]
    assert data["unfinished"]["did_not_finish"] == [f"{arm} rep 1"]
    lines = [x for x in r.stderr.splitlines() if "unfinished" in x]
    assert len(lines) == 1 and "--resume" in lines[0]
    assert read_run(run_dir).status == "error"
    # Every question has a verdict, the gaps included; the assembled score is null (not finished).
    v = json.loads((run_dir / "arms" / slug / "rep01" / "verdicts.json").read_text())
    assert [x["qid"] for x in v["verdicts"]] == [f"q{i:02d}" for i in range(1, 11)]
    assert [x["result"] for x in v["verdicts"]].count("infra") == 2 and v["score"]["total"] is None
    assert "exited with 3" in v["verdicts"][2]["reason"]
    text = cli("qa", "run", str(mini_battery.path), "--arm", arm, "--out", str(tmp_path / "run2"))
    # The one outcome rule's line (records.outcome), as every suite command prints it, and each gap's reason.
    assert text.returncode == 6 and "unfinished: 2 of 10 unit(s) failed; run again with --resume" in text.stderr
    assert f"failed {slug}/rep01/q03: " in text.stderr
    flag.unlink()
    r = cli("qa", "run", str(mini_battery.path), "--arm", arm, "--out", str(run_dir), "--resume", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["finished"] and data["unfinished"] is None and data["summary"][arm]["accuracy"] == 1.0
    assert read_run(run_dir).status == "success"


def _units_by_arm(run_dir) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for line in (run_dir / "units.jsonl").read_text().splitlines():
        u = json.loads(line)
        out.setdefault(u["arm"], []).append(u)  # the last line of a unit id wins (a resumed unit)
    return {arm: list({u["id"]: u for u in us}.values()) for arm, us in out.items()}


def test_a_context_engine_failing_identity_fails_its_arm_the_others_measure_and_resume_retries(
        mini_battery, openai_server, tmp_path, script_engine):
    # A real command engine that crashes on its identity request, beside bm25 and the model alone.
    openai_server.route(oracle(RIGHT))
    broken = f"context:{script_engine('--exit-on=identity', timeout=10)}@3"
    run_dir = tmp_path / "run"
    args = ("qa", "run", str(mini_battery.path), "--arm", broken, "--arm", "context:bm25@3", "--arm", "none",
            "--model", "gpt-4o-mini", "--base-url", openai_server.base_url, "--retries", "0", "--timeout", "5",
            "--cache-dir", str(tmp_path / "cache"), "--out", str(run_dir), "--json")
    r = cli(*args)
    assert r.returncode == 6, r.stderr  # some units measured, some failed: the one outcome rule
    assert json.loads(r.stdout)["exit_code"] == 6 and read_run(run_dir).status == "error"
    units = _units_by_arm(run_dir)
    (arm,) = [a for a in units if "script-engine" in a]
    assert len(units[arm]) == 10 and {u["status"] for u in units[arm]} == {"failed"}
    reason = units[arm][0]["reason"]
    assert "identity: the process exited with status 4 before answering" in reason and "\n" not in reason
    assert all(u["status"] == "ok" for a in ("context:bm25@3", "none") for u in units[a])
    script_engine.mend()  # the user fixes the engine; the same command resumes and retries its units
    r = cli(*args, "--resume")
    assert r.returncode == 0, r.stderr
    units = _units_by_arm(run_dir)
    assert {u["status"] for us in units.values() for u in us} == {"ok"} and len(units[arm]) == 10
    (row,) = [row for row in read_run(run_dir).results["arms"] if row["arm"] == arm]
    assert row["status"] == "measured" and row["engine_identity"]["id"] == "script-engine-1"


def test_a_python_engine_raising_in_identity_is_a_failed_arm_not_a_crash(mini_battery, tmp_path, monkeypatch):
    from ctxgauge.engines import get_engine
    import ctxgauge.suites.qa.arms._arms as _arms
    def crashing(spec):
        engine = get_engine(spec)
        if spec == "bm25":
            def identity():
                raise RuntimeError("identity table missing")
            engine.identity = identity
        return engine

    monkeypatch.setattr(_arms, "get_engine", crashing)
    res = run_qa(QAConfig(source=str(mini_battery.path), arms=["context:bm25@3", "context:grep@3"],
                          out=tmp_path / "run"), env=ENV)
    by_arm = {row.arm: row for row in res.results.arms}
    assert by_arm["context:bm25@3"].status == "failed"
    assert "bm25 identity failed: RuntimeError: identity table missing" in by_arm["context:bm25@3"].reason
    assert by_arm["context:grep@3"].status == "retrieval-only"


def test_a_refused_connection_measures_nothing_and_says_so(mini_battery, tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on: every request is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = cli("qa", "run", str(mini_battery.path), "--arm", "none", "--model", "gpt-4o-mini", "--base-url",
            f"http://127.0.0.1:{port}/v1", "--retries", "0", "--timeout", "2", "--no-cache", "--out",
            str(tmp_path / "run"), "--json")
    assert r.returncode == 7, r.stderr
    data = json.loads(r.stdout)
    assert data["unfinished"]["nothing_measured"] and len(data["unfinished"]["gaps"]) == 10


def test_transcripts_and_token_source_per_unit(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    arm = gold_harness(tmp_path, mini_battery.path)
    run_qa(config(mini_battery.path, openai_server, tmp_path, arms=["none", arm], judge=None), env=ENV)
    run_dir = tmp_path / "run"
    lines = [json.loads(x) for x in (run_dir / "arms/none/rep01/transcript/q01.jsonl").read_text().splitlines()]
    assert [x["event"] for x in lines] == ["user", "assistant", "turn_end"]
    assert "compute_1" in lines[0]["text"] and lines[1]["text"] == "It returns value1x."
    assert lines[2]["usage"] == {"tokens_input": 100, "tokens_output": 20, "tokens_cache_read": 0,
                                 "tokens_cache_write": 0}
    slug = [p.name for p in (run_dir / "arms").iterdir() if p.name != "none"][0]
    cmd = [json.loads(x) for x in (run_dir / f"arms/{slug}/rep01/transcript/q02.jsonl").read_text().splitlines()]
    assert [x["event"] for x in cmd] == ["user", "assistant", "tool_result", "tool_result", "turn_end"]
    assert cmd[2] == {"event": "tool_result", "name": "grep", "status": "reported", "count": 2}
    none_rec = json.loads((run_dir / "arms/none/rep01/record.json").read_text())
    cmd_rec = json.loads((run_dir / f"arms/{slug}/rep01/record.json").read_text())
    assert none_rec["economics"]["token_source"] == "provider" and cmd_rec["economics"]["token_source"] == "harness"
    assert cmd_rec["economics"]["tokens_input"] == 10 * 11 and len(cmd_rec["economics"]["per_question"]) == 10
    ident = none_rec["identity"]
    assert ident["family"] == "none" and ident["exam"] == "zero-shot" and ident["denominator"] == 10
    assert ident["commit"] == mini_battery.commit and ident["scorer"] == "ctxgauge-qa-2"
    assert ident["run_key"].endswith("|none|gpt-4o-mini|None|ctxgauge-qa-2|pass-fail:qa-prompts-1|rep01")
    assert none_rec["scoring"]["scorer"] == ["ctxgauge-qa-2"]
    # Each repetition is a run of its own: its provenance (lanes) and the SHA-256 of its every other file.
    from ctxgauge.records import file_sha256

    rep_dir = run_dir / "arms/none/rep01"
    assert none_rec["provenance"]["lanes"]["answer"] == {"provider": "openai", "model": "gpt-4o-mini"}
    assert set(none_rec["files"]) == {"verdicts.json", *(f"answers/q{i:02d}.md" for i in range(1, 11)),
                                      *(f"transcript/q{i:02d}.jsonl" for i in range(1, 11))}
    assert all(file_sha256(rep_dir / n) == d for n, d in none_rec["files"].items())
    assert none_rec["transcript"]["lane"] == "none" and none_rec["transcript"]["units"]["q01"]["events"] == 3
    assert cmd_rec["economics"]["tool_calls"]["by_class"] == {"index": 10, "read": 0, "other": 20}


def test_an_adjudicator_name_holding_markup_is_printed_as_typed(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    run_qa(config(mini_battery.path, openai_server, tmp_path), env=ENV)
    r = cli("qa", "adjudicate", str(tmp_path / "run"), "q08", "--verdict", "pass", "--why", "ok",
            "--by", "[bold]ada a[/b]")
    assert r.returncode == 0 and "MarkupError" not in r.stderr, r.stderr
    assert "by [bold]ada a[/b] at" in r.stdout, r.stdout


def test_a_human_adjudication_outranks_the_judge(mini_battery, openai_server, tmp_path):
    from ctxgauge.records import verify_files

    openai_server.route(oracle(RIGHT))
    run_qa(config(mini_battery.path, openai_server, tmp_path), env=ENV)
    run_dir = tmp_path / "run"
    r = cli("qa", "adjudicate", str(run_dir), "q08", "--verdict", "pass", "--why", "Names the constant in other words.",
            "--by", "ada", "--json")
    assert r.returncode == 0, r.stderr
    (a,) = json.loads(r.stdout)["adjudications"]
    assert (a["unit"], a["verdict"], a["by"], a["judge_result"]) == ("none/rep01/q08", "pass", "ada", "fail")
    assert a["at"].endswith("Z")
    record = read_run(run_dir)
    assert record.results["summary"]["none"]["passed"] == 8
    assert record.results["summary"]["none"]["accuracy"] == pytest.approx(0.8)
    assert record.results["adjudications"] == [a]
    sub = json.loads((run_dir / "arms/none/rep01/record.json").read_text())
    assert sub["scoring"]["total"] == 8 and sub["scoring"]["adjudications"] == [a]
    assert sub["scoring"]["tier_census"] == {"tier1": 7, "tier2": 2, "human": 1}
    v = {x["qid"]: x for x in json.loads((run_dir / "arms/none/rep01/verdicts.json").read_text())["verdicts"]}
    assert v["q08"]["tier"] == "human" and v["q08"]["judge_verdict"]["result"] == "fail"
    # The record stays a valid hash chain (the adjudications file is hashed), and the judge's verdict is kept.
    assert set(verify_files(run_dir, record).values()) == {"ok"} and "adjudications.jsonl" in record.files
    assert json.loads([x for x in (run_dir / "units.jsonl").read_text().splitlines()
                       if '"none/rep01/q08"' in x][-1])["verdict"]["result"] == "fail"
    # A rescore re-judges, yet the human's verdict still outranks it.
    again = rescore_run(run_dir, judge_base_url=openai_server.base_url, cache_dir=tmp_path / "cache", env=ENV)
    assert again.reproduced and again.results.summary["none"].passed == 8
    # Several arms answered? Then the arm must be named.
    bad = cli("qa", "adjudicate", str(run_dir), "q99", "--verdict", "pass", "--why", "x")
    assert bad.returncode == 2 and "no question 'q99'" in bad.stderr


def test_export_publishes_adoption_rates_and_run_rows_and_refuses_mixed_scorers(mini_battery, openai_server,
                                                                                 tmp_path):
    from ctxgauge.errors import UserError
    from ctxgauge.export import export_runs

    openai_server.route(oracle(RIGHT))
    arm = gold_harness(tmp_path, mini_battery.path)
    runs = tmp_path / "runs"
    run_qa(config(mini_battery.path, openai_server, tmp_path, arms=["none", arm], out=runs / "v2"), env=ENV)
    out = tmp_path / "export"
    export_runs(runs, out)
    adoption = json.loads((out / "adoption.json").read_text())
    assert [(a["arm"], a["kind"], a["question_runs"], a["adopted"], a["index_calls"]) for a in adoption] == [
        (arm, "command", 10, 10, 10)]  # the harness's `search` calls; its `grep` calls are not the index
    assert adoption[0]["protocol"] == "zero-shot" and adoption[0]["judge"] == "gpt-4o-mini"
    rates = json.loads((out / "rate-tables.json").read_text())
    assert list(rates) == ["ctxgauge-list-2025-06"] and rates["ctxgauge-list-2025-06"]["runs"] == ["v2"]
    assert rates["ctxgauge-list-2025-06"]["table"]["models"]["gpt-4o-mini"]["input"] == 0.15
    (row,) = json.loads((out / "runs.json").read_text())
    assert row["scorer"] == "ctxgauge-qa-2" and row["protocol"] == "zero-shot" and len(row["dataset_hash"]) == 12
    none = next(a for a in row["attempts"] if a["arm"] == "none")
    assert (none["score"], none["denominator"], none["tokens_input"], none["token_source"]) == (7, 10, 1000, "provider")
    assert none["cost_basis"] == "estimated:ctxgauge-list-2025-06"
    cmd = next(a for a in row["attempts"] if a["arm"] == arm)
    assert (cmd["score"], cmd["token_source"], cmd["cost_usd"]) == (10, "harness", pytest.approx(0.01))
    # A run judged under Corograph's published scorer beside it: the export refuses to mix them.
    run_qa(config(mini_battery.path, openai_server, tmp_path, out=runs / "v1", scorer="ctxgauge-qa-1"), env=ENV)
    with pytest.raises(UserError, match="mixed scorer versions \\(ctxgauge-qa-1: v1; ctxgauge-qa-2: v2\\)"):
        export_runs(runs, tmp_path / "export2")


def test_each_arm_is_compared_with_a_named_baseline_arm(mini_battery, openai_server, tmp_path):
    from ctxgauge.metrics import cohens_d, paired_comparison

    openai_server.route(oracle(RIGHT))  # the model passes 7 of 10
    arm = gold_harness(tmp_path, mini_battery.path)  # the harness passes all 10
    result = run_qa(config(mini_battery.path, openai_server, tmp_path, arms=["none", arm], baseline_arm=arm), env=ENV)
    cmp = result.to_dict()["comparisons"]
    assert cmp["baseline"] == arm and list(cmp["arms"]) == ["none"]
    c = cmp["arms"]["none"]
    model = [100.0 if f"q{i:02d}" in RIGHT else 0.0 for i in range(1, 11)]
    expected = paired_comparison(model, [100.0] * 10, 0, n_resamples=2000)
    assert (c["n"], c["mean_diff"], c["ci_low"], c["ci_high"]) == (10, -30.0, expected.ci_low, expected.ci_high)
    assert c["cohens_d"] == pytest.approx(cohens_d(model, [100.0] * 10)) and (c["wins"], c["losses"]) == (0, 3)
    with pytest.raises(Exception, match="--baseline-arm 'tool:bm25' is not one of the --arm"):
        run_qa(config(mini_battery.path, openai_server, tmp_path, out=tmp_path / "x", baseline_arm="tool:bm25"),
               env=ENV)
    # Default: the model alone (`none`) is the baseline.
    again = run_qa(config(mini_battery.path, openai_server, tmp_path, arms=["none", arm], out=tmp_path / "r2"),
                   env=ENV)
    assert again.results.comparisons.baseline == "none" and again.results.comparisons.arms[arm].mean_diff == 30.0
