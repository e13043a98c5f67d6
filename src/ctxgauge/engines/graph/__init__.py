"""The graph engine: tree-sitter imports and definitions, lexical seeds spread over the import graph.

One idea per module: `_parse` (grammars to raw imports and definitions), `_resolve` with `_resolve_js` and
`_resolve_rust` (raw imports to corpus files), `_paths` (POSIX path helpers they share), `_rank` (BM25 and
personalised PageRank), `_engine` (build, update and query). Importing this package loads no grammar.
"""

from ctxgauge.engines.graph._engine import GraphEngine

__all__ = ["GraphEngine"]
