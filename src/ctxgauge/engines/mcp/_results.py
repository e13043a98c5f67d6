"""Reading a search tool's answer: what ctxgauge understands of an MCP `tools/call` result.

Works on the result as plain JSON (`CallToolResult` dumped by alias), so it needs no SDK and is tested on
its own. In order, the first that yields anything is used:

1. `structuredContent`, when the tool declares an output schema: a list of objects, top-level or under
   one key (the SDK wraps a returned list as `{"result": [...]}`).
2. The content blocks: `resource_link` and embedded `resource` blocks with `file://` URIs (a URI's path);
   a `text` block holding JSON (a list of objects, or an object with one list); else its lines, each
   `path:line`, `path:start-end` or `path:line:text`. A line that does not parse is counted, never guessed.

An object's path is its first field of PATH_FIELDS (or the field `fields` names), its score `score`, its
lines `start_line`/`end_line`, `line`, or `start`/`end`. Paths are returned as the server wrote them;
`_engine` makes them relative to the corpus and enforces the contract.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

PATH_FIELDS = ("path", "file", "file_path", "filepath", "filename", "uri")
"""Object fields read as the result's path, first present wins (`fields={"path": "..."}` names another)."""
LINE_FIELDS = (("start_line", "end_line"), ("line_start", "line_end"), ("start", "end"), ("line", "line"))
"""Pairs of object fields read as a 1-based inclusive line range, first present wins."""
_LINE = re.compile(r"^(?P<path>[^:\s][^:]*?):(?P<a>\d+)(?:-(?P<b>\d+))?(?::.*)?$")


@dataclass
class Item:
    """One result as the server gave it: a path (or URI path), an optional score, an optional line range."""

    path: str
    score: Any = None
    lines: tuple[int, int] | None = None


@dataclass
class Reading:
    """What was read from one answer: items in the server's order, how, and what could not be read."""

    items: list[Item] = field(default_factory=list)
    how: str = "nothing"
    """`structured`, `resource links`, `json text`, `text lines` or `nothing`."""
    unparsed: int = 0
    """Text lines (or list entries) that said nothing ctxgauge could read."""
    empty: bool = True
    """The answer held nothing at all (an empty list, no content): an empty ranking, not a failure."""


def _path_of(obj: dict, fields: dict) -> str | None:
    names = (fields["path"],) if "path" in fields else PATH_FIELDS
    for name in names:
        value = obj.get(name)
        if isinstance(value, str) and value:
            return uri_path(value) if name == "uri" or value.startswith("file://") else value
    return None


def _lines_of(obj: dict) -> tuple[int, int] | None:
    for a, b in LINE_FIELDS:
        start = obj.get(a)
        if isinstance(start, int) and not isinstance(start, bool) and start >= 1:
            end = obj.get(b)
            end = end if isinstance(end, int) and not isinstance(end, bool) and end >= start else start
            return (start, end)
    return None


def uri_path(uri: str) -> str | None:
    """The file path a `file://` URI names (percent-decoded); None for another scheme."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None if parsed.scheme else uri
    return unquote(parsed.path)


def _one_list(value: Any) -> list | None:
    """`value` when a list, the one list-valued field of an object, else None."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
    return None


def _objects(entries: list, fields: dict, reading: Reading) -> None:
    score_field = fields.get("score", "score")
    for entry in entries:
        path = _path_of(entry, fields) if isinstance(entry, dict) else entry if isinstance(entry, str) else None
        if not path:
            reading.unparsed += 1
            continue
        obj = entry if isinstance(entry, dict) else {}
        reading.items.append(Item(path, obj.get(score_field), _lines_of(obj)))


def read_result(result: dict, fields: dict | None = None) -> Reading:
    """Read one `CallToolResult` (as JSON) into items; see the module docstring for the order tried."""
    fields = fields or {}
    reading = Reading()
    structured = _one_list(result.get("structuredContent"))
    if structured is not None:
        reading.how, reading.empty = "structured", not structured
        _objects(structured, fields, reading)
        if reading.items or not structured:
            return reading
    blocks = result.get("content") or []
    reading.empty = reading.empty and not blocks
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "resource_link" or kind == "resource":
            uri = block.get("uri") if kind == "resource_link" else (block.get("resource") or {}).get("uri")
            path = uri_path(uri) if isinstance(uri, str) else None
            if path:
                reading.items.append(Item(path))
                reading.how = "resource links"
            else:
                reading.unparsed += 1
        elif kind == "text":
            _text(str(block.get("text") or ""), fields, reading)
        else:
            reading.unparsed += 1  # images, audio: nothing to rank
    return reading


def _text(text: str, fields: dict, reading: Reading) -> None:
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            entries = _one_list(json.loads(stripped))
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser descends: plain text
            entries = None
        if entries is not None:
            reading.how = "json text"
            _objects(entries, fields, reading)
            return
    for line in stripped.splitlines():
        line = line.strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            reading.unparsed += 1
            continue
        a = int(m["a"])
        b = int(m["b"]) if m["b"] else a
        reading.items.append(Item(m["path"], None, (a, max(a, b)) if a >= 1 else None))
        reading.how = "text lines"


def merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line ranges sorted and merged where they overlap or touch."""
    out: list[list[int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]
