"""Fixtures for the qa suite: a small battery over a tiny git repository, and the loopback LLM servers.

The mini battery has 10 questions (the trust gate's minimum) about a repository made with git itself;
each question's gold names one evidence file and a distinctive answer token, so a scripted "model" can
answer right or wrong on purpose and the expected figures are known in advance.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


def _load_helpers():
    if "qa_helpers" not in sys.modules:
        spec = importlib.util.spec_from_file_location("qa_helpers", Path(__file__).with_name("qa_helpers.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["qa_helpers"] = module
        spec.loader.exec_module(module)
    return sys.modules["qa_helpers"]


helpers = _load_helpers()
FACTS, fake_llm = helpers.FACTS, helpers.fake_llm


@dataclass
class MiniBattery:
    path: Path
    repo: Path
    commit: str
@pytest.fixture
def mini_battery(tmp_path, repo_builder) -> MiniBattery:
    rb = repo_builder("minirepo")
    files = {path: f'def compute_{i}():\n    """Return the {token} constant."""\n    return "{token}"\n'
             for i, (qid, (path, token, _)) in enumerate(FACTS.items(), 1)}
    files["README.md"] = "A tiny package of compute functions.\n"
    commit = rb.commit("Add the package", files)
    bdir = tmp_path / "battery"
    bdir.mkdir()
    (bdir / "battery.json").write_text(json.dumps({"name": "mini", "repository": {"path": str(rb.path)},
                                                   "commit": commit}))
    qs = [{"qid": q, "position": n, "prompt": prompt, "output_structure": "one word", "difficulty": 1 + n % 3,
           "categories": ["definitions"]} for n, (q, (_, _, prompt)) in enumerate(FACTS.items(), 1)]
    (bdir / "questions.json").write_text(json.dumps({"questions": qs}))
    gold = [{"qid": q, "gold_rev": 1, "answer_gold": f"It returns {token} from {path}.",
             "answer_gold_variants": [f"returns {token}"], "facet_guide": "the returned constant is required",
             "evidence": [{"path": path, "quote": f'return "{token}"'}]} for q, (path, token, _) in FACTS.items()]
    (bdir / "gold.json").write_text(json.dumps({"gold": gold}))
    (bdir / "policies.json").write_text(json.dumps({"policies": [{"id": "S1", "rule": "Paths may be spelled either way."}]}))
    (bdir / "exemplars.json").write_text(json.dumps({"exemplars": [
        {"qid": "q01", "kind": "correct", "answer": "value1x", "why": "the constant"}]}))
    return MiniBattery(bdir, rb.path, commit)


@pytest.fixture
def openai_server():
    pytest.importorskip("openai", reason="the openai package is not installed: pip install openai")
    with fake_llm.FakeLLMServer("openai") as server:
        yield server


@pytest.fixture
def anthropic_server():
    pytest.importorskip("anthropic", reason="the anthropic package is not installed: pip install anthropic")
    with fake_llm.FakeLLMServer("anthropic") as server:
        yield server
