"""Helpers shared by the qa tests: the loopback fake server module, the mini battery's facts, a scripted
model. Loaded once by conftest.py as the module `qa_helpers` (tests are not a package)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path


def _load_fake_llm():
    name = "ctxgauge_tests_fake_llm"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "providers" / "fake_llm.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


fake_llm = _load_fake_llm()
Reply = fake_llm.Reply

# qid -> (file, the token the right answer contains, a question about it)
FACTS = {
    f"q{i:02d}": (f"pkg/mod{i}.py", f"value{i}x", f"What does compute_{i} in the package return?")
    for i in range(1, 11)
}
ENV = {"OPENAI_API_KEY": "sk-test-never-written", "ANTHROPIC_API_KEY": "sk-ant-never-written"}


def qid_of(text: str) -> str | None:
    """Which mini-battery question a prompt is about (by its compute_N name)."""
    for q, (_, _, prompt) in FACTS.items():
        if prompt in text:
            return q
    return None


def oracle(right: set[str], *, judge_says=None):
    """A scripted model: answers the questions in `right` with their token (tier 1 passes them) and the
    rest with a wrong word; as a judge, calls `judge_says(body)` or fails with a fail-shaped reason."""
    def respond(body: dict):
        system = fake_llm.system_text(body)
        user = fake_llm.last_user_text(body)
        if system.startswith("You grade"):
            if judge_says is not None:
                return judge_says(body)
            return json.dumps({"verdict": "fail", "reason": "Wrong constant named.", "facets": {}})
        q = qid_of(user)
        if q is None:
            return "I do not know."
        return f"It returns {FACTS[q][1]}." if q in right else "It returns nothing useful."
    return respond
