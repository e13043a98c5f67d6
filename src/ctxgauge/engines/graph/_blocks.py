"""Definitions as line ranges: the units graph's spans are chosen from (`engines/_spans_rank.py`).

Every definition node anywhere in a file (nested ones too: a method inside its class, a function inside a
function), found by one tree-sitter query per grammar, as `(first line, last line)`, 1-based and inclusive,
sorted and without repeats. A Python definition's decorators belong to it (`decorated_definition`). The
span ranker scores these units and keeps the best ones that share no line; a unit longer than a window is
replaced by the windows inside it.

The parser is `ctxgauge.syntax`'s (the one definition parser, shared with the block-level metrics); its
names are importable from here as before.
"""

from __future__ import annotations

from ctxgauge.syntax._definitions import DEFINITION_NODES, DefinitionLines

__all__ = ["DEFINITION_NODES", "DefinitionLines"]
