"""`ctxgauge engines`: every engine known (built-in and plugins), whether it can run here, its identity."""

from __future__ import annotations

import typer

from ctxgauge.cli._common import console, plain, print_json


def register(app: typer.Typer) -> None:
    app.command("engines")(engines)


def engines(json_out: bool = typer.Option(False, "--json", help="Print JSON: {engines: [{name, origin, available, reason, identity}]}.")) -> None:
    """List the engines: name, origin, available or why not, identity."""
    from ctxgauge.engines import describe_engines

    infos = describe_engines()
    if json_out:
        print_json({"engines": [i.to_dict() for i in infos]})
        return
    from rich.table import Table

    table = Table("engine", "origin", "available", "identity / reason")
    for i in infos:
        ident = i.identity["id"][:19] + "…" if i.identity else (i.reason or "")
        # Names, origins and reasons may come from installed plugins: user text, through `plain`.
        table.add_row(plain(i.name), plain(i.origin), "[green]yes[/]" if i.available else "[red]no[/]", plain(ident))
    console.print(table)
