"""Engine spec strings: `bm25`, `bm25(k1=1.2,b=0.75)`, `command(cmd="node engine.js",timeout=30)`.

A spec parses into a name and parameters and renders back into one canonical string (parameters sorted by
name, strings double-quoted, booleans `true`/`false`), so `parse_spec(str(spec)) == spec` and the one name
serves records, CLI flags, report labels and docs alike.
"""

from __future__ import annotations

import ast
import json
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
