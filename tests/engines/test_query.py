"""`ctxgauge query --index-dir`: an index is kept where asked, but never built over someone else's files."""

from __future__ import annotations

import pytest

from ctxgauge.engines._query import INDEX_MARK, run_query
from ctxgauge.errors import UserError


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "loans.py").write_text("def overdue_fee(): pass\n")
    (src / "other.py").write_text("x = 1\n")
    return src


def test_a_kept_index_can_be_built_again(corpus, tmp_path):
    out = tmp_path / "index"
    first = run_query(corpus, "overdue fee", engine="bm25", k=2, out_dir=out)
    assert (out / INDEX_MARK).is_file()
    again = run_query(corpus, "overdue fee", engine="bm25", k=2, out_dir=out)
    assert first["hits"] == again["hits"] and first["hits"][0]["path"] == "loans.py"


def test_a_folder_of_other_files_is_refused_and_left_untouched(corpus, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me\n")
    with pytest.raises(UserError, match="not empty and not an index ctxgauge built"):
        run_query(corpus, "overdue fee", engine="bm25", k=2, out_dir=out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "keep me\n"


def test_a_file_is_refused(corpus, tmp_path):
    out = tmp_path / "a-file"
    out.write_text("x")
    with pytest.raises(UserError, match="is a file"):
        run_query(corpus, "overdue fee", engine="bm25", k=2, out_dir=out)
    assert out.read_text() == "x"
