"""Engine spec strings: `bm25`, `bm25(k1=1.2,b=0.75)`, `command(cmd="node engine.js",timeout=30)`.

A spec parses into a name and parameters and renders back into one canonical string (parameters sorted by
name, strings double-quoted, booleans `true`/`false`), so `parse_spec(str(spec)) == spec` and the one name
serves records, CLI flags, report labels and docs alike.

An engine declares its parameters (`Param`: default, type, range or choices) and `resolve_params` checks a
spec's parameters against them, so every engine refuses an unknown, ill-typed or out-of-range parameter
the same way (one line listing the parameters and their types), and a parameter given at its default is
dropped from the canonical name: `bm25(k1=1.2)` is `bm25`, one system in records, reports and the CLI.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ctxgauge.errors import UserError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_BARE = {"true": True, "false": False, "null": None, "none": None}


@dataclass(frozen=True)
class EngineSpec:
    """An engine name with its parameters. `str(spec)` is the canonical spec string."""

    name: str
    params: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({','.join(f'{k}={_render(v)}' for k, v in self.params)})"

    def with_params(self, **params: Any) -> "EngineSpec":
        merged = {**self.kwargs, **params}
        return EngineSpec(self.name, tuple(sorted(merged.items())))


def _render(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(v, ensure_ascii=False)


def _literal(node: ast.expr, spec: str) -> Any:
    if isinstance(node, ast.Name):
        return _BARE.get(node.id.lower(), node.id)  # a bare word is a string: `model=fast`
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)) or (
        isinstance(node, ast.Constant) and node.value is None
    ):
        return node.value
    raise UserError(f"bad engine spec {spec!r}: parameter values must be numbers, strings or true/false")


def parse_spec(spec: str | EngineSpec) -> EngineSpec:
    """Parse `name` or `name(key=value,...)`; a malformed spec is a UserError saying what is wrong."""
    if isinstance(spec, EngineSpec):
        return spec
    text = spec.strip()
    if _NAME.match(text):
        return EngineSpec(text)
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_.\-]*)\s*\((.*)\)\s*$", text, re.S)
    if not m:
        if "," in text and all(_NAME.match(part.strip()) for part in text.split(",")):
            # `--engine bm25,fusion`: two engines in one option, not a spec.
            parts = " ".join(f"--engine {part.strip()}" for part in text.split(","))
            raise UserError(f"bad engine spec {spec!r}: one engine per option; repeat --engine for more ({parts})")
        raise UserError(f"bad engine spec {spec!r}: write NAME or NAME(key=value,...), e.g. bm25(k1=1.2,b=0.75)")
    name, inner = m.group(1), m.group(2)
    try:
        call = ast.parse(f"f({inner})", mode="eval").body
    except SyntaxError:
        raise UserError(f"bad engine spec {spec!r}: parameters must read key=value,... (quote strings with commas)") from None
    assert isinstance(call, ast.Call)
    if call.args:
        raise UserError(f"bad engine spec {spec!r}: every parameter needs a name (key=value)")
    params = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise UserError(f"bad engine spec {spec!r}: every parameter needs a name (key=value)")
        params[kw.arg] = _literal(kw.value, spec)
    return EngineSpec(name, tuple(sorted(params.items())))


# -- declared parameters ------------------------------------------------------------------------------------

PARAM_TYPES = ("number", "integer", "boolean", "string")
"""What a declared parameter may hold: `number` (int or float, kept as float so `k1=1` and `k1=1.0` are
one engine), `integer`, `boolean` (true/false) or `string`."""


@dataclass(frozen=True)
class Param:
    """One declared engine parameter: its default, its type and the values it accepts.

    Engines declare parameters in their `defaults` table, either as a plain default (its type read from the
    value) or as a `Param` when the type cannot be read from the default (None) or the values have a range.
    """

    default: Any
    """The value used when the spec does not name the parameter; dropped from the canonical name."""
    type: str = ""
    """One of `PARAM_TYPES`; empty: read from the default."""
    ge: float | None = None
    """Smallest accepted value (numbers and integers), or None."""
    gt: float | None = None
    """Values must be greater than this (numbers and integers), or None."""
    le: float | None = None
    """Largest accepted value (numbers and integers), or None."""
    choices: tuple[str, ...] = ()
    """The accepted strings, when only some are (empty: any string)."""

    @property
    def kind(self) -> str:
        """The parameter's type: declared, else read from the default."""
        if self.type:
            return self.type
        d = self.default
        return ("boolean" if isinstance(d, bool) else "integer" if isinstance(d, int)
                else "number" if isinstance(d, float) else "string")

    def describe(self) -> str:
        """`number >= 0`, `integer from 1 to 4096`, `one of lucene, robertson`: for error messages."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        low = f">= {_num(self.ge)}" if self.ge is not None else f"> {_num(self.gt)}" if self.gt is not None else ""
        if self.ge is not None and self.le is not None:
            return f"{self.kind} from {_num(self.ge)} to {_num(self.le)}"
        high = f"<= {_num(self.le)}" if self.le is not None else ""
        return " ".join(x for x in (self.kind, low, high) if x)

    def check(self, name: str, value: Any) -> Any:
        """`value` as this parameter holds it (numbers as float), or ValueError saying what is wrong.
        None is accepted only where the default is None (the parameter is optional)."""
        if value is None and self.default is None:
            return None
        kind = self.kind
        wanted = f"{'an' if kind == 'integer' else 'a'} {self.describe()}" if not self.choices else self.describe()
        if kind == "boolean":
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, got {_render(value)}")
            return value
        if kind == "string":
            if not isinstance(value, str):
                raise ValueError(f"{name} must be a string, got {_render(value)} (quote it: {name}=\"...\")")
            if self.choices and value not in self.choices:
                raise ValueError(f"{name} must be {wanted}, got {_render(value)}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            finite = "finite " if isinstance(value, float) and not isinstance(value, bool) else ""
            raise ValueError(f"{name} must be {'an' if kind == 'integer' else 'a'} {finite}{kind}, got {_render(value)}")
        if kind == "integer" and float(value) != int(value):
            raise ValueError(f"{name} must be an integer, got {_render(value)}")
        held = int(value) if kind == "integer" else float(value)
        if (self.ge is not None and held < self.ge or self.gt is not None and held <= self.gt
                or self.le is not None and held > self.le):
            raise ValueError(f"{name} is out of range: it must be {wanted}, got {_render(value)}")
        return held


def _num(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else repr(x)


def declared(defaults: dict[str, Any]) -> dict[str, Param]:
    """An engine's `defaults` table with every entry as a `Param` (plain defaults wrapped)."""
    return {k: v if isinstance(v, Param) else Param(v) for k, v in defaults.items()}


def describe_params(params: dict[str, Param]) -> str:
    """`b: number from 0 to 1; k1: number >= 0`: every known parameter with its type, sorted by name."""
    return "; ".join(f"{k}: {p.describe()}" for k, p in sorted(params.items())) or "none"


def resolve_params(engine: str, defaults: dict[str, Any], given: dict[str, Any]) -> tuple[dict, dict]:
    """Check `given` against an engine's declared parameters. Returns (every parameter with its value,
    the given ones that differ from their default): the first is what the engine computes with, the second
    what its canonical name shows, so `bm25(k1=1.2)` (k1's default) and `bm25` are one engine with one
    name. An unknown parameter, a value of the wrong type or out of range is a UserError listing the
    engine's parameters and their types."""
    params = declared(defaults)
    for key in sorted(given):
        if key not in params:
            raise UserError(f"engine {engine!r} has no parameter {key!r} (parameters: {describe_params(params)})")
    full, shown = {}, {}
    for key, p in sorted(params.items()):
        default = p.check(key, p.default) if p.default is not None else None
        if key not in given:
            full[key] = default
            continue
        try:
            value = p.check(key, given[key])
        except ValueError as exc:
            raise UserError(f"engine {engine!r}: {exc} (parameters: {describe_params(params)})") from None
        full[key] = value
        if value != default or type(value) is not type(default):
            shown[key] = value
    return full, shown
