"""Noise files: unrelated to the queries, in a directory the corpus has, reproducible, of three kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines._text.tokens import code_tokens, query_terms
from ctxgauge.errors import UserError
from ctxgauge.suites.determinism import LARGE_BYTES, make_noise, noise_directory, unrelated_words

QUERIES = ["Round overdue fees to whole cents", "lantern meadows at dusk", "whiskers of the badger"]


def _corpus(root: Path, files: dict[str, str]) -> Corpus:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Corpus.from_directory(root)


def test_unrelated_words_share_no_word_substring_or_stem_with_the_queries() -> None:
    words = unrelated_words(QUERIES)
    # "lantern" is a query word; "meadow" shares the stem of "meadows"; "whisk" is inside "whiskers";
    # "badger" is a query word.
    for gone in ("lantern", "meadow", "whisk", "badger"):
        assert gone not in words
    terms = {t for q in QUERIES for t in query_terms(q) + code_tokens(q)}
    assert not [(w, t) for w in words for t in terms if t in w or w in t]
    assert len(words) >= 12


def test_queries_that_use_every_noise_word_are_refused() -> None:
    from ctxgauge.suites.determinism._noise import _VOCABULARY

    with pytest.raises(UserError, match="unrelated prose"):
        unrelated_words([" ".join(_VOCABULARY)])


def test_noise_directory_is_the_one_with_most_files_and_exists(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.py": "x", "lib/b.py": "x", "lib/c.py": "x", "lib/sub/d.py": "x", "docs/e.md": "x"})
    assert noise_directory(corpus) == "lib"
    assert noise_directory(corpus, "docs") == "docs"
    assert noise_directory(corpus, "lib/sub/") == "lib/sub"
    with pytest.raises(UserError, match="not a directory of the corpus"):
        noise_directory(corpus, "src/shared")  # the reference writes here whether it exists or not


def test_root_only_corpus_gets_noise_at_the_root(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.py": "def a(): pass\n", "b.py": "def b(): pass\n"})
    noise = make_noise("prose", corpus, QUERIES, {})
    assert "/" not in noise.path and noise.path.endswith(".py")


def test_prose_is_commented_in_the_directory_language_and_shares_no_query_word(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"src/x.ts": "export const x = 1\n", "src/y.ts": "export const y = 2\n",
                                "src/z.md": "# z\n", "README.md": "# r\n"})
    noise = make_noise("prose", corpus, QUERIES, {})
    assert noise.kind == "prose"
    assert noise.path.startswith("src/") and noise.path.endswith(".ts") and noise.path not in corpus
    lines = noise.data.decode().splitlines()
    assert len(lines) == 24 and all(line.startswith("// ") for line in lines)
    text = noise.data.decode().lower()
    assert not [t for q in QUERIES for t in query_terms(q) if t in text]
    assert not set(code_tokens(noise.path)) & {t for q in QUERIES for t in code_tokens(q)}


def test_noise_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"src/x.py": "x = 1\n"})
    for kind in ("prose", "large", "near-duplicate"):
        assert make_noise(kind, corpus, QUERIES, {}) == make_noise(kind, corpus, QUERIES, {})


def test_unknown_directory_extension_gets_a_text_file(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"data/a.csv": "1,2\n", "data/b.csv": "3,4\n"})
    noise = make_noise("prose", corpus, QUERIES, {})
    assert noise.path.startswith("data/") and noise.path.endswith(".txt")


def test_near_duplicate_copies_the_file_ranked_first_most_often(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"src/fees.py": "def fee():\n    return 1\n", "src/other.py": "x = 1\n"})
    rankings = {"q1": ["src/other.py", "src/fees.py"], "q2": ["src/fees.py"], "q3": ["src/fees.py"], "q4": []}
    noise = make_noise("near-duplicate", corpus, QUERIES, rankings)
    assert noise.path == "src/fees-2.py"
    assert noise.data == b"def fee():\n    return 1\n" + b"def fee():\n"
    assert "src/fees.py" in noise.about


def test_near_duplicate_without_rankings_copies_the_first_file(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"b.py": "b = 1", "a.py": "a = 1"})
    noise = make_noise("near-duplicate", corpus, QUERIES, {})
    assert noise.path == "a-2.py" and noise.data == b"a = 1\na = 1\n"


def test_large_noise_is_large_and_stays_under_the_corpus_size_limit(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"src/x.py": "x = 1\n"})
    noise = make_noise("large", corpus, QUERIES, {})
    target = min(LARGE_BYTES, corpus.max_bytes // 2)
    assert target <= len(noise.data) < target + 200
    assert noise.path.startswith("src/") and noise.path.endswith(".py")
    small = Corpus.from_directory(tmp_path, max_bytes=10_000)
    assert 5_000 <= len(make_noise("large", small, QUERIES, {}).data) < 5_000 + 200


def test_unknown_kind_is_a_user_error(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"x.py": "x"})
    with pytest.raises(UserError, match="unknown noise kind"):
        make_noise("static", corpus, QUERIES, {})
