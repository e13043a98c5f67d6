"""Item 3 of issue 36: a file the user names on the command line (a case file, a records file, a battery, a
fingerprint, a `--repos` file) is resolved once, then opened `O_NOFOLLOW | O_NONBLOCK` and must be a regular
file within INPUT_FILE_LIMIT. A FIFO named as any of them is one line, exit 2, well within a 5 s deadline
(before: the open blocked forever); a link to /dev/zero is refused (before: read until memory ran out)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge._io import InputError, read_data

SRC = Path(__file__).resolve().parents[2] / "src"
DEADLINE = 5


def _ctxgauge(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    def cap() -> None:  # the old reader of /dev/zero would otherwise take the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = {**os.environ, "PYTHONPATH": str(SRC), "CTXGAUGE_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=DEADLINE, preexec_fn=cap)


def _commands(tmp_path: Path, named: Path) -> dict[str, list[str]]:
    battery = tmp_path / "battery"
    battery.mkdir(exist_ok=True)
    if not (battery / "battery.json").exists():
        os.symlink(named, battery / "battery.json")
    (tmp_path / "corpus").mkdir(exist_ok=True)
    (tmp_path / "corpus" / "a.txt").write_text("alpha\n")
    return {
        "case file": ["cases", str(named), "-e", "bm25"],
        "records file": ["cases", str(named.with_suffix(".jsonl")), "-e", "bm25"],
        "fingerprint": ["compare", str(named), str(named)],
        "repos file": ["replay", "--repos", str(named), "-e", "bm25"],
        "battery": ["battery", "validate", str(battery)],
    }


@pytest.mark.parametrize("what", ["case file", "records file", "fingerprint", "repos file", "battery"])
def test_a_fifo_named_as_input_is_one_line_not_a_hang(tmp_path, what):
    fifo = tmp_path / "named.yaml"
    os.mkfifo(fifo)
    os.mkfifo(tmp_path / "named.jsonl")
    done = _ctxgauge(_commands(tmp_path, fifo)[what], tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "FIFO" in lines[0] and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("what", ["case file", "fingerprint"])
def test_a_link_to_a_device_is_refused(tmp_path, what):
    link = tmp_path / "named.yaml"
    os.symlink("/dev/zero", link)
    done = _ctxgauge(_commands(tmp_path, link)[what], tmp_path)
    assert done.returncode == 2 and "a character device, not a regular file" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_link_the_user_names_is_followed_once(tmp_path):
    real = tmp_path / "real.json"
    real.write_text('{"a": 1}')
    link = tmp_path / "link.json"
    os.symlink(real, link)
    assert read_data(link, "thing") == {"a": 1}  # the user's own link is theirs to name


def test_size_limit_and_kinds(tmp_path):
    from ctxgauge._io import read_input_bytes

    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * 100 + b"1]")
    with pytest.raises(InputError, match="more than the 64 an input file may hold"):
        read_input_bytes(big, "thing", limit=64)
    assert read_input_bytes(big, "thing", limit=1 << 20).startswith(b"[1,")
    with pytest.raises(InputError, match="is a directory"):
        read_input_bytes(tmp_path, "thing")
    sock_dir = tmp_path / "s"
    sock_dir.mkdir()
    import socket

    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(sock_dir / "x.json"))
        with pytest.raises(InputError, match="cannot read|a socket"):
            read_input_bytes(sock_dir / "x.json", "thing")
    finally:
        s.close()
