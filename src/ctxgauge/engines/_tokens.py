"""Code-aware tokens shared by the lexical engines.

Identifiers are split where a programmer would read a word boundary: `_`, camelCase, ACRONYMCase, digits,
and path separators, so the request "fix overdue fee rounding" meets `computeOverdueFee` and
`fees/rounding.py`. The whole identifier is kept beside its parts when it has several, so an exact
identifier in a request still scores above its scattered parts.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# English function words and words every request carries ("fix", "add") carry no signal about files.
STOPWORDS = frozenset(
    """a an and are as at be but by for from has have if in into is it its of on or so that the their then
    there these this to was were will with when where which while who why how not no yes can should would
    could do does did done we you they i me my our your he she them us""".split()
)


def split_identifier(word: str) -> list[str]:
    """`parseHTTPRequest_v2` -> ["parse", "http", "request", "v", "2"] (lowercase)."""
    # No part spans a `_` (none of _PART's classes holds it, nor can its lookahead see past one), so one
    # findall over the whole word finds what a findall per `_`-separated chunk finds.
    return [p.lower() for p in _PART.findall(word)]


def _split_word(word: str, min_len: int) -> tuple[str, ...]:
    if word.isascii() and word.isalpha() and (word.islower() or word.istitle() or word.isupper()):
        # Most words of source text are one part (`return`, `Error`, `HTTP`): no regular expression needed.
        w = word.lower()
        return (w,) if len(w) >= min_len and w not in STOPWORDS else ()
    parts = split_identifier(word)
    kept = [p for p in parts if len(p) >= min_len and not p.isdigit() and p not in STOPWORDS]
    if len(parts) > 1:
        whole = "".join(parts)
        if len(whole) >= min_len:
            return (whole, *kept)
    return tuple(kept)


# One identifier's tokens, memoised process-wide for code_tokens (queries, graph, history, paths): a pure
# function of the word, so the memo changes no token. word_tokens does not read it (see there).
_word_tokens = functools.lru_cache(maxsize=1 << 17)(_split_word)


def code_tokens(text: str, *, min_len: int = 2) -> list[str]:
    """Tokens of source text or a request, in order: identifier parts, plus the joined identifier when it
    has more than one part. Stopwords, pure numbers and tokens shorter than `min_len` are dropped."""
    out: list[str] = []
    tokens = _word_tokens
    for word in _WORD.findall(text):
        out.extend(tokens(word, min_len))
    return out


# Every byte that cannot be part of a word (`_WORD`) made a space, so `bytes.split()` finds the words in C,
# about 2.5x faster than `findall` (checked equal to _WORD's matches in tests/engines/test_bm25_live.py).
_WORD_CHARS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_NOT_WORD_TO_SPACE = bytes(c if c in _WORD_CHARS else 0x20 for c in range(256))


def word_counts(data: bytes) -> Counter[bytes]:
    """How often each identifier-like word occurs in a file's bytes: the words `code_tokens` reads from
    `data.decode("utf-8", "replace")`, found in the bytes themselves (a word is ASCII, and no byte of a
    multi-byte or malformed UTF-8 sequence is, so the words are the same) and counted in C. With
    `word_tokens` per distinct word this gives `code_tokens`'s multiset of tokens without a Python step per
    occurrence."""
    return Counter(data.translate(_NOT_WORD_TO_SPACE).split())


def word_tokens(word: str, min_len: int = 2) -> tuple[str, ...]:
    """The tokens `code_tokens` makes of one word, in order. Not memoised process-wide (code_tokens' memo is
    not read): a caller memoises per word itself, so two builds that must share nothing (Rebuild Identity's
    fresh engine objects) share no tokeniser work either."""
    return _split_word(word, min_len)


def path_tokens(path: str) -> list[str]:
    """Tokens of a file path: every directory, the file stem and its extension, split as identifiers."""
    return code_tokens(re.sub(r"[/\\.\-]", " ", path))


def query_terms(text: str) -> list[str]:
    """Distinct lowercase words of a request for substring search (grep): split on anything but letters,
    digits and `_`, stopwords and words shorter than 2 dropped, first-seen order kept."""
    seen: dict[str, None] = {}
    for m in _WORD.finditer(text.lower()):
        w = m.group(0).strip("_")
        if len(w) >= 2 and w not in STOPWORDS and not w.isdigit():
            seen.setdefault(w, None)
    return list(seen)
