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
from typing import Sequence

import numpy as np

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
# function of the word, so the memo changes no token. split_words does not read it (see there).
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
    `split_words` of the distinct words this gives `code_tokens`'s multiset of tokens without a Python step per
    occurrence."""
    return Counter(data.translate(_NOT_WORD_TO_SPACE).split())


# _PART's parts of a word are its runs of letters and digits cut at every `_` and at these places between
# two characters: lower -> upper (`parseHttp`), an upper before an upper that starts a word (`HTTPServer`:
# `P|S`), letter -> digit and digit -> letter (every letter and digit belongs to some part; tested against it).
_LOWER_NO_UNDERSCORE = bytes(c + 32 if 65 <= c <= 90 else 0x20 if c == 0x5F else c for c in range(256))


def split_words(words: Sequence[bytes], min_len: int = 2) -> tuple[list[str], np.ndarray]:
    """The tokens `code_tokens` makes of each of many ASCII words (`word_counts`' keys), in order and
    concatenated, and how many each word made. Done for all the words at once in numpy and C (the cuts
    found on the joined bytes, one `split` of them all, one mask over whole-and-part slots), about 5x a
    split per word. Not memoised process-wide (code_tokens' memo is not read): a caller memoises per word
    itself, so two builds that must share nothing (Rebuild Identity's fresh engine objects) share no
    tokeniser work either."""
    n = len(words)
    if not n:
        return [], np.zeros(0, dtype=np.int64)
    joined = b"\n".join(words)
    a = np.frombuffer(joined, dtype=np.uint8)
    lower, upper, digit = (a >= 97) & (a <= 122), (a >= 65) & (a <= 90), (a >= 48) & (a <= 57)
    alpha = lower | upper
    cut = np.zeros(len(a), dtype=bool)  # cut[i]: a part ends before character i
    cut[1:] = (lower[:-1] & upper[1:]) | (alpha[:-1] & digit[1:]) | (digit[:-1] & alpha[1:])
    cut[1:-1] |= upper[:-2] & upper[1:-1] & lower[2:]
    spaced = np.insert(a, np.flatnonzero(cut), 0x20).tobytes().translate(_LOWER_NO_UNDERSCORE)
    flat = spaced.decode("ascii").split()  # every word's parts, word after word
    b = np.frombuffer(spaced, dtype=np.uint8)
    inside = (b != 0x20) & (b != 0x0A)
    edges = np.flatnonzero(np.diff(inside, prepend=False, append=False))  # each part's start and end
    first, end = edges[0::2], edges[1::2]
    n_parts = np.bincount(np.searchsorted(np.flatnonzero(b == 0x0A), first), minlength=n)
    wholes = joined.translate(_LOWER_NO_UNDERSCORE).replace(b" ", b"").decode("ascii").split("\n")
    m = len(flat)
    # a part is a run of digits or of letters: it is a number when its first character is a digit
    part_ok = ((end - first >= min_len) & ~((b[first] >= 48) & (b[first] <= 57))
               & ~np.fromiter(map(STOPWORDS.__contains__, flat), dtype=bool, count=m))
    alnum = lower | upper | digit  # a word's whole is its letters and digits
    whole_len = np.add.reduceat(alnum, np.concatenate([[0], np.flatnonzero(a == 0x0A) + 1]), dtype=np.int64)
    whole_ok = (n_parts > 1) & (whole_len >= min_len)
    # slot 0 of a word is its whole, slots 1.. its parts; the candidates are wholes + flat
    slots = n_parts + 1
    word = np.repeat(np.arange(n, dtype=np.int64), slots)
    at = np.arange(len(word), dtype=np.int64) - np.repeat(np.cumsum(slots) - slots, slots)
    part = np.repeat(np.cumsum(n_parts) - n_parts, slots) + at - 1
    is_whole = at == 0
    keep = np.where(is_whole, whole_ok[word], part_ok[np.maximum(part, 0)] if m else False)
    candidate = np.where(is_whole, word, n + part)[keep]
    candidates = wholes + flat
    return list(map(candidates.__getitem__, candidate.tolist())), np.bincount(word[keep], minlength=n)


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
