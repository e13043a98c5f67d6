"""js_json_stringify: hand-checked cases, then Node's own JSON.stringify as the oracle."""

from __future__ import annotations

import math

import pytest

from ctxgauge.fingerprints import js_json_stringify

# (value, expected compact text), each expectation read off the ECMAScript algorithm.
CASES = [
    ([], "[]"),
    ({}, "{}"),
    (["a", "b"], '["a","b"]'),
    ({"a": 1, "b": [True, False, None]}, '{"a":1,"b":[true,false,null]}'),
    ('q"uote\\back', r'"q\"uote\\back"'),
    ("\n\t\r\b\f", r'"\n\t\r\b\f"'),
    ("\x00\x01\x1f", r'"\u0000\u0001\u001f"'),
    ("\x7f", '"\x7f"'),  # DEL is not a control character to JSON
    ("é/日本/😀", '"é/日本/😀"'),  # non-ASCII stays verbatim
    ("\u2028\u2029", '"\u2028\u2029"'),
    ("\ud800", r'"\ud800"'),  # lone surrogate: escaped, lowercase
    ("\udfff", r'"\udfff"'),
    ("\ud83d\ude00", '"😀"'),  # a surrogate pair in a Python str is one character to JavaScript
    ("/", '"/"'),  # JSON.stringify never escapes the solidus
    (1.0, "1"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (123.456, "123.456"),
    (float("nan"), "null"),
    (math.inf, "null"),
    (-math.inf, "null"),
    (2**53 - 1, "9007199254740991"),
    ({"b": 1, "10": 2, "2": 3, "01": 4, "-1": 5}, '{"2":3,"10":2,"b":1,"01":4,"-1":5}'),
    ({"a": 3, "4294967295": 2, "4294967294": 1}, '{"4294967294":1,"a":3,"4294967295":2}'),
]


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_compact(value: object, expected: str) -> None:
    assert js_json_stringify(value) == expected


def test_indent_one_like_the_reference_writer() -> None:
    value = {"a": {"b": [1, 2], "c": {}, "d": []}, "e": "x"}
    expected = '{\n "a": {\n  "b": [\n   1,\n   2\n  ],\n  "c": {},\n  "d": []\n },\n "e": "x"\n}'
    assert js_json_stringify(value, 1) == expected


@pytest.mark.parametrize(("indent", "gap"), [
    (0, ""), (None, ""), (2, "  "), (12, " " * 10), ("\t", "\t"), ("abcdefghijkl", "abcdefghij"),
])
def test_indent_forms(indent: int | str | None, gap: str) -> None:
    text = js_json_stringify([1], indent)
    assert text == ("[1]" if not gap else f"[\n{gap}1\n]")


@pytest.mark.parametrize("value", [b"x", {1: "a"}, {1, 2}, object()])
def test_refuses_values_json_cannot_hold(value: object) -> None:
    with pytest.raises(TypeError):
        js_json_stringify(value)


def test_refuses_integers_javascript_would_round() -> None:
    with pytest.raises(ValueError, match="safe range"):
        js_json_stringify(2**53)


# Values sent to Node as ASCII JSON; Node parses and re-serialises them, and we must produce the same text.
NODE_VALUES = [
    ["src/auth/login.ts", "src/cart/cart.ts"],
    ["é", "日本語/ファイル.ts", "emoji 😀", "\u2028\u2029", "\x7f", "\u00a0", "\ufeff"],
    ["".join(chr(c) for c in range(0x20)) + '"\\/'],
    ["\ud800", "x\udc00y", "\ud83d\ude00"],
    [0.1, 1e21, 1e-7, 1e-6, 123e-20, 5e-324, 1.7976931348623157e308, -0.0, 100.0, 2**53 - 1, 123456789012345680000.0],
    {"z": 1, "10": 2, "2": 3, "01": 4, "a": {"1": [], "b": {}}, "4294967295": 5, "4294967294": 6},
    {"contextbenchmarkFingerprint": 2, "system": None, "queryHashes": {"q": "h", "42": "g"}},
]


@pytest.mark.parametrize("value", NODE_VALUES)
@pytest.mark.parametrize("indent", [None, 1])
def test_matches_node(node, value: object, indent: int | None) -> None:  # type: ignore[no-untyped-def]
    script = f"process.stdout.write(JSON.stringify(input, null, {'undefined' if indent is None else indent}));"
    assert js_json_stringify(value, indent) == node(script, value)
