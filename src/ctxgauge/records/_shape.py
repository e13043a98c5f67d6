"""Declared shapes of a suite's `spec`, `results` and unit lines: what the readers rely on, checked once when a
record is read.

A suite's `spec` and `results` are the suite's own (see `_model`), read as plain JSON by that suite's view.
Without a check, a record from someone else (or edited) holding a null or wrongly typed figure deep inside
crashes whichever reader touches it first, at one of dozens of places. So each suite declares, once, the shape
its readers rely on (the keys they read and the types they need), and one function checks a run against it
whenever a command reads a run's figures (`ctxgauge.report.check_run`: report, export, runs show,
`--baseline`, qa rescore): a mismatch is one UserError naming the file and the JSON path.

The language is small and declarative: `NUMBER`, `INT`, `STRING`, `BOOL`, `ANY`, `Opt(s)` (null allowed),
`ListOf(s)`, `MapOf(s)` (an object of any keys, each value an `s`) and `Obj({key: s}, required=(...))` (an
object; a listed key that is absent is fine unless required, a present one must match; unknown keys are
always allowed, so an older reader accepts a newer suite's additions).

The shapes live in the suite-view table (`ctxgauge.report._views.VIEWS`, which knows the suites; this package
never names one) and are passed to `check_sections` explicitly. Nothing is registered by importing a package:
a check that ran only when some module happened to be imported let `replay --baseline` read a damaged record
that `ctxgauge report` refused (and crash on it with a TypeError).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ctxgauge.errors import UserError


class Shape:
    """A declared JSON shape: `problem(value)` is None when `value` fits, else (path suffix, what
    was expected, what was found)."""

    def problem(self, value: Any) -> tuple[str, str, Any] | None:  # pragma: no cover - every shape overrides it
        raise NotImplementedError


@dataclass(frozen=True)
class _Scalar(Shape):
    name: str
    types: tuple[type, ...]

    def problem(self, value: Any) -> tuple[str, str, Any] | None:
        # bool is an int to Python, never a figure to a reader; and NaN/inf are numbers JSON may carry.
        if isinstance(value, self.types) and not (isinstance(value, bool) and bool not in self.types):
            return None
        return "", self.name, value


NUMBER = _Scalar("a number", (int, float))
INT = _Scalar("an integer", (int,))
STRING = _Scalar("a string", (str,))
BOOL = _Scalar("true or false", (bool,))


class _Any(Shape):
    def problem(self, value: Any) -> None:
        return None


ANY = _Any()


@dataclass(frozen=True)
class Opt(Shape):
    """`inner`, or null."""

    inner: Shape

    def problem(self, value: Any) -> tuple[str, str, Any] | None:
        return None if value is None else self.inner.problem(value)


@dataclass(frozen=True)
class ListOf(Shape):
    """A list whose every item is an `item`."""

    item: Shape

    def problem(self, value: Any) -> tuple[str, str, Any] | None:
        if not isinstance(value, list):
            return "", "a list", value
        for i, v in enumerate(value):
            if (p := self.item.problem(v)) is not None:
                return f"[{i}]{p[0]}", p[1], p[2]
        return None


@dataclass(frozen=True)
class MapOf(Shape):
    """An object of any keys whose every value is a `value`."""

    value: Shape

    def problem(self, value: Any) -> tuple[str, str, Any] | None:
        if not isinstance(value, Mapping):
            return "", "an object", value
        for k, v in value.items():
            if (p := self.value.problem(v)) is not None:
                return f".{k}{p[0]}", p[1], p[2]
        return None


@dataclass(frozen=True)
class Obj(Shape):
    """An object whose listed keys, where present, have their shapes (`required` ones must be present)."""

    fields: Mapping[str, Shape]
    required: tuple[str, ...] = field(default=())

    def problem(self, value: Any) -> tuple[str, str, Any] | None:
        if not isinstance(value, Mapping):
            return "", "an object", value
        for k in self.required:
            if k not in value:
                return f".{k}", "a value", _MISSING
        for k, s in self.fields.items():
            if k in value and (p := s.problem(value[k])) is not None:
                return f".{k}{p[0]}", p[1], p[2]
        return None


def found_words(value: Any) -> str:
    """What a stored value is, in a message's words: `null`, `true`, `the string 'ab'`, `an object`, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value[:20]!r}"
    return {dict: "an object", list: "a list", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


_MISSING = object()

def check_sections(shapes: Mapping[str, Shape | None], data: Mapping[str, Any], source: str) -> None:
    """Refuse a record whose sections do not fit their `shapes` (section name -> Shape, None: unchecked):
    UserError, one line naming `source` and the JSON path.

    A null or absent section is left to the reader (an unfinished run has no results)."""
    for section, shape in shapes.items():
        value = data.get(section)
        if shape is None or value is None:
            continue
        if (p := shape.problem(value)) is not None:
            path = f"{section}{p[0]}"
            found = "nothing" if p[2] is _MISSING else found_words(p[2])
            path = path.encode("unicode_escape").decode("ascii")  # a key may hold a line break
            raise UserError(f"{source}: {path}: expected {p[1]}, found {found}; "
                            "the record is damaged or not written by ctxgauge")
