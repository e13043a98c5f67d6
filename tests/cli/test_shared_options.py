"""Options several commands share are defined once: every command's --out and --resume read the same."""

from __future__ import annotations

import re

import typer

from ctxgauge.cli import app

# `--out` names something else in these two: the export's own folder, and a JSON file of a rescore.
OTHER_MEANING = {"export": "the export's directory", "qa rescore": "a JSON file",
                 "runs contextbench": "a predictions file"}


def _commands(group, prefix: str = ""):
    for name in sorted(group.list_commands(None)):  # the root imports its commands' modules when listed
        cmd, full = group.get_command(None, name), f"{prefix}{name}"
        if hasattr(cmd, "commands"):  # a group (Typer may bring its own click: no isinstance)
            yield from _commands(cmd, full + " ")
        else:
            yield full, cmd


def _help(cmd, flag: str) -> str | None:
    for p in cmd.params:
        if flag in getattr(p, "opts", ()):
            return p.help
    return None


def test_every_out_and_resume_reads_the_same():
    outs, resumes = {}, {}
    for name, cmd in _commands(typer.main.get_command(app)):
        if (h := _help(cmd, "--out")) is not None and name not in OTHER_MEANING:
            # The default folder's prefix and what is recorded (run or demo) are the only words that differ.
            outs[name] = re.sub(r"ctxgauge-runs/[a-z]+-", "ctxgauge-runs/NAME-", h).replace("demo", "run")
        if (h := _help(cmd, "--resume")) is not None:
            resumes[name] = h.replace("demo", "run")
    assert {"replay", "cases", "determinism", "demo", "qa run"} <= set(outs)
    assert set(resumes) == set(outs), "a command records a run in --out but cannot resume it, or the reverse"
    assert len(set(outs.values())) == 1, outs
    assert len(set(resumes.values())) == 1, resumes
    assert "ctxgauge-runs/NAME-<utc time>-<id>" in next(iter(outs.values()))


def test_each_default_folder_names_its_command():
    cmds = dict(_commands(typer.main.get_command(app)))
    for name, prefix in {"replay": "replay", "cases": "cases", "determinism": "determinism", "demo": "demo",
                         "qa run": "qa"}.items():
        assert f"ctxgauge-runs/{prefix}-<utc time>-<id>" in _help(cmds[name], "--out"), name
