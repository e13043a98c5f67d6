"""The output rule's parts (ctxgauge._output, and `_io.bounded_name` it relies on), by themselves. The command-line
behaviour, with real read-only and full file systems, is tests/cli/test_output_rule.py."""

from __future__ import annotations

import errno
import hashlib
import os

import pytest

from ctxgauge._io import MAX_NAME_BYTES, bounded_name, safe_file_names
from ctxgauge._output import MARK_LINE, check_output_target, environment_reason, is_ctxgauge_output
from ctxgauge.errors import UserError


def test_names_up_to_200_bytes_keep_todays_form():
    for name in ("bm25", "q1", "x" * MAX_NAME_BYTES):
        assert bounded_name(name) == name
    assert safe_file_names(["command_cmd_node_engine.js_"], "engine spec") == {
        "command_cmd_node_engine.js_": "command_cmd_node_engine.js_"}


def test_a_300_character_qid_gets_a_bounded_name_ending_in_its_hash():
    qid = "q" * 300
    [made] = safe_file_names([qid], "question id").values()
    assert len(made.encode()) == MAX_NAME_BYTES
    assert made == "q" * (MAX_NAME_BYTES - 13) + "-" + hashlib.sha256(qid.encode()).hexdigest()[:12]
    # Two long names with the same head stay two files.
    names = safe_file_names(["q" * 300, "q" * 301], "question id")
    assert len(set(names.values())) == 2


def test_environment_reason_names_the_path_and_skips_other_errors():
    assert environment_reason(OSError(errno.ENOSPC, "No space left on device", "out/r.html")) == \
        "no space left on device: out/r.html"
    assert environment_reason(OSError(errno.EROFS, "x", "a"), "folder") == "read-only file system: folder"
    assert environment_reason(OSError(errno.ECONNREFUSED, "refused")) is None
    assert environment_reason(ValueError("x")) is None
    try:
        try:
            raise OSError(errno.EFBIG, "File too large")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert environment_reason(outer) == "file too large for this file system or its limit"
    try:
        try:
            raise OSError(errno.EACCES, "denied")
        except OSError:
            raise UserError("already said in one line") from None
    except UserError as said:
        assert environment_reason(said) is None


def test_check_output_target(tmp_path):
    report = tmp_path / "r.md"
    assert check_output_target(report, option="--md") == report  # a new file
    report.write_text(MARK_LINE + "\n# old\n")
    assert is_ctxgauge_output(report) and check_output_target(report, option="--md") == report
    other = tmp_path / "notes.md"
    other.write_text("mine\n")
    with pytest.raises(UserError, match="not written by ctxgauge"):
        check_output_target(other, option="--md")
    assert check_output_target(other, option="--md", force=True) == other
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")
    for target in (run / "run.json", run / "new.md"):
        with pytest.raises(UserError, match="input of this command"):
            check_output_target(target, option="--md", inputs=[run], force=True)
    os.mkfifo(tmp_path / "fifo")
    assert not is_ctxgauge_output(tmp_path / "fifo")  # never blocks
    with pytest.raises(UserError, match="not a regular file"):
        check_output_target(tmp_path / "fifo", option="--md", force=True)
