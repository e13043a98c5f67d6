"""`ctxgauge runs list [RUNS_DIR]` and `ctxgauge runs show RUN`: the runs of a directory, through the results
store (an SQLite index kept under the work-cache directory, never in the runs directory, rebuilt from the
run directories whenever it is missing; in memory with the cache off). `ctxgauge runs contextbench RUN -o FILE`
writes a replay or cases run's rankings as ContextBench predictions (`ctxgauge.export.contextbench`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ctxgauge.cli._common import MISSES_HELP, console, misses_json, plain, print_json, print_misses, print_unreadable

if TYPE_CHECKING:
    from ctxgauge.records import RunRecord

DEFAULT_RUNS = Path("ctxgauge-runs")

runs_app = typer.Typer(help="List and show recorded runs (through the results store).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")


@runs_app.command("list")
def list_runs(
    runs_dir: Path = typer.Argument(DEFAULT_RUNS, help="A directory of runs."),
    suite: Optional[str] = typer.Option(None, "--suite", help="Only runs of this suite (a suite's name, as `runs list` shows it)."),
    status: Optional[str] = typer.Option(None, "--status", help="Only runs with this status: finished, unfinished, or a record status (started, success, cancelled, error)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {store, runs: [{path, run_id, suite, status, ...}]}."),
) -> None:
    """Every run, oldest first: suite, status, what it measured and its main figures."""
    from ctxgauge.records import ResultsStore
    from ctxgauge.report import VIEWS

    with ResultsStore.open(runs_dir) as store:
        rows = store.list(suite=suite, status=status, known_suites=VIEWS)
        print_unreadable(store.last_sync.unreadable)
        if json_out:
            print_json({"store": str(store.path) if store.path else None, "runs": rows})
            return
    from ctxgauge.report._fit import WHOLE, WORDS, Col, Fitted

    # The run's path is what a user copies: whole, never left out. A figure and its value are one word of
    # the figures column (`recall@5 0.912` never split across lines). A narrow terminal leaves out the start
    # time first, then the dataset, the engines and the suite (`--json` has every value).
    cols = [Col("run", WHOLE), Col("suite", WHOLE, drop=4), Col("status", WORDS), Col("engines / arms", WORDS, drop=3),
            Col("dataset", WHOLE, drop=2), Col("started (UTC)", WHOLE, drop=1), Col("figures", WORDS, sep=", ")]
    table = []
    for r in rows:
        # Every cell but the status colour is read from a run record: user text, printed as typed.
        status_text = "[green]finished[/]" if r["finished"] else f"[red]did not finish ({plain(r['status'])})[/]"
        table.append([plain(r["path"]), plain(r["suite"]), status_text, plain(", ".join(r["systems"])),
                      plain(r["dataset"] or "-"), plain((r["started_at"] or "-").replace("T", " ")[:16]),
                      plain(r["headline"] or "-")])
    console.print(Fitted(cols, table, title=f"{len(rows)} run{'s' if len(rows) != 1 else ''} in {plain(runs_dir)}"))


@runs_app.command("show")
def show(
    run: str = typer.Argument(..., help="A run directory, or a run's path or id inside --runs-dir."),
    runs_dir: Path = typer.Option(DEFAULT_RUNS, "--runs-dir", help="Where to look a run id up."),
    misses: bool = typer.Option(False, "--misses", help=MISSES_HELP + " (replay and cases runs)"),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {path, record, integrity, foreign_units, misses?}."),
) -> None:
    """One run: identity, provenance, spec, counts, main figures, and each file checked against its SHA-256."""
    from ctxgauge.errors import UserError
    from ctxgauge.records import RUN_FILE, ResultsStore, RunRef, read_run, verify_files
    from ctxgauge.report import check_run

    path = Path(run)
    if (path / RUN_FILE).is_file():
        record = read_run(path)
    else:
        if not runs_dir.is_dir():  # else the one line would name only --runs-dir's default, not RUN
            raise UserError(f"{run}: no such run directory, and no directory of runs {runs_dir} to look its id "
                            "up in (give a run directory, or --runs-dir)")
        with ResultsStore.open(runs_dir) as store:
            row = store.get(run)
        if row is None:
            raise UserError(f"{run}: no such run directory, and no run with that path or id in {runs_dir}")
        path, record = runs_dir / row["path"], row["record"]
    # Checked as every reader checks a run (a damaged value: one line, exit 2); unit lines of another run
    # are counted here, where report and export refuse the run.
    foreign = check_run(RunRef(path, path.name, record), foreign_ok=True).foreign
    integrity = verify_files(path, record)
    if json_out:
        print_json({"path": str(path), "record": record.to_json(), "integrity": integrity, "foreign_units": foreign,
                    **({"misses": misses_json(path)} if misses else {})})
        return
    _print(path, record, integrity, foreign)
    if misses:
        print_misses(path)


def _print(path: Path, record: "RunRecord", integrity: dict[str, str], foreign: int) -> None:
    from ctxgauge.report._fit import WHOLE, Col, Fitted

    prov, timing, counts = record.provenance, record.timing, record.counts
    source = prov.get("source") or {}
    # The status in the words of `runs list`, report and HTML (`finished`), never the record's `success`.
    status = "[green]finished[/]" if record.finished else f"[red]did not finish ({plain(record.status)})[/]"
    # Everything below is read from the run record (user text): through `plain`, never read as markup; lines
    # wrap between words at a terminal's width (a path stays whole), and not at all without one (`_common`).
    console.print(f"[bold]{plain(record.run_id)}[/]  {plain(record.suite)}  {status}  {plain(path)}")
    if record.error:
        console.print(f"[red]error:[/] {plain(record.error)}")
    console.print(plain(f"started {timing.get('started_at') or '-'}  finished {timing.get('finished_at') or '-'}"))
    console.print(plain(f"ctxgauge {prov.get('ctxgauge')} (source {str(source.get('commit') or '-')[:12]}"
                        f"{', dirty' if source.get('dirty') else ''}), python {prov.get('python')}, "
                        f"{(prov.get('platform') or {}).get('system')} {(prov.get('platform') or {}).get('machine')}"))
    machine = prov.get("platform") or {}
    if machine.get("cpu_model") or machine.get("cpu_count"):
        memory = machine.get("memory_bytes")
        console.print(plain(f"machine: {machine.get('cpu_model') or '-'}, {machine.get('cpu_count') or '-'} cores, "
                            f"{'-' if not memory else f'{memory / 2**30:.1f} GiB'} memory"))
    console.print(plain(_units(counts)))
    console.print(f"foreign units: {foreign} (unit lines written by another run)" if not foreign else
                  f"[bold red]foreign units: {foreign}[/] (unit lines written by another run: report and export refuse this run)")
    subject = record.subject
    console.print(plain(f"measured {', '.join(subject.systems) or '-'} on {subject.dataset}"
                        + (f" with {subject.model}" if subject.model else "")))
    if record.headline:
        console.print(f"figures: {plain(record.headline)}")
    console.print(_Spec([(key, _spec_text(value)) for key, value in sorted(record.spec.items())]))
    styles = {"ok": "green", "changed": "bold red", "missing": "bold red", "unhashed": "yellow"}
    files = [[plain(name), f"[{styles.get(state, '')}]{plain(state)}[/]"] for name, state in integrity.items()]
    console.print(Fitted([Col("file", WHOLE), Col("SHA-256 check", WHOLE)], files, title="files"))


def _units(counts: dict[str, int]) -> str:
    """The unit counts as the Runs table of every report gives them (`units ok/failed/skipped 40/0/64`),
    any other status recorded after them by name."""
    if not counts:
        return "units: -"
    main = ("ok", "failed", "skipped")
    rest = "".join(f", {k} {v}" for k, v in sorted(counts.items()) if k not in main)
    return "units ok/failed/skipped: " + "/".join(str(counts.get(k, 0)) for k in main) + rest


class _Spec:
    """The spec as `option  value` lines, every value whole (issue 39: a JSON value cut to `{"id": "sha256:3c…`
    was the one thing a user wanted to copy). A value wraps between its words beside its option; a value with
    a word too long to sit there goes on its own lines under its option, indented. Only a word wider than the
    whole terminal could still fold."""

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        self.rows = rows

    def __rich_console__(self, console, options):
        from rich.cells import cell_len
        from rich.padding import Padding
        from rich.table import Table
        from rich.text import Text

        yield Text("spec", style="bold")
        width = options.max_width
        keys = max((cell_len(k) for k, _ in self.rows), default=0)

        def grid() -> Table:
            table = Table.grid(padding=(0, 2))
            table.add_column(no_wrap=True, style="dim", width=keys)
            table.add_column(overflow="fold")
            return table

        beside = grid()
        for key, value in self.rows:
            # Record text: Text(...) is never read as markup.
            longest = max((cell_len(w) for w in value.split()), default=0)
            if keys + 2 + longest <= width:
                beside.add_row(Text(key), Text(value))
                continue
            if beside.row_count:
                yield beside
                beside = grid()
            yield Text(key, style="dim")
            yield Padding(Text(value), (0, 0, 0, 2))
        if beside.row_count:
            yield beside


def _spec_text(value: object) -> str:
    """A spec value as a user reads it: a string as is, anything else as JSON (never a Python repr)."""
    import json

    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


@runs_app.command("contextbench")
def contextbench(
    run: Path = typer.Argument(..., help="A finished replay or cases run directory."),
    out: Path = typer.Option(..., "--out", "-o", help="The predictions file: .jsonl (one record a line) or .json (a list)."),
    k: int = typer.Option(10, "-k", help="Files of each ranking written (the top k, all their spans)."),
    repos: Optional[Path] = typer.Option(None, "--repos", help="The clone the run measured, or a folder holding it under the corpus's name: counts the lines of hits handed over whole."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file (the run itself is never written over)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {out, predictions, k, left_out}."),
) -> None:
    """Write a run's rankings as ContextBench predictions (one step holding the top k files and their spans), for ContextBench's own evaluator."""
    from ctxgauge.export.contextbench import write_predictions

    done = write_predictions(run, out, k=k, repos=repos, force=force)
    if json_out:
        print_json({"out": str(out), "predictions": len(done.records), "k": done.k, "left_out": done.left_out})
        return
    left = "".join(f"; left out {n} {status} unit{'s' if n != 1 else ''}" for status, n in done.left_out.items())
    console.print(f"wrote {len(done.records)} ContextBench prediction{'s' if len(done.records) != 1 else ''} "
                  f"(top {done.k} files) to {plain(out)}{left}", soft_wrap=True)
