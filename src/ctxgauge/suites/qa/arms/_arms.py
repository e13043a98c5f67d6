"""Arms: what a model is given to answer with.

    none               the model alone
    context:ENGINE@k   the engine's top k hits (their spans, or whole files) packed under --token-budget tokens
                       into the prompt (k defaults to 5; `pack_context`)
    tool:ENGINE        an agent loop: the model may call search(query) (the engine) and read(path)
    mcp-tools:SPEC     an agent loop over an MCP server's own tools, as declared (SPEC is an mcp(...) engine;
                       `tools="a,b"` lists the ones exposed, else only those declared read-only: _mcp_tools)
    command:CMD        an external agent harness: the question on stdin, the answer on stdout, or a JSON
                       envelope {"answer", "usage": {tokens_input, ...}, "tool_calls": {name: n}, "cost_usd"}

An arm spec string parses back into the same spec (`str(parse_arm(s))` is canonical), so one name serves
the CLI flag, the record and the report.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ctxgauge.engines import ask_identity, call_engine, checked_hits
from ctxgauge.corpus import Corpus
from ctxgauge.engines import Hit, canonical_spec, engine_available, get_engine, parse_spec
from ctxgauge._io import InputError, parse_data
from ctxgauge._redact import redact
from ctxgauge.errors import EngineError, UserError
from ctxgauge.providers import ToolCall, ToolSpec, Usage
from ctxgauge.records import SecretScanner

ARM_KINDS = ("none", "context", "tool", "mcp-tools", "command")
DEFAULT_K = 5
READ_BUDGET = 4000
"""Tokens (o200k_base) of a file the tool arm's `read` returns whole; a longer file is cut after its last
whole line that fits (`metrics.packing.pack`), and the reply says which lines it holds."""


@dataclass(frozen=True)
class ArmSpec:
    """A parsed arm: kind, engine spec (context/tool), k (context), command (command)."""

    kind: str
    engine: str | None = None
    k: int = DEFAULT_K
    command: str | None = None

    def __str__(self) -> str:
        if self.kind == "context":
            return f"context:{self.engine}@{self.k}"
        if self.kind in ("tool", "mcp-tools"):
            return f"{self.kind}:{self.engine}"
        if self.kind == "command":
            return f"command:{self.command}"
        return "none"

    @property
    def needs_model(self) -> bool:
        """An external command brings its own model; every other arm asks ours."""
        return self.kind != "command"

    @property
    def needs_corpus(self) -> bool:
        return self.kind in ("context", "tool", "mcp-tools", "command")

    @property
    def slug(self) -> str:
        """A directory name for the arm's records."""
        return re.sub(r"[^A-Za-z0-9_.@=-]+", "_", str(self)).strip("_")[:80] or "arm"


def _engine_name(spec: str) -> str:
    """The engine's canonical spec (`bm25(k1=1.2)` is `bm25`: one system, one arm). An engine that cannot
    be made (unknown, bad parameters) keeps its spec as written: that arm fails with the reason when it
    runs, and the other arms still run."""
    try:
        return str(canonical_spec(spec))
    except UserError:
        return str(parse_spec(spec))


def parse_arm(text: str) -> ArmSpec:
    """Parse `none`, `context:ENGINE@k`, `tool:ENGINE` or `command:CMD`; a bad spec says what to write."""
    text = text.strip()
    kind, _, rest = text.partition(":")
    if kind == "none" and not rest:
        return ArmSpec("none")
    if kind == "context" and rest:
        engine, at, k = rest.rpartition("@") if "@" in rest.rsplit(")", 1)[-1] else (rest, "", "")
        if at and not k.isdigit() or at and int(k) < 1:
            raise UserError(f"bad arm {text!r}: k must be a positive integer, e.g. context:bm25@5")
        return ArmSpec("context", _engine_name(engine), int(k) if at else DEFAULT_K)
    if kind == "tool" and rest:
        return ArmSpec("tool", _engine_name(rest))
    if kind == "mcp-tools" and rest:
        if parse_spec(rest).name != "mcp":
            raise UserError(f"bad arm {text!r}: mcp-tools takes an mcp(...) engine, e.g. "
                            'mcp-tools:mcp(cmd="my-server",tools="search,read_file")')
        return ArmSpec("mcp-tools", _engine_name(rest))
    if kind == "command" and rest.strip():
        return ArmSpec("command", command=rest.strip())
    raise UserError(f"bad arm {text!r}: write none, context:ENGINE@k, tool:ENGINE, mcp-tools:mcp(...) or "
                    "command:CMD")


@dataclass(frozen=True)
class PackedContext:
    """The context arm's context for one prompt: the engine's hits packed under the token budget."""

    text: str
    """What the model reads: each span (or whole file) under its `path:start-end` header."""
    tokens: int
    """The tokenizer's count of `text` (o200k_base): the context tokens the model read."""
    paths: list[str]
    """The files that made it in, in context order."""
    ran_out: bool
    """True when every hit fitted: the ranking ran out before the budget did (a shorter context)."""


def pack_context(hits: list[Hit], corpus: Corpus, budget_tokens: int) -> PackedContext:
    """The retrieved hits as prompt text: rank order, each hit's spans in the engine's order (no spans: the
    whole file), each under a `path:start-end` header that counts, whole lines only, cut where the budget
    ends (`metrics.packing.pack`, the packing replay and cases score), tokens counted by the tokenizer."""
    from ctxgauge.metrics.packing import pack
    from ctxgauge.metrics.tokens import default_tokenizer

    tokenizer = default_tokenizer()
    packed = pack(hits, corpus.read, budget_tokens, tokenizer)
    # Recorded: the count of the text as a whole, as the model reads it. The budget holds the piece-by-piece
    # count, which a line break's merges only ever make larger (a blank line's `\n\n` is one token whole).
    return PackedContext(packed.text, tokenizer.count(packed.text), [path for path, _ in packed.included],
                         packed.ran_out)


def available(engine):
    """`engine` when it is available here, else the EngineError that fails the arm (not the run)."""
    ok, why = engine_available(engine)
    if not ok:
        raise EngineError(f"engine {engine.name} is not available here: {why}")
    return engine


class EngineHandle:
    """An engine built once over the corpus, queried by the context and tool arms."""

    def __init__(self, spec: str, corpus: Corpus, out_dir: Path):
        self.engine = available(get_engine(spec))
        self.corpus = corpus
        self.out_dir = out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        call_engine("build", self.engine, self.engine.build, corpus, out_dir)

    def identity(self) -> dict:
        """The engine's identity, asked through the guard replay and cases use: a failed request (a crash, an
        exit, no answer) is an EngineError, so the arm's units fail with the reason and --resume retries them."""
        identity, broken = ask_identity(self.engine)
        if broken is not None:
            raise broken
        return identity

    def query(self, text: str, k: int) -> list[Hit]:
        hits = call_engine("query", self.engine, self.engine.query, self.out_dir, text, k)
        return checked_hits(hits, self.corpus, k, self.engine.name)

    def toolbox(self) -> "ToolBox":
        """The tool arm's tools over this engine (one per session)."""
        return ToolBox(self)

    def close(self) -> None:
        getattr(self.engine, "close", lambda: None)()


SEARCH_TOOL = ToolSpec("search", "Rank the repository's files for a query; returns paths, best first.",
                       {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
READ_TOOL = ToolSpec("read", "Read one file of the repository by its path.",
                     {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})


class ToolBox:
    """The tool arm's tools over one engine; counts every call by tool (the run's tool-call rollup)."""

    tools = (SEARCH_TOOL, READ_TOOL)
    prompt_note = None
    """The system prompt's sentence about the tools: None is the standing one (search and read)."""

    def __init__(self, engine: EngineHandle, *, k: int = DEFAULT_K, read_budget_tokens: int = READ_BUDGET):
        self.engine = engine
        self.k = k
        self.read_budget = read_budget_tokens
        self.counts: Counter[str] = Counter()

    def call(self, call: ToolCall) -> str:
        """The tool's answer as text; a bad call gets an error text the model can react to."""
        self.counts[call.name] += 1
        if call.name == "search":
            query = str(call.arguments.get("query") or "").strip()
            if not query:
                return "error: search needs a non-empty query"
            hits = self.engine.query(query, self.k)
            return "\n".join(f"{h.path}\t{h.score:.4g}" for h in hits) or "no file matched"
        if call.name == "read":
            path = str(call.arguments.get("path") or "").strip().lstrip("./")
            if path not in self.engine.corpus:
                return f"error: no file {path!r} in the repository"
            return read_within(self.engine.corpus, path, self.read_budget)
        return f"error: no tool {call.name!r}; use search or read"

    def describe(self, call: ToolCall, out: str) -> dict:
        """The transcript's fields for one answered call: status, and the arguments (search, read) or the
        size in characters of what an unknown tool's call returned."""
        return {"status": "error" if out.startswith("error:") else "ok",
                **({"arguments": call.arguments} if call.name in ("search", "read") else {"size": len(out)})}


def read_within(corpus: Corpus, path: str, budget_tokens: int) -> str:
    """A file as the tool arm's `read` returns it: whole when it fits `budget_tokens`, else its first lines
    that fit under a `path:1-N` header (the packing rule), with a last line saying what was left out. A
    token is at least one byte, so a file of no more bytes than the budget is whole without counting."""
    data = corpus.read(path)
    if len(data) <= budget_tokens:
        return data.decode("utf-8", "replace")
    from ctxgauge.metrics._lines import line_count
    from ctxgauge.metrics.packing import pack
    from ctxgauge.metrics.tokens import default_tokenizer

    tokenizer = default_tokenizer()
    body = data.decode("utf-8", "replace")
    if tokenizer.count(body) <= budget_tokens:
        return body
    packed = pack([Hit(path, 0.0)], lambda _: data, budget_tokens, tokenizer)
    kept = packed.included[0][1][0][1] if packed.included else 0
    return (packed.text + f"[... truncated: lines 1-{kept} of {line_count(data)} fit the read budget of "
            f"{budget_tokens} tokens ...]")


@dataclass
class CommandOutcome:
    """What an external harness returned for one prompt."""

    answer: str
    usage: Usage
    tool_calls: dict[str, int]
    cost_usd: float | None
    usage_reported: bool = False
    """The envelope carried a `usage` object (else the zeros are nobody's count)."""


COUNT_LIMIT = 2 ** 53
"""Largest token or tool-call count a harness may report (the largest integer every JSON reader keeps exact)."""
_USAGE_KEYS = ("tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write")


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= COUNT_LIMIT


def _envelope(out: str, command: str) -> CommandOutcome | None:
    """The harness's JSON envelope, None when `out` is not JSON or not an envelope (then it is the answer
    itself), or an EngineError naming the breach: JSON nested past JSON_DEPTH_LIMIT, a `usage` that is not an
    object of counts, `tool_calls` that is not an object of counts (`{"read": "two"}`, `1e400`), a `cost_usd`
    that is not a finite number at least 0 (`NaN`). As for a command engine, a breach of the contract is
    never mended: the question is `infra` for this arm, with this one-line reason."""
    try:
        env_ = parse_data(out, "answer of", command, fmt="json", finite=False)
    except InputError as exc:
        if exc.problem.startswith("not valid JSON"):
            return None
        raise EngineError(f"command {command!r} answered JSON that is {exc.problem}") from None
    if not isinstance(env_, dict) or not isinstance(env_.get("answer"), str):
        return None

    def breach(field: str, wanted: str) -> EngineError:
        shown = json.dumps(env_.get(field), ensure_ascii=True, allow_nan=True)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return EngineError(f"command {command!r} answered an envelope whose {field} is not {wanted}: {shown}")

    usage = env_.get("usage")
    if usage is not None and not (isinstance(usage, dict) and all(_count(usage[k]) for k in _USAGE_KEYS if k in usage)):
        raise breach("usage", f"an object of token counts (integers 0 to 2**53: {', '.join(_USAGE_KEYS)})")
    calls = env_.get("tool_calls")
    if calls is not None and not (isinstance(calls, dict) and all(_count(v) for v in calls.values())):
        raise breach("tool_calls", "an object of call counts ({name: integer 0 to 2**53})")
    cost = env_.get("cost_usd")
    if cost is not None and not (isinstance(cost, (int, float)) and not isinstance(cost, bool)
                                 and math.isfinite(cost) and cost >= 0):
        raise breach("cost_usd", "a finite number of dollars, at least 0")
    return CommandOutcome(env_["answer"], Usage.from_dict(usage), dict(calls or {}),
                          None if cost is None else float(cost), isinstance(usage, dict))


def run_command(command: str, prompt: str, *, cwd: Path | None, env: dict[str, str], timeout: float) -> CommandOutcome:
    """Run the harness once: prompt on stdin, answer (or a JSON envelope) on stdout. A crash, a timeout
    or a non-zero exit raises EngineError (the question is `infra` for this arm: a gap, not a zero)."""
    try:
        proc = subprocess.run(shlex.split(command), input=prompt, capture_output=True, text=True, cwd=cwd,
                              env={**os.environ, **env}, timeout=timeout)
    except FileNotFoundError:
        raise UserError(f"command arm: program not found: {shlex.split(command)[0]!r}") from None
    except subprocess.TimeoutExpired:
        raise EngineError(f"command {command!r} timed out after {timeout:g}s") from None
    # The harness runs with this environment, keys included, and may echo one: its output is redacted with
    # the values the export's scan would stop on, before any answer file, unit or message holds it.
    secrets = [value for _, value in SecretScanner.from_environment({**os.environ, **env}).env_secrets]
    proc.stdout, proc.stderr = redact(proc.stdout, secrets), redact(proc.stderr, secrets)
    if proc.returncode != 0:
        tail = " ".join(proc.stderr.split())[-200:]
        raise EngineError(f"command {command!r} exited with {proc.returncode}: {tail}")
    out = proc.stdout.strip()
    if out.startswith("{"):
        envelope = _envelope(out, command)
        if envelope is not None:
            return envelope
    return CommandOutcome(out, Usage(), {}, None)
