"""`ctxgauge demo`: the main job on the bundled sample, no network, no key."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ctxgauge.cli._common import console, plain, print_json
from ctxgauge.cli._options import check_resume, out_option, resume_option
from ctxgauge.cli._progress import ProgressDisplay


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    out: Optional[Path] = out_option("demo", "demo"),
    engine: Optional[list[str]] = typer.Option(None, "--engine", "-e", help="Engines to run (repeat; default: every reference engine available here)."),
    commits: int = typer.Option(40, "--commits", min=1, help="How many of the sample's newest eligible commits replay scores."),
    resume: bool = resume_option("demo"),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {out, runs, skipped, replay, best_two, comparison, determinism, qa, report_html, report_md}."),
    # Hidden: the demo takes no model. A user who gives one (the demo's qa line speaks of models) got Click's
    # `No such option: --model (Possible options: --help)`; now one line naming the command that takes one.
    model: Optional[str] = typer.Option(None, "--model", "-m", hidden=True),
) -> None:
    """Replay, compare, grade determinism and run the battery on the bundled sample; write the HTML report."""
    if model is not None:
        from ctxgauge.errors import UserError

        raise UserError("the demo runs without a model and takes no --model; to have a model answer the "
                        "bundled battery, run: ctxgauge qa run shelfd --arm none --arm context:bm25@5 --model MODEL")
    check_resume(resume, out)
    from ctxgauge.demo import DemoConfig, phase_unit, run_demo
    from ctxgauge.engines import REFERENCE_ENGINES

    cfg = DemoConfig(out=out, engines=tuple(engine or REFERENCE_ENGINES), commits=commits, resume=resume)
    with ProgressDisplay("demo", unit=phase_unit) as progress:
        result = run_demo(cfg, progress)
    if json_out:
        print_json(result.to_dict())
        return
    _print(result)


def _print(result) -> None:
    from ctxgauge.report._fit import WHOLE, WORDS, Col, Fitted

    if result.skipped:
        for name, why in result.skipped.items():
            console.print(f"[yellow]skipped[/] {plain(name)}: {plain(why)}", soft_wrap=True)
    from ctxgauge.metrics.scoring import headline_metrics

    shown = headline_metrics(dict.fromkeys(m for s in result.replay.values() for m in s))
    cols = [Col("engine", WHOLE), *(Col(m, WHOLE, right=True) for m in shown), Col("CTL", WORDS), Col("drift", WORDS)]
    table = []
    for name, s in result.replay.items():
        det = result.determinism.get(name)
        level = det.level if det is not None else None
        drift = det.drift if det is not None else {}
        table.append([plain(name), *(f"{s.get(m):.3f}" if isinstance(s.get(m), (int, float)) else "-"
                                     for m in shown),
                      f"CTL {level}" if level is not None else "not measured",
                      ", ".join(f"{k} {v:.3f}" for k, v in drift.items()) or "-"])
    console.print(Fitted(cols, table, title="bundled sample (shelfd): replay of its own commits, and determinism"))
    if result.best_two and result.comparison:
        a, b = result.best_two
        for name in shown:
            m = result.comparison.metrics.get(name)
            if m is not None:
                p = 1.0 if m.p_value is None else m.p_value
                console.print(f"{plain(a)} vs {plain(b)}, {name}: difference {m.mean_diff:+.3f} "
                              f"[95% {m.ci_low:+.3f}, {m.ci_high:+.3f}], "
                              f"p={p:.3f}, win/tie/loss {m.wins}/{m.ties}/{m.losses}")
    console.print("CTL (Context Trust Level, 0-4): how far an engine's context is the same every time, from "
                  "repeatable rankings (1) to identical artifacts on two machines (4).")
    console.print("drift: the share of results (1 - Jaccard@k) that change when one unrelated file joins the "
                  "corpus; 0 is steady. prose: that file is everyday English words no request uses "
                  "(`ctxgauge determinism --noise` also has near-duplicate and large).")
    summary = result.qa.summary if result.qa is not None else {}
    rates = [(arm, s.retrieval_hit_rate) for arm, s in summary.items() if s.retrieval_hit_rate is not None]
    if rates:
        console.print("qa battery, no model: retrieval hit rate (a question's evidence file among the context "
                      "given) " + ", ".join(f"{plain(arm)} {rate:.3f}" for arm, rate in rates))
    # One line per reason (every context arm of a demo without a model says the same thing).
    by_reason: dict[str, list[str]] = {}
    for arm in (result.qa.skipped if result.qa is not None else []):
        by_reason.setdefault(str(arm.reason), []).append(str(arm.arm))
    for reason, names in by_reason.items():
        console.print(f"qa arm{'s' if len(names) > 1 else ''} [bold]{plain(', '.join(names))}[/]: {plain(reason)}")
    console.print(f"\nruns in [bold]{plain(result.out)}[/]\nreport: [bold]{plain(result.report_html)}[/]"
                  f" (and [bold]{plain(result.report_md)}[/], the same report as Markdown)")
