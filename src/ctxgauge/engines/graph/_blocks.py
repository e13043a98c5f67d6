"""Definitions as line ranges: the units graph's spans are chosen from (`engines/_spans_rank.py`).

Every definition node anywhere in a file (nested ones too: a method inside its class, a function inside a
function), found by one tree-sitter query per grammar, as `(first line, last line)`, 1-based and inclusive,
sorted and without repeats. A Python definition's decorators belong to it (`decorated_definition`). The
span ranker scores these units and keeps the best ones that share no line; a unit longer than a window is
replaced by the windows inside it.
"""

from __future__ import annotations

from typing import Any

from ctxgauge.engines.graph._parse import parser_and_query

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


class DefinitionLines:
    """Definition line ranges per (grammar, blob), with one parser and query per grammar (not thread-safe:
    each engine object holds its own)."""

    def __init__(self) -> None:
        self._parsers: dict[str, tuple[Any, Any]] = {}
        self._cache: dict[tuple[str, str], tuple[tuple[int, int], ...]] = {}

    def of(self, grammar: str, blob: str, data: bytes) -> tuple[tuple[int, int], ...]:
        key = (grammar, blob)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._parse(grammar, data)
        return found

    def _parse(self, grammar: str, data: bytes) -> tuple[tuple[int, int], ...]:
        import tree_sitter

        if grammar not in self._parsers:
            self._parsers[grammar] = parser_and_query(
                grammar, " ".join(f"({t}) @d" for t in DEFINITION_NODES[grammar]))
        parser, query = self._parsers[grammar]
        root = parser.parse(data).root_node
        nodes = tree_sitter.QueryCursor(query).captures(root).get("d", [])
        # tree-sitter rows are 0-based; a node ending at column 0 ends on the line before (its last newline).
        ranges = {(n.start_point[0] + 1, n.end_point[0] + (0 if n.end_point[1] == 0 else 1)) for n in nodes}
        return tuple(sorted((s, max(s, e)) for s, e in ranges))
