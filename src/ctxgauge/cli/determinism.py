"""`ctxgauge determinism SOURCE --engine E`: is an engine's context the same every time? (CTL 0-4)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ctxgauge.cli._common import err_console, exit_for_run, print_json, print_run_report
from ctxgauge.cli._options import check_resume, out_option, resume_option
from ctxgauge.cli._progress import ProgressDisplay

if TYPE_CHECKING:
    from ctxgauge.suites.determinism import DeterminismResult


def register(app: typer.Typer) -> None:
    app.command("determinism")(determinism)


def determinism(
    source: Path = typer.Argument(..., help="A directory, or a git repository (read at --rev, default HEAD)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Revision of a git repository."),
    engine: Optional[list[str]] = typer.Option(None, "--engine", "-e", help="Engine spec (repeat for several, never comma-joined: specs hold commas; default bm25)."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="JSON list of queries (ContextBenchmark's queries.json); default: recent commit subjects."),
    query_count: int = typer.Option(10, "--query-count", min=1, help="How many queries to derive when --queries is not given."),
    rebuilds: int = typer.Option(3, "--rebuilds", help="Cold builds compared by Rebuild Identity (at least 2, even when --families leaves rebuild out)."),
    trials: int = typer.Option(5, "--trials", help="Trials per query for Query Stability (at least 2, even when --families leaves query out)."),
    k: int = typer.Option(10, "-k", min=1, help="Results per query."),
    families: Optional[str] = typer.Option(None, "--families", help="Comma-separated: rebuild,query,drift,update,cross-machine (default all)."),
    update_from: Optional[str] = typer.Option(None, "--update-from", help="Revision to update from (default: 10 first-parent commits back, or the oldest)."),
    against: Optional[list[Path]] = typer.Option(None, "--against", help="Another machine's fingerprint (repeat); a PASS is needed for CTL 4."),
    noise: Optional[str] = typer.Option(None, "--noise", help="Drift noise kinds, comma-separated: prose, near-duplicate, large (default prose)."),
    noise_dir: Optional[str] = typer.Option(None, "--noise-dir", help="Corpus directory for the noise file (default: the one with most files)."),
    corpus_name: Optional[str] = typer.Option(None, "--corpus-name", help="Corpus name in fingerprints (default: the source's base name)."),
    fingerprint_dir: Optional[Path] = typer.Option(None, "--fingerprint-dir", help="Also write <engine>.fingerprint.json here."),
    out: Optional[Path] = out_option("determinism"),
    resume: bool = resume_option(),
    executor: str = typer.Option("local", "--executor", help="Where rebuilds 2..R run: local (this process, one after another) or local:N (N processes: N - 1 workers make them while this one builds the base and runs the other families; the record is the same)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {run_dir, corpus, queries, k, engines: {name: {status, level, label, drift, families, flags, fingerprint, ...}}}."),
) -> None:
    """Rebuild, query, drift, update and cross-machine identity of engines, graded as Context Trust Levels."""
    check_resume(resume, out)
    from ctxgauge.suites.determinism import (
        DEFAULT_FAMILIES,
        DeterminismConfig,
        load_queries,
        parse_list,
        run_determinism,
    )

    config = DeterminismConfig(
        source=source, rev=rev, engines=tuple(dict.fromkeys(engine or ("bm25",))),
        queries=load_queries(queries) if queries is not None else None, query_count=query_count,
        rebuilds=rebuilds, trials=trials, k=k, families=parse_list(families, DEFAULT_FAMILIES),
        update_from=update_from, against=tuple(against or ()), noise=parse_list(noise, ("prose",)),
        noise_dir=noise_dir, corpus_name=corpus_name, out=out, fingerprint_dir=fingerprint_dir, resume=resume,
        executor=executor,
    )
    with ProgressDisplay("determinism", unit="steps") as progress:
        result = run_determinism(config, progress=progress)
    if json_out:
        print_json(result.to_json())
    else:
        _report(result)
    exit_for_run(result.run_dir, True)  # no gate: 0, or 6/7 when engines failed


def _report(result: "DeterminismResult") -> None:
    """stdout: the run's report (byte for byte `ctxgauge report RUN_DIR`); stderr: what only this
    invocation knows (failed families' reasons, where each fingerprint and the run were written)."""
    from ctxgauge.suites.determinism import FAILED

    print_run_report(result.run_dir)
    for name, e in result.engines.items():
        for fam_name, fam in e.families.items():
            if fam.status == FAILED:
                err_console.print(f"{name}: {fam_name} failed: {fam.reason}", soft_wrap=True, markup=False)
        if e.fingerprint_path is not None:
            err_console.print(f"{name}: fingerprint {e.fingerprint_path}", soft_wrap=True, markup=False)
    from ctxgauge.corpus import source_line

    # The corpus this run measured (the summary its record's context holds).
    if result.corpus:
        err_console.print(source_line(result.corpus), soft_wrap=True, markup=False)
    err_console.print(f"run recorded in {result.run_dir}", soft_wrap=True, markup=False)
