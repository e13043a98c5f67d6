"""The secret scan: key shapes, values from the environment, home paths; named by file and line, masked."""

from __future__ import annotations

import pytest

from ctxgauge.records import SecretFound, SecretScanner

ENV = {"OPENAI_API_KEY": "local-proxy-credential-42", "GITHUB_TOKEN": "tok", "DB_PASSWORD": "hunter2-but-longer",
       "PATH": "/usr/bin", "HOME": "/home/ada"}


@pytest.fixture
def scanner():
    return SecretScanner.from_environment(ENV)


@pytest.mark.parametrize("text, kind", [
    ("key: sk-proj-" + "a1B2" * 8, "OpenAI/Anthropic-style API key"),
    ("x sk-ant-api03-" + "Z9_y" * 6, "OpenAI/Anthropic-style API key"),
    ("AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
    ("ghp_" + "a" * 36, "GitHub token"),
    ("github_pat_" + "B" * 50, "GitHub token"),
    ("glpat-" + "x" * 20, "GitLab token"),
    ("xoxb-1234567890-abcdef", "Slack token"),
    ("AIza" + "S" * 35, "Google API key"),
    ("hf_" + "Q" * 34, "Hugging Face token"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key"),
    ('"path": "/home/bob/src/repo"', "absolute home path"),
    ("/Users/carol/Library/x", "absolute home path"),
    ("C:\\\\Users\\\\dave\\\\repo", "absolute home path"),
    ("cache at /home/ada/.cache/ctxgauge", "absolute home path"),
    ("Authorization: Bearer local-proxy-credential-42", "environment value of OPENAI_API_KEY"),
    ("pw=hunter2-but-longer;", "environment value of DB_PASSWORD"),
])
def test_each_kind_is_found(scanner, text, kind):
    assert kind in [k for k, _ in scanner.scan_line(text)]


@pytest.mark.parametrize("text", [
    "sha256:66722b2575c7f7020de739d2cb138a6560059faa7b72ea83cce7b0870870c1e7",
    "the task-runner sk-ip flag",
    "/usr/bin/python /tmp/x /work/main/src/ctxgauge/data/batteries/shelfd",
    "a home directory lives under /home and /Users",
    "tok is a short word",  # GITHUB_TOKEN is shorter than the minimum: not a secret worth matching
    "/home/adams/x",  # another user's prefix-sharing name is still a home path, but not ours ...
])
def test_ordinary_text_is_not_flagged(scanner, text):
    hits = scanner.scan_line(text)
    if text.startswith("/home/adams"):
        assert [k for k, _ in hits] == ["absolute home path"]  # ... it matches the generic shape only once
    else:
        assert hits == []


def test_the_first_hit_names_file_and_line_and_masks_the_value(scanner):
    data = b'{"a": 1}\n{"b": "ok"}\n{"key": "sk-proj-' + b"k" * 40 + b'"}\n'
    with pytest.raises(SecretFound) as err:
        scanner.check_bytes("runs/r1/units.jsonl", data)
    f = err.value.finding
    assert (f.path, f.line, f.kind) == ("runs/r1/units.jsonl", 3, "OpenAI/Anthropic-style API key")
    assert "k" * 10 not in str(err.value) and "sk-p…" in str(err.value)
    assert "runs/r1/units.jsonl:3:" in str(err.value)


def test_files_are_read_line_by_line_with_the_same_numbers(scanner, tmp_path):
    p = tmp_path / "answer.md"
    p.write_bytes(b"line one\r\nline two\nsee /home/ada/notes\n")
    with pytest.raises(SecretFound) as err:
        scanner.check_file("runs/q/answer.md", p)
    assert err.value.finding.line == 3
    assert [f.line for f in scanner.scan_bytes("x", p.read_bytes())] == [3]


def test_a_root_home_is_matched_as_a_path_component():
    s = SecretScanner.from_environment({"HOME": "/root"})
    assert s.scan_line('"/root/.cache"') and s.scan_line('"/root"')
    assert s.scan_line("/rooted/tree") == []
    assert SecretScanner.from_environment({"HOME": "/"}).homes == ()
