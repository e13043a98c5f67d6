"""Reading a tool's answer (no server needed): each form the docs list, and what is not understood."""

from ctxgauge.engines.mcp._results import merge_ranges, read_result, uri_path


def test_structured_list_under_one_key_with_line_fields():
    r = read_result({"structuredContent": {"result": [
        {"path": "a.py", "score": 2.0, "start_line": 3, "end_line": 5},
        {"file": "b.py", "line": 7},
        {"nothing": 1}]}})
    assert r.how == "structured" and r.unparsed == 1
    assert [(i.path, i.score, i.lines) for i in r.items] == [("a.py", 2.0, (3, 5)), ("b.py", None, (7, 7))]


def test_fields_names_other_path_and_score_fields():
    r = read_result({"structuredContent": [{"filename": "x", "where": "a.py", "relevance": 0.5}]},
                    {"path": "where", "score": "relevance"})
    assert [(i.path, i.score) for i in r.items] == [("a.py", 0.5)]


def test_resource_links_and_embedded_resources():
    r = read_result({"content": [
        {"type": "resource_link", "name": "a", "uri": "file:///c/src/a%20b.py"},
        {"type": "resource", "resource": {"uri": "file:///c/x.py", "text": "..."}},
        {"type": "image", "data": "", "mimeType": "image/png"}]})
    assert [i.path for i in r.items] == ["/c/src/a b.py", "/c/x.py"] and r.unparsed == 1


def test_json_text_and_text_lines():
    r = read_result({"content": [{"type": "text", "text": '{"hits": [{"path": "a.py", "score": 1}]}'}]})
    assert r.how == "json text" and [(i.path, i.score) for i in r.items] == [("a.py", 1)]
    r = read_result({"content": [{"type": "text", "text": "Found:\nsrc/a.py:3\nsrc/b.py:4-9\nsrc/c.py:12:def f():\n"}]})
    assert r.how == "text lines" and r.unparsed == 1
    assert [(i.path, i.lines) for i in r.items] == [("src/a.py", (3, 3)), ("src/b.py", (4, 9)), ("src/c.py", (12, 12))]


def test_empty_answers_are_empty_and_prose_is_not_understood():
    assert read_result({"content": []}).empty
    assert read_result({"structuredContent": {"result": []}, "content": [{"type": "text", "text": "[]"}]}).empty
    prose = read_result({"content": [{"type": "text", "text": "nothing here, sorry"}]})
    assert not prose.items and not prose.empty and prose.unparsed == 1


def test_merge_ranges_and_uri_paths():
    assert merge_ranges([(10, 12), (1, 2), (3, 4), (11, 20)]) == [(1, 4), (10, 20)]
    assert uri_path("file:///a/b.py") == "/a/b.py" and uri_path("https://x/y") is None and uri_path("a.py") == "a.py"


def _hits(result: dict, k: int = 5, corpus_dir=None):
    from pathlib import Path

    from ctxgauge.engines import get_engine
    from ctxgauge.engines.mcp._engine import _Plan, _Served

    engine = get_engine('mcp(cmd="server-not-started")')
    return engine, engine._hits(_Served(out=Path("out"), corpus_dir=corpus_dir), result, k, _Plan({"name": "s"}, "q", None))


def test_ranges_of_one_file_merge_into_sorted_spans_and_more_than_50_is_a_breach(tmp_path):
    import pytest

    from ctxgauge.errors import EngineError

    text = "a.py:9-10\nb.py:1\na.py:3\na.py:1-2\na.py:10-12\n"
    engine, hits = _hits({"content": [{"type": "text", "text": text}]})
    # Adjacent (1-2, 3) and overlapping (9-10, 10-12) ranges are one span: the engine's reading, not a mend.
    assert [(h.path, h.spans) for h in hits] == [("a.py", ((1, 3), (9, 12))), ("b.py", ((1, 1),))]
    assert engine.query_notes() == {"how": "text lines", "truncated": False, "unparsed_lines": 0,
                                    "scores": "rank-derived"}
    many = "\n".join(f"a.py:{n}" for n in range(1, 103, 2))  # 51 lines apart: 51 spans after merging
    with pytest.raises(EngineError, match="span-count: 51 spans"):
        _hits({"content": [{"type": "text", "text": many}]})
    _, fifty = _hits({"content": [{"type": "text", "text": "\n".join(f"a.py:{n}" for n in range(1, 101, 2))}]})
    assert len(fifty[0].spans) == 50
    (tmp_path / "a.py").write_text("x\n" * 11)
    with pytest.raises(EngineError, match="span-range: span 1 \\(9-12\\) ends past the file's 11 lines"):
        _hits({"content": [{"type": "text", "text": text}]}, corpus_dir=tmp_path)
