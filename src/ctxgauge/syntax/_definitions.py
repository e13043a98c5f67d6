"""Definitions as line ranges, per grammar: the one definition parser of ctxgauge.

Every definition node anywhere in a file (nested ones too: a method inside its class, a function inside a
function), found by one tree-sitter query per grammar (`DEFINITION_NODES`), as `(first line, last line)`,
1-based and inclusive (tree-sitter rows split on `\\n`, as ctxgauge's lines do), sorted and without
repeats. Two readings of the same parse:
- `DefinitionLines.of`: every node; a decorated Python definition appears twice, once from its first
  decorator (`decorated_definition`) and once from `def`/`class`. The graph engine chooses its spans from
  these (`engines/graph/_blocks.py`, which re-exports this module's names).
- `DefinitionLines.blocks` and `definitions(path, data)`: one range per definition, a decorated one from its
  first decorator (the `def`/`class` node inside a `decorated_definition` is left out). The block-level
  metrics read these (`metrics/spans.py`).

`innermost(defs, line)` and `line_blocks(defs)` name the block of a line: the shortest range containing it
(ranges from one tree nest or are disjoint; two that only overlap, which a line shared by the end of one
definition and the start of the next can make, go to the one starting later).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Mapping, Sequence

from ctxgauge.syntax._grammars import grammar_of, parser_and_query

Span = tuple[int, int]
"""`(first_line, last_line)`, 1-based and inclusive."""

DEFINITION_NODES: dict[str, tuple[str, ...]] = {
    "python": ("function_definition", "class_definition", "decorated_definition"),
    "javascript": ("function_declaration", "generator_function_declaration", "class_declaration",
                   "method_definition"),
    "typescript": ("function_declaration", "generator_function_declaration", "class_declaration",
                   "abstract_class_declaration", "method_definition", "interface_declaration",
                   "type_alias_declaration", "enum_declaration"),
    "go": ("function_declaration", "method_declaration", "type_declaration"),
    "java": ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
             "method_declaration", "constructor_declaration"),
    "rust": ("function_item", "struct_item", "enum_item", "union_item", "trait_item", "impl_item", "type_item",
             "const_item", "static_item", "macro_definition", "mod_item"),
}
DEFINITION_NODES["tsx"] = DEFINITION_NODES["typescript"]


def _lines(node: Any) -> Span:
    # tree-sitter rows are 0-based; a node ending at column 0 ends on the line before (its last newline).
    s, e = node.start_point[0] + 1, node.end_point[0] + (0 if node.end_point[1] == 0 else 1)
    return s, max(s, e)


class DefinitionLines:
    """Definition line ranges per (grammar, blob), with one parser and query per grammar (not thread-safe:
    each engine object holds its own)."""

    def __init__(self) -> None:
        self._parsers: dict[str, tuple[Any, Any]] = {}
        self._cache: dict[tuple[str, str], tuple[tuple[Span, ...], tuple[Span, ...]]] = {}

    def of(self, grammar: str, blob: str, data: bytes) -> tuple[Span, ...]:
        """Every definition node's lines (decorated Python definitions twice: see the module docstring)."""
        return self._both(grammar, blob, data)[0]

    def blocks(self, grammar: str, blob: str, data: bytes) -> tuple[Span, ...]:
        """One range per definition, a decorated one from its first decorator."""
        return self._both(grammar, blob, data)[1]

    def _both(self, grammar: str, blob: str, data: bytes) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        key = (grammar, blob)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self.parse(grammar, data)
        return found

    def parse(self, grammar: str, data: bytes) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        """(every definition node's lines, one range per definition) of `data`, uncached."""
        import tree_sitter

        if grammar not in self._parsers:
            self._parsers[grammar] = parser_and_query(
                grammar, " ".join(f"({t}) @d" for t in DEFINITION_NODES[grammar]))
        parser, query = self._parsers[grammar]
        root = parser.parse(data).root_node
        nodes = tree_sitter.QueryCursor(query).captures(root).get("d", [])
        every = {_lines(n) for n in nodes}
        blocks = {_lines(n) for n in nodes if n.parent is None or n.parent.type != "decorated_definition"}
        return tuple(sorted(every)), tuple(sorted(blocks))


def blob_id(data: bytes) -> str:
    """git's blob id of `data` (what `git hash-object` prints): the content key of the definitions cache."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_CACHE_MAX = 65536
_cache: dict[tuple[str, str], tuple[Span, ...]] = {}
_cache_lock = threading.Lock()
_local = threading.local()


def definitions(path: str, data: bytes) -> tuple[Span, ...]:
    """The definitions of a file as sorted `(start, end)` line ranges, one per definition (a decorated
    Python definition from its first decorator), nested ones included; () for a path without a grammar
    (`grammar_of`). Cached by grammar and content (git blob id) across calls and threads; each thread
    parses with its own parser."""
    grammar = grammar_of(path)
    if grammar is None:
        return ()
    key = (grammar, blob_id(data))
    found = _cache.get(key)
    if found is None:
        parser = getattr(_local, "parser", None)
        if parser is None:
            parser = _local.parser = DefinitionLines()
        found = parser.parse(grammar, data)[1]
        with _cache_lock:
            if len(_cache) >= _CACHE_MAX:
                _cache.clear()
            _cache[key] = found
    return found


def innermost(defs: Sequence[Span], line: int) -> Span | None:
    """The innermost definition of `defs` containing `line` (the shortest; of two as long, the one starting
    later), or None when the line is in none."""
    best: Span | None = None
    for s, e in defs:
        if s <= line <= e and (best is None or (e - s, -s) < (best[1] - best[0], -best[0])):
            best = (s, e)
    return best


def line_blocks(defs: Sequence[Span]) -> Mapping[int, Span]:
    """`innermost(defs, line)` for every line some definition contains, as one mapping (a line in none is
    absent)."""
    out: dict[int, Span] = {}
    # Longest first, and of equal length the earlier first, so each line ends with its innermost range.
    for s, e in sorted(set(defs), key=lambda d: (-(d[1] - d[0]), d[0])):
        for line in range(s, e + 1):
            out[line] = (s, e)
    return out
