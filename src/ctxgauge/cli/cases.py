"""`ctxgauge cases FILE --engine E`: hand-labelled requests scored against pass lines (exit 0 only when
every line holds); `ctxgauge cases --qrels QRELS --run RUN` scores a ranking made elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ctxgauge.cli._common import MISSES_HELP, console, err_console, exit_for_run, misses_json, plain, print_json, print_run_report
from ctxgauge.cli._options import check_resume, out_option, resume_option
from ctxgauge.cli._progress import ProgressDisplay
from ctxgauge.executors._base import EXECUTOR_HELP


def register(app: typer.Typer) -> None:
    app.command("cases")(cases)


def cases(
    file: Optional[Path] = typer.Argument(None, help="A case file (YAML or JSON), SWE-bench-style instances (JSON/JSONL), or ContextBench gold (JSON/JSONL/parquet)."),
    engine: Optional[str] = typer.Option(None, "--engine", "-e", help="Engine spec, e.g. bm25."),
    vs: Optional[str] = typer.Option(None, "--vs", help="A second engine, run on the same cases and compared."),
    k: List[int] = typer.Option([5, 10], "-k", help="Cutoff to score at; repeat for several (default 5 and 10)."),
    depth: int = typer.Option(100, "--depth", help="Files each query asks for."),
    budget: List[int] = typer.Option([1000, 4000, 16000], "--budget", help="Token budget to pack each ranking's spans under for the context figures (line_coverage_tokens@B, ...); repeat for several (default 1000, 4000 and 16000)."),
    pass_: List[str] = typer.Option([], "--pass", help="A pass line METRIC=VALUE (e.g. recall@5=0.6); repeatable."),
    repos: Optional[Path] = typer.Option(None, "--repos", help="Where SWE-bench or ContextBench repositories are cloned (default: beside FILE)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels: with --queries and --corpus, cases; with --run, a ranking to score."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="Query texts for --qrels: QID<TAB>TEXT lines or JSON lines."),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="The corpus of --qrels cases: a directory or REPO@REV."),
    run: Optional[Path] = typer.Option(None, "--run", help="A ranking made elsewhere (TREC run or JSON lines) to score against --qrels."),
    write_cases: Optional[Path] = typer.Option(None, "--write-cases", help="Write the imported cases as a YAML case file and stop."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap interval and randomization test (--vs)."),
    trec: Optional[Path] = typer.Option(None, "--trec", help="Also write run.trec and qrels.txt into this directory."),
    out: Optional[Path] = out_option("cases"),
    resume: bool = resume_option(),
    missing_as_miss: bool = typer.Option(False, "--missing-as-miss", help="An expected file the corpus does not have (by default an error: a typo?) is reported per case and counts as a miss."),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    slice_size: int = typer.Option(0, "--slice", help="Corpora per unit of work (0: one slice per repository with one worker, about two per worker with more; results do not depend on it)."),
    misses: bool = typer.Option(False, "--misses", help=MISSES_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {summary, known_gap_summary, cases, pass, passed, failed, comparison?, dropped, run_dir, misses?}."),
) -> None:
    """Score labelled cases; exit 0 when every pass line holds, 1 when one fails, 2 on bad input."""
    check_resume(resume, out)
    from ctxgauge.errors import UserError
    from ctxgauge.suites import cases as api

    config = api.CasesConfig(engine=engine, vs=vs, ks=tuple(dict.fromkeys(k)), depth=depth, seed=seed,
                             budgets=tuple(dict.fromkeys(budget)),
                             pass_lines=_pass_lines(pass_), out=out, resume=resume, trec=trec,
                             missing_as_miss=missing_as_miss, executor=executor, slice_size=slice_size or None)
    dropped: dict[str, int] = {}
    if qrels is not None and run is not None:
        if file is not None or engine is not None:
            raise UserError("--qrels with --run scores an external ranking: give no FILE and no --engine")
        result = api.score_external(qrels, run, config)
        return _report(result, json_out, dropped, misses)
    if qrels is not None:
        if queries is None or corpus is None:
            raise UserError("--qrels needs --queries (the query texts) and --corpus, or --run (a ranking to score)")
        case_file, dropped = api.load_qrels_cases(qrels, queries, corpus)
    elif file is None:
        raise UserError("give a case FILE, or --qrels QRELS with --run RUN (or with --queries and --corpus)")
    elif api.is_contextbench(file):  # before SWE-bench: ContextBench's records carry patch and base_commit too
        case_file, dropped = api.load_contextbench(file, repos)
    elif api.is_swebench(file):
        case_file, dropped = api.load_swebench(file, repos)
    else:
        case_file = api.load_cases(file)
    if write_cases is not None:
        _write(write_cases, case_file)
        return
    with ProgressDisplay("cases", unit="cases") as progress:
        result = api.run_cases(case_file, config, progress=progress)
    _report(result, json_out, dropped, misses)


def _pass_lines(raw: List[str]):
    from ctxgauge.errors import UserError
    from ctxgauge.suites.cases import parse_pass_lines

    parsed = {}
    for item in raw:
        metric, sep, value = item.partition("=")
        try:
            parsed[metric.strip()] = float(value)
        except ValueError:
            raise UserError(f"--pass {item!r}: write METRIC=VALUE, e.g. --pass recall@5=0.6") from None
        if not sep:
            raise UserError(f"--pass {item!r}: write METRIC=VALUE, e.g. --pass recall@5=0.6")
    return parse_pass_lines(parsed, "--pass")


def _write(path: Path, case_file) -> None:
    import yaml

    from ctxgauge._io import write_text_atomic
    from ctxgauge.suites.cases import case_to_dict

    text = yaml.safe_dump({"cases": [case_to_dict(c) for c in case_file.cases]}, sort_keys=False, allow_unicode=True)
    write_text_atomic(path, text)
    console.print(f"wrote {len(case_file.cases)} cases to {plain(path)}", soft_wrap=True)


def _report(result, json_out: bool, dropped: dict[str, int], misses: bool = False) -> None:
    if json_out:
        print_json({**result.to_dict(), "dropped": dropped,
                    **({"misses": misses_json(result.run_dir)} if misses else {})})
    else:
        print_run_report(result.run_dir, misses=misses)
        for c in result.cases:
            if c.status == "failed":
                err_console.print(f"failed {c.id}: {c.reason}", soft_wrap=True, markup=False)
        for reason, n in dropped.items():
            if n:
                err_console.print(f"left out on import: {n} ({reason})", markup=False)
        # A failed case is not a pass line failing: say which it is (exit_for_run then gives 6 or 7).
        verdict = ("PASS: every pass line holds" if result.passed else
                   f"{result.results.failed} counted case(s) failed" if result.results.failed else "FAIL: a pass line fails")
        err_console.print(f"{verdict}; run recorded in {result.run_dir}", markup=False, soft_wrap=True)
    exit_for_run(result.run_dir, result.passed)


