"""JSON text exactly as JavaScript's `JSON.stringify` writes it.

ContextBenchmark hashes `JSON.stringify(paths)` and writes its fingerprints with `JSON.stringify(fp, null, 1)`.
Python's `json.dumps` differs from both in small ways that change a SHA-256 (separators, number formatting,
the order of integer-like object keys, lone surrogates), so we reproduce the JavaScript algorithm
(ECMA-262 SerializeJSONProperty, ES2019+ "well-formed JSON.stringify") instead of tuning `json.dumps`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

__all__ = ["js_json_stringify"]

# Characters that JSON.stringify does not copy verbatim: the quote, the backslash, C0 controls, and UTF-16
# surrogates (which a Python str can hold as lone code points).
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

# JavaScript numbers are IEEE doubles: an int beyond this cannot survive a round trip through JSON.parse,
# so writing it would produce a file whose meaning differs between the two tools.
_MAX_SAFE_INTEGER = 2**53 - 1

# OrdinaryOwnPropertyKeys lists "array index" keys (canonical decimal integers up to 2**32 - 2) first, in
# ascending numeric order, then the remaining string keys in insertion order. JSON.stringify follows that
# order, so a query text such as "42" moves to the front of `queryHashes` in a file written by Node.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")
_MAX_ARRAY_INDEX = 2**32 - 2


def _quote(text: str) -> str:
    """QuoteJSONString: escape only what JavaScript escapes; non-ASCII stays as it is."""
    if not _NEEDS_ESCAPE.search(text):
        return f'"{text}"'
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        code = ord(ch)
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            # A high and low surrogate side by side are one character to JavaScript, written unescaped.
            low = ord(text[i + 1])
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
            i += 1
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")  # a lone surrogate: escaped since ES2019
        else:
            out.append(ch)
        i += 1
    return '"' + "".join(out) + '"'


def _number(value: float) -> str:
    """Number::toString for a double, from the shortest round-trip digits Python's repr also finds."""
    if math.isnan(value) or math.isinf(value):
        return "null"  # JSON has no NaN or Infinity; JavaScript writes null
    if value == 0:
        return "0"  # covers -0.0, which JavaScript also writes as "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).as_tuple()[1:]
    raw = "".join(map(str, digits_tuple))
    digits = raw.rstrip("0")
    exponent += len(raw) - len(digits)  # type: ignore[operator]
    k = len(digits)
    n = k + exponent  # the value is 0.digits * 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + body


def _ordered_keys(obj: Mapping[Any, Any]) -> list[str]:
    index_keys: list[tuple[int, str]] = []
    other_keys: list[str] = []
    for key in obj:
        if not isinstance(key, str):
            raise TypeError(f"object keys must be str, not {type(key).__name__}: {key!r}")
        if _ARRAY_INDEX.fullmatch(key) and int(key) <= _MAX_ARRAY_INDEX:
            index_keys.append((int(key), key))
        else:
            other_keys.append(key)
    return [key for _, key in sorted(index_keys)] + other_keys


def _serialize(value: Any, gap: str, indent: str) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INTEGER:
            raise ValueError(f"integer {value} is beyond JavaScript's safe range and would be rounded by a reader")
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _quote(value)
    inner = indent + gap
    # Separators exactly as SerializeJSONObject/Array build them: nothing extra when there is no gap.
    item_sep = ",\n" + inner if gap else ","
    if isinstance(value, Mapping):
        keys = _ordered_keys(value)
        if not keys:
            return "{}"
        colon = ": " if gap else ":"
        parts = [_quote(key) + colon + _serialize(value[key], gap, inner) for key in keys]
        return "{\n" + inner + item_sep.join(parts) + "\n" + indent + "}" if gap else "{" + ",".join(parts) + "}"
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        if not value:
            return "[]"
        parts = [_serialize(item, gap, inner) for item in value]
        return "[\n" + inner + item_sep.join(parts) + "\n" + indent + "]" if gap else "[" + ",".join(parts) + "]"
    # JavaScript would drop or stringify unknown values in ways Python cannot mirror; refuse rather than guess.
    raise TypeError(f"cannot write {type(value).__name__} as JSON: {value!r}")


def js_json_stringify(value: Any, indent: int | str | None = None) -> str:
    """Return the text `JSON.stringify(value, null, indent)` produces in Node.js.

    - `indent` as in JavaScript: a number of spaces (clamped to 0..10) or a string (its first 10 characters);
      None or 0 gives the compact form with no spaces at all.
    - Strings: `"` and backslash escaped, `\\b \\f \\n \\r \\t` short, other C0 controls as `\\u00xx` (lowercase
      hex), lone surrogates as `\\udxxx`; everything else, including non-ASCII, U+007F and U+2028, verbatim.
    - Numbers: JavaScript's shortest form (`1`, not `1.0`; `1e+21`; `1e-7`); NaN and infinities as `null`.
    - Object keys: array-index keys ("0", "42") first in numeric order, then the rest in insertion order.

    Raises TypeError for values JSON cannot hold (bytes, sets, non-str keys) and ValueError for an int
    JavaScript cannot represent exactly.
    """
    if indent is None:
        gap = ""
    elif isinstance(indent, bool):
        raise TypeError("indent must be an int, a str or None")
    elif isinstance(indent, int):
        gap = " " * max(0, min(10, indent))
    else:
        gap = indent[:10]
    return _serialize(value, gap, "")
