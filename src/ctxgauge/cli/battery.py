"""`ctxgauge battery validate DIR`: check a question battery without calling any model."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ctxgauge.cli._common import console, print_json

battery_app = typer.Typer(help="Question batteries (Corograph's layout).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(battery_app, name="battery")


@battery_app.command("validate")
def validate(
    battery: str = typer.Argument(..., help="A battery directory or a bundled battery name (shelfd)."),
    repo: Optional[Path] = typer.Option(None, "--repo", help="A checkout of the battery's repository (default: as battery.json says)."),
    no_evidence: bool = typer.Option(False, "--no-evidence", help="Check the files only, not the gold's evidence against the pinned commit."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {battery, hash, questions, categories, evidence_checked}."),
) -> None:
    """Check every file of a battery, and that each gold fact's evidence is in the pinned commit.
    The first problem is one line on stderr, exit code 2."""
    import tempfile
    from collections import Counter

    from ctxgauge.errors import UserError
    from ctxgauge.suites.qa import check_evidence, load_battery, open_battery_corpus

    b = load_battery(battery)
    evidence_items = sum(len(b.gold[q.qid].evidence) for q in b.questions)
    if not no_evidence:
        with tempfile.TemporaryDirectory(prefix="ctxgauge-battery-") as tmp:
            problems = check_evidence(b, open_battery_corpus(b, Path(tmp), repo))
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UserError(f"battery {b.name}: {problems[0]}{more}")
    cats = Counter(c for q in b.questions for c in q.categories)
    result = {"battery": b.name, "path": str(b.path), "hash": b.digest, "commit": b.commit, "rev": b.rev,
              "questions": len(b.questions), "categories": dict(sorted(cats.items())),
              "exemplars": sum(len(v) for v in b.exemplars.values()), "policies": len(b.policies),
              "evidence_items": evidence_items, "evidence_checked": not no_evidence}
    if json_out:
        print_json(result)
        return
    checked = "evidence checked at" if not no_evidence else "evidence not checked; pinned to"
    console.print(f"[green]ok[/] battery {b.name} ({b.digest}): {len(b.questions)} questions, "
                  f"{result['exemplars']} exemplars, {len(b.policies)} policies; {evidence_items} {checked} "
                  f"{b.commit[:12]}" + (f" ({b.rev})" if b.rev else ""))
    console.print("categories: " + ", ".join(f"{c} {n}" for c, n in sorted(cats.items())))
