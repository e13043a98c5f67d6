"""mcp: an MCP server's search tool as an engine, through the official SDK (the `[mcp]` extra).

    mcp(cmd="python3 server.py {corpus}",tool="search_code")              a server over stdio
    mcp(cmd="my-server --port {port}",url="http://127.0.0.1:{port}/mcp")   started here, over streamable HTTP
    mcp(url="http://127.0.0.1:8765/mcp",tool="search")                     one already running (loopback only)

Parameters: `cmd`, `url`, `tool`, `text_arg`, `k_arg`, `args` (JSON object of fixed arguments), `index_tool`,
`index_args` (JSON), `reindex_tool`, `out`, `fields` (JSON: other names for `path`/`score`), `timeout`
(seconds per request, and to start), `name`, `tools` (the qa arm `mcp-tools:SPEC` only: the server's tools a
model may call). docs/mcp-engines.md is the user's guide.

Decisions, and the failures they prevent:
- The corpus is written out as a plain directory (as for `command`), the server's working directory and
  its `{corpus}` placeholder; it lives as long as the index it was built for (a server serves queries over
  the tree it was started on). `{out}` is the build's out directory, `{port}` a free loopback port.
- `out=FILE` names the index file the server writes into `{out}` (`out="."`: all of `{out}`). Without it the
  out directory stays empty: there is no artifact, so Rebuild and Update Identity are not measured
  (`no_artifact` says why) and the level cannot pass CTL 2; hashing an empty directory would pass them.
- Identity is `declared`: serverInfo name and version, the tools used (name, description, input and output
  schema) and the parameters that change what is computed (not `cmd`, `url`, `timeout`, `name`; a home
  directory written as `~`). It is taken at the first connection and compared at every later one
  (each build, each restart): a change fails that unit and every later one ("the server changed its
  tools: a new system"), never silently measured as the same system.
- Results are read by `_results` and held to the contract here: a path outside the corpus, a non-finite
  score, some results scored and others not, more than k distinct files when the tool takes k: each a
  breach (EngineError), never mended. Several results for one file are one hit at the first one's rank,
  their line ranges merged into its spans (which must then keep the span rules: at most 50, each within
  the file; a range past the file's end is a breach, never cut). Without a k argument the first k
  distinct files are kept and the truncation counted; without scores, scores are 1/rank (`rank-derived`).
- A server that cannot be started at all is the user's to mend (exit 2); one that exits, hangs past the
  deadline or answers an error fails its unit with one line, and the next request starts it afresh.
"""

from __future__ import annotations

import hashlib
import importlib.util
import ipaddress
import json
import math
import os
import posixpath
import shutil
import socket
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlparse

from ctxgauge._io import safe_join
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit
from ctxgauge.engines._spans import check_spans, line_count
from ctxgauge.engines._spec import Param
from ctxgauge.engines.command._engine import _split, _why_not_runnable
from ctxgauge.engines.mcp._results import merge_ranges, read_result
from ctxgauge.errors import EngineError, UserError

INSTALL = "pip install 'ctxgauge[mcp]'"
"""The one install line for the SDK."""
K_NAMES = ("k", "top_k", "limit", "max_results", "n_results", "num_results", "count")
"""Integer arguments read as the number of results when `k_arg` is not given."""
TEXT_NAMES = ("query", "q", "text", "request", "pattern", "search")
"""String arguments preferred as the request's when a tool has several required strings."""
CHANGED = "the server changed its tools: a new system"
PORT_ATTEMPTS = 3
"""Starts of a server given `{port}` when it exits before listening (the port taken meanwhile: a race)."""
IDENTITY_PARAMS = ("tool", "text_arg", "k_arg", "args", "index_tool", "index_args", "reindex_tool", "out", "fields")
"""The parameters that change what is computed and so enter the declared identity."""


def sdk_installed() -> bool:
    """Whether the `mcp` SDK can be imported (found without importing it)."""
    return importlib.util.find_spec("mcp") is not None


def _json_param(engine: str, key: str, value: Any) -> dict:
    if value is None:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise UserError(f"mcp engine: {key} must be a JSON object, e.g. {key}='{{\"lang\":\"py\"}}' ({exc})") from None
    if not isinstance(parsed, dict):
        raise UserError(f"mcp engine: {key} must be a JSON object, got {value!r}")
    return parsed


def _fill(value: Any, places: dict[str, str]) -> Any:
    """`value` with `{corpus}`, `{out}` and `{port}` replaced in every string (JSON kept as JSON)."""
    if isinstance(value, str):
        for key, text in places.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(v, places) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, places) for k, v in value.items()}
    return value


def _home_as_tilde(value: Any) -> Any:
    home = os.path.expanduser("~")
    if isinstance(value, str) and home not in ("", "/"):
        return value.replace(home, "~")
    if isinstance(value, dict):
        return {k: _home_as_tilde(v) for k, v in value.items()}
    return value


def check_loopback(url: str) -> None:
    """UserError unless `url` is http(s) to a host that resolves only to loopback addresses."""
    parsed = urlparse(url.replace("{port}", "1"))
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UserError(f"mcp engine: url must be http://HOST:PORT/PATH, got {url!r}")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parsed.hostname, None)}
    except OSError as exc:
        raise UserError(f"mcp engine: url host {parsed.hostname!r} does not resolve ({exc})") from None
    outside = sorted(a for a in addresses if not ipaddress.ip_address(a.split("%")[0]).is_loopback)
    if outside:
        raise UserError(f"mcp engine: url {url!r} resolves to {', '.join(outside)}, not the loopback: ctxgauge "
                        "talks only to servers on this machine (127.0.0.1 or ::1)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class _Served:
    """What serves one out directory: its materialised corpus, and the open connection (or None)."""

    out: Path
    corpus_dir: Path | None
    conn: Any = None
    port: int | None = None


@dataclass
class _Plan:
    """The tool call worked out from the server's declarations at the first connection."""

    tool: dict
    text_arg: str
    k_arg: str | None
    index_tool: dict | None = None
    reindex_tool: dict | None = None
    found: list[str] = field(default_factory=list)
    exposed: list[dict] = field(default_factory=list)
    """The tools the mcp-tools arm hands a model (`open_tools`), as declared; empty for a search engine."""
    refused: dict[str, str] = field(default_factory=dict)
    """Tools the server has that are not exposed, each with why (`open_tools`)."""


def read_only_refusal(tool: dict) -> str | None:
    """Why `tool` is not exposed by default (None: it is): a tool is exposed without being listed only when
    its MCP annotations declare it read-only (`readOnlyHint: true`) and not destructive. Annotations are
    hints a server gives about itself; ctxgauge reads a missing one as "may write", never as "reads only"."""
    hints = tool.get("annotations") or {}
    if hints.get("destructiveHint") is True:
        return "declared destructive (destructiveHint)"
    if hints.get("readOnlyHint") is not True:
        return "not declared read-only (no readOnlyHint: true): list it in tools= to expose it"
    return None


def _shut(state: dict) -> None:
    """End every connection and the loop, remove every materialised corpus (a finalizer: no engine here)."""
    loop = state.get("loop")
    for served in list(state["served"].values()):
        if served.conn is not None and loop is not None:
            try:
                loop.run(served.conn.close(), timeout=15)
            except Exception:  # noqa: BLE001 - closing must never raise
                pass
            served.conn = None
        if served.corpus_dir is not None:
            shutil.rmtree(served.corpus_dir, ignore_errors=True)
    state["served"].clear()
    if loop is not None:
        loop.stop()
        state["loop"] = None


class McpEngine(Engine):
    """An MCP server's search tool as an engine (see the module docstring)."""

    kind = "mcp"
    defaults = {
        "cmd": Param(None, "string"), "url": Param(None, "string"), "tool": Param(None, "string"),
        "text_arg": Param(None, "string"), "k_arg": Param(None, "string"), "args": Param(None, "string"),
        "index_tool": Param(None, "string"), "index_args": Param(None, "string"),
        "reindex_tool": Param(None, "string"), "out": Param(None, "string"), "fields": Param(None, "string"),
        "timeout": Param(60.0, gt=0), "name": Param(None, "string"), "tools": Param(None, "string"),
    }

    def __init__(self, **params: Any):
        super().__init__(**params)
        p = self.params
        if p["cmd"] is None and p["url"] is None:
            raise UserError('engine "mcp" needs cmd=... (a server to start) or url=... (one running on this '
                            'machine): mcp(cmd="python3 server.py",tool="search")')
        # The server runs in the written-out corpus: a relative file in cmd (`python3 server.py`) is taken
        # from where ctxgauge runs, or the server would look for it among the corpus's files.
        self.argv = [os.path.abspath(a) if "{" not in a and not a.startswith("-") and os.path.isfile(a) else a
                     for a in _split(p["cmd"])] if p["cmd"] is not None else None
        self.url = p["url"]
        if self.url is not None:
            check_loopback(self.url)
            if "{port}" in self.url and self.argv is None:
                raise UserError("mcp engine: url has {port} but there is no cmd= to start a server on it")
        self.timeout = float(p["timeout"])
        self.args = _json_param(self.kind, "args", p["args"])
        self.index_args = _json_param(self.kind, "index_args", p["index_args"])
        self.fields = _json_param(self.kind, "fields", p["fields"])
        uses_out = any("{out}" in str(x) for x in (p["cmd"], p["args"], p["index_args"]))
        if uses_out and p["out"] is None:
            raise UserError('mcp engine: {out} is used but out= is not given: name the index file the server '
                            'writes there (out="index.json"), or out="." for the whole directory')
        self.artifact_file = p["out"] if p["out"] not in (None, ".") else None
        self.no_artifact = None if p["out"] is not None else (
            "the server keeps no index in {out} (no out=): there is no artifact to compare")
        self.serves_own_tree = self.argv is None and not (
            p["index_tool"] is not None and "{corpus}" in json.dumps(self.index_args or {"": "{corpus}"}))
        """A server ctxgauge did not start, not told which tree to index: it serves whatever tree it has."""
        label = p["name"]
        if label is not None and not label.strip():
            raise UserError(f"mcp engine: name must be a non-empty string, got {label!r}")
        self._state: dict = {"served": {}, "loop": None}
        self._finalizer = weakref.finalize(self, _shut, self._state)
        self._lock = threading.RLock()
        self._identity: dict | None = None
        self._changed: str | None = None
        self.plan: _Plan | None = None
        self.server_info: dict = {}
        self.last_spans: dict[str, list[tuple[int, int]]] = {}
        """The merged line ranges of each file of the last query (also each hit's `spans`)."""
        self.last_reading: dict | None = None
        """How the last answer was read (`query_notes`)."""
        self.counts = {"queries": 0, "truncated": 0, "unparsed_lines": 0, "rank_derived": 0}
        """Across this object's queries: answers cut to k, lines not understood, answers scored by rank."""
        self.tools_mode = False
        """Set by `open_tools`: this object serves the mcp-tools arm (the server's own tools), not queries."""

    @property
    def name(self) -> str:
        return self.params["name"] or super().name

    def available(self) -> tuple[bool, str | None]:
        if not sdk_installed():
            return False, f"needs the MCP SDK: {INSTALL}"
        if self.argv is not None:
            why = _why_not_runnable(self.argv[0])
            return (why is None), why
        return True, None

    # -- connections ----------------------------------------------------------------------------------------
    def _loop(self):
        if self._state["loop"] is None:
            if not sdk_installed():
                raise UserError(f"engine mcp needs the MCP SDK: {INSTALL}")
            from ctxgauge.engines.mcp._client import Loop

            self._state["loop"] = Loop(f"ctxgauge-mcp-{id(self):x}")
        return self._state["loop"]

    def _run(self, coro):
        return self._loop().run(coro, timeout=self.timeout * 3 + 30)

    def _open(self, served: _Served) -> Any:
        """A fresh connection for `served` (its server started now), identity compared, tools planned."""
        from ctxgauge.engines.mcp._client import Connection

        if self._changed:
            raise EngineError(f"engine {self.name}: {self._changed}")
        loop = self._loop()
        free_port = self.url is not None and "{port}" in self.url + (self.params["cmd"] or "")
        # A port found free here may be taken by another process before the server binds it (it cannot be
        # handed over bound: the server is another program). A server that exits before listening on it is
        # started again on a new port, PORT_ATTEMPTS times in all; any other failure is not retried.
        for attempt in range(1, (PORT_ATTEMPTS if free_port else 1) + 1):
            places = {"corpus": str(served.corpus_dir or ""), "out": str(served.out)}
            port = None
            if free_port:
                served.port = _free_port()
                places["port"] = str(served.port)
                port = ("127.0.0.1", served.port)
            argv = [_fill(a, places) for a in self.argv] if self.argv is not None else None
            if argv is not None:
                why = _why_not_runnable(argv[0])
                if why is not None:
                    raise UserError(why)
            url = _fill(self.url, places) if self.url is not None else None
            if port is None and url is not None and argv is not None:
                parsed = urlparse(url)
                port = (parsed.hostname or "127.0.0.1", parsed.port or 80)
            conn = Connection(f"engine {self.name}", argv=argv, url=url, cwd=served.corpus_dir,
                              timeout=self.timeout, port=port)
            try:
                loop.run(conn.open(), timeout=self.timeout * 3 + 30)
                break
            except EngineError as exc:
                if not (free_port and getattr(exc, "not_listening", False)) or attempt == PORT_ATTEMPTS:
                    if free_port and attempt > 1:
                        raise EngineError(f"{exc} (after {attempt} starts, each on a new free port)") from None
                    raise
        try:
            plan = self._tools_plan(conn) if self.tools_mode else self._plan(conn)
            ident = self._declared(conn, plan)
            if self._identity is None:
                self._identity, self.plan, self.server_info = ident, plan, dict(conn.server_info)
            elif ident != self._identity:
                self._changed = CHANGED
                raise EngineError(f"engine {self.name}: {CHANGED} (identity {self._identity['id'][:19]}… "
                                  f"became {ident['id'][:19]}…)")
            if self.plan is None:
                self.plan = plan
        except BaseException:
            self._run(conn.close())
            raise
        served.conn = conn
        if self.plan.index_tool is not None:
            self._call_index(served, self.plan.index_tool["name"])
        return conn

    def _plan(self, conn) -> _Plan:
        """Which tool to call with which arguments, from the server's tool list; UserError when ambiguous."""
        tools = {t["name"]: t for t in conn.tools}
        found = sorted(tools)
        wanted = self.params["tool"]
        if wanted is None:
            others = [n for n in found if n not in (self.params["index_tool"], self.params["reindex_tool"])]
            if len(others) != 1:
                raise UserError(f"mcp engine: the server has {len(tools)} tools ({', '.join(found) or 'none'}): "
                                "name the search tool with tool=...")
            wanted = others[0]
        if wanted not in tools:
            raise UserError(f"mcp engine: the server has no tool {wanted!r} (it has: {', '.join(found) or 'none'})")
        tool = tools[wanted]
        props = (tool.get("inputSchema") or {}).get("properties") or {}
        required = list((tool.get("inputSchema") or {}).get("required") or [])
        text_arg = self.params["text_arg"]
        if text_arg is None:
            strings = [n for n in required if (props.get(n) or {}).get("type") == "string" and n not in self.args]
            named = [n for n in strings if n in TEXT_NAMES]
            if len(strings) == 1 or len(named) == 1:
                text_arg = strings[0] if len(strings) == 1 else named[0]
            else:
                raise UserError(f"mcp engine: tool {wanted!r} has {len(strings)} required string arguments "
                                f"({', '.join(strings) or 'none'}): say which takes the request with text_arg=...")
        elif props and text_arg not in props:
            raise UserError(f"mcp engine: tool {wanted!r} has no argument {text_arg!r} (it has: {', '.join(sorted(props))})")
        k_arg = self.params["k_arg"]
        if k_arg is None:
            k_arg = next((n for n in K_NAMES if (props.get(n) or {}).get("type") == "integer"), None)
        elif props and k_arg not in props:
            raise UserError(f"mcp engine: tool {wanted!r} has no argument {k_arg!r} (it has: {', '.join(sorted(props))})")
        plan = _Plan(tool, text_arg, k_arg, found=found)
        return self._with_index_tools(plan, tools)

    def _with_index_tools(self, plan: _Plan, tools: dict[str, dict]) -> _Plan:
        """`plan` with the `index_tool` and `reindex_tool` the parameters name (each must exist)."""
        for key in ("index_tool", "reindex_tool"):
            if self.params[key] is not None:
                if self.params[key] not in tools:
                    raise UserError(f"mcp engine: {key}: the server has no tool {self.params[key]!r} "
                                    f"(it has: {', '.join(plan.found)})")
                setattr(plan, key, tools[self.params[key]])
        return plan

    def _tools_plan(self, conn) -> _Plan:
        """The mcp-tools arm's plan: the tools listed in `tools=` (each must exist), else every tool declared
        read-only (`read_only_refusal`); the index tools are never exposed unless listed. UserError when
        nothing would be exposed."""
        tools = {t["name"]: t for t in conn.tools}
        found = sorted(tools)
        listed = list(dict.fromkeys(n.strip() for n in (self.params["tools"] or "").split(",") if n.strip()))
        missing = [n for n in listed if n not in tools]
        if missing:
            raise UserError(f"mcp-tools: the server has no tool {', '.join(map(repr, missing))} "
                            f"(it has: {', '.join(found) or 'none'})")
        refused: dict[str, str] = {}
        for name in found:
            if listed:
                why = None if name in listed else "not listed in tools="
            elif name in (self.params["index_tool"], self.params["reindex_tool"]):
                why = "the index tool: it writes"
            else:
                why = read_only_refusal(tools[name])
            if why is not None:
                refused[name] = why
        exposed = [tools[n] for n in (listed or [n for n in found if n not in refused])]
        if not exposed:
            raise UserError(f"mcp-tools: none of the server's tools ({', '.join(found) or 'none'}) is declared "
                            "read-only (annotations readOnlyHint: true): name the ones a model may call with "
                            'tools="a,b" (a tool that writes or runs commands is never exposed by default)')
        plan = _Plan(None, "", None, found=found, exposed=exposed, refused=refused)  # type: ignore[arg-type]
        return self._with_index_tools(plan, tools)

    def open_tools(self, corpus: Corpus, out_dir: Path) -> list[dict]:
        """Start the server over `corpus` for the mcp-tools arm: its exposed tools, as declared (the arm hands
        them to a model and calls them through `call_tool`). The object serves no search queries then."""
        with self._lock:
            if self._identity is not None and not self.tools_mode:
                raise EngineError(f"engine {self.name}: already measured as a search engine: open a new one")
            self.tools_mode = True
            self.build(corpus, out_dir)
            return list(self.plan.exposed) if self.plan is not None else []

    def call_tool(self, out_dir: Path, name: str, arguments: dict) -> dict:
        """Call one exposed tool through the same client and deadlines as a query; its result as JSON
        (`CallToolResult` by alias). EngineError when the server fails (a crash, no answer in time) or the
        tool is not exposed (the arm never asks for one)."""
        with self._lock:
            if self._changed:
                raise EngineError(f"engine {self.name}: {self._changed}")
            plan = self.plan
            if not self.tools_mode or plan is None or name not in {t["name"] for t in plan.exposed}:
                raise EngineError(f"engine {self.name}: tool {name!r} is not exposed")
            served = self._state["served"].get(str(Path(out_dir).resolve()))
            if served is None:
                raise EngineError(f"engine {self.name}: no server was started for {Path(out_dir).name!r}")
            conn = self._connection(served)
            return self._run(conn.call(name, dict(arguments)))

    def _declared(self, conn, plan: _Plan) -> dict:
        """The declared identity of what this connection serves (see the module docstring)."""
        def tool_part(t: dict | None) -> dict | None:
            return None if t is None else {k: t.get(k) for k in ("name", "description", "inputSchema", "outputSchema")}

        params = {k: _home_as_tilde(self.params[k]) for k in IDENTITY_PARAMS}
        body = {"server": conn.server_info, "tool": tool_part(plan.tool), "index_tool": tool_part(plan.index_tool),
                "reindex_tool": tool_part(plan.reindex_tool), "params": params}
        if self.tools_mode:  # the tools a model is handed are the system measured (a search engine: unchanged)
            body["exposed"] = [tool_part(t) for t in plan.exposed]
            body["params"]["tools"] = self.params["tools"]
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=True).encode()).hexdigest()
        info = conn.server_info
        used = (f"tools {', '.join(t['name'] for t in plan.exposed)}" if self.tools_mode
                else f"tool {plan.tool['name']}")
        return {"id": "sha256:" + digest, "source": "declared",
                "note": f"MCP server {info.get('name')} {info.get('version')}, {used}"}

    def _call_index(self, served: _Served, tool_name: str) -> None:
        args = dict(self.index_args) if self.index_args else {}
        if not args:
            tool = {t["name"]: t for t in served.conn.tools}[tool_name]
            schema = tool.get("inputSchema") or {}
            required = [n for n in schema.get("required") or []
                        if ((schema.get("properties") or {}).get(n) or {}).get("type") == "string"]
            if len(required) == 1:
                args = {required[0]: "{corpus}"}
        places = {"corpus": str(served.corpus_dir or ""), "out": str(served.out)}
        result = self._run(served.conn.call(tool_name, _fill(args, places)))
        if result.get("isError"):
            raise EngineError(f"engine {self.name}: {tool_name} failed: {_error_text(result)}")

    def _connection(self, served: _Served) -> Any:
        conn = served.conn
        if conn is not None and conn.alive():
            return conn
        if conn is not None:
            self._run(conn.close())
            served.conn = None
        return self._open(served)

    def _drop(self, out: Path) -> None:
        served = self._state["served"].pop(str(out), None)
        if served is None:
            return
        if served.conn is not None:
            self._run(served.conn.close())
        if served.corpus_dir is not None:
            shutil.rmtree(served.corpus_dir, ignore_errors=True)

    # -- the engine contract --------------------------------------------------------------------------------
    def identity(self) -> dict | None:  # type: ignore[override]
        """The declared identity, taken at the first connection (a probe server on an empty tree when no
        build has connected yet)."""
        with self._lock:
            if self._identity is None:
                probe = Path(tempfile.mkdtemp(prefix="ctxgauge-mcp-probe-")).resolve()
                served = _Served(out=probe / "out", corpus_dir=probe / "corpus")
                served.out.mkdir()
                served.corpus_dir.mkdir()
                try:
                    conn = self._open(served)
                    self._run(conn.close())
                finally:
                    shutil.rmtree(probe, ignore_errors=True)
            return dict(self._identity) if self._identity is not None else None

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        with self._lock:
            if self._changed:
                raise EngineError(f"engine {self.name}: {self._changed}")
            out = Path(out_dir).resolve()
            out.mkdir(parents=True, exist_ok=True)
            self._drop(out)
            corpus_dir = None
            if self.argv is not None or self.params["index_tool"] is not None:
                corpus_dir = Path(tempfile.mkdtemp(prefix="ctxgauge-mcp-corpus-")).resolve()
                corpus.materialize(corpus_dir)
            served = _Served(out=out, corpus_dir=corpus_dir)
            self._state["served"][str(out)] = served
            self._open(served)
            tool = self.plan.tool if self.plan is not None else None
            return {"server": dict(self.server_info), "tool": tool["name"] if tool else None}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        """The materialised tree changed in place, then `reindex_tool`, else a fresh server."""
        with self._lock:
            out = Path(out_dir).resolve()
            served = self._state["served"].get(str(out))
            if served is None or served.corpus_dir is None:
                return self.build(corpus, out_dir)
            _apply(served.corpus_dir, corpus, changes)
            if self.params["reindex_tool"] is not None:
                self._connection(served)
                self._call_index(served, self.params["reindex_tool"])
            else:
                if served.conn is not None:
                    self._run(served.conn.close())
                    served.conn = None
                self._open(served)
            return {"server": dict(self.server_info), "changes": len(changes)}

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        with self._lock:
            if self._changed:
                raise EngineError(f"engine {self.name}: {self._changed}")
            if self.tools_mode:
                raise EngineError(f"engine {self.name}: query: this object serves the mcp-tools arm, not search")
            served = self._state["served"].get(str(Path(out_dir).resolve()))
            if served is None:
                raise EngineError(f"engine {self.name}: query: no server was built for {Path(out_dir).name!r} "
                                  "by this engine object")
            self.last_reading = None
            conn = self._connection(served)
            plan = self.plan
            places = {"corpus": str(served.corpus_dir or ""), "out": str(served.out)}
            args = {**_fill(self.args, places), plan.text_arg: text}
            if plan.k_arg is not None:
                args[plan.k_arg] = k
            result = self._run(conn.call(plan.tool["name"], args))
            return self._hits(served, result, k, plan)

    def _hits(self, served: _Served, result: dict, k: int, plan: _Plan) -> list[Hit]:
        tool = plan.tool["name"]
        if result.get("isError"):
            raise EngineError(f"engine {self.name}: {tool} answered an error: {_error_text(result)}")
        reading = read_result(result, self.fields)
        self.counts["queries"] += 1
        self.counts["unparsed_lines"] += reading.unparsed
        if not reading.items:
            if not reading.unparsed:  # an answer that parses to nothing is an empty ranking
                self.last_spans = {}
                self.last_reading = {"how": reading.how, "truncated": False, "unparsed_lines": 0,
                                     "scores": "none"}
                return []
            raise EngineError(f"engine {self.name}: {tool}: no results understood ({reading.unparsed} lines or "
                              "entries not read: see docs/mcp-engines.md for the forms read)")
        order: list[str] = []
        scores: dict[str, Any] = {}
        spans: dict[str, list[tuple[int, int]]] = {}
        for item in reading.items:
            path = self._relative(served, item.path)
            if path not in spans:
                order.append(path)
                scores[path] = item.score
                spans[path] = []
            if item.lines is not None:
                spans[path].append(item.lines)
        given = [scores[p] for p in order if scores[p] is not None]
        for p in order:
            s = scores[p]
            if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s)):
                raise EngineError(f"engine {self.name}: {tool}: result {p!r} has score {s!r}, not a finite number")
        if given and len(given) != len(order):
            raise EngineError(f"engine {self.name}: {tool}: {len(given)} of {len(order)} files have a score "
                              "(all or none must)")
        if plan.k_arg is not None and len(order) > k:
            raise EngineError(f"engine {self.name}: {tool}: answered {len(order)} files for {plan.k_arg}={k} "
                              "(the contract allows at most k)")
        truncated = len(order) > k
        if truncated:
            self.counts["truncated"] += 1
            order = order[: max(k, 0)]
        if not given:
            self.counts["rank_derived"] += 1
        self.last_spans = {p: merge_ranges(spans[p]) for p in order}
        self.last_reading = {"how": reading.how, "truncated": truncated, "unparsed_lines": reading.unparsed,
                             "scores": "given" if given else "rank-derived"}
        hits = []
        for i, p in enumerate(order):
            merged = self.last_spans[p]
            if merged:
                # Merging is this engine's reading of the answer; what is left must keep every span rule, the
                # range one against the file as served (a range past its end is a breach, never cut).
                checked = check_spans(merged, f"engine {self.name}: {tool}: result {p!r}", self._lines(served, p))
            else:
                checked = ()
            hits.append(Hit(p, float(scores[p]) if given else 1.0 / (i + 1), checked))
        return hits

    @staticmethod
    def _lines(served: _Served, path: str) -> int | None:
        """The line count of `path` in the tree the server was given (None when ctxgauge wrote none out: the
        suites' guard checks the range against the corpus)."""
        if served.corpus_dir is None:
            return None
        try:
            return line_count(safe_join(served.corpus_dir, path, "corpus path").read_bytes())
        except OSError:
            return None

    def _relative(self, served: _Served, path: str) -> str:
        """`path` relative to the corpus; EngineError when it is outside it."""
        raw = path.replace("\\", "/")
        if raw.startswith("/"):
            root = str(served.corpus_dir) if served.corpus_dir is not None else None
            real = os.path.realpath(raw) if root else raw
            for base in filter(None, {root, os.path.realpath(root) if root else None}):
                for cand in (posixpath.normpath(raw), real):
                    if cand.startswith(base.rstrip("/") + "/"):
                        return cand[len(base.rstrip("/")) + 1:]
            raise EngineError(f"engine {self.name}: result path {path[:200]!r} is outside the corpus")
        parts = [s for s in raw.split("/") if s not in ("", ".")]
        if not parts or ".." in parts or ":" in parts[0]:
            raise EngineError(f"engine {self.name}: result path {path[:200]!r} is not relative to the corpus")
        return "/".join(parts)

    def query_notes(self) -> dict | None:
        """How the last answer was read, for the unit that asked it (`engines.query_notes`): `how` (structured,
        resource links, json text, text lines, nothing), `truncated` (more than k distinct files from a tool
        that takes no k: the first k kept), `unparsed_lines` (lines or entries not understood) and `scores`
        (`given`, `rank-derived`: 1/rank, or `none` for an empty answer)."""
        return dict(self.last_reading) if self.last_reading is not None else None

    def tools_report(self) -> dict:
        """For `ctxgauge check`: the tools the server listed and the ones used."""
        plan = self.plan
        if plan is None:
            return {"found": [], "used": {}}
        if self.tools_mode:
            return {"found": plan.found, "exposed": [t["name"] for t in plan.exposed], "refused": dict(plan.refused),
                    "server": dict(self.server_info)}
        used = {"search": plan.tool["name"], "text_arg": plan.text_arg, "k_arg": plan.k_arg}
        for key in ("index_tool", "reindex_tool"):
            if getattr(plan, key) is not None:
                used[key] = getattr(plan, key)["name"]
        return {"found": plan.found, "used": used, "server": dict(self.server_info), "counts": dict(self.counts)}

    def close(self) -> None:
        """End every server this object started (they are started again by the next request)."""
        with self._lock:
            _shut(self._state)


def _error_text(result: dict) -> str:
    texts = [str(b.get("text")) for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
    return " ".join(" ".join(texts).split())[:300] or "no message"


def _apply(root: Path, corpus: Corpus, changes: Sequence[Change]) -> None:
    """Bring the materialised tree at `root` to `corpus` in place, given the changed paths."""
    for c in changes:
        for gone in ([c.old_path] if c.status == "renamed" and c.old_path else []) + (
                [c.path] if c.status == "deleted" else []):
            target = safe_join(root, gone, "corpus path")
            if target.is_file() or target.is_symlink():
                target.unlink()
        if c.status != "deleted" and c.path in corpus:
            target = safe_join(root, c.path, "corpus path")
            if target.is_file() or target.is_symlink():
                target.unlink()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(corpus.read(c.path))
