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
    from ctxgauge.report._fit import FREE, WHOLE, Col, Fitted

    # The identity id whole (a narrow terminal leaves the column out, --json has it); the reason is free text.
    cols = [Col("engine", WHOLE), Col("origin", WHOLE, drop=2), Col("available", WHOLE),
            Col("identity", WHOLE, drop=1), Col("reason", FREE)]
    # Names, origins and reasons may come from installed plugins: user text, through `plain`.
    rows = [[plain(i.name), plain(i.origin), "[green]yes[/]" if i.available else "[red]no[/]",
             plain(i.identity["id"] if i.identity else "-"), plain(i.reason or "")] for i in infos]
    console.print(Fitted(cols, rows))
