"""Finding a secret value however the text around it was wrapped, split or encoded.

A provider's error message may wrap a long API key across lines and indent the rest, split it with a tab,
or percent-encode it (a URL in the message); once stored as JSON a break is the two characters `\\n`. A
plain substring test misses every one of these, the key lands in `run.json`, and a scan line by line misses
it too. So text is first put in a normal form, and the secret is looked for there:

- every run of whitespace (raw, or JSON's `\\n`, `\\r`, `\\t` escapes, with the indentation around them) is
  dropped;
- `%XX` percent escapes and JSON's `\\uXXXX` escapes are decoded to the character they stand for.

`normalised(text)` gives that form with, for each of its characters, the span of `text` it came from, so a
match is mapped back and replaced (`redact`) or reported at its line (the export's secret scan,
`records._secrets`, which uses `secret_spans` for the secrets it knows and `normalised(..., spaces=True)` for
key shapes). Provider redaction (error messages, answers, the response cache) and the export's scan share
these functions: what one would let through, the other does too, and neither does.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple, Sequence

_TOKEN = re.compile(
    r"(?P<brk>(?:[ \t]*(?:\r\n|\n|\r|\t|\\r\\n|\\n|\\r|\\t)[ \t]*)+)"  # line breaks, tabs, JSON escapes, indentation
    r"|(?P<ws>\s+)"                                                     # other whitespace (spaces, U+00A0, U+2028...)
    r"|%(?P<pct>[0-9A-Fa-f]{2})"                                        # percent-encoding
    r"|\\u(?P<uni>[0-9A-Fa-f]{4})")                                     # JSON's \uXXXX
"""What `normalised` rewrites: everything else is copied."""
_TOKEN_SPACES = re.compile(_TOKEN.pattern.replace(r"|(?P<ws>\s+)", r"|(?P<ws>(?: *[^\S ] *)+)"))
"""The same with runs of plain spaces left out (they are kept as text): `normalised(..., spaces=True)`."""


_ANY_NOISE = re.compile(r"\s|\\[nrtu]|%[0-9A-Fa-f]{2}")
_ANY_NOISE_BUT_SPACES = re.compile(r"[^\S ]|\\[nrtu]|%[0-9A-Fa-f]{2}")


class Normal(NamedTuple):
    """Text in normal form, and for each of its characters the span [start, end) of the original."""

    text: str
    starts: Sequence[int]
    ends: Sequence[int]


def normalised(text: str, *, spaces: bool = False) -> Normal:
    """`text` with whitespace dropped and `%XX` / `\\uXXXX` decoded (see the module docstring). With
    `spaces=True` a run of plain spaces (` `) is kept as it is: prose stays words apart, so a key *shape*
    matched in it does not run on into the next word; line breaks, tabs and indentation still go. Removing the
    spaces from that form gives the form without `spaces` (what `secret_spans` searches): a cheap first test."""
    if not (_ANY_NOISE if not spaces else _ANY_NOISE_BUT_SPACES).search(text):
        return Normal(text, range(len(text)), range(1, len(text) + 1))  # most lines: nothing to rewrite
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for m in (_TOKEN_SPACES if spaces else _TOKEN).finditer(text):
        a, b = m.start(), m.end()
        if a > pos:
            parts.append(text[pos:a])
            starts.extend(range(pos, a))
            ends.extend(range(pos + 1, a + 1))
        pos = b
        if m.group("brk") is not None:
            continue
        if m.group("ws") is not None:
            continue
        ch = chr(int(m.group("pct") or m.group("uni"), 16))
        if ch.isspace():
            continue  # an encoded break or space splits a key as a raw one does
        parts.append(ch)
        starts.append(a)
        ends.append(b)
    if pos < len(text):
        parts.append(text[pos:])
        starts.extend(range(pos, len(text)))
        ends.extend(range(pos + 1, len(text) + 1))
    return Normal("".join(parts), starts, ends)


def secret_spans(text: str, secret: str, normal: Normal | None = None) -> list[tuple[int, int]]:
    """The spans of `text` holding `secret`, whole or wrapped, split or encoded (module docstring). A
    precomputed `normalised(text)` may be passed when several secrets are looked for in one text."""
    needle = normalised(secret).text
    if not needle:
        return []
    n = normal or normalised(text)
    out, i = [], n.text.find(needle)
    while i >= 0:
        out.append((n.starts[i], n.ends[i + len(needle) - 1]))
        i = n.text.find(needle, i + len(needle))
    return out


def redact(text: str, secrets: Iterable[str], replacement: str = "[redacted]") -> str:
    """`text` with every occurrence of each secret (whole, wrapped, split or encoded: see the module
    docstring) replaced by `replacement`. Secrets shorter than 4 characters are replaced only verbatim."""
    spans: list[tuple[int, int]] = []
    normal: Normal | None = None
    for secret in sorted(set(s for s in secrets if s), key=lambda s: (-len(s), s)):
        if len(secret) >= 4:
            normal = normal or normalised(text)
            spans += secret_spans(text, secret, normal)
        else:
            spans += [(m.start(), m.end()) for m in re.finditer(re.escape(secret), text)]
    if not spans:
        return text
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out, pos = [], 0
    for a, b in merged:
        out += [text[pos:a], replacement]
        pos = b
    return "".join(out) + text[pos:]


def redact_value(value, secrets: tuple[str, ...]):
    """`value` (a str, or lists, tuples and dicts of them, keys included) with `redact` applied to every
    string in it: what the response cache and an answer's tool calls hold."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, secrets) for v in value)
    return value
