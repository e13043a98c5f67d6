from __future__ import annotations

import subprocess

import pytest

from ctxgauge.errors import UserError
from ctxgauge.git import FileChange, Repo, blob_id


def test_blob_id_matches_git_hash_object(tmp_path):
    data = b"hello\nworld\n\x00binary"
    (tmp_path / "f").write_bytes(data)
    expected = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True).stdout.strip()
    assert blob_id(data) == expected


def test_log_reports_renames_modifications_and_order(repo_builder):
    b = repo_builder()
    b.commit("first", {"a.py": "x = 1\n" * 20, "b.py": "y = 2\n"})
    b.commit("second (#2)", {"b.py": "y = 3\n"}, renames={"a.py": "pkg/a.py"})
    head = b.commit("third", {"b.py": None, "c.py": "z\n"})
    with Repo(b.path) as repo:
        log = repo.log(head)
        assert [c.subject for c in log] == ["third", "second (#2)", "first"]
        assert [c.sha for c in log] == repo.rev_list(head)
        assert set(log[0].changes) == {FileChange("D", "b.py"), FileChange("A", "c.py")}
        assert set(log[1].changes) == {FileChange("M", "b.py"), FileChange("R", "pkg/a.py", "a.py")}
        assert log[2].parents == ()
        assert log[0].author_email == "ada@example.org"


def test_user_config_does_not_change_answers(repo_builder, monkeypatch, tmp_path):
    b = repo_builder()
    b.commit("one", {"ünïcode name.py": "a = 1\n" * 10})
    head = b.commit("two", {}, renames={"ünïcode name.py": "moved.py"})
    cfg = tmp_path / "gitconfig"
    cfg.write_text("[diff]\n\trenames = false\n[core]\n\tquotepath = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    with Repo(b.path) as repo:
        assert repo.log(head)[0].changes == (FileChange("R", "moved.py", "ünïcode name.py"),)


def test_cat_file_streams_more_than_a_pipe_buffer(repo_builder):
    # 400 blobs of 4 KiB: far more than the 64 KiB pipe buffer in both directions.
    b = repo_builder()
    files = {f"f{i:03}.txt": (f"{i}\n" * 2000)[:4096] for i in range(400)}
    head = b.commit("many", files)
    with Repo(b.path) as repo:
        entries = repo.tree(head)
        got = dict(repo.read_blobs(e.oid for e in entries))
        assert len(got) == 400
        assert all(blob_id(data) == oid for oid, data in got.items())
        # A caller that stops early leaves the reader consistent for the next request.
        for _ in repo.read_blobs([e.oid for e in entries]):
            break
        assert repo.read_blob(entries[-1].oid) == files[entries[-1].path].encode()


def test_missing_object_is_none(repo_builder):
    b = repo_builder()
    b.commit("one", {"a": "a"})
    with Repo(b.path) as repo:
        assert repo.read_blob("0" * 40) is None


def test_bad_revision_and_non_repo_are_user_errors(repo_builder, tmp_path):
    b = repo_builder()
    b.commit("one", {"a": "a"})
    with Repo(b.path) as repo, pytest.raises(UserError, match="no commit named"):
        repo.resolve("nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(UserError, match="not a git repository"):
        Repo(tmp_path / "plain")
