"""One identifier's tokens (the split as defined, whatever shortcut computes it), and the rule that two
builds share no tokeniser work."""

from __future__ import annotations

import random
import re

from ctxgauge import cache
from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines._text import terms as _bm25_terms, tokens as _tokens
from ctxgauge.engines._text.tokens import STOPWORDS, _split_word, _word_tokens, code_tokens, split_words

_PART = r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+"


def _by_definition(word: str, min_len: int) -> tuple[str, ...]:
    # The split as first written (each `_`-separated chunk on its own, no fast path): what the faster
    # split must keep giving.
    parts = [p.lower() for chunk in word.split("_") for p in re.findall(_PART, chunk)]
    whole = ["".join(parts)] if len(parts) > 1 and len("".join(parts)) >= min_len else []
    return tuple(whole + [p for p in parts if len(p) >= min_len and not p.isdigit() and p not in STOPWORDS])


WORDS = ["", "_", "__init__", "ABC_Def", "HTTPServer", "parseHTTPRequest_v2", "a1B2c3", "ABCdef_GHi", "x", "Ab",
         "ab", "AB", "12", "a_b", "URLs", "iOS", "_private", "CONST_X9", "A", "the", "The", "THE", "Error", "error",
         "\u00d1u", "\u00e9a", "\u00c9A", "caf\u00e9", "r\u00e9sum\u00e9Builder"]


def test_a_word_splits_as_defined():
    rng = random.Random(7)
    alphabet = "aAzZbB09_xXyY\u00e9\u00c9"
    words = WORDS + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(5000)]
    for word in words:
        for min_len in (2, 3):
            assert _word_tokens(word, min_len) == _split_word(word, min_len) == _by_definition(word, min_len), word
        assert tuple(code_tokens(word)) == _by_definition(word, 2) or not word.isascii(), word


def test_many_words_split_at_once_as_one_by_one():
    # split_words (the ASCII words of word_counts, all at once in numpy) gives each word the tokens the
    # definition gives it, in order: words of one part or many, numbers, stopwords, lone and runs of `_`.
    rng = random.Random(3)
    alphabet = "aAzZbB09_xXyYcC"
    words = [w for w in WORDS if w and w.isascii()]
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(20000)]
    words += ["x" * 300 + "Y", "9" * 3, "HTTP2Server", "the_of", "Is_A"]
    for min_len in (1, 2, 3):
        tokens, counts = split_words([w.encode() for w in words], min_len)
        assert len(counts) == len(words) and sum(counts.tolist()) == len(tokens)
        got, at = [], 0
        for n in counts.tolist():
            got.append(tuple(tokens[at:at + n]))
            at += n
        assert got == [_by_definition(w, min_len) for w in words]
    tokens, counts = split_words([])
    assert tokens == [] and len(counts) == 0


def test_two_bm25_builds_share_no_tokeniser_work(tmp_path, monkeypatch):
    # Rebuild Identity's builds must share nothing: a second engine object splits every word of the corpus
    # again (no process-wide memo answers it), and one engine object splits each word once.
    root = tmp_path / "c"
    files = {"lib/fees.py": "def overdue_fee(days_late):\n    return round(days_late * DAILY_RATE, 2)\n",
             "web/api.ts": "export async function fetchLoans(memberId: string) { return fetchLoans(memberId) }\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    corpus = Corpus.from_directory(root)
    calls: list[bytes] = []
    real = _tokens.split_words
    monkeypatch.setattr(_bm25_terms, "split_words", lambda words, *a: calls.extend(words) or real(words, *a))
    with cache.disabled():
        get_engine("bm25").build(corpus, tmp_path / "a")
        first = sorted(calls)
        calls.clear()
        get_engine("bm25").build(corpus, tmp_path / "b")
    assert first and sorted(calls) == first and len(set(first)) == len(first)
