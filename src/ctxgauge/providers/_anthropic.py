"""Anthropic's messages API through the `anthropic` SDK.

System messages travel apart (`system=`); tool calls are `tool_use` content blocks and their answers
`tool_result` blocks inside a user turn (consecutive tool answers share one turn, as the API requires).
Anthropic reports all four token columns: `input_tokens` is already the uncached tail.
"""

from __future__ import annotations

from typing import Any

from ctxgauge.providers._base import ChatRequest, ChatResult, Message, ToolCall, Usage, parse_arguments
from ctxgauge.providers._openai import is_transient_status

INSTALL_HINT = "pip install anthropic (or: pip install 'ctxgauge[llm]')"


def to_anthropic(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, messages) in the messages API's shape."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) and all(
                    b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.role == "assistant" and m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m.role, "content": m.content})
    return system, out


class AnthropicBackend:
    """One messages call per `send`."""

    kind = "anthropic"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, timeout: float = 120.0):
        try:
            import anthropic
        except ImportError:
            from ctxgauge.errors import UserError

            raise UserError(f"the anthropic provider needs the anthropic package: {INSTALL_HINT}") from None
        self.model = model
        self._sdk = anthropic
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)
        # Recent SDKs dropped `temperature` from messages.create (newer models fix sampling themselves);
        # send it only where the installed SDK still takes it.
        import inspect

        self._takes_temperature = "temperature" in inspect.signature(self._client.messages.create).parameters

    def send(self, request: ChatRequest) -> ChatResult:
        system, messages = to_anthropic(request.messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": request.max_tokens}
        if self._takes_temperature:
            kwargs["temperature"] = request.temperature
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = [{"name": t.name, "description": t.description,
                                "input_schema": t.parameters or {"type": "object", "properties": {}}}
                               for t in request.tools]
        resp = self._client.messages.create(**kwargs)
        texts, calls = [], []
        for block in resp.content or ():
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, parse_arguments(block.input)))
        u = resp.usage
        usage = Usage(input=int(u.input_tokens or 0), output=int(u.output_tokens or 0),
                      cache_read=int(getattr(u, "cache_read_input_tokens", 0) or 0),
                      cache_write=int(getattr(u, "cache_creation_input_tokens", 0) or 0))
        return ChatResult(text="".join(texts), tool_calls=tuple(calls), usage=usage,
                          model=resp.model or self.model, finish_reason=resp.stop_reason)

    def transient(self, exc: BaseException) -> bool:
        if not isinstance(exc, self._sdk.AnthropicError):
            return isinstance(exc, (OSError, ValueError))  # a dropped socket or garbled body; not our bug
        return is_transient_status(exc)

    def close(self) -> None:
        self._client.close()
