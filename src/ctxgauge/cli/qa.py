"""`ctxgauge qa run|rescore|adjudicate|baseline`: does an engine's context help a model answer questions?"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ctxgauge.cli._common import console, err_console, exit_for_run, plain, print_json, print_run_report, run_exit
from ctxgauge.cli._options import check_resume, out_option, resume_option
from ctxgauge.cli._progress import ProgressDisplay

if TYPE_CHECKING:
    from ctxgauge.results import QAResults

qa_app = typer.Typer(help="Question batteries: arms, protocols, judging, trust gate.", no_args_is_help=True)
baseline_app = typer.Typer(help="Save a run's figures as a baseline, or compare a run against one.",
                           no_args_is_help=True)
qa_app.add_typer(baseline_app, name="baseline")


def register(app: typer.Typer) -> None:
    app.add_typer(qa_app, name="qa")


RUN_JSON = ("run_dir", "summary", "questions", "trust", "skipped", "notes", "comparisons")
"""The keys of `qa run --json` taken from the run's flat JSON form (`QARun.to_dict`), beside finished,
unfinished and exit_code (README's contract)."""
RESCORE_JSON = ("run_dir", "judge", "reproduced", "changed", "summary", "questions", "trust", "ledger")
"""The keys of `qa rescore --json` taken from the rescore's JSON form (`QARescore.to_json`)."""


def _pick(data: dict, keys: tuple[str, ...]) -> dict:
    """The `keys` of a typed result's JSON form (written by its class, exactly as read)."""
    return {k: data[k] for k in keys}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _money(x: float | None) -> str:
    return "-" if x is None else f"${x:.4f}"


def _print_summary(results: "QAResults", title: str) -> None:
    from rich.markup import escape

    from ctxgauge.report._fit import WHOLE, WORDS, Col, Fitted
    from ctxgauge.results._qa import Tokens
    from ctxgauge.results._qa_files import PanelSummary

    cols = [Col("arm", WHOLE), Col("status", WHOLE), Col("passed", WORDS, right=True),
            *(Col(name, WHOLE, right=True) for name in ("accuracy", "hit rate", "tokens", "cost"))]
    table = []
    for arm, s in results.summary.items():
        t = s.tokens or Tokens()
        passed = f"{s.passed}/{s.questions}"
        gaps = [f"{n} {word}" for n, word in ((s.not_judged, "not judged"), (s.infra, "infra"),
                                              (s.adjudicate, "adjudicate")) if n]
        score = _pct(s.accuracy) if s.mean_score is None or s.accuracy is not None else f"{s.mean_score:.1f}/100"
        tokens = f"{t.tokens_input + t.tokens_cache_read}+{t.tokens_output}"
        table.append([escape(arm), s.status, passed + (f" ({', '.join(gaps)})" if gaps else ""), score,
                      _pct(s.retrieval_hit_rate), tokens, _money(s.cost_usd)])
    console.print(Fitted(cols, table, title=title))
    cmp = results.comparisons
    for arm, c in (cmp.arms if cmp is not None else {}).items():
        if c is None or not c.n:
            continue
        d = "-" if c.cohens_d is None else f"{c.cohens_d:+.2f}"
        p = "-" if c.p_value is None else f"{c.p_value:.3f}"
        console.print(f"{escape(arm)} vs {escape(cmp.baseline or '')}: {c.mean_diff:+.1f} points "
                      f"[{c.ci_low:+.1f}, {c.ci_high:+.1f}] over {c.n} question(s), p {p}, Cohen's d {d}")
    for skip in results.skipped:
        console.print(f"[yellow]{escape(skip.arm)}[/]: {escape(skip.reason or '')}")
    for note in results.notes:
        console.print(f"[dim]note: {escape(note)}[/]")
    for arm, s in results.summary.items():
        panel = PanelSummary.from_json(s.panel, title, f"summary.{arm}.panel") if isinstance(s.panel, dict) else None
        if panel is not None and panel.scored:
            console.print(f"panel {escape('[' + arm + ']')}: aggregate {panel.aggregate:.1f}, sd {panel.sd:.1f}, "
                          f"agreement {panel.agreement:.2f} over {panel.scored} answer(s); "
                          f"{panel.flagged} flagged for disagreement")
    trust = results.trust
    if trust is None:
        return
    colour = {"pass": "green", "warn": "yellow", "fail": "red"}.get(trust.status or "", "dim")
    console.print(f"trust gate: [{colour}]{escape(trust.verdict or '')}[/]")
    for c in trust.checks:
        value = "-" if c.value is None else f"{c.value:g}"
        where = f" {escape('[' + c.arm + ']')}" if c.arm else ""
        why = f" - {escape(c.detail)}" if c.detail else ""
        console.print(f"  {c.status:<12} {c.name}{where} = {value} (needs {c.threshold}){why}")


@qa_app.command("run")
def run(
    battery: str = typer.Argument(..., help="A battery directory, a bundled battery name (shelfd), or a dokimi question-set JSON file."),
    arm: list[str] = typer.Option(..., "--arm", "-a", help="none, context:ENGINE@k, tool:ENGINE, mcp-tools:mcp(...) or command:CMD (repeat for several)."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="The answer model (none: only arms that need no model run)."),
    judge: Optional[str] = typer.Option(None, "--judge", "-j", help="The judge model (none: answers tier 1 cannot pass are not judged)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="An OpenAI-compatible server (llama.cpp, vLLM, Ollama)."),
    provider: Optional[str] = typer.Option(None, "--provider", help="openai, anthropic or local (default: from the model name)."),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="The judge's server (default: --base-url)."),
    judge_provider: Optional[str] = typer.Option(None, "--judge-provider", help="The judge's provider (default: --provider)."),
    protocol: str = typer.Option("zero-shot", "--protocol", help="zero-shot, multi-turn or whole-battery."),
    repeat: int = typer.Option(1, "--repeat", min=1, help="Independent repetitions (sessions) per arm."),
    repo: Optional[Path] = typer.Option(None, "--repo", help="A checkout of the battery's repository (default: as battery.json says)."),
    token_budget: int = typer.Option(6000, "--token-budget", "--budget", min=100, help="Context arm: tokens (o200k_base) of the packed context in each prompt: the engine's spans, or whole files, under path:start-end headers that count, whole lines only."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Response cache (default $CTXGAUGE_CACHE_DIR or ~/.cache/ctxgauge)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the provider every time."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per provider request."),
    retries: int = typer.Option(3, "--retries", min=0, help="Retries of a failed provider request (with backoff)."),
    rates: Optional[str] = typer.Option(None, "--rates", help="A rate table JSON (default $CTXGAUGE_RATES or the built-in one)."),
    baseline_arm: Optional[str] = typer.Option(None, "--baseline-arm", help="The arm every other is compared with: paired interval, p-value and Cohen's d (default: none, when given)."),
    scorer: str = typer.Option("ctxgauge-qa-2", "--scorer", help="Scorer version: ctxgauge-qa-2, or ctxgauge-qa-1 (Corograph's published tier 1 and judge retry)."),
    panel: bool = typer.Option(False, "--panel", help="Question sets: a judge panel (technical expert, developer advocate, doc reviewer) scores every answer too; the trust gate checks their agreement."),
    grounded_from_topics: bool = typer.Option(False, "--grounded-from-topics", help="Question sets: grade against a question's expected_topics when they average 40 or more characters (curated statements, not keywords)."),
    out: Optional[Path] = out_option("qa"),
    resume: bool = resume_option(),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {run_dir, summary: {arm: {questions, passed, accuracy, tokens, cost_usd, context_tokens?, context_tokens_per_correct?}}, questions, trust, skipped, finished, unfinished, exit_code}."),
) -> None:
    """Ask a battery's questions under each arm, score the answers, and gate the result; print the run's
    report (as `ctxgauge report RUN_DIR` does). Exit code 6 when the run did not finish (an outage, a failed
    harness or engine): `--resume` with the same --out fills the gaps; 7 when nothing was measured."""
    check_resume(resume, out)
    from ctxgauge.suites.qa import QAConfig, run_qa

    cfg = QAConfig(source=battery, arms=list(arm), model=model, judge=judge, provider=provider, base_url=base_url,
                   judge_provider=judge_provider, judge_base_url=judge_base_url, protocol=protocol, repeat=repeat,
                   out=out, resume=resume, repo=repo, cache_dir=cache_dir, use_cache=not no_cache, timeout=timeout,
                   retries=retries, token_budget=token_budget, rates=rates, scorer=scorer, baseline_arm=baseline_arm,
                   grounded_from_topics=grounded_from_topics, panel=panel)
    with ProgressDisplay("qa", unit="answers") as progress:
        typed = run_qa(cfg, progress=progress)
    run_dir, gaps = typed.run_dir, typed.results.unfinished
    if json_out:
        code, _ = run_exit(run_dir)
        print_json({**_pick(typed.to_dict(), RUN_JSON), "finished": gaps is None, "unfinished": gaps,
                    "exit_code": code or 0})
    else:
        # The run's report, byte for byte `ctxgauge report RUN_DIR`; what the report does not hold (which
        # units failed, the trust gate's verdict in a line, where the run lies) goes to stderr.
        from ctxgauge.records import read_units

        print_run_report(run_dir)
        failed = sorted((u for u in read_units(run_dir) if u.status == "failed"), key=lambda u: u.id)
        for u in failed[:10]:
            err_console.print(f"failed {u.id}: {u.reason or ''}", soft_wrap=True, markup=False)
        if len(failed) > 10:
            err_console.print(f"... and {len(failed) - 10} more failed units (see the run's units)")
        verdict = typed.results.trust.verdict if typed.results.trust is not None else ""
        err_console.print(f"trust gate: {plain(verdict)}; run recorded in {plain(run_dir)}",
                          soft_wrap=True)
    # Exit 6 (unfinished: the record says which units are gaps, --resume fills them) or 7 (nothing measured):
    # the one outcome rule every suite command ends with. The trust gate is reported, not an exit code.
    exit_for_run(run_dir, True)


@qa_app.command("rescore")
def rescore(
    run_dir: Path = typer.Argument(..., help="A finished qa run directory."),
    judge: Optional[str] = typer.Option(None, "--judge", "-j", help="Judge model (default: the run's judge)."),
    judge_provider: Optional[str] = typer.Option(None, "--judge-provider", help="openai, anthropic or local."),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="The judge's OpenAI-compatible server."),
    battery: Optional[Path] = typer.Option(None, "--battery", help="The run's battery, if it moved (default: found from the record)."),
    scorer: Optional[str] = typer.Option(None, "--scorer", help="Scorer version (default: the run's)."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Response cache directory."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the judge again instead of reusing cached verdicts."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the rescore as JSON to this file."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {reproduced, changed, summary, questions, trust}."),
) -> None:
    """Re-judge a run's banked answers (the answer model is not asked again) and say whether the record
    is reproduced. Exit code 1 when a verdict changed."""
    from ctxgauge._io import write_json_atomic
    from ctxgauge.suites.qa import rescore_run

    result = rescore_run(run_dir, judge=judge, judge_provider=judge_provider, judge_base_url=judge_base_url,
                         battery=battery, scorer=scorer, cache_dir=cache_dir, use_cache=not no_cache)
    if out:
        write_json_atomic(out, result.to_json())
    if json_out:
        print_json(_pick(result.to_json(), RESCORE_JSON))
    else:
        _print_summary(result.results, f"rescore of {plain(run_dir)} with {plain(result.judge)}")
        if result.reproduced:
            console.print("[green]reproduced[/]: every verdict and figure matches the record")
        else:
            console.print(f"[red]not reproduced[/]: {len(result.changed)} verdict(s) changed")
            for c in result.changed:
                console.print(plain(f"  {c.unit}: {c.recorded} -> {c.rescored} ({c.reason})"), soft_wrap=True)
    if not result.reproduced:
        raise typer.Exit(1)


@qa_app.command("adjudicate")
def adjudicate_cmd(
    run_dir: Path = typer.Argument(..., help="A finished qa run directory."),
    qid: str = typer.Argument(..., help="The question whose answer a human grades."),
    verdict: str = typer.Option(..., "--verdict", help="pass or fail: outranks the judge in every figure."),
    why: str = typer.Option(..., "--why", help="Why, in one line a reader can check against the answer."),
    arm: Optional[str] = typer.Option(None, "--arm", help="The arm whose answer (needed when several arms answered)."),
    rep: Optional[int] = typer.Option(None, "--rep", min=1, help="One repetition (default: every repetition of the arm)."),
    by: Optional[str] = typer.Option(None, "--by", help="Who adjudicates (default $CTXGAUGE_ADJUDICATOR or $USER)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {adjudications: [{unit, qid, arm, rep, verdict, why, by, at, judge_result}], summary}."),
) -> None:
    """Record a human verdict on one question's answer: who and when are recorded, the judge's verdict is
    kept beside it, and the run's figures are derived again with the human's verdict."""
    from ctxgauge.suites.qa.judging._adjudicate import adjudicate

    result = adjudicate(run_dir, qid, verdict, why, arm=arm, rep=rep, by=by)
    if json_out:
        print_json(result.to_json())
        return
    for a in result.adjudications:
        console.print(f"{plain(a.unit)}: {plain(a.judge_result or '-')} -> [bold]{plain(a.verdict)}[/] by "
                      f"{plain(a.by)} at {plain(a.at)}", soft_wrap=True)


@baseline_app.command("save")
def baseline_save(
    run_dir: Path = typer.Argument(..., help="A finished qa run directory."),
    path: Path = typer.Argument(..., help="Where to write the baseline JSON."),
    json_out: bool = typer.Option(False, "--json", help="Print the baseline as JSON."),
) -> None:
    """Save a run's per-arm scores and trust status as a baseline."""
    from ctxgauge.suites.qa import save_baseline

    data = save_baseline(run_dir, path)
    if json_out:
        print_json(data.to_json())
    else:
        console.print(f"baseline of {len(data.arms)} arm(s) written to {plain(path)}", soft_wrap=True)


@baseline_app.command("compare")
def baseline_compare(
    run_dir: Path = typer.Argument(..., help="A finished qa run directory."),
    path: Path = typer.Argument(..., help="A baseline written by `qa baseline save`."),
    tolerance: float = typer.Option(5.0, "--tolerance", min=0.0, help="Points an arm may drop before it is a regression."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {arms: [{arm, baseline, run, delta, status}], regressions}."),
) -> None:
    """Compare a run with a baseline. Exit code 1 when an arm regressed by more than --tolerance points."""
    from ctxgauge.suites.qa import compare_baseline

    result = compare_baseline(run_dir, path, tolerance=tolerance)
    if json_out:
        print_json(result.to_json())
    else:
        from ctxgauge.report._fit import WHOLE, WORDS, Col, Fitted

        fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
        rows = [[plain(r.arm), fmt(r.baseline), fmt(r.run), fmt(r.delta), plain(r.status)] for r in result.arms]
        console.print(Fitted([Col("arm", WHOLE), *(Col(n, WHOLE, right=True) for n in ("baseline", "run", "delta")),
                              Col("status", WORDS)], rows))
    if result.regressions:
        raise typer.Exit(1)
