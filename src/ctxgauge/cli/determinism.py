"""`ctxgauge determinism SOURCE --engine E`: is an engine's context the same every time? (CTL 0-4)"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any, Optional

import typer

from ctxgauge.cli._common import console, err_console, exit_for_run, print_json


def register(app: typer.Typer) -> None:
    app.command("determinism")(determinism)


def determinism(
    source: Path = typer.Argument(..., help="A directory, or a git repository (read at --rev, default HEAD)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Revision of a git repository."),
    engine: Optional[list[str]] = typer.Option(None, "--engine", "-e", help="Engine spec (repeat for several, never comma-joined: specs hold commas; default bm25)."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="JSON list of queries (ContextBenchmark's queries.json); default: recent commit subjects."),
    query_count: int = typer.Option(10, "--query-count", min=1, help="How many queries to derive when --queries is not given."),
    rebuilds: int = typer.Option(3, "--rebuilds", min=1, help="Cold builds compared by Rebuild Identity (at least 2)."),
    trials: int = typer.Option(5, "--trials", min=1, help="Trials per query for Query Stability (at least 2)."),
    k: int = typer.Option(10, "-k", min=1, help="Results per query."),
    families: Optional[str] = typer.Option(None, "--families", help="Comma-separated: rebuild,query,drift,update,cross-machine (default all)."),
    update_from: Optional[str] = typer.Option(None, "--update-from", help="Revision to update from (default: 10 first-parent commits back, or the oldest)."),
    against: Optional[list[Path]] = typer.Option(None, "--against", help="Another machine's fingerprint (repeat); a PASS is needed for CTL 4."),
    noise: Optional[str] = typer.Option(None, "--noise", help="Drift noise kinds, comma-separated: prose, near-duplicate, large (default prose)."),
    noise_dir: Optional[str] = typer.Option(None, "--noise-dir", help="Corpus directory for the noise file (default: the one with most files)."),
    corpus_name: Optional[str] = typer.Option(None, "--corpus-name", help="Corpus name in fingerprints (default: the source's base name)."),
    fingerprint_dir: Optional[Path] = typer.Option(None, "--fingerprint-dir", help="Also write <engine>.fingerprint.json here."),
    out: Optional[Path] = typer.Option(None, "--out", help="Run directory (default ctxgauge-runs/determinism-<time>-<id>)."),
    resume: bool = typer.Option(False, "--resume", help="Continue an unfinished run in --out."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {run_dir, engines: {name: {level, families, flags, fingerprint}}}."),
) -> None:
    """Rebuild, query, drift, update and cross-machine identity of engines, graded as Context Trust Levels."""
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
    )
    with _Bar() as bar:
        result = run_determinism(config, progress=bar)
    data = result.to_json()
    if json_out:
        print_json(data)
    else:
        _render(data)
    exit_for_run(result.run_dir, True)  # no gate: 0, or 6/7 when engines failed


class _Bar:
    """A Rich progress bar on stderr (stdout stays clean for --json), removed when the run ends."""

    def __enter__(self) -> "_Bar":
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=err_console, transient=True)
        self._progress.__enter__()
        self._task = self._progress.add_task("planning", total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)  # type: ignore[arg-type]

    def set_total(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def step(self, description: str, advance: int) -> None:
        self._progress.update(self._task, description=description, advance=advance)


def _num(value: Any) -> str:
    # Four decimals, cut rather than rounded, and marked when cut: 0.99996 prints as 0.9999…, never as a
    # 1.0000 that reads like a pass the exact value did not earn.
    if not isinstance(value, (int, float)):
        return "-"
    exact = Decimal(repr(float(value)))
    cut = exact.quantize(Decimal("0.0001"), rounding=ROUND_FLOOR)
    return f"{cut}" + ("…" if cut != exact else "")


def _family_cell(fam: dict[str, Any], render) -> str:  # type: ignore[no-untyped-def]
    if fam["status"] == "ok":
        return render(fam["figures"])
    style = "red" if fam["status"] == "failed" else "dim"
    return f"[{style}]{fam['status']}[/]"


def _rebuild(f: dict[str, Any]) -> str:
    ok = "green" if f["identical"] else "red"
    return f"[{ok}]{f['distinct_hashes']} hash{'es' if f['distinct_hashes'] != 1 else ''}\n{f['rebuilds']} builds[/]"


def _query(f: dict[str, Any]) -> str:
    return (f"EMR {_num(f['exact_match_rate'])}\nJ {_num(f['mean_jaccard'])}\nτ {_num(f['mean_kendall_tau'])}"
            + (f"\n{f['empty_results']} empty" if f["empty_results"] else ""))


def _drift(f: dict[str, Any]) -> str:
    lines = []
    for kind, fig in f.items():
        if "drift" in fig:
            lines.append(f"{kind}\n {fig['drift']:.2f} ({fig['noise_in_top_k']}/{fig['queries']})")
        else:
            lines.append(f"{kind}: not measured")
    return "\n".join(lines)


def _update(f: dict[str, Any]) -> str:
    ok = "green" if f["identical"] else "red"
    art = "artifact =" if f["artifact_identical"] else "artifact ≠"
    return f"[{ok}]{art}\n{f['queries_identical']}/{f['queries']} same[/]"


def _cross(f: dict[str, Any]) -> str:
    ok = "green" if f["verdict"] == "PASS" else "red"
    return f"[{ok}]{f['verdict']}[/]"


def _render(data: dict[str, Any]) -> None:
    from rich.table import Table

    c = data["corpus"]
    console.print(f"[bold]determinism[/] on {c['name']} ({c['files']} files"
                  + (f" at {c['rev'][:10]}" if c.get("rev") else "") + f"), {len(data['queries'])} queries, k={data['k']}")
    from rich.table import Column

    table = Table("engine", "level", Column("drift", overflow="fold"), "rebuild", "query", "update", "cross",
                  show_lines=True,
                  caption="drift: 1 - Jaccard@k vs base (queries with the noise file in their top k); rebuild: "
                          "distinct artifact hashes over cold builds; update: build at an older revision + update "
                          "vs fresh build")
    for name, e in data["engines"].items():
        fams = e["families"]
        style = "yellow" if e["status"] == "skipped" else "red" if e["flags"] or e["level"] in (None, 0) else "bold"
        level = f"[{style}]{e['label']}[/]" + "".join(f"\n[red]flagged {f['flag']}[/]" for f in e["flags"])
        table.add_row(name, level, _family_cell(fams["drift"], _drift), _family_cell(fams["rebuild"], _rebuild),
                      _family_cell(fams["query"], _query), _family_cell(fams["update"], _update),
                      _family_cell(fams["cross-machine"], _cross))
    console.print(table)
    for name, e in data["engines"].items():
        if e["status"] != "measured":
            console.print(f"[yellow]{name}: {e['status']}[/]: {e['reason']}", soft_wrap=True)
            continue
        for flag in e["flags"]:
            console.print(f"[red]{name}: flagged {flag['flag']}[/]: {flag['reason']}", soft_wrap=True)
        for reason in e["grade"]["reasons"]:
            console.print(f"{name}: {reason}", soft_wrap=True)
        for fam_name, fam in e["families"].items():
            if fam["status"] == "failed":
                console.print(f"[red]{name}: {fam_name} failed[/]: {fam['reason']}", soft_wrap=True)
        if e["fingerprint"]:
            console.print(f"{name}: fingerprint {e['fingerprint']}", soft_wrap=True)
    console.print(f"run directory {data['run_dir']}", soft_wrap=True)
