"""The options several commands share, defined once so their names, defaults and help never drift apart.

Each function returns a fresh `typer.Option` (Typer reads its default from the parameter's default value),
so a command writes `out: Optional[Path] = out_option("replay")`.
"""

from __future__ import annotations

from typing import Any

import typer

OUT_HELP = ("Where the {what} is recorded (default ctxgauge-runs/{name}-<utc time>-<id>). A directory that "
            "already holds a {what} is refused unless --resume is given; any other non-empty one is refused.")
RESUME_HELP = ("Continue the unfinished {what} in --out with the same options: work already recorded is kept "
               "and not done again.")


def out_option(name: str, what: str = "run") -> Any:
    """`--out DIR`: where a suite command records its run (`name` is its default folder's prefix)."""
    return typer.Option(None, "--out", help=OUT_HELP.format(name=name, what=what))


def resume_option(what: str = "run") -> Any:
    """`--resume`: continue the unfinished run recorded in --out."""
    return typer.Option(False, "--resume", help=RESUME_HELP.format(what=what))


def check_resume(resume: bool, out: Any) -> None:
    """`--resume` continues a run recorded in --out: with an --out that does not exist there is nothing to
    continue (a mistyped folder silently started a fresh run), a user error."""
    from pathlib import Path

    from ctxgauge.errors import UserError

    if resume and out is not None and not Path(out).exists():
        raise UserError(f"{out}: no such folder, so no run to resume there; check the path, or drop --resume "
                        "to start a new run")
