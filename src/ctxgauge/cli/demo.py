"""`ctxgauge demo`: the main job on the bundled sample, no network, no key."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ctxgauge.cli._common import console, print_json


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    engine: Optional[list[str]] = typer.Option(None, "--engine", "-e", help="Engines to run (repeat; default: every reference engine available here)."),
    queries: int = typer.Option(6, "--queries", min=1, help="How many requests (recent commit subjects of the sample)."),
    k: int = typer.Option(5, "-k", min=1),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {corpus, engines: [{engine, available, reason, build_seconds, results: [{request, hits}]}]}."),
) -> None:
    """Run the reference engines on the bundled sample repository and show what each ranks first."""
    from ctxgauge.demo import run_demo

    result = run_demo(engines=engine or None, n_queries=queries, k=k, progress=not json_out)
    if json_out:
        print_json(result)
        return
    from rich.table import Table

    c = result["corpus"]
    console.print(f"[bold]bundled sample[/] {c['name']}: {c['files']} files at {c['rev'][:10]}, "
                  f"skipped {c['skipped']}")
    table = Table("request", *[e["engine"] for e in result["engines"]], title=f"top {k} file per engine", show_lines=True)
    for i, req in enumerate(result["requests"]):
        row = []
        for e in result["engines"]:
            if not e["available"]:
                row.append(f"[yellow]skipped[/]")
            elif e.get("error"):
                row.append(f"[red]failed[/]")
            else:
                hits = e["results"][i]["hits"]
                row.append("\n".join(h["path"] for h in hits[:3]) or "[dim]nothing[/]")
        table.add_row(req, *row)
    console.print(table)
    summary = Table("engine", "status", "build s", "identity")
    for e in result["engines"]:
        status = "ok" if e["available"] and not e.get("error") else (e.get("error") or e["reason"])
        summary.add_row(e["engine"], status, f"{e['build_seconds']:.2f}" if e.get("build_seconds") is not None else "-",
                        (e.get("identity") or {}).get("id", "")[:19])
    console.print(summary)
