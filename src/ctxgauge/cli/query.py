"""`ctxgauge query SOURCE TEXT --engine E`: build an index of a source and rank its files for one request."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ctxgauge.cli._common import console, plain, print_json


def register(app: typer.Typer) -> None:
    app.command("query")(query)


def query(
    source: Path = typer.Argument(..., help="A directory, or a git repository (read at --rev, default HEAD)."),
    text: str = typer.Argument(..., help="The request to rank files for."),
    engine: str = typer.Option("bm25", "--engine", "-e", help="Engine spec, e.g. bm25 or 'bm25(k1=1.2,b=0.75)'."),
    # Checked by run_query, not by Typer's range: a range error is a five-line box, every other error one line.
    k: int = typer.Option(10, "-k", help="How many files to return (at least 1)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Revision of a git repository (not for plain directories)."),
    index_dir: Optional[Path] = typer.Option(None, "--index-dir", help="Keep the built index here (default: a temporary directory)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {engine, identity, corpus, request, k, hits: [{path, score, spans: [[start, end], ...]}]} (spans empty: the whole file)."),
) -> None:
    """Rank the files of SOURCE for TEXT with one engine."""
    import os
    import shutil
    import tempfile

    from ctxgauge._output import environment_reason
    from ctxgauge.errors import EngineError, UserError

    if not text.strip():  # an unset shell variable, say: "no file matched" and exit 0 would hide it
        raise UserError("the request text is empty: give the words to rank files for, e.g. "
                        "ctxgauge query SOURCE \"overdue fees\"")

    from ctxgauge.engines import run_query

    made = index_dir is not None and not os.path.lexists(index_dir)
    with tempfile.TemporaryDirectory(prefix="ctxgauge-query-") as tmp:
        out = Path(index_dir) if index_dir else Path(tmp)
        try:
            result = run_query(source, text, engine=engine, k=k, rev=rev, out_dir=out)
        except (OSError, EngineError) as exc:
            # A full or read-only --index-dir is the user's disk, not the engine's fault: one line, exit 2,
            # and an index folder this command made is not left half-written.
            reason = environment_reason(exc, index_dir) if index_dir is not None else None
            if reason is None:
                raise
            if made:
                shutil.rmtree(index_dir, ignore_errors=True)
            raise UserError(f"--index-dir: {reason}; nothing was kept; free space, or choose a folder you can "
                            "write") from None
    for hit in result["hits"]:  # `[[start, end], ...]`, 1-based and inclusive; empty: the whole file
        hit.setdefault("spans", [])
    if json_out:
        print_json(result)
        return
    from ctxgauge.report._fit import WHOLE, WORDS, Col, Fitted

    c = result["corpus"]
    console.print(plain(result["source"]), soft_wrap=True)
    # The engine spec, the corpus name and the paths are user text: through `plain`, never read as markup.
    console.print(f"[bold]{plain(result['engine'])}[/] on {plain(c['name'])} ({c['files']} files"
                  + (f" at {c['rev'][:10]}" if c.get("rev") else "") + ")", soft_wrap=True)
    # The lines each hit hands a model, when the engine returns spans (a file-only engine: no such column).
    spans = any(h["spans"] for h in result["hits"])
    cols = [Col("#", WHOLE, right=True), Col("path", WHOLE), Col("score", WHOLE, right=True)]
    rows = []
    for i, (hit, score) in enumerate(zip(result["hits"], score_cells([h["score"] for h in result["hits"]])), 1):
        rows.append([str(i), plain(hit["path"]), score] + ([span_text(hit["spans"])] if spans else []))
    table = Fitted(cols + ([Col("lines", WORDS)] if spans else []), rows)
    console.print(table if result["hits"] else "[yellow]no file matched[/]")


def span_text(spans: list) -> str:
    """A hit's spans as a reader takes them in: `12-40, 88-120` (`7` for one line), `whole file` for none."""
    if not spans:
        return "whole file"
    return ", ".join(f"{s}" if s == e else f"{s}-{e}" for s, e in spans)


def score_cells(scores: list[float]) -> list[str]:
    """Scores as one column of one precision: four decimals each (a fusion's 1.0 and 0.01639 were printed
    `1` and `0.01639` by `.4g`); the exact values are in `--json`."""
    return [f"{float(v):.4f}" for v in scores]
