"""ctxgauge.syntax: source files as tree-sitter reads them, with the grammars ctxgauge ships.

Below the metrics and the engines, so both read definitions the same way: the graph engine chooses its
spans from them, the block-level metrics count the definitions a context reaches.
- `grammar_of(path)`, `language_of(path)`, `EXTENSIONS`: which grammar parses a path (python, javascript,
  typescript, tsx, go, java, rust), by extension; `parser_and_query(grammar, query)`.
- `definitions(path, data)`: a file's definitions as sorted `(start, end)` line ranges (cached by content);
  `innermost(defs, line)`, `line_blocks(defs)`: the innermost definition of a line.
- `DefinitionLines`, `DEFINITION_NODES`: the parser behind them, per grammar and blob.
"""

from ctxgauge.syntax._definitions import (
    DEFINITION_NODES,
    DefinitionLines,
    Span,
    blob_id,
    definitions,
    innermost,
    line_blocks,
)
from ctxgauge.syntax._grammars import EXTENSIONS, grammar_of, language_of, load_language, parser_and_query

__all__ = [
    "DEFINITION_NODES",
    "DefinitionLines",
    "EXTENSIONS",
    "Span",
    "blob_id",
    "definitions",
    "grammar_of",
    "innermost",
    "language_of",
    "line_blocks",
    "load_language",
    "parser_and_query",
]
