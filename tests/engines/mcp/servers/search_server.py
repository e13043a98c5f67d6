"""A complete MCP search server for ctxgauge: ranks files by how many of the request's words they hold.

    python3 search_server.py --out OUT       (working directory: the tree to search)
"""
import argparse
import json
import os
import re

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

WORDS = re.compile(r"[a-z0-9]+")
ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
out = ap.parse_args().out
server = MCPServer("word-search", version="1.0.0")


class Match(BaseModel):
    path: str
    score: float
    start_line: int
    end_line: int


@server.tool(description="Index a directory: every file's words, written to OUT/index.json.")
def index(path: str) -> str:
    found = {}
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path).replace(os.sep, "/")
            with open(full, encoding="utf-8", errors="replace") as fh:
                found[rel] = [sorted(set(WORDS.findall(line.lower()))) for line in fh]
    with open(os.path.join(out, "index.json"), "w") as fh:
        json.dump(found, fh, sort_keys=True)
    return f"{len(found)} files"


@server.tool(description="Files matching a request, best first, with the lines that matched.")
def search(query: str, k: int = 10) -> list[Match]:
    with open(os.path.join(out, "index.json")) as fh:
        found = json.load(fh)
    words = set(WORDS.findall(query.lower()))
    ranked = []
    for path, lines in found.items():
        have = words & {w for line in lines + [WORDS.findall(path.lower())] for w in line}  # the path counts too
        if have:
            first = next((i for i, line in enumerate(lines, 1) if have & set(line)), 1)
            ranked.append((-len(have), path, first))
    ranked.sort()
    return [Match(path=p, score=float(-s), start_line=n, end_line=n) for s, p, n in ranked[:k]]


if __name__ == "__main__":
    server.run()
