"""The shared within-file span ranker (`engines/_spans_rank.py`) and every built-in engine's spans.

Hand-computed cases pin the rule (windows, units, tie-breaks by line, the head fallback, the empty file);
on the bundled sample every built-in engine ranks the same files with the same scores with spans on (the
default) and off, its spans keep the contract's rules, and any engine object reads them from the index alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.corpus import open_corpus
from ctxgauge.engines import checked_hits, get_engine
from ctxgauge.engines._spans_rank import _Doc, candidates, choose, request_terms, term_weight, windows
from ctxgauge.errors import EngineError

QUERIES = ("fix overdue fee rounding", "add member search", "loan renewal limit", "README typo",
           "notify members by email before the due date")


def doc(lines: list[str], final_newline: bool = True) -> _Doc:
    return _Doc(("\n".join(lines) + ("\n" if final_newline else "")).encode())


def test_windows_start_every_half_window_and_the_last_ends_at_the_last_line() -> None:
    assert windows(1, 10, 4) == [(1, 4), (3, 6), (5, 8), (7, 10)]
    assert windows(1, 9, 4) == [(1, 4), (3, 6), (5, 8), (7, 9)]
    assert windows(1, 3, 4) == [(1, 3)]
    assert windows(5, 4, 4) == []
    assert windows(1, 5, 1) == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]


def test_units_longer_than_a_window_become_its_windows_and_repeats_go() -> None:
    assert candidates(20, 4, [(2, 3), (2, 3), (10, 15), (18, 30)]) == [
        (2, 3), (10, 13), (12, 15), (18, 20)]
    assert candidates(6, 4, []) == [(1, 4), (3, 6)]


def test_best_windows_first_ties_by_line_and_no_shared_line() -> None:
    # lines 1-12; "fee" on lines 2 and 9, "round" on line 9, "overdue" on line 11
    lines = ["x"] * 12
    lines[1], lines[8], lines[10] = "fee = 1", "fee = round(fee)", "overdue"
    d = doc(lines)
    terms = request_terms("fee rounding overdue")
    assert terms == ("fee", "rounding", "overdue")  # "rounding" is looked for as written: round( is no match
    # windows of 4 every 2: (1,4) fee×1; (3,6) 0; (5,8) 0; (7,10) fee×2; (9,12) fee×2 + overdue
    assert choose(d, terms, 4, 3) == ((9, 12), (1, 4))
    assert choose(d, terms, 4, 1) == ((9, 12),)
    # a term that is a prefix of a word counts (substring search): "round" finds "round(fee)"
    assert choose(d, request_terms("round"), 4, 3) == ((7, 10),)


def test_a_rare_word_outweighs_two_words_found_everywhere() -> None:
    # 20 lines: "data" and "value" on lines 1-10, "checksum" on line 18 only
    lines = ["data = value"] * 10 + ["x"] * 10
    lines[17] = "checksum"
    d = doc(lines)
    assert term_weight(20, 10) == 1099  # round(1000 * ln 3)
    assert term_weight(20, 1) == 3045  # round(1000 * ln 21)
    assert term_weight(5, 5) == 693 and term_weight(1, 0) == 693  # ln 2; a term on no line is never weighed
    # (15,18) holds checksum (3045; (17,20) too, the later start); (1,4) holds data and value
    # (1099 + 1099 = 2198): the rare word wins,
    # where counting distinct words (2 against 1) took (1,4)
    assert choose(d, ("data", "value", "checksum"), 4, 1) == ((15, 18),)
    assert choose(d, ("data", "value", "checksum"), 4, 2) == ((15, 18), (1, 4))


def test_equal_scores_go_to_the_earlier_line() -> None:
    d = doc(["alpha", "x", "x", "x", "alpha", "x"])
    # windows of 2 every line: (1,2), (4,5) and (5,6) hold "alpha" once each; the earlier start wins the tie,
    # and (5,6) shares line 5 with (4,5)
    assert choose(d, ("alpha",), 2, 3) == ((1, 2), (4, 5))
    assert choose(d, ("alpha",), 2, 1) == ((1, 2),)


def test_no_match_gives_the_head_and_an_empty_file_is_whole() -> None:
    assert choose(doc(["a"] * 100), ("zzz",), 40, 3) == ((1, 40),)
    assert choose(doc(["a"] * 10), (), 40, 3) == ((1, 10),)
    assert choose(_Doc(b""), ("a",), 40, 3) == ()
    # a final line without a newline counts
    assert choose(doc(["x", "y", "hit"], final_newline=False), ("hit",), 1, 3) == ((3, 3),)


def test_lines_after_non_ascii_text_are_counted_on_the_file_s_lines() -> None:
    # İ lowercases to two characters; line numbers come from the lowered text's own newlines
    d = _Doc("İİİ\nnaïve\ncafé target\n".encode())
    assert d.n_lines == 3
    assert choose(d, ("target",), 1, 3) == ((3, 3),)


@pytest.fixture(scope="module")
def sample(sample_repo: Path):
    return open_corpus(sample_repo)


ENGINES = ["grep", "bm25", "graph", "history", "fusion", "hybrid(engines=\"bm25,graph,grep\")"]


def _off(spec: str) -> str:
    return spec[:-1] + ",spans=false)" if spec.endswith(")") else spec + "(spans=false)"


@pytest.mark.parametrize("spec", ENGINES)
def test_spans_change_no_ranking_and_keep_the_rules(spec: str, sample, tmp_path: Path) -> None:
    on = get_engine(spec)
    off = get_engine(_off(spec))
    assert on.identity()["id"] != off.identity()["id"]  # span selection is part of the identity
    assert "spans" not in on.name and "spans=false" in off.name  # on is the default
    for e, d in ((on, tmp_path / "on"), (off, tmp_path / "off")):
        d.mkdir()
        e.build(sample, d)
    assert (tmp_path / "on" / "span-text").is_dir() and not (tmp_path / "off" / "span-text").exists()
    with_spans = 0
    for q in QUERIES:
        a = checked_hits(on.query(tmp_path / "on", q, 10), sample, 10, on.name)  # the span rules, in range
        b = checked_hits(off.query(tmp_path / "off", q, 10), sample, 10, off.name)
        assert [(h.path, h.score) for h in a] == [(h.path, h.score) for h in b]
        assert all(h.spans == () for h in b)
        assert all(len(h.spans) <= 3 for h in a)
        with_spans += sum(1 for h in a if h.spans)
        assert a == checked_hits(on.query(tmp_path / "on", q, 10), sample, 10, on.name)  # stable
        # another engine object (another process, a cached index) reads the same spans from the index alone
        assert a == get_engine(spec).query(tmp_path / "on", q, 10)
    assert with_spans > 0


def test_a_span_holds_the_lines_the_request_names(sample, tmp_path: Path) -> None:
    e = get_engine("grep(span_lines=5,max_spans=1)")
    e.build(sample, tmp_path)
    hits = e.query(tmp_path, "overdue", 5)
    assert hits
    for h in hits:
        (s, end), = h.spans
        lines = sample.read(h.path).decode("utf-8", "replace").split("\n")
        window = "\n".join(lines[s - 1:end]).lower()
        assert "overdue" in window or "overdue" in h.path.lower()


def test_graph_spans_are_definitions(sample, tmp_path: Path) -> None:
    e = get_engine("graph")
    e.build(sample, tmp_path)
    hit = next(h for h in e.query(tmp_path, "overdue fee", 10) if h.path.endswith(".py"))
    from ctxgauge.engines.graph._blocks import DefinitionLines
    from ctxgauge.engines.graph._parse import grammar_of

    defs = DefinitionLines().of(grammar_of(hit.path), "x", sample.read(hit.path))
    for s, end in hit.spans:  # each span is a definition, or a window inside one longer than 40 lines
        assert any(a <= s and end <= b for a, b in defs), (hit.path, hit.spans, defs)


def test_spans_need_an_index_that_keeps_its_files(sample, tmp_path: Path) -> None:
    get_engine("bm25(spans=false)").build(sample, tmp_path)
    with pytest.raises(EngineError, match="keeps none .*give spans=false"):
        get_engine("bm25").query(tmp_path, "overdue fee", 5)
    assert get_engine("bm25(spans=false)").query(tmp_path, "overdue fee", 5)


def test_another_writer_s_update_is_read_from_the_index_not_from_a_stale_corpus(repo_builder,
                                                                               tmp_path: Path) -> None:
    b = repo_builder("r")
    b.commit("first", {"a.py": "def fee():\n    return 1\n" + "x = 0\n" * 60})
    b.commit("second", {"a.py": "x = 0\n" * 50 + "def fee():\n    return 2\n"})
    old, new = open_corpus(b.path, "HEAD~1"), open_corpus(b.path, "HEAD")
    first, other = get_engine("grep(span_lines=5)"), get_engine("grep(span_lines=5)")
    first.build(old, tmp_path)
    assert first.query(tmp_path, "fee", 1)[0].spans == ((1, 5),)
    other.update(tmp_path, new, old.changes_to(new))  # `first` still remembers the old corpus
    got = first.query(tmp_path, "fee", 1)[0].spans
    assert got == other.query(tmp_path, "fee", 1)[0].spans
    assert got[0][0] <= 51 <= got[0][1]  # the definition at its new line


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("params", ["span_lines=0", "max_spans=51", "max_spans=0"])
def test_span_parameters_are_checked(params: str) -> None:
    from ctxgauge.errors import UserError

    with pytest.raises(UserError):
        get_engine(f"grep({params})")


def test_update_gives_the_spans_of_a_fresh_build(repo_builder, tmp_path: Path) -> None:
    b = repo_builder("r")
    b.commit("first", {"a.py": "def fee():\n    return 1\n" + "x = 0\n" * 60, "b.md": "notes\n"})
    b.commit("second", {"a.py": "x = 0\n" * 50 + "def fee():\n    return 2\n"})
    old, new = open_corpus(b.path, "HEAD~1"), open_corpus(b.path, "HEAD")
    for spec in ("bm25", "grep", "graph"):
        upd, fresh = get_engine(spec), get_engine(spec)
        upd.build(old, tmp_path / spec / "u")
        upd.update(tmp_path / spec / "u", new, old.changes_to(new))
        fresh.build(new, tmp_path / spec / "f")
        got = upd.query(tmp_path / spec / "u", "fee", 5)
        assert got == fresh.query(tmp_path / spec / "f", "fee", 5)
        assert tree_bytes(tmp_path / spec / "u" / "span-text") == tree_bytes(tmp_path / spec / "f" / "span-text")
        assert any(s <= 51 <= e for s, e in got[0].spans)  # the moved definition, at its new lines
