"""OpenAI-compatible chat completions through the `openai` SDK.

`base_url` reaches any server that speaks the same API (llama.cpp's server, vLLM, Ollama, the `local`
provider). The SDK's own retries are turned off (`max_retries=0`) so that `Client` alone decides, counts
and bounds them. Token columns: OpenAI reports `prompt_tokens` including cached ones, so the uncached
input is `prompt_tokens - cached_tokens`; it reports no cache writes.
"""

from __future__ import annotations

import json
from typing import Any

from ctxgauge.providers._base import ChatRequest, ChatResult, Message, ToolCall, Usage, parse_arguments

INSTALL_HINT = "pip install openai (or: pip install 'ctxgauge[llm]')"


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def is_transient_status(exc: BaseException) -> bool:
    """Retry anything but a 4xx the server meant (408 timeout, 409 conflict and 429 rate limit are
    retried): a refused key or an unknown model will not heal by asking again."""
    code = _status(exc)
    return code is None or code >= 500 or code in (408, 409, 429)


def _message_to_openai(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["content"] = m.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments, sort_keys=True)}}
            for c in m.tool_calls
        ]
    return out


class OpenAIBackend:
    """One chat-completions call per `send`."""

    kind = "openai"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, timeout: float = 120.0):
        try:
            import openai
        except ImportError:
            from ctxgauge.errors import UserError

            raise UserError(f"the openai provider needs the openai package: {INSTALL_HINT}") from None
        self.model = model
        self._sdk = openai
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    def send(self, request: ChatRequest) -> ChatResult:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [_message_to_openai(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.tools:
            kwargs["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                                 "parameters": t.parameters}}
                               for t in request.tools]
        resp = self._client.chat.completions.create(**kwargs)
        if not resp.choices:
            raise ValueError("the response has no choices")
        choice = resp.choices[0]
        msg = choice.message
        calls = tuple(
            ToolCall(c.id, c.function.name, parse_arguments(c.function.arguments))
            for c in (msg.tool_calls or ()) if getattr(c, "function", None) is not None
        )
        return ChatResult(text=msg.content or "", tool_calls=calls, usage=_usage(resp.usage),
                          model=resp.model or self.model, finish_reason=choice.finish_reason)

    def transient(self, exc: BaseException) -> bool:
        if not isinstance(exc, self._sdk.OpenAIError):
            return isinstance(exc, (OSError, ValueError))  # a dropped socket or garbled body; not our bug
        return is_transient_status(exc)

    def close(self) -> None:
        self._client.close()


def _usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    prompt = int(getattr(u, "prompt_tokens", 0) or 0)
    details = getattr(u, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(input=max(prompt - cached, 0), output=int(getattr(u, "completion_tokens", 0) or 0),
                 cache_read=cached, cache_write=0)
