"""The opener of files ctxgauge did not write, and the walk without recursion (issue 36, F3, F4, F6)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ctxgauge._untrusted import INTEGER_DIGITS_LIMIT, parse_int, read_untrusted, walk_tree
from ctxgauge.errors import UserError


def deep_tree(root, levels: int) -> None:
    """A plain directory `levels` deep (made with dir_fd: os.makedirs itself recurses once per level)."""
    os.mkdir(root)
    (root / "top.py").write_text("def world(): pass\n")
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    out = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, b"def hello(): pass\n")
    os.close(out)
    os.close(fd)


def remove_deep_tree(root) -> None:
    """Remove what `deep_tree` made, bottom up through directory descriptors: shutil.rmtree (and so pytest's
    clean-up of old temporary folders) recurses once per level and fails on it with RecursionError."""
    fds = [os.open(root, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    for i in range(len(fds) - 1, -1, -1):
        for name in os.listdir(fds[i]):
            if name != "d":
                os.unlink(name, dir_fd=fds[i])
        if i > 0:
            os.rmdir("d", dir_fd=fds[i - 1])
        os.close(fds[i])
    os.rmdir(root)


def test_a_tree_a_thousand_levels_deep_is_queried(tmp_path):
    # F4: os.walk (Python 3.11) recursed once per level: RecursionError, exit 70
    deep_tree(tmp_path / "deep", 1000)
    try:
        proc = subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(tmp_path / "deep"), "hello", "-e",
                               "grep", "--json"], capture_output=True, text=True, timeout=60)
    finally:
        remove_deep_tree(tmp_path / "deep")
    assert proc.returncode == 0, proc.stderr
    assert "/d/deep.py" in proc.stdout


def test_walk_tree_lists_what_os_walk_lists(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "f.txt").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    (tmp_path / "g.txt").write_text("y")
    norm = lambda walk: sorted((p, sorted(d), sorted(f)) for p, d, f in walk)  # noqa: E731
    assert norm(walk_tree(tmp_path)) == norm(os.walk(tmp_path))


def test_read_untrusted_refuses_a_fifo_a_link_and_an_oversized_file_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    start = time.monotonic()
    with pytest.raises(UserError, match="a FIFO, not a regular file"):
        read_untrusted(tmp_path / "fifo", 100, "git HEAD")
    assert time.monotonic() - start < 5
    (tmp_path / "real").write_text("ref: refs/heads/main\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(UserError, match="symbolic link"):
        read_untrusted(tmp_path / "link", 100, "git HEAD")
    with pytest.raises(UserError, match="more than the 4 this file may hold"):
        read_untrusted(tmp_path / "real", 4, "git HEAD")
    assert read_untrusted(tmp_path / "real", 100, "git HEAD") == b"ref: refs/heads/main\n"
    assert read_untrusted(tmp_path / "absent", 100, "git HEAD") is None


def test_parse_int_names_the_digit_limit():
    assert parse_int("12", "x") == 12
    with pytest.raises(UserError, match=f"{INTEGER_DIGITS_LIMIT + 1} digits"):
        parse_int("9" * (INTEGER_DIGITS_LIMIT + 1), "hunk header")
