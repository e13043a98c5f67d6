"""LLM providers behind one small interface: `Client.complete(ChatRequest) -> ChatResult`.

    from ctxgauge.providers import ProviderConfig, make_client, ChatRequest, Message
    client = make_client(ProviderConfig(model="gpt-4o-mini"))
    result = client.complete(ChatRequest((Message("user", "Where is the router?"),)))
    result.text, result.usage.to_dict(), client.cost(result.usage)

Kinds: `openai` (any OpenAI-compatible server through `--base-url`), `anthropic`, and `local` (a small
GGUF model on this machine over loopback; opt-in). SDKs load only when a provider of their kind is made.
Keys come only from the environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) and are never written to a
record, a cache entry or a log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ctxgauge.errors import UserError
from ctxgauge.providers._base import (
    Backend, ChatRequest, ChatResult, Message, ProviderOutage, ProviderRefused, ToolCall, ToolSpec, Usage,
)
from ctxgauge.providers._cache import ResponseCache, default_cache_dir
from ctxgauge.providers._client import Client, Ledger, RetryPolicy
from ctxgauge.providers._rates import DEFAULT_RATES, RateTable, load_rates

KINDS = ("openai", "anthropic", "local")
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


@dataclass(frozen=True)
class ProviderConfig:
    """How to reach one model. `kind` None picks one: `local` for model `local`, `anthropic` for a
    `claude*` model without a base URL, else `openai`."""

    model: str
    kind: str | None = None
    base_url: str | None = None
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    cache_dir: Path | None = None
    use_cache: bool = True
    rates: str | None = None

    @property
    def resolved_kind(self) -> str:
        if self.kind:
            if self.kind not in KINDS:
                raise UserError(f"unknown provider {self.kind!r} (known: {', '.join(KINDS)})")
            return self.kind
        if self.model == "local":
            return "local"
        if self.model.startswith("claude") and not self.base_url:
            return "anthropic"
        return "openai"


def provider_status(config: ProviderConfig, env: Mapping[str, str] | None = None) -> tuple[bool, str | None]:
    """(True, None) if a client can be made, else (False, why): the reason a skipped arm gives."""
    env = os.environ if env is None else env
    kind = config.resolved_kind
    if kind == "local":
        from ctxgauge.providers._local import local_available

        return local_available()
    module = "openai" if kind == "openai" else "anthropic"
    try:
        __import__(module)
    except ImportError:
        return False, f"the {module} package is not installed: pip install {module} (or: pip install 'ctxgauge[llm]')"
    base_url = config.base_url or env.get(BASE_URL_ENV[kind])
    if not env.get(KEY_ENV[kind]) and not base_url:
        return False, f"{KEY_ENV[kind]} is not set (or give --base-url for a local OpenAI-compatible server)"
    return True, None


def make_client(config: ProviderConfig, *, env: Mapping[str, str] | None = None,
                sleep: Callable[[float], None] | None = None) -> Client:
    """A `Client` for `config`: backend, response cache (unless `use_cache` is off), retries, rates."""
    env = os.environ if env is None else env
    ok, why = provider_status(config, env)
    if not ok:
        raise UserError(f"provider {config.resolved_kind} for model {config.model!r} is not available: {why}")
    kind = config.resolved_kind
    cache_root = Path(config.cache_dir) if config.cache_dir else default_cache_dir()
    backend: Backend
    if kind == "local":
        from ctxgauge.providers._local import LOCAL_MODEL, LocalBackend

        backend = LocalBackend(cache_root, timeout=config.timeout,
                               model=LOCAL_MODEL if config.model == "local" else config.model)
    else:
        base_url = config.base_url or env.get(BASE_URL_ENV[kind])
        # A local OpenAI-compatible server checks no key, but the SDK wants one: a placeholder, never stored.
        api_key = env.get(KEY_ENV[kind]) or "not-needed"
        if kind == "openai":
            from ctxgauge.providers._openai import OpenAIBackend

            backend = OpenAIBackend(config.model, api_key=api_key, base_url=base_url, timeout=config.timeout)
        else:
            from ctxgauge.providers._anthropic import AnthropicBackend

            backend = AnthropicBackend(config.model, api_key=api_key, base_url=base_url, timeout=config.timeout)
    cache = ResponseCache(cache_root) if config.use_cache else None
    kwargs = {"sleep": sleep} if sleep is not None else {}
    secrets = tuple(env[k] for k in KEY_ENV.values() if env.get(k))
    return Client(backend, cache=cache, retry=RetryPolicy(retries=config.retries, base=config.backoff),
                  rates=load_rates(config.rates), secrets=secrets, **kwargs)


__all__ = [
    "Backend", "ChatRequest", "ChatResult", "Client", "DEFAULT_RATES", "KINDS", "Ledger", "Message",
    "ProviderConfig", "ProviderOutage", "ProviderRefused", "RateTable", "ResponseCache", "RetryPolicy",
    "ToolCall", "ToolSpec", "Usage", "default_cache_dir", "load_rates", "make_client", "provider_status",
]
