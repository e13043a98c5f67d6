"""Fixtures for provider tests: the loopback fake servers (see fake_llm.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def load_fake_llm():
    """fake_llm.py as one module, whichever test folder asks (tests are not a package)."""
    name = "ctxgauge_tests_fake_llm"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("fake_llm.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


fake_llm = load_fake_llm()


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
