"""The one way an engine is opened from its spec: by the planning process and by every worker."""

from __future__ import annotations

from typing import Any, Sequence

from ctxgauge.engines import engine_available, get_engine, refuse_same_system
from ctxgauge.errors import UserError


def open_engine(spec: str) -> Any:
    """The engine `spec` names, checked available here; UserError (unknown engine, bad parameter, not
    available here and why) otherwise."""
    eng = get_engine(spec)
    ok, why = engine_available(eng)
    if not ok:
        raise UserError(f"engine {eng.name} is not available here: {why}")
    return eng


def open_engines(engine: str, vs: str | None = None) -> list[Any]:
    """The measured engine and, with `vs`, the one compared (refused when both are the same system)."""
    out = [open_engine(engine)]
    try:
        if vs is not None:
            out.append(open_engine(vs))
            refuse_same_system(engine, vs, *out)
    except BaseException:
        close_engines(out)
        raise
    return out


def close_engines(engines: Sequence[Any]) -> None:
    """End the engines' processes (an engine without `close` holds none)."""
    for eng in engines:
        close = getattr(eng, "close", None)
        if callable(close):
            close()
