"""Providers against a real loopback server, through the real SDKs: usage, tool calls, retries, outages,
refusals, the response cache, and keys that never reach disk."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.providers import (
    ChatRequest, Message, ProviderConfig, ProviderOutage, ProviderRefused, ToolCall, ToolSpec, Usage,
    make_client, provider_status,
)

sys.path.insert(0, str(Path(__file__).parent))
_spec = importlib.util.spec_from_file_location("ctxgauge_tests_fake_llm", Path(__file__).with_name("fake_llm.py"))
fake_llm = sys.modules.get("ctxgauge_tests_fake_llm") or importlib.util.module_from_spec(_spec)
if "ctxgauge_tests_fake_llm" not in sys.modules:
    sys.modules["ctxgauge_tests_fake_llm"] = fake_llm
    _spec.loader.exec_module(fake_llm)
Reply = fake_llm.Reply

ENV = {"OPENAI_API_KEY": "sk-test-secret-do-not-store", "ANTHROPIC_API_KEY": "sk-ant-test-secret"}
SEARCH = ToolSpec("search", "rank files", {"type": "object", "properties": {"query": {"type": "string"}}})


def client(server, tmp_path, kind, **kw):
    cfg = ProviderConfig(model=kw.pop("model", "gpt-4o-mini" if kind == "openai" else "claude-3-5-haiku"),
                         kind=kind, base_url=server.base_url, cache_dir=tmp_path / "cache",
                         timeout=kw.pop("timeout", 5.0), retries=kw.pop("retries", 2), backoff=0.0, **kw)
    return make_client(cfg, env=ENV)


def ask(text="Where is the router?", **kw) -> ChatRequest:
    return ChatRequest((Message("system", "Answer briefly."), Message("user", text)), **kw)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_text_and_four_token_columns(kind, request, tmp_path):
    server = request.getfixturevalue(f"{kind}_server")
    server.push(Reply("shelfd/routing.py", prompt_tokens=120, completion_tokens=7, cached_tokens=80,
                      cache_write_tokens=30))
    c = client(server, tmp_path, kind)
    result = c.complete(ask())
    assert result.text == "shelfd/routing.py"
    if kind == "openai":  # prompt_tokens counts cached ones; no cache writes reported
        assert result.usage == Usage(input=120 - 80, output=7, cache_read=80, cache_write=0)
        assert server.requests[0]["messages"][0] == {"role": "system", "content": "Answer briefly."}
    else:  # input_tokens is already the uncached tail
        assert result.usage == Usage(input=120, output=7, cache_read=80, cache_write=30)
        assert server.requests[0]["system"] == "Answer briefly."
    assert c.cost(result.usage) is not None and c.cost(result.usage) > 0


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_tool_calls_round_trip(kind, request, tmp_path):
    server = request.getfixturevalue(f"{kind}_server")
    server.push(Reply(tool_calls=[("search", {"query": "router"})]), Reply("It is in shelfd/routing.py."))
    c = client(server, tmp_path, kind)
    first = c.complete(ask(tools=(SEARCH,)))
    assert [(t.name, t.arguments) for t in first.tool_calls] == [("search", {"query": "router"})]
    history = ask(tools=(SEARCH,)).messages + (
        Message("assistant", "", tool_calls=first.tool_calls),
        Message("tool", "shelfd/routing.py 3.2", tool_call_id=first.tool_calls[0].id))
    second = c.complete(ChatRequest(history, tools=(SEARCH,)))
    assert second.text == "It is in shelfd/routing.py."
    body = server.requests[1]
    if kind == "openai":
        assert body["tools"][0]["function"]["name"] == "search"
        assert body["messages"][-1] == {"role": "tool", "tool_call_id": "call_0", "content": "shelfd/routing.py 3.2"}
    else:
        assert body["tools"][0]["input_schema"]["properties"] == {"query": {"type": "string"}}
        assert body["messages"][-1]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_0",
                                                      "content": "shelfd/routing.py 3.2"}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_5xx_is_retried_then_an_outage(kind, request, tmp_path):
    server = request.getfixturevalue(f"{kind}_server")
    server.push(Reply(status=503), Reply("recovered"))
    c = client(server, tmp_path, kind, retries=2)
    assert c.complete(ask()).text == "recovered"
    assert server.count == 2 and c.ledger.retries == 1
    server.push(*[Reply(status=500)] * 3)
    with pytest.raises(ProviderOutage, match="after 3 attempts"):
        c.complete(ask("another question"))
    assert server.count == 2 + 3  # bounded: the first try plus two retries


def test_timeout_is_an_outage(openai_server, tmp_path):
    openai_server.push(Reply("late", delay=1.0), Reply("late", delay=1.0))
    c = client(openai_server, tmp_path, "openai", timeout=0.2, retries=1)
    with pytest.raises(ProviderOutage, match="Timeout"):
        c.complete(ask())
    assert c.ledger.outages == 1 and c.ledger.requests == 2


def test_refused_request_is_not_retried(openai_server, tmp_path):
    openai_server.push(Reply(status=401, text="bad key"))
    c = client(openai_server, tmp_path, "openai", retries=3)
    with pytest.raises(ProviderRefused, match="refused"):
        c.complete(ask())
    assert openai_server.count == 1
    assert isinstance(ProviderRefused("x"), UserError)  # one line, exit 2, not a run full of infra


def test_cache_hit_makes_no_request_and_keeps_usage(openai_server, tmp_path):
    openai_server.push(Reply("cached answer", prompt_tokens=50, completion_tokens=5))
    first = client(openai_server, tmp_path, "openai").complete(ask())
    again = client(openai_server, tmp_path, "openai")  # a new process would look like this
    second = again.complete(ask())
    assert openai_server.count == 1
    assert second.text == first.text and second.cached and not first.cached
    assert second.usage == first.usage and again.ledger.cache_hits == 1 and again.ledger.requests == 0


def test_repetition_and_purpose_are_part_of_the_key():
    base = ask()
    keys = {r.key("openai", "m") for r in (base, ask(repetition=1), ask(purpose="judge"))}
    assert len(keys) == 3
    assert base.key("openai", "m") != base.key("openai", "other-model")
    assert base.key("openai", "m") == ask().key("openai", "m")


def test_keys_are_never_written(openai_server, tmp_path):
    openai_server.push(Reply("x"))
    client(openai_server, tmp_path, "openai").complete(ask())
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert b"sk-test-secret" not in path.read_bytes()


def test_provider_status_names_the_missing_key():
    ok, why = provider_status(ProviderConfig(model="gpt-4o-mini"), env={})
    assert not ok and "OPENAI_API_KEY" in why
    ok, why = provider_status(ProviderConfig(model="claude-3-5-haiku"), env={})
    assert not ok and "ANTHROPIC_API_KEY" in why
    assert provider_status(ProviderConfig(model="m", base_url="http://127.0.0.1:1/v1"), env={}) == (True, None)
    with pytest.raises(UserError, match="unknown provider"):
        ProviderConfig(model="m", kind="bogus").resolved_kind


def test_tool_call_with_broken_json_arguments(openai_server, tmp_path):
    openai_server.route(lambda body: Reply(tool_calls=[("read", {"path": "a"})]))
    result = client(openai_server, tmp_path, "openai").complete(ask())
    assert result.tool_calls == (ToolCall("call_0", "read", {"path": "a"}),)
    from ctxgauge.providers._base import parse_arguments

    assert parse_arguments("{not json") == {"_raw": "{not json"}


def test_a_key_echoed_in_an_error_is_redacted(openai_server, tmp_path):
    openai_server.push(Reply(status=401, text=f"Incorrect API key provided: {ENV['OPENAI_API_KEY']}"))
    with pytest.raises(ProviderRefused) as err:
        client(openai_server, tmp_path, "openai").complete(ask())
    assert ENV["OPENAI_API_KEY"] not in str(err.value) and "[redacted]" in str(err.value)


@pytest.mark.parametrize("sep", ["\n", "\r\n"])
def test_provider_error_with_a_wrapped_key_is_redacted(openai_server, tmp_path, sep):
    # A provider that wraps the key over two lines: whitespace collapsing used to leave "sk-test-sec ret..."
    key = ENV["OPENAI_API_KEY"]
    openai_server.push(Reply(status=401, text=f"Incorrect API key provided: {key[:11]}{sep}{key[11:]}."))
    with pytest.raises(ProviderRefused) as info:
        client(openai_server, tmp_path, "openai", retries=0).complete(ask())
    assert key[:11] not in str(info.value) and "[redacted]" in str(info.value)
