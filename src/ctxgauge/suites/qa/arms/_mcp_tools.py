"""The `mcp-tools:SPEC` arm: an agent loop whose tools are an MCP server's own, as the server declares them.

`tool:mcp(...)` keeps `tool:ENGINE`'s meaning (search and read through the server's search tool); this arm
hands the model the server's tools themselves (name, description, input schema as declared), so an engine
is measured the way an agent would use it. Which tools, and the failures that prevents:
- Only the tools listed in the spec's `tools="a,b"`; without it, only those the server declares read-only
  (MCP annotations `readOnlyHint: true`, not `destructiveHint`), never its index tools: a tool that writes
  or runs commands is never handed to a model by default (`McpEngine._tools_plan`; a missing hint is read
  as "may write").
- Calls run through the engine's one client (its deadlines, process group, crash handling): a server that
  crashes or hangs fails the question as `infra` (a gap `--resume` retries), as `tool:ENGINE` does; a
  tool's own error (`isError`) is text the model reads.
- Every call is kept in the transcript with its arguments, the size of its result in tokens of the
  run's tokenizer (`o200k_base`, labelled; bytes, labelled so, when the tokenizer is not installed) and its
  latency (`Session` measures it).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ctxgauge.corpus import Corpus
from ctxgauge.engines import call_engine, get_engine
from ctxgauge.errors import EngineError, UserError
from ctxgauge.providers import ToolCall, ToolSpec
from ctxgauge.suites.qa.arms._arms import EngineHandle, available

RESULT_CHARS = 16_000 * 4
"""The most of one tool result handed back to the model (the tool arm's read budget, four times over)."""


def result_text(result: dict) -> str:
    """A `CallToolResult` (JSON by alias) as the text a model reads: its text blocks, resource links and
    embedded text resources in order; the structured content as JSON when there is no content."""
    parts = []
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text") or ""))
        elif kind == "resource_link":
            parts.append(str(block.get("uri") or ""))
        elif kind == "resource":
            res = block.get("resource") or {}
            parts.append(str(res.get("text") if isinstance(res.get("text"), str) else res.get("uri") or ""))
        else:
            parts.append(f"[{kind} content]")
    if not parts and result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"], sort_keys=True))
    return "\n".join(parts)


def _size(text: str) -> dict:
    """The size of a result, labelled with what was counted."""
    try:
        from ctxgauge.metrics.tokens import default_tokenizer

        tok = default_tokenizer()
    except UserError:  # the tokenizer's package is missing: bytes, said so
        return {"result_bytes": len(text.encode("utf-8"))}
    return {"result_tokens": tok.count(text), "tokenizer": tok.name}


class McpToolsHandle(EngineHandle):
    """An MCP server started over the corpus for the mcp-tools arm (never asked to search)."""

    def __init__(self, spec: str, corpus: Corpus, out_dir: Path):
        self.engine = get_engine(spec)
        if getattr(self.engine, "kind", None) != "mcp":
            raise UserError(f"arm mcp-tools:{spec}: needs an mcp(...) engine spec")
        available(self.engine)
        self.corpus = corpus
        self.out_dir = out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        self.exposed = call_engine("start", self.engine, self.engine.open_tools, corpus, out_dir)

    def query(self, text: str, k: int):  # pragma: no cover - the arm never searches
        raise EngineError(f"engine {self.engine.name}: the mcp-tools arm does not search")

    def toolbox(self) -> "McpToolBox":
        return McpToolBox(self)


class McpToolBox:
    """The server's exposed tools for one session; counts every call by tool (the run's tool-call rollup)."""

    def __init__(self, handle: McpToolsHandle):
        self.handle = handle
        self.tools = tuple(ToolSpec(t["name"], str(t.get("description") or t["name"]),
                                    t.get("inputSchema") or {"type": "object", "properties": {}})
                           for t in handle.exposed)
        self.counts: Counter[str] = Counter()
        self._error = False

    @property
    def prompt_note(self) -> str:
        """What the system prompt says about the tools (the tool arm's sentence names search and read)."""
        names = ", ".join(t.name for t in self.tools)
        return (f" You may call the repository's own tools ({names}); call them as often as you need, "
                "then answer.")

    def call(self, call: ToolCall) -> str:
        """The tool's answer as text. A tool not exposed, or arguments that are not an object, get an error
        text the model can react to; the server's own failure (crash, deadline) raises EngineError."""
        self.counts[call.name] += 1
        self._error = True
        if call.name not in {t.name for t in self.tools}:
            return f"error: no tool {call.name!r}; the tools are: {', '.join(t.name for t in self.tools)}"
        if not isinstance(call.arguments, dict):
            return "error: tool arguments must be a JSON object"
        engine = self.handle.engine
        result = call_engine(f"call {call.name}", engine, engine.call_tool, self.handle.out_dir, call.name,
                             call.arguments)
        text = result_text(result)
        if result.get("isError"):
            return "error: " + (text or "the tool failed")
        self._error = False
        if len(text) > RESULT_CHARS:
            text = text[:RESULT_CHARS] + "\n[... truncated ...]"
        return text

    def describe(self, call: ToolCall, out: str) -> dict:
        """The transcript's fields for one answered call: status, arguments and the result's size."""
        return {"status": "error" if self._error else "ok", "arguments": call.arguments, **_size(out)}
