"""The `local` provider: a real GGUF model (gemma 3 270M) through cyllama, over loopback, through the real
openai SDK. Slow tier (CTXGAUGE_SLOW=1); skipped when cyllama or the GGUF package is missing."""

from __future__ import annotations

import pytest

from ctxgauge.providers import ChatRequest, Message, ProviderConfig, make_client, provider_status

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_client(tmp_path_factory):
    ok, why = provider_status(ProviderConfig(model="local"))
    if not ok:
        pytest.skip(why)
    client = make_client(ProviderConfig(model="local", cache_dir=tmp_path_factory.mktemp("local-cache"), timeout=120))
    yield client
    client.close()


def test_local_model_answers_with_usage_and_is_cached(local_client):
    request = ChatRequest((Message("system", "Answer briefly."), Message("user", "What is 2 + 2?")), max_tokens=24)
    first = local_client.complete(request)
    assert first.text.strip() and not first.cached
    assert first.usage.input > 0 and 0 < first.usage.output <= 24 and first.usage.cache_read == 0
    again = local_client.complete(request)
    assert again.cached and again.text == first.text and local_client.ledger.requests == 1
    # Greedy decoding: the same request in a new repetition (a cache miss) gives the same text.
    third = local_client.complete(ChatRequest(request.messages, max_tokens=24, repetition=1))
    assert not third.cached and third.text == first.text
    assert local_client.cost(first.usage) == 0.0  # runs here: the rate table prices it at zero


def test_local_model_through_the_qa_pipeline(tmp_path, repo_builder):
    ok, why = provider_status(ProviderConfig(model="local"))
    if not ok:
        pytest.skip(why)
    import json

    from ctxgauge.suites.qa import QAConfig, run_qa

    rb = repo_builder("r")
    commit = rb.commit("add", {"a.py": "def answer():\n    return 42\n"})
    b = tmp_path / "b"
    b.mkdir()
    (b / "battery.json").write_text(json.dumps({"name": "tiny", "repository": {"path": str(rb.path)}, "commit": commit}))
    (b / "questions.json").write_text(json.dumps([{"qid": "q1", "position": 1, "prompt": "What does answer() in a.py return?"}]))
    (b / "gold.json").write_text(json.dumps([{"qid": "q1", "gold_rev": 1, "answer_gold": "42",
                                              "evidence": [{"path": "a.py", "quote": "return 42"}]}]))
    (b / "policies.json").write_text("[]")
    (b / "exemplars.json").write_text("[]")
    result = run_qa(QAConfig(source=str(b), arms=["none", "context:grep@1"], model="local", provider="local",
                             cache_dir=tmp_path / "c", out=tmp_path / "run", max_tokens=32))
    for arm in ("none", "context:grep@1"):
        s = result.results.summary[arm]
        assert s.status == "measured" and s.questions == 1 and s.tokens.tokens_output > 0
        assert s.passed + s.not_judged == 1  # a base model's answer: tier 1 or nothing, no judge
    assert result.results.summary["context:grep@1"].retrieval_hit_rate == 1.0
