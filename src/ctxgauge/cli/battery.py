"""`ctxgauge battery validate DIR`: check a question battery without calling any model."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ctxgauge.cli._common import console, err_console, plain, print_json

battery_app = typer.Typer(help="Question batteries (Corograph's layout).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(battery_app, name="battery")


@battery_app.command("validate")
def validate(
    battery: str = typer.Argument(..., help="A battery directory, a Corograph repository folder holding one battery, or a bundled battery name (shelfd)."),
    repo: Optional[Path] = typer.Option(None, "--repo", help="A local clone or bare git directory of the battery's repository (default: as battery.json says; required for a Corograph battery's anchors to be checked)."),
    no_evidence: bool = typer.Option(False, "--no-evidence", help="Check the files only, not the gold's evidence and anchors against the pinned commit."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {battery, hash, questions, categories, evidence_checked, anchors: {anchors, ok, not_checked, ...}, short_forms}."),
) -> None:
    """Check every file of a battery, that each gold fact's evidence is in the pinned commit, and that
    every `path:line` anchor in the gold names a file and line there. The first problem is one line on
    stderr, exit code 2 (an anchor whose file has no such line is one). An anchor whose file cannot be found
    is a warning, as is one several files fit. Without the code (a Corograph battery without --repo)
    anchors are reported "not checked", never passed."""
    import tempfile
    from collections import Counter

    from ctxgauge.errors import UserError
    from ctxgauge.suites.qa import check_evidence, load_battery, open_battery_corpus
    from ctxgauge.suites.qa.sources._anchors import anchor_summary, check_anchors
    from ctxgauge.suites.qa.judging._scoring import short_forms

    b = load_battery(battery)
    evidence_items = sum(len(b.gold[q.qid].evidence) for q in b.questions)
    has_code = repo is not None or bool({"sample", "path"} & set(b.repository))
    checked = not no_evidence and has_code
    if checked:
        with tempfile.TemporaryDirectory(prefix="ctxgauge-battery-") as tmp:
            corpus = open_battery_corpus(b, Path(tmp), repo)
            problems = check_evidence(b, corpus)
            anchors = anchor_summary(check_anchors(b, corpus))
        problems += anchors["problems"]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UserError(f"battery {b.name}: {problems[0]}{more}")
    else:
        anchors = anchor_summary(check_anchors(b, None))
    short = [{"qid": q.qid, "form": form, "why": why} for q in b.questions for form, why in short_forms(b.gold[q.qid])]
    cats = Counter(c for q in b.questions for c in q.categories)
    result = {"battery": b.name, "path": str(b.path), "hash": b.digest, "commit": b.commit, "rev": b.rev,
              "layout": b.layout, "repository": b.repository, "files": list(b.files),
              "questions": len(b.questions), "categories": dict(sorted(cats.items())),
              "exemplars": sum(len(v) for v in b.exemplars.values()), "policies": len(b.policies),
              "amendments": len(b.amendments), "evidence_items": evidence_items, "evidence_checked": checked,
              "anchors": anchors, "short_forms": short}
    if json_out:
        print_json(result)
        return
    pinned = "evidence checked at" if checked else "evidence not checked; pinned to"
    # The battery's name, commit, revision, categories, ids and key forms are read from its files: `plain`.
    console.print(f"[green]ok[/] battery {plain(b.name)} ({plain(b.digest)}): {len(b.questions)} questions, "
                  f"{result['exemplars']} exemplars, {len(b.policies)} policies, {len(b.amendments)} amendments; "
                  f"{evidence_items} evidence item(s) {pinned} {plain(b.commit[:12])}"
                  + (f" ({plain(b.rev)})" if b.rev else ""), soft_wrap=True)
    if checked:
        unfound = anchors["no_file"] + anchors["unresolved"]
        console.print(f"anchors: {anchors['ok']} of {anchors['anchors']} path:line anchors found at the commit"
                      + (f", {anchors['ambiguous']} ambiguous (not checked)" if anchors["ambiguous"] else "")
                      + (f", {unfound} whose file was not found (warnings)" if unfound else ""))
        for line in anchors["warnings"]:
            err_console.print(f"[yellow]warning:[/] {plain(line)}", soft_wrap=True)
    elif anchors["anchors"]:
        why = "--no-evidence" if no_evidence else "no code: give --repo PATH to a clone"
        console.print(f"[yellow]anchors: {anchors['anchors']} path:line anchors not checked[/] ({why})")
    console.print(plain("categories: " + ", ".join(f"{c} {n}" for c, n in sorted(cats.items()))), soft_wrap=True)
    for s in short:
        err_console.print(f"[yellow]warning:[/] gold {plain(s['qid'])}: key form {plain(repr(s['form'][:60]))} is "
                          f"{plain(s['why'])}, not "
                          "an answer: tier 1 (ctxgauge-qa-2) never passes an answer on it alone",
                          soft_wrap=True)
