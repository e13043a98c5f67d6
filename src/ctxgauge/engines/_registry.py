"""The one engine registry: built-ins by name, plugins from the `ctxgauge.engines` entry-point group.

Built-ins are named here by import path and loaded only when asked for, so `--help` never pays for torch.
A plugin's entry point names a class or factory called with the spec's parameters as keyword arguments.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass
from typing import Any, Callable

from ctxgauge.engines._spec import EngineSpec, parse_spec
from ctxgauge.errors import UserError

ENTRY_POINT_GROUP = "ctxgauge.engines"

BUILTINS: dict[str, str] = {
    "grep": "ctxgauge.engines.grep:GrepEngine",
    "bm25": "ctxgauge.engines.bm25:BM25Engine",
    "minilm": "ctxgauge.engines.minilm:MiniLMEngine",
    "graph": "ctxgauge.engines.graph:GraphEngine",
    "hybrid": "ctxgauge.engines.hybrid:HybridEngine",
    "command": "ctxgauge.engines.command:CommandEngine",
    "history": "ctxgauge.engines.history:HistoryEngine",
    "fusion": "ctxgauge.engines.fusion:FusionEngine",
    "mcp": "ctxgauge.engines.mcp:McpEngine",
}
# The engines `demo` and the suites run when none is named (command needs a program to run). fusion, the
# strongest, costs the demo about 5 CPU seconds on the bundled sample (its whole default set: about 2 minutes).
REFERENCE_ENGINES = ("grep", "bm25", "minilm", "graph", "hybrid", "fusion")


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep for ep in sorted(eps, key=lambda e: e.name)}


def engine_names() -> list[str]:
    """Every engine name known: built-ins first, then plugins, each once (a built-in wins a name clash)."""
    return list(BUILTINS) + [n for n in _entry_points() if n not in BUILTINS]


def unknown_engine(name: str, note: str = "") -> str:
    """The one line for an engine name nobody registered: the closest known name first (`bm52`, `fuson`,
    `BM25`: a typo or a case slip), then every known name."""
    import difflib

    names = engine_names()
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    hint = f"did you mean {lowered[close[0]]!r}? " if close else ""
    return f"unknown engine {name!r} ({hint}known: {', '.join(names)}{'; ' + note if note else ''})"


def _load_factory(name: str) -> Callable[..., Any]:
    if name in BUILTINS:
        module, attr = BUILTINS[name].split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ImportError as exc:  # a missing optional dependency surfaces in available()
            raise UserError(f"engine {name!r} cannot load: {exc}") from None
    eps = _entry_points()
    if name not in eps:
        raise UserError(unknown_engine(name, f"plugins register under {ENTRY_POINT_GROUP!r}"))
    try:
        return eps[name].load()
    except Exception as exc:  # a plugin that fails to import is the user's to mend, not a traceback
        raise UserError(f"engine plugin {name!r} ({eps[name].value}) failed to import: {type(exc).__name__}: {exc}") from None


def get_engine(spec: str | EngineSpec):
    """An engine object for a spec string such as `bm25(k1=1.2,b=0.75)`."""
    parsed = parse_spec(spec)
    return _construct(parsed, _load_factory(parsed.name))


def _construct(parsed: EngineSpec, factory: Callable[..., Any]):
    try:
        engine = factory(**parsed.kwargs)
    except UserError:
        raise
    except TypeError as exc:
        raise UserError(f"engine {parsed.name!r} rejected its parameters: {exc}") from None
    for attr in ("name", "identity", "build", "query"):
        if not hasattr(engine, attr):
            raise UserError(f"engine {parsed.name!r} does not follow the engine contract: no {attr!r}")
    return engine


def canonical_spec(spec: str | EngineSpec) -> EngineSpec:
    """The one name of the system `spec` describes: parameters checked against the engine's declarations
    (a UserError for an unknown, ill-typed or out-of-range one) and those at their default dropped, so
    `bm25(k1=1.2)` and `bm25` give `bm25`. A known engine that cannot load here (a missing optional
    dependency) keeps its spec as written; it is reported as skipped, never run under another name."""
    parsed = parse_spec(spec)
    try:
        factory = _load_factory(parsed.name)
    except UserError:
        if parsed.name not in engine_names():
            raise
        return parsed
    engine = _construct(parsed, factory)
    try:
        own = getattr(engine, "spec", None)
        return own if isinstance(own, EngineSpec) else parsed
    finally:
        close = getattr(engine, "close", None)
        if callable(close):
            close()


def same_system(a, b) -> bool:
    """Whether two engine objects are one system: the same canonical name (so `bm25` and `bm25(k1=1.2)`
    are) and the same identity (two objects under one name that compute different things are two
    systems). Comparing a system with itself measures nothing, so `--vs` refuses it."""
    return str(a.name) == str(b.name) and a.identity() == b.identity()


def refuse_same_system(engine_spec: str, vs_spec: str, a, b) -> None:
    """`--vs` naming the engine measured is a user error: one line that names another engine to compare with
    (grep, unless grep is the one measured: then bm25)."""
    if same_system(a, b):
        other = "bm25" if str(a.name) == "grep" else "grep"
        raise UserError(f"--vs {vs_spec} is the engine measured (--engine {engine_spec}: both are {a.name}): "
                        f"compare against another engine, e.g. --vs {other}")


@dataclass(frozen=True)
class EngineInfo:
    """One row of `ctxgauge engines`: name, where it comes from, whether it can run (and why not), identity."""

    name: str
    origin: str
    available: bool
    reason: str | None
    identity: dict | None

    def to_dict(self) -> dict:
        return {"name": self.name, "origin": self.origin, "available": self.available, "reason": self.reason,
                "identity": self.identity}


def engine_available(engine) -> tuple[bool, str | None]:
    check = getattr(engine, "available", None)
    return check() if callable(check) else (True, None)


def describe_engines() -> list[EngineInfo]:
    """Every known engine with its availability and identity; failures become reasons, never exceptions."""
    infos = []
    for name in engine_names():
        origin = "built-in" if name in BUILTINS else "plugin"
        if name == "command":
            infos.append(EngineInfo(name, origin, True, "needs cmd=...: command(cmd=\"PROGRAM ARGS\")", None))
            continue
        if name == "mcp":
            # By its registry name, as every built-in is loaded: listing engines computes nothing of
            # any engine's results, so the engines that run others by name (hybrid) do not hash mcp's code.
            mcp = importlib.import_module(BUILTINS["mcp"].split(":")[0])
            ok = mcp.sdk_installed()
            why = ('needs cmd=... or url=...: mcp(cmd="SERVER ARGS",tool="search")' if ok
                   else f"needs the MCP SDK: {mcp.INSTALL}")
            infos.append(EngineInfo(name, origin, ok, why, None))
            continue
        try:
            engine = get_engine(name)
            ok, why = engine_available(engine)
            infos.append(EngineInfo(name, origin, ok, why, engine.identity() if ok else None))
        except UserError as exc:
            infos.append(EngineInfo(name, origin, False, str(exc), None))
    return infos
