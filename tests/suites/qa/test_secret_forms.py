"""An API key wrapped across a newline and indentation, split by a tab, or percent-encoded is redacted from
every file a qa run writes and from stderr, and stops an export with or without the key in the environment
(F15). A real loopback server, driven by the real OpenAI SDK through the command line, echoes the key in
its answers and in its error messages.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from qa_helpers import FACTS, Reply, fake_llm, qid_of  # type: ignore[import-not-found]
from ctxgauge._redact import redact
from ctxgauge.records._secrets import SecretFound, SecretScanner

KEY = "sk-proj-" + "Q7w2E9r4T1y8U3i6O5p0A2s7D4f9"


def forms(key: str = KEY) -> dict[str, str]:
    return {
        "wrapped": key[:14] + "\n        " + key[14:],
        "tab": key[:12] + "\t" + key[12:],
        "percent": key[:9] + "".join(f"%{ord(c):02X}" for c in key[9:21]) + key[21:],
        "crlf-indent-percent": key[:10] + "\r\n\t  " + key[10:16] + "".join(f"%{ord(c):02x}" for c in key[16:24])
        + key[24:],
    }


def leaked(data: str) -> bool:
    """Whether any form of KEY is in `data`, by an oracle of this test's own: all whitespace and JSON
    whitespace escapes out, percent-escapes decoded, then any 10 characters of the key's random part."""
    flat = unquote(re.sub(r"\s+|\\[nrt]", "", data))
    secret = KEY[8:]
    return any(secret[i:i + 10] in flat for i in range(len(secret) - 9))


def test_the_oracle_sees_every_form():
    assert all(leaked(f) and leaked(json.dumps(f)) for f in forms().values())
    assert not leaked("nothing here") and not leaked(redact(" and ".join(forms().values()), [KEY]))


@pytest.mark.parametrize("name", list(forms()))
def test_redact_removes_each_form_raw_and_json_escaped(name):
    form = forms()[name]
    for text in (f"401: key {form} is wrong", json.dumps({"reason": f"key {form} is wrong"})):
        out = redact(text, [KEY])
        assert "[redacted]" in out and not leaked(out), out
        assert out.startswith(text[:8]) and out.endswith(text[-8:])


def ctxgauge(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", **env})


def _every_file(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*")) if p.is_file()]


def test_answers_cache_run_json_and_stderr_hold_no_form(mini_battery, openai_server, tmp_path):
    all_forms = list(forms().values())

    def respond(body):
        q = qid_of(fake_llm.last_user_text(body))
        n = int(q[1:]) if q else 0
        # One question's answer holds each form; the rest answer plainly.
        return f"It returns {FACTS[q][1]}; my key is {all_forms[n % 4]} ok" if q and n <= 4 else "It returns x."

    openai_server.route(respond)
    env = {"OPENAI_API_KEY": KEY}
    args = ["qa", "run", str(mini_battery.path), "--arm", "none", "--model", "gpt-4o-mini",
            "--base-url", openai_server.base_url, "--cache-dir", str(tmp_path / "cache"), "--retries", "0"]
    proc = ctxgauge(*args, "--out", str(tmp_path / "run"), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    answers = sorted((tmp_path / "run").rglob("answers/*.md"))
    assert len(answers) == 10 and sum("[redacted]" in p.read_text() for p in answers) == 4
    for path in _every_file(tmp_path / "run") + _every_file(tmp_path / "cache"):
        assert not leaked(path.read_text(errors="replace")), path
    assert not leaked(proc.stdout + proc.stderr)

    # A provider that refuses with the key in its message, in every form at once: stderr and run.json hold none.
    message = "Incorrect API key provided: " + " / ".join(all_forms) + ". See the docs."
    openai_server.route(lambda body: Reply(status=401, text=message))
    proc = ctxgauge(*args, "--out", str(tmp_path / "refused"), "--no-cache", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not leaked(proc.stdout + proc.stderr), proc.stderr
    files = _every_file(tmp_path / "refused")
    assert "[redacted] / [redacted] / [redacted] / [redacted]" in proc.stderr + "".join(p.read_text() for p in files)
    for path in files:
        assert not leaked(path.read_text(errors="replace")), path


@pytest.mark.parametrize("in_env", [True, False], ids=["key-in-env", "key-not-in-env"])
@pytest.mark.parametrize("name", list(forms()))
def test_export_scan_stops_each_form(tmp_path, name, in_env):
    scanner = SecretScanner.from_environment({"OPENAI_API_KEY": KEY} if in_env else {})
    form = forms()[name]
    for text in (f"reason: {form}\n", json.dumps({"reason": f"key {form}"}) + "\n"):
        with pytest.raises(SecretFound):
            scanner.check_bytes("run.json", text.encode())
        f = tmp_path / "units.jsonl"
        f.write_text('{"first": "line"}\n' + text, newline="")
        with pytest.raises(SecretFound):
            scanner.check_file("units.jsonl", f)


def test_prose_with_key_prefixes_still_passes_the_scan():
    scanner = SecretScanner()
    text = "the (sk- prefix is used for keys and the ghp_ prefix too, disk-usage-monitor-for-servers\n"
    assert scanner.scan_bytes("notes", text.encode()) == []


HARNESS = r"""
import os, sys
sys.stdin.read()
key = os.environ["OPENAI_API_KEY"]
n = int(os.environ["CTXGAUGE_QID"][1:]) % 4
forms = [key[:14] + "\n        " + key[14:], key[:12] + "\t" + key[12:],
         key[:9] + "".join("%%%02X" % ord(c) for c in key[9:21]) + key[21:], key]
print("my key is " + forms[n])
"""


def test_a_command_harness_echoing_the_key_leaves_it_in_no_file(mini_battery, tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(HARNESS)
    proc = ctxgauge("qa", "run", str(mini_battery.path), "--arm", f"command:{sys.executable} {agent}",
                    "--out", str(tmp_path / "run"), env={"OPENAI_API_KEY": KEY})
    assert "Traceback" not in proc.stderr, proc.stderr
    answers = sorted((tmp_path / "run").rglob("answers/*.md"))
    assert len(answers) == 10 and all("[redacted]" in p.read_text() for p in answers)
    for path in _every_file(tmp_path / "run"):
        assert not leaked(path.read_text(errors="replace")), path
