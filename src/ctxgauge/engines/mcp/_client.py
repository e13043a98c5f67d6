"""One MCP server connection through the official SDK (`mcp`), driven from synchronous code.

Imported only when an mcp engine opens a connection (the SDK, pydantic and anyio cost start-up time every
other command must not pay).

Decisions, and the failures they prevent:
- One asyncio event loop on one thread per engine object (`Loop`). The SDK's session holds anyio task
  groups, which must be left by the task that entered them: each connection lives in one task of its own
  (`Connection.open` starts it and returns when the server has answered `initialize` and `tools/list`);
  requests are other tasks on the same loop.
- A stdio server is `command`'s `Process` (its own session and process group, bounded reads, the end of
  stderr kept for reasons, the group killed on close), started from the loop thread with
  `die_with_parent`, so the kernel kills it when that thread ends, ctxgauge killed with SIGKILL included.
  The SDK's own `stdio_client` starts its child without either.
- Every request has a deadline; past it, or when the server exits, the connection is ended (its process
  group killed) and the request fails with one line naming the exit status and the server's last words.
- HTTP goes through a client that ignores proxy variables: the loopback only, never a proxy elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from ctxgauge.engines.command._process import EOF, TIMEOUT, TOO_LONG, Process, exit_words
from ctxgauge.errors import EngineError, UserError

START_SECONDS = 30.0
"""The least time a server is given to start and answer `initialize` and `tools/list` (the SDK's own import
takes seconds on a loaded machine), whatever the per-request `timeout`."""
CLOSE_GRACE = 3.0
"""Seconds a connection is given to end politely (a streamable-HTTP session's DELETE) before it is cut."""


class Loop:
    """An asyncio event loop running on a daemon thread of its own."""

    def __init__(self, label: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=label, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float | None = None) -> Any:
        """Run `coro` on the loop and wait for its result (TimeoutError past `timeout`: a backstop only,
        every coroutine here keeps its own deadline)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        """Stop the loop and its thread (a server started with die_with_parent dies with it)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5.0)
        if not self.thread.is_alive():
            self.loop.close()


def _last_words(stderr: str, limit: int = 300) -> str:
    text = " | ".join(line.strip() for line in stderr.splitlines() if line.strip())
    if not text:
        return "nothing on stderr"
    return f"stderr: {text}" if len(text) <= limit else f"stderr (end): …{text[-limit:]}"


@contextlib.asynccontextmanager
async def _process_streams(proc: Process, timeout: float):
    """The SDK's (read, write) stream pair over a started `Process`'s stdin and stdout."""
    read_w, read_r = anyio.create_memory_object_stream[SessionMessage | Exception](64)
    write_w, write_r = anyio.create_memory_object_stream[SessionMessage](64)

    async def reader() -> None:
        async with read_w:
            while True:
                item = await anyio.to_thread.run_sync(proc.receive, time.monotonic() + 0.5, abandon_on_cancel=True)
                if item is TIMEOUT:
                    continue
                if item is EOF or item is TOO_LONG:
                    return  # the session sees the stream end: pending requests fail at once
                line = item.decode("utf-8", "replace").strip()
                if not line:
                    continue
                try:
                    await read_w.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False)))
                except ValueError as exc:  # a server printing to stdout: the session is told, the request waits
                    await read_w.send(exc)

    async def writer() -> None:
        async with write_r:
            async for message in write_r:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                sent = await anyio.to_thread.run_sync(proc.send, data, time.monotonic() + timeout)
                if sent != "sent":
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_r, write_w
        finally:
            tg.cancel_scope.cancel()


async def _wait_for_port(host: str, port: int, proc: Process, deadline: float, label: str) -> None:
    """Return once `host:port` accepts a connection; EngineError when the server exits or the deadline passes."""
    while True:
        try:
            _, writer = await asyncio.open_connection(host, port)
            writer.close()
            return
        except OSError:
            pass
        if not proc.alive():
            exc = EngineError(f"{label}: start: the server exited with {exit_words(proc.exit_code() or 0)} before "
                              f"listening on {host}:{port}; {_last_words(proc.stderr_tail())}")
            exc.not_listening = True  # type: ignore[attr-defined] # the port may have been taken: worth a retry
            raise exc
        if time.monotonic() >= deadline:
            raise EngineError(f"{label}: start: nothing listened on {host}:{port} within the deadline "
                              f"(server killed); {_last_words(proc.stderr_tail())}")
        await asyncio.sleep(0.05)


class Connection:
    """One running server (started here, or already running at `url`) and its initialised session."""

    def __init__(self, label: str, *, argv: list[str] | None, url: str | None, cwd: Path | None,
                 timeout: float, port: tuple[str, int] | None = None):
        self.label, self.argv, self.url, self.cwd, self.timeout, self.port = label, argv, url, cwd, timeout, port
        self.proc: Process | None = None
        self.session: ClientSession | None = None
        self.server_info: dict = {}
        self.tools: list[dict] = []
        self.start_seconds = max(timeout, START_SECONDS)
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    # -- opening --------------------------------------------------------------------------------------------
    async def open(self) -> "Connection":
        """Start the server (when there is one to start), initialise the session and list its tools."""
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.start_seconds + 1.0)
        except asyncio.TimeoutError:
            await self.close()
            raise EngineError(f"{self.label}: start: no answer to initialize within {self.start_seconds:g}s "
                              f"(server killed); {self._words()}") from None
        except BaseException:
            await self.close()
            raise
        return self

    async def _serve(self, ready: asyncio.Future) -> None:
        deadline = time.monotonic() + self.start_seconds
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.argv is not None:
                    self.proc = Process(self.argv, self.label, cwd=self.cwd)
                if self.url is None:
                    assert self.proc is not None
                    streams = await stack.enter_async_context(_process_streams(self.proc, self.timeout))
                else:
                    if self.proc is not None and self.port is not None:
                        await _wait_for_port(*self.port, self.proc, deadline, self.label)
                    http = await stack.enter_async_context(httpx2.AsyncClient(
                        trust_env=False, timeout=httpx2.Timeout(self.timeout, read=max(self.timeout, 30.0))))
                    streams = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
                self.session = session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                init = await asyncio.wait_for(session.initialize(), max(deadline - time.monotonic(), 0.1))
                info = getattr(init, "server_info", None)
                self.server_info = {"name": getattr(info, "name", None), "version": getattr(info, "version", None)}
                listed = await asyncio.wait_for(session.list_tools(), max(deadline - time.monotonic(), 0.1))
                self.tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
                ready.set_result(True)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the opener, never lost
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, (EngineError, UserError, asyncio.CancelledError))
                                    else self._failure("start", exc))

    # -- requests -------------------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict) -> dict:
        """Call one tool; its result as JSON (by alias). EngineError on a deadline, a crash or a protocol error
        (the connection is closed then: a late answer is never read as the next request's)."""
        if self.session is None or self._task is None or self._task.done():
            raise EngineError(f"{self.label}: call {tool}: the connection is closed; {self._words()}")
        try:
            result = await asyncio.wait_for(self.session.call_tool(tool, arguments), self.timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise EngineError(f"{self.label}: call {tool}: no answer within {self.timeout:g}s (server killed); "
                              f"{self._words()}") from None
        except Exception as exc:  # noqa: BLE001 - a crashed server, a closed stream, a malformed answer
            await self.close()
            raise self._failure(f"call {tool}", exc) from None
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _words(self) -> str:
        if self.proc is None:
            return f"server at {self.url}"
        code = self.proc.exit_code(wait=0.5)
        status = "still running" if code is None else f"exited with {exit_words(code)}"
        return f"{status}; {_last_words(self.proc.stderr_tail())}"

    def _failure(self, what: str, exc: BaseException) -> EngineError:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # the SDK's task groups wrap errors
            exc = exc.exceptions[0]
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            return EngineError(f"{self.label}: {what}: no answer in time; {self._words()}")
        message = " ".join(str(exc).split())[:300] or type(exc).__name__
        if self.proc is not None and self.proc.exit_code(wait=0.5) is not None:
            return EngineError(f"{self.label}: {what}: the server {self._words()}")
        return EngineError(f"{self.label}: {what}: {type(exc).__name__}: {message}; {self._words()}")

    def alive(self) -> bool:
        """Whether the session is open (and its process, when one was started, still running)."""
        return (self._task is not None and not self._task.done()
                and (self.proc is None or self.proc.alive()))

    # -- closing --------------------------------------------------------------------------------------------
    async def close(self) -> None:
        """End the session (politely within CLOSE_GRACE, else cut) and kill the server's process group."""
        self._stop.set()
        if self.proc is not None and self.url is None:
            self.proc.kill()  # stdio: nothing to say goodbye over; the reader sees EOF at once
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._task), CLOSE_GRACE)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(self._task, CLOSE_GRACE)
        if self.proc is not None:
            await asyncio.to_thread(self.proc.close, 0)
