"""A small MCP search server for the tests, written with the official SDK (MCPServer, once FastMCP).

    python word_server.py [--mode M] [--http PORT] [--state FILE] [--out DIR] [--corpus DIR] [--reindex]

Ranks the files under the corpus directory (its working directory unless --corpus) by how many of the
request's words they contain, ties by path. --mode picks how it answers:
  structured  a list of {path, score, start_line, end_line} under an output schema (two entries per file,
              their ranges cut to the file's lines)
  beyond      as structured, its second range of each file not cut: past the end of a short file
  shuffle     as out, but ties come in a different order at every call (a call counter kept in --state)
  links       resource links with file:// URIs (absolute paths under the corpus), no scores
  lines       text lines `path:line:text` (plus one line that does not parse), no scores
  crash       as structured, but exits at once when the request holds the word "crash"
  hang        as structured, but never answers a request holding the word "hang"
  schema      as structured; from the third start on (counted in --state) its tool gains an argument
  out         as structured, ranking from an index written to --out/index.json by its `index` tool
  outside     answers a path outside the corpus
  garbage     answers text nothing can read
  tools       an agent's tool set: search_code and read_file (declared read-only), write_note (declared
              destructive: writes the file --out) and run_shell (no annotations: writes it too), for the
              mcp-tools arm
--reindex adds a `reindex` tool (nothing to do: the modes that read the tree read it at every request), so
an update keeps the server running.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ResourceLink, ToolAnnotations
from pydantic import BaseModel

WORDS = re.compile(r"[a-z0-9]+")

ap = argparse.ArgumentParser()
ap.add_argument("--mode", default="structured")
ap.add_argument("--http", type=int, default=0)
ap.add_argument("--state", default="")
ap.add_argument("--out", default="")
ap.add_argument("--corpus", default="")
ap.add_argument("--reindex", action="store_true")
opts = ap.parse_args()
starts = 0
if opts.state:
    state = Path(opts.state)
    starts = int(state.read_text()) + 1 if state.exists() else 1
    state.write_text(str(starts))


def root() -> Path:
    return Path(opts.corpus or os.getcwd())


def files(base: Path) -> dict[str, str]:
    out = {}
    for p in sorted(base.rglob("*")):
        if p.is_file():
            out[p.relative_to(base).as_posix()] = p.read_text("utf-8", "replace").lower()
    return out


INDEX: dict[str, str] | None = None


def corpus_text() -> dict[str, str]:
    if opts.mode in ("out", "shuffle"):
        if INDEX is None:
            raise RuntimeError("not indexed: call index first")
        return INDEX
    return files(root())


def rank(query: str, k: int) -> list[tuple[str, float, int, int]]:
    """(path, score, first matching line, the file's line count), best first, ties by path."""
    words = set(WORDS.findall(query.lower()))
    scored = []
    for path, text in corpus_text().items():
        have = {w for w in words if w in text}
        if have:
            lines = text.splitlines()
            first = next(i for i, line in enumerate(lines, 1) if any(w in line for w in have))
            scored.append((path, float(len(have)), first, len(lines)))
    scored.sort(key=lambda t: (-t[1], t[0]))
    if opts.mode == "shuffle":
        scored = shuffled_ties(scored)
    return scored[:k]


def shuffled_ties(scored: list) -> list:
    """Each run of equal scores rotated by the number of calls so far: a different tie order every call."""
    state = Path(opts.state)
    calls = int(state.read_text()) + 1 if state.exists() else 1
    state.write_text(str(calls))
    out, i = [], 0
    while i < len(scored):
        j = i
        while j < len(scored) and scored[j][1] == scored[i][1]:
            j += 1
        group = scored[i:j]
        turn = calls % len(group)
        out.extend(group[turn:] + group[:turn])
        i = j
    return out


class Match(BaseModel):
    path: str
    score: float
    start_line: int
    end_line: int


server = MCPServer("word-server", version="1.2.0")


def answer(query: str, k: int) -> list[Match]:
    if opts.mode == "crash" and "crash" in query.lower():
        print("word_server: asked to crash, crashing", file=sys.stderr, flush=True)
        os._exit(3)
    if opts.mode == "hang" and "hang" in query.lower():
        time.sleep(3600)
    out = []
    for path, score, line, n in rank(query, k):
        cut = (lambda x: x) if opts.mode == "beyond" else (lambda x: min(x, n))
        out.append(Match(path=path, score=score, start_line=line, end_line=min(line + 1, n)))
        out.append(Match(path=path, score=score, start_line=cut(line + 4), end_line=cut(line + 5)))  # same file again
    return out


if opts.mode in ("structured", "crash", "hang", "out", "beyond", "shuffle"):
    @server.tool(description="Search the code for files matching a request.")
    def search_code(query: str, k: int = 10) -> list[Match]:
        return answer(query, k)
elif opts.mode == "schema":
    if starts >= 3:
        @server.tool(description="Search the code for files matching a request.")
        def search_code(query: str, k: int = 10, language: str = "") -> list[Match]:
            return answer(query, k)
    else:
        @server.tool(description="Search the code for files matching a request.")
        def search_code(query: str, k: int = 10) -> list[Match]:
            return answer(query, k)
elif opts.mode == "links":
    @server.tool(description="Search; answers resource links.", structured_output=False)
    def search_code(query: str) -> list[ResourceLink]:
        return [ResourceLink(type="resource_link", name=p, uri=(root() / p).resolve().as_uri())
                for p, _, _, _ in rank(query, 50)]
elif opts.mode == "lines":
    @server.tool(description="Search; answers path:line:text lines.", structured_output=False)
    def search_code(query: str) -> str:
        lines = ["results:"] if rank(query, 50) else []  # one line that does not parse, when there are results
        for p, _, line, n in rank(query, 50):
            lines.append(f"{p}:{line}:matched")
            lines.append(f"{p}:{min(line + 10, n)}-{min(line + 12, n)}")
        return "\n".join(lines)
elif opts.mode == "outside":
    @server.tool(description="Search; answers a path outside the corpus.", structured_output=False)
    def search_code(query: str) -> str:
        return "/etc/passwd:1"
elif opts.mode == "tools":
    READ_ONLY = ToolAnnotations(read_only_hint=True)

    @server.tool(description="Search the code for files matching a request.", annotations=READ_ONLY)
    def search_code(query: str, k: int = 10) -> str:
        return "\n".join(f"{p}:{line}" for p, _, line, _ in rank(query, k)) or "no match"

    @server.tool(description="Read one file of the repository.", annotations=READ_ONLY)
    def read_file(path: str) -> str:
        target = (root() / path).resolve()
        if root().resolve() not in target.parents:
            raise ValueError(f"no file {path!r}")
        return target.read_text("utf-8")

    @server.tool(description="Write a note.", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def write_note(text: str) -> str:
        Path(opts.out).write_text(text)
        return "written"

    @server.tool(description="Run a shell command.")
    def run_shell(command: str) -> str:
        Path(opts.out).write_text("ran " + command)
        return "ran"
elif opts.mode == "garbage":
    @server.tool(description="Search; answers nothing readable.", structured_output=False)
    def search_code(query: str) -> str:
        return "I found some things but I will not say where."

if opts.mode in ("out", "shuffle"):
    @server.tool(description="Index a directory into the out directory.")
    def index(path: str) -> str:
        global INDEX
        INDEX = files(Path(path))
        Path(opts.out, "index.json").write_text(json.dumps(INDEX, sort_keys=True))
        return f"indexed {len(INDEX)} files"

if opts.reindex:
    @server.tool(description="Take the tree's changes into account (read at every request: nothing to do).")
    def reindex() -> str:
        return "ok"

if opts.http:
    server.run("streamable-http", host="127.0.0.1", port=opts.http)
else:
    server.run()
