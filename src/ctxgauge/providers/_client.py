"""`Client`: one backend plus the response cache, retries with backoff, and accounting.

Every suite talks to a `Client`, never to a vendor SDK: the cache is looked up first (a hit makes no
request at all), a transient failure is retried with exponential backoff up to `retries` times, and
what remains is a `ProviderOutage` the suite records as `infra`. A request the provider refuses
(bad key, unknown model) is a `ProviderRefused`: retrying it would only burn the budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable

from ctxgauge._redact import redact, redact_value
from ctxgauge.providers._base import Backend, ChatRequest, ChatResult, ProviderOutage, ProviderRefused, Usage
from ctxgauge.providers._cache import ResponseCache
from ctxgauge.providers._rates import DEFAULT_RATES, RateTable


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` extra attempts after the first, sleeping `base * 2**attempt` seconds (capped at `cap`)."""

    retries: int = 3
    base: float = 1.0
    cap: float = 30.0

    def delay(self, attempt: int) -> float:
        return min(self.cap, self.base * (2 ** attempt))


@dataclass
class Ledger:
    """What a client spent: calls asked for, requests actually sent, cache hits, retries, tokens."""

    calls: int = 0
    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    outages: int = 0
    usage: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict:
        return {"calls": self.calls, "requests": self.requests, "cache_hits": self.cache_hits,
                "retries": self.retries, "outages": self.outages, **self.usage.to_dict()}


class Client:
    """A backend with the cache, retries and a ledger. `complete(request)` returns a `ChatResult` or
    raises `ProviderOutage` / `ProviderRefused`."""

    def __init__(self, backend: Backend, *, cache: ResponseCache | None = None,
                 retry: RetryPolicy = RetryPolicy(), rates: RateTable = DEFAULT_RATES,
                 sleep: Callable[[float], None] = time.sleep, secrets: tuple[str, ...] = ()):
        self.backend = backend
        # Values never to repeat in a message (the API key): an SDK error may echo the request's headers.
        self._secrets = tuple(x for x in secrets if x and len(x) >= 8)
        self.cache = cache
        self.retry = retry
        self.rates = rates
        self.ledger = Ledger()
        self._sleep = sleep

    @property
    def kind(self) -> str:
        return self.backend.kind

    @property
    def model(self) -> str:
        return self.backend.model

    def identity(self) -> dict:
        """What records say about the model behind an answer: provider kind and model (never the key)."""
        return {"provider": self.kind, "model": self.model}

    def cost(self, usage: Usage) -> float | None:
        return self.rates.cost(self.model, usage)

    def complete(self, request: ChatRequest) -> ChatResult:
        self.ledger.calls += 1
        key = request.key(self.kind, self.model)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.ledger.cache_hits += 1
                self.ledger.usage += hit.usage
                return self._redacted(hit)  # a cache written before redaction reached answers
        last: BaseException | None = None
        for attempt in range(self.retry.retries + 1):
            if attempt:
                self.ledger.retries += 1
                self._sleep(self.retry.delay(attempt - 1))
            self.ledger.requests += 1
            try:
                result = self.backend.send(request)
            except ProviderRefused:
                raise
            except Exception as exc:  # the SDKs raise many types; the backend says which are transient
                if not self.backend.transient(exc):
                    raise ProviderRefused(f"{self.kind} refused the request for model {self.model!r}: "
                                          f"{self._describe(exc)}") from None
                last = exc
                continue
            # A server that echoes the key in its answer: redacted before the cache or any answer file sees it.
            result = self._redacted(result)
            if self.cache is not None:
                self.cache.put(key, result, provider=self.kind, model=self.model)
            self.ledger.usage += result.usage
            return result
        self.ledger.outages += 1
        raise ProviderOutage(f"{self.kind} ({self.model}) failed after {self.retry.retries + 1} attempts: "
                             f"{self._describe(last)}")

    def _redacted(self, result: ChatResult) -> ChatResult:
        """`result` with the secrets redacted from its text and its tool calls' arguments (`_redact`)."""
        if not self._secrets:
            return result
        text = redact(result.text, self._secrets)
        calls = tuple(replace(c, name=redact(c.name, self._secrets), arguments=redact_value(c.arguments, self._secrets))
                      for c in result.tool_calls)
        if text == result.text and calls == result.tool_calls:
            return result
        return replace(result, text=text, tool_calls=calls)

    def _describe(self, exc: BaseException | None) -> str:
        if exc is None:
            return "no attempt made"
        # Redact before collapsing whitespace, with the one normalising matcher: a key wrapped over two lines
        # and indented, split by a tab or percent-encoded would otherwise survive in run.json and on stderr.
        text = " ".join(redact(str(exc), self._secrets).split())
        return f"{type(exc).__name__}: {text[:200]}"

    def close(self) -> None:
        self.backend.close()
