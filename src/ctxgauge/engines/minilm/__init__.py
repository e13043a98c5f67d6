"""minilm: exhaustive cosine search over all-MiniLM-L6-v2 chunk embeddings, best chunk per file.

`_engine` is the engine; `_chunks` cuts files into chunks, `_model` is the packaged model and its forward
pass, `_vectors` the stored vectors, `_work` the work keys and work-cache stages, `_progress` the progress
line of long per-chunk work.
"""

from ctxgauge.engines.minilm._engine import MiniLMEngine, shared_embeddings

__all__ = ["MiniLMEngine", "shared_embeddings"]
