"""A key split by a line break (raw, CRLF or JSON-escaped) is still redacted and still stops an export."""

from __future__ import annotations

import json
import pytest

from ctxgauge._redact import redact
from ctxgauge.records._secrets import SecretFound, SecretScanner

KEY = "sk-test-secret-do-not-store"
SPLITS = {"lf": "\n", "crlf": "\r\n", "json-lf": "\\n", "json-crlf": "\\r\\n", "cr": "\r"}


def split(key: str, sep: str, at: int = 11) -> str:
    return key[:at] + sep + key[at:]


@pytest.mark.parametrize("sep", SPLITS.values(), ids=SPLITS.keys())
def test_redaction_catches_a_split_key(sep):
    text = f"401: invalid key {split(KEY, sep)} for this org"
    assert KEY[:11] not in redact(text, [KEY]).replace("[redacted]", "")
    assert redact(text, [KEY]) == "401: invalid key [redacted] for this org"


def test_redaction_leaves_other_text_alone():
    assert redact("a\nb sk-other", [KEY]) == "a\nb sk-other"


@pytest.mark.parametrize("sep", SPLITS.values(), ids=SPLITS.keys())
def test_scan_catches_a_split_environment_secret(tmp_path, sep):
    scanner = SecretScanner(env_secrets=(("MY_TOKEN", "Zq9xV7mK2pL4wR8t"),))
    if sep.startswith("\\"):  # the break as run.json stores it: json.dumps escapes a raw one
        body = json.dumps({"reason": "bad token " + split("Zq9xV7mK2pL4wR8t", json.loads(f'"{sep}"'), 6)})
        assert sep in body
    else:
        body = "line one\nreason: bad token " + split("Zq9xV7mK2pL4wR8t", sep, 6) + "\nlast\n"
    with pytest.raises(SecretFound, match="environment value of MY_TOKEN"):
        scanner.check_bytes("run.json", body.encode())
    f = tmp_path / "units.jsonl"
    f.write_text(body, newline="")
    with pytest.raises(SecretFound, match="environment value of MY_TOKEN"):
        scanner.check_file("units.jsonl", f)


@pytest.mark.parametrize("sep", SPLITS.values(), ids=SPLITS.keys())
def test_scan_catches_a_split_key_shape(tmp_path, sep):
    scanner = SecretScanner()
    text = "error: " + split("sk-ant-" + "A1b2C3d4E5f6G7h8I9j0K1", sep, 12) + "\n"
    f = tmp_path / "run.json"
    f.write_text(text, newline="")
    with pytest.raises(SecretFound, match="API key"):
        scanner.check_file("run.json", f)
    assert scanner.scan_bytes("run.json", text.encode())[0].line == 1


def test_clean_text_with_line_breaks_passes(tmp_path):
    scanner = SecretScanner(env_secrets=(("MY_TOKEN", "Zq9xV7mK2pL4wR8t"),))
    f = tmp_path / "units.jsonl"
    f.write_text('{"a": "one\\ntwo"}\n{"b": "Zq9xV7 and mK2pL4wR8t apart"}\n')
    scanner.check_file("units.jsonl", f)
