"""bm25: BM25 (bm25s's Lucene variant) over code-aware, Snowball-stemmed tokens, path terms weighted.

`_engine` is the engine; `_live` the live index scored at query time, `_csc` the artifact of record in
bm25s's layout, `_stamp` what tells that an artifact is still the one an engine object wrote or read.
"""

from ctxgauge.engines.bm25._engine import BM25Engine

__all__ = ["BM25Engine"]
