"""The qa run record as Corograph's records carry it: exit codes for unfinished runs, verdicts for every
question, per-unit transcripts, human adjudication, and a rescore that finds its battery from anywhere."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from qa_helpers import ENV, oracle  # type: ignore[import-not-found]
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
    assert again["reproduced"]
    # A battery that moved is found with --battery; a changed one is refused.
    moved = tmp_path / "moved"
    shutil.move(str(mini_battery.path), moved)
    with pytest.raises(Exception, match="cannot find the run's battery"):
        rescore_run(mini_battery.path.parent / "runs/one", judge_base_url=openai_server.base_url, env=ENV)
    assert rescore_run(mini_battery.path.parent / "runs/one", battery=moved, judge_base_url=openai_server.base_url,
                       cache_dir=tmp_path / "cache", env=ENV)["reproduced"]
