"""ctxgauge's own bm25 behind an MCP server (the tests compare it with bm25 run directly).

    python bm25_server.py        (working directory: the corpus ctxgauge wrote out)

Tools: `search(query, k)` answers [{path, score}] under an output schema; `reindex(path)` builds the index
again from the directory (ctxgauge calls it after it changed the tree in place).
"""

from __future__ import annotations

import os
import tempfile

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine

engine = get_engine("bm25")
out = tempfile.mkdtemp(prefix="bm25-server-")


def index(path: str) -> int:
    corpus = Corpus.from_directory(path)
    engine.build(corpus, out)
    return len(corpus)


index(os.getcwd())
server = MCPServer("ctxgauge-bm25", version="1")


class Hit(BaseModel):
    path: str
    score: float


@server.tool(description="BM25 over the corpus.")
def search(query: str, k: int = 10) -> list[Hit]:
    return [Hit(path=h.path, score=h.score) for h in engine.query(out, query, k)]


@server.tool(description="Index the directory again.")
def reindex(path: str) -> str:
    return f"{index(path)} files"


server.run()
