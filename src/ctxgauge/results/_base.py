"""The one way a suite's typed record classes read and write JSON: `Record`, a dataclass base.

A subclass declares its fields with types and attribute docstrings; `from_json` reads (and checks) a JSON
object into it, `to_json` writes it back. The rules, each one a failure it prevents:

- Types come from the annotations (`int`, `float`, `str`, `bool`, `Any`, `X | None`, `list[X]`,
  `dict[str, X]`, another `Record`, or a union of those), checked on reading: a wrongly typed value is one
  UserError naming the JSON path (`results.summary.hit@5: expected a number, found the string 'x'`), never a
  TypeError deep in a reader. A `float` field keeps an int as an int (JSON's `1` stays `1`, so a record
  rewritten from its parsed form is byte for byte the one read); a bool is never a number.
- Keys a class does not declare are kept in its `extra` (a newer suite's additions, or parts not typed
  yet) and written back, so `from_json(x).to_json() == x` for every record its suite version writes.
- A field whose writer leaves it out when it has no value is declared `field(..., metadata=OMIT_NONE)`
  (or `OMIT_EMPTY`, or `omit_unless(other)` for a key written only beside another); every other field is
  always written, `None` as null.
- Older layouts are migrated by the class itself (`migrate`, a classmethod from the stored JSON to the
  current one), so every reader of the class reads every version the same way (inspect_ai's log model).

`shape_of(cls)` turns a class into the `ctxgauge.records` shape language, so what a reader relies on is
declared once, here, and the shapes checked by `check_run` can be derived instead of repeated.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Callable, ClassVar, Mapping, TypeVar, Union

from ctxgauge.errors import UserError
from ctxgauge.records import ANY, BOOL, INT, NUMBER, STRING, ListOf, MapOf, Obj, Opt, Shape
from ctxgauge.records._shape import found_words

OMIT_NONE = {"omit": "none"}
"""Field metadata: the writer leaves the key out when the value is None."""
OMIT_EMPTY = {"omit": "empty"}
"""Field metadata: the writer leaves the key out when the value is None or empty."""


def omit_unless(other: str) -> dict[str, str]:
    """Field metadata: the writer leaves the key out when the field `other` is None (a group of keys
    written together, where this one may be null)."""
    return {"omit": "unless", "other": other}


EMPTY_AS_NONE = {"none_as": {}}
"""Field metadata: an empty object is read as None and None written as an empty object (a typed part the
writer leaves empty when there is nothing to say, e.g. the figures of an unanswered question)."""
EXTRA = "extra"
"""Name of the field holding undeclared keys (every Record has it)."""

R = TypeVar("R", bound="Record")


class RecordError(UserError):
    """A stored value does not fit its typed class: one line naming where and what."""


class _Mismatch(Exception):
    def __init__(self, path: str, expected: str, value: Any):
        super().__init__(path)
        self.path, self.expected, self.value = path, expected, value


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Record)


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return typing.get_args(tp)
    return None


_SCALARS: dict[Any, tuple[str, tuple[type, ...]]] = {
    int: ("an integer", (int,)), float: ("a number", (int, float)), str: ("a string", (str,)),
    bool: ("true or false", (bool,)),
}


def _expected(tp: Any) -> str:
    if tp in _SCALARS:
        return _SCALARS[tp][0]
    if (args := _union_args(tp)) is not None:
        return " or ".join(_expected(a) for a in args)
    if tp is type(None):
        return "null"
    origin = typing.get_origin(tp)
    if origin is list:
        return "a list"
    if origin is dict or _is_record(tp):
        return "an object"
    return "a value"


def _fits(tp: Any, value: Any) -> bool:
    """Whether `value`'s JSON type is the one `tp` reads (without looking inside it)."""
    if tp is Any:
        return True
    if tp is type(None):
        return value is None
    if tp in _SCALARS:
        return isinstance(value, _SCALARS[tp][1]) and not (isinstance(value, bool) and tp is not bool)
    origin = typing.get_origin(tp)
    if origin is list:
        return isinstance(value, list)
    if origin is dict or _is_record(tp):
        return isinstance(value, Mapping)
    if (args := _union_args(tp)) is not None:
        return any(_fits(a, value) for a in args)
    return False


@functools.lru_cache(maxsize=None)
def _reader(tp: Any) -> Callable[[Any], Any]:
    """The reader of one annotation, made once per type: value -> the typed value, or _Mismatch (its path
    relative to the value; each container prefixes its own part on the way out, so no path string is built
    unless a value is wrong)."""
    if tp is Any:
        return _same
    if (args := _union_args(tp)) is not None:
        options = [(a, _reader(a)) for a in args]
        expected = _expected(tp)

        def union(value: Any) -> Any:
            for a, read in options:
                if _fits(a, value):
                    return read(value)
            raise _Mismatch("", expected, value)
        return union
    if tp is type(None):
        def null(value: Any) -> Any:
            if value is not None:
                raise _Mismatch("", "null", value)
            return value
        return null
    if tp in _SCALARS:
        name, kinds = _SCALARS[tp]
        no_bool = tp is not bool

        def scalar(value: Any) -> Any:
            if not isinstance(value, kinds) or (no_bool and isinstance(value, bool)):
                raise _Mismatch("", name, value)
            return value
        return scalar
    if _is_record(tp):
        return tp._read
    origin = typing.get_origin(tp)
    if origin is list:
        item = _reader((typing.get_args(tp) or (Any,))[0])

        def many(value: Any) -> Any:
            if not isinstance(value, list):
                raise _Mismatch("", "a list", value)
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(item(v))
                except _Mismatch as m:
                    m.path = f"[{i}]{m.path}"
                    raise
            return out
        return many
    if origin is dict:
        item = _reader((typing.get_args(tp) or (str, Any))[1])

        def mapping(value: Any) -> Any:
            if not isinstance(value, Mapping):
                raise _Mismatch("", "an object", value)
            out = {}
            for k, v in value.items():
                try:
                    out[k] = item(v)
                except _Mismatch as m:
                    m.path = f".{k}{m.path}"
                    raise
            return out
        return mapping
    return _same


def _same(value: Any) -> Any:
    return value


def _write(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, list):
        return [_write(v) for v in value]
    if isinstance(value, dict):
        return {k: _write(v) for k, v in value.items()}
    return value


def _shape(tp: Any) -> Shape:
    if tp is Any:
        return ANY
    if (args := _union_args(tp)) is not None:
        rest = [a for a in args if a is not type(None)]
        inner = _shape(rest[0]) if len(rest) == 1 else ANY  # a union of kinds: checked by from_json only
        return Opt(inner) if len(rest) < len(args) else inner
    if tp in _SCALARS:
        return {int: INT, float: NUMBER, str: STRING, bool: BOOL}[tp]
    if _is_record(tp):
        return tp.shape()
    origin = typing.get_origin(tp)
    if origin is list:
        return ListOf(_shape((typing.get_args(tp) or (Any,))[0]))
    if origin is dict:
        return MapOf(_shape((typing.get_args(tp) or (str, Any))[1]))
    return ANY


@dataclasses.dataclass
class Record:
    """Base of every typed record class (see the module docstring). Subclasses are dataclasses; the JSON
    keys are the field names, or `key` in a field's metadata where the JSON name is not an identifier."""

    extra: dict[str, Any] = dataclasses.field(default_factory=dict, kw_only=True, repr=False)
    """Keys of the stored object this class does not declare, kept as stored and written back."""

    _hints: ClassVar[dict[type, list]] = {}
    _plans: ClassVar[dict[type, tuple]] = {}

    # -- the class's description ------------------------------------------------------------------------
    @classmethod
    def _fields(cls) -> list[tuple[dataclasses.Field, str, Any]]:
        """(field, JSON key, type) of every declared field but `extra`, made once per class."""
        found = Record._hints.get(cls)
        if found is None:
            hints = typing.get_type_hints(cls)
            found = Record._hints[cls] = [(f, f.metadata.get("key", f.name), hints[f.name])
                                          for f in dataclasses.fields(cls) if f.name != EXTRA]
        return found

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The stored JSON in the current layout (a class whose layout changed overrides this)."""
        return data

    @classmethod
    def shape(cls) -> Obj:
        """This class in the `ctxgauge.records` shape language: every declared key optional (a reader gets
        the default), unknown keys free."""
        required = tuple(key for f, key, _ in cls._fields()
                         if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
        return Obj({key: _shape(tp) for _, key, tp in cls._fields()}, required=required)

    # -- reading and writing ----------------------------------------------------------------------------
    @classmethod
    def from_json(cls: type[R], data: Any, source: str = "record", path: str = "") -> R:
        """Read (migrating an older layout first) and check `data`; RecordError naming `source` and the
        JSON path below `path` when a value does not fit."""
        try:
            return cls._read(data)
        except _Mismatch as m:
            found = "nothing" if m.value is _MISSING else found_words(m.value)
            where = f"{path}{m.path}".lstrip(".").encode("unicode_escape").decode("ascii") or "(top)"
            raise RecordError(f"{source}: {where}: expected {m.expected}, found {found}; "
                              "the record is damaged or not written by ctxgauge") from None

    @classmethod
    def _plan(cls) -> tuple[tuple[tuple[str, str, Callable[[Any], Any], Any, bool, Any], ...], frozenset[str]]:
        """((field name, JSON key, reader, type, required, none_as) per declared field, the JSON keys), made
        once per class."""
        plan = Record._plans.get(cls)
        if plan is None:
            rows = tuple((f.name, key, _reader(tp), tp,
                          f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                          f.metadata.get("none_as", _NO_NONE_AS))
                         for f, key, tp in cls._fields())
            plan = Record._plans[cls] = (rows, frozenset(row[1] for row in rows))
        return plan

    @classmethod
    def _read(cls: type[R], data: Any) -> R:
        if not isinstance(data, dict) and not isinstance(data, Mapping):
            raise _Mismatch("", "an object", data)
        if cls.migrate is not Record.migrate:
            data = cls.migrate(dict(data))
        kwargs: dict[str, Any] = {}
        plan, known = cls._plan()
        for name, key, read, tp, required, none_as in plan:
            if key in data:
                value = data[key]
                if none_as is not _NO_NONE_AS and value == none_as:
                    kwargs[name] = None
                    continue
                try:
                    kwargs[name] = read(value)
                except _Mismatch as m:
                    m.path = f".{key}{m.path}"
                    raise
            elif required:
                raise _Mismatch(f".{key}", _expected(tp), _MISSING)
        kwargs[EXTRA] = {k: v for k, v in data.items() if k not in known} if len(data) > len(kwargs) else {}
        return cls(**kwargs)

    def to_json(self) -> dict[str, Any]:
        """The JSON object: declared fields by key (omitted as their metadata says), then `extra`."""
        out: dict[str, Any] = {}
        for f, key, _ in self._fields():
            value = getattr(self, f.name)
            omit = f.metadata.get("omit")
            if ((omit == "none" and value is None) or (omit == "empty" and value in (None, [], {}, ""))
                    or (omit == "unless" and getattr(self, f.metadata["other"]) is None)):
                continue
            out[key] = f.metadata["none_as"] if value is None and "none_as" in f.metadata else _write(value)
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out


_MISSING = object()
_NO_NONE_AS = object()


def shape_of(cls: type[Record]) -> Obj:
    """`cls.shape()`: the shape a reader of `cls` relies on (see `ctxgauge.records._shape`)."""
    return cls.shape()
