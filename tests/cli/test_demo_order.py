"""One engine order in every view of the demo (walkthrough at 80 columns, issue 39): the terminal's table keeps
the order the engines are given in (grep, bm25, ... fusion); the HTML and Markdown reports list runs, so
engines, in path order, and put `replay-bm25` before `replay-grep`. The demo's replay runs are numbered in
the given order, so every view shows the same one."""

from __future__ import annotations

import re

from ctxgauge.cli.demo import _print
from ctxgauge.report import BarsFigure, build_report, load_runs


def test_terminal_markdown_and_html_list_the_engines_in_the_given_order(tmp_path, capsys, monkeypatch):
    from ctxgauge.demo import DemoConfig, run_demo

    given = ("grep", "bm25")  # path order of plain names would be the reverse
    result = run_demo(DemoConfig(out=tmp_path / "demo", engines=given, commits=3, rebuilds=2, trials=2,
                                 determinism_engines=("grep",)), lambda *a: None)
    monkeypatch.setenv("COLUMNS", "120")
    _print(result)
    terminal = [line.split("│")[1].strip() for line in capsys.readouterr().out.splitlines()
                if line.startswith("│") and line.split("│")[1].strip() in given]
    assert terminal == list(given)

    model = build_report(load_runs([result.out]))
    bars = next(b for s in model.sections for b in s.blocks if isinstance(b, BarsFigure))
    assert [bar.label for bar in bars.panels[0].bars] == list(given)

    md = result.report_md.read_text(encoding="utf-8")
    table = md.split("per-engine metrics\n", 1)[1].strip().split("\n\n", 1)[0]
    assert [re.match(r"\| \[(\w+)\]", row).group(1) for row in table.splitlines()[2:]] == list(given)

    html = result.report_html.read_text(encoding="utf-8")
    card = html.split("per-engine metrics", 1)[1].split('<div class="card"', 1)[0]
    runs = re.findall(r'href="(replay-[^"/]+)/run.json"', card)
    own = [name for name in result.runs if name.startswith("replay-") and "-vs-" not in name]  # in the order run
    assert len(own) == 2 and list(dict.fromkeys(runs))[:2] == own
