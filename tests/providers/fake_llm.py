"""A real HTTP server on loopback that speaks OpenAI's chat-completions or Anthropic's messages API.

Tests drive it with the real SDKs. Each test scripts the replies: a queue (`push`) or a function of the
request body (`route`). Every request is recorded (`requests`), so a test can count what reached the
wire (a cache hit must not). A reply can carry tool calls, usage with cached tokens, an HTTP error
status, or a delay longer than the client's timeout.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    """One scripted answer. `tool_calls` is [(name, arguments)]; `status` >= 400 sends an error body."""

    text: str = ""
    tool_calls: list[tuple[str, dict]] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0
    prompt_tokens: int = 100
    completion_tokens: int = 20
    cached_tokens: int = 0
    cache_write_tokens: int = 0


class FakeLLMServer:
    """`kind` is "openai" or "anthropic". Use as a context manager; `base_url` is what the SDK needs."""

    def __init__(self, kind: str = "openai"):
        self.kind = kind
        self.requests: list[dict] = []
        self._queue: list[Reply] = []
        self._route: Callable[[dict], Reply] | None = None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # -- scripting --------------------------------------------------------------------------------------
    def push(self, *replies: Reply | str) -> "FakeLLMServer":
        self._queue.extend(Reply(r) if isinstance(r, str) else r for r in replies)
        return self

    def route(self, fn: Callable[[dict], Reply | str]) -> "FakeLLMServer":
        self._route = lambda body: (lambda r: Reply(r) if isinstance(r, str) else r)(fn(body))
        return self

    @property
    def count(self) -> int:
        return len(self.requests)

    @property
    def base_url(self) -> str:
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}/v1" if self.kind == "openai" else f"http://127.0.0.1:{port}"

    # -- lifecycle --------------------------------------------------------------------------------------
    def __enter__(self) -> "FakeLLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- wire -------------------------------------------------------------------------------------------
    def _next(self, body: dict) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.pop(0)
        if self._route is not None:
            return self._route(body)
        return Reply(status=500, text="no scripted reply left")

    def _openai_body(self, r: Reply, body: dict) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": r.text or None}
        if r.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(r.tool_calls)]
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000,
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if r.tool_calls else "stop"}],
                "usage": {"prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
                          "total_tokens": r.prompt_tokens + r.completion_tokens,
                          "prompt_tokens_details": {"cached_tokens": r.cached_tokens}}}

    def _anthropic_body(self, r: Reply, body: dict) -> dict:
        content: list[dict] = [{"type": "text", "text": r.text}] if r.text else []
        content += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
                    for i, (n, a) in enumerate(r.tool_calls)]
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
                "content": content, "stop_reason": "tool_use" if r.tool_calls else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": r.prompt_tokens, "output_tokens": r.completion_tokens,
                          "cache_read_input_tokens": r.cached_tokens,
                          "cache_creation_input_tokens": r.cache_write_tokens}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                reply = server._next(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status >= 400:
                    payload: dict = {"error": {"message": reply.text or "scripted error", "type": "server_error"}}
                    if server.kind == "anthropic":
                        payload = {"type": "error", "error": {"type": "api_error", "message": reply.text or "err"}}
                else:
                    payload = (server._openai_body if server.kind == "openai" else server._anthropic_body)(reply, body)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        return Handler


def system_text(body: dict) -> str:
    """The system prompt of a request in either API's shape."""
    if "system" in body:
        s = body["system"]
        return s if isinstance(s, str) else " ".join(b.get("text", "") for b in s)
    return " ".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "system")


def last_user_text(body: dict) -> str:
    """The text of the last user turn (string content or text blocks)."""
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            return " ".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text")
    return ""
