"""What every provider speaks: messages, tool specs, requests, results, the four token columns.

A provider turns one `ChatRequest` into one `ChatResult`. Requests are plain frozen data, so each has a
stable hash (`ChatRequest.key`) that keys the response cache; the repetition index is part of it, so
`--repeat N` gives N independent sessions instead of N copies of the first.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ctxgauge._io import canonical_json
from ctxgauge.errors import UserError

# Bumped when the request hash's input changes shape, so an old cache can never answer a new request.
CACHE_KEY_VERSION = 1


class ProviderOutage(Exception):
    """The provider could not answer after every retry (5xx, timeout, refused connection, rate limit).

    A suite records this as `infra`: a gap to retry, never a zero."""


class ProviderRefused(UserError):
    """The provider rejected the request itself (bad key, unknown model, malformed request): retrying
    cannot help, so the run stops with one line instead of filling every question with infra."""


@dataclass(frozen=True)
class Usage:
    """Token counts of one or more calls, in the four columns every record carries."""

    input: int = 0
    """Uncached input tokens (the part of the prompt the provider processed afresh)."""
    output: int = 0
    """Output tokens, reasoning included where the provider counts it there."""
    cache_read: int = 0
    """Input tokens served from the provider's prompt cache."""
    cache_write: int = 0
    """Input tokens written to the provider's prompt cache (Anthropic reports these; OpenAI does not)."""

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input + other.input, self.output + other.output,
                     self.cache_read + other.cache_read, self.cache_write + other.cache_write)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_dict(self) -> dict[str, int]:
        """The record shape: `tokens_input`, `tokens_output`, `tokens_cache_read`, `tokens_cache_write`."""
        return {"tokens_input": self.input, "tokens_output": self.output,
                "tokens_cache_read": self.cache_read, "tokens_cache_write": self.cache_write}

    @classmethod
    def from_dict(cls, d: dict | None) -> "Usage":
        d = d or {}
        return cls(int(d.get("tokens_input", 0)), int(d.get("tokens_output", 0)),
                   int(d.get("tokens_cache_read", 0)), int(d.get("tokens_cache_write", 0)))


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for: the provider's call id, the tool name, its parsed arguments."""

    id: str
    name: str
    arguments: dict

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, d: dict) -> "ToolCall":
        return cls(str(d["id"]), str(d["name"]), dict(d.get("arguments") or {}))


@dataclass(frozen=True)
class Message:
    """One chat message. `role` is system, user, assistant or tool; an assistant message may carry tool
    calls, a tool message answers the call named by `tool_call_id`."""

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        return d


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ChatRequest:
    """Everything that decides an answer. `repetition` separates independent sessions of the same
    question (it never reaches the provider, only the cache key); `purpose` (answer, judge, rubric)
    keeps an answer and a judgement of identical text apart."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 1024
    temperature: float = 0.0
    repetition: int = 0
    purpose: str = "answer"

    def key(self, provider: str, model: str) -> str:
        """SHA-256 of the request with the provider kind and model: the response cache key. The base
        URL and the key stay out: the same model behind another address is the same request."""
        body = {
            "v": CACHE_KEY_VERSION, "provider": provider, "model": model,
            "messages": [m.to_dict() for m in self.messages], "tools": [t.to_dict() for t in self.tools],
            "max_tokens": self.max_tokens, "temperature": self.temperature,
            "repetition": self.repetition, "purpose": self.purpose,
        }
        return hashlib.sha256(canonical_json(body).encode()).hexdigest()


@dataclass(frozen=True)
class ChatResult:
    """One answer: its text, the tool calls it asks for, its usage, and whether the cache served it."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str | None = None
    cached: bool = False

    def to_dict(self) -> dict:
        return {"text": self.text, "tool_calls": [c.to_dict() for c in self.tool_calls],
                "usage": self.usage.to_dict(), "model": self.model, "finish_reason": self.finish_reason}

    @classmethod
    def from_dict(cls, d: dict, *, cached: bool = False) -> "ChatResult":
        return cls(text=str(d.get("text") or ""),
                   tool_calls=tuple(ToolCall.from_dict(c) for c in d.get("tool_calls") or ()),
                   usage=Usage.from_dict(d.get("usage")), model=str(d.get("model") or ""),
                   finish_reason=d.get("finish_reason"), cached=cached)


def parse_arguments(raw: Any) -> dict:
    """Tool-call arguments as a dict; a model that wrote broken JSON gets `{"_raw": text}` rather than
    a crash, so the agent loop can answer it with an error message."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError, RecursionError):  # RecursionError: arguments nested 100,000 deep
        return {"_raw": str(raw)}
    return value if isinstance(value, dict) else {"_raw": str(raw)}


@runtime_checkable
class Backend(Protocol):
    """One vendor API. `send` makes exactly one HTTP request (no retries, no cache: `Client` adds those)
    and raises; `transient(exc)` says whether an exception is worth retrying."""

    kind: str
    model: str

    def send(self, request: ChatRequest) -> ChatResult: ...

    def transient(self, exc: BaseException) -> bool: ...

    def close(self) -> None: ...
