"""Line-based chunks under a model's token window, each prefixed with its file's path.

A chunk is whole lines of one file, packed greedily until the next line would overflow the window; a line
longer than the window on its own is cut by tokens, at the start of a word when one lies in the last half
of the window (so the pieces tokenise to the same tokens as the whole line did). Token counts come from
the model's own tokenizer: WordPiece splits at whitespace first, so the count of lines joined by newlines is
the sum of their counts and the packing is exact, not an estimate the model then truncates (the one
exception: a single word longer than half the window, cut inside the word, may re-tokenise a token longer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SPECIAL_TOKENS = 2  # [CLS] and [SEP], which the model adds to every input and which count toward its window
BLOCK_LINES = 512  # lines tokenised at a time, so a huge file stops being tokenised once its cap is reached


@dataclass(frozen=True)
class Chunk:
    """One embedded unit of a file: index in the file, first and last line (1-based, inclusive; 0 and 0 for
    the path-only chunk of a file with no text), and the exact text embedded (path, newline, lines)."""

    index: int
    first_line: int
    last_line: int
    text: str


def token_spans(tokenizer: Any, texts: list[str]) -> list[list[tuple[int, int]]]:
    """Character (start, end) of every token of each text, special tokens left out (`tokenizer` is the
    model's `_minilm_model.WordPiece`, or anything with its `spans`)."""
    return tokenizer.spans(texts) if texts else []


def _inside_word(text: str, spans: list[tuple[int, int]], k: int) -> bool:
    # Token k continues the word of token k-1 (a WordPiece "##" piece, or letters glued to letters): cutting
    # there would make the two halves tokenise differently from the whole.
    start = spans[k][0]
    return spans[k - 1][1] == start and start > 0 and text[start - 1].isalnum() and text[start].isalnum()


def cut_line(text: str, spans: list[tuple[int, int]], budget: int) -> list[tuple[str, int]]:
    """An over-long line as pieces (text, tokens) of at most `budget` tokens each."""
    pieces: list[tuple[str, int]] = []
    i, start = 0, 0
    while len(spans) - i > budget:
        j = i + budget
        while j > i + budget // 2 and _inside_word(text, spans, j):
            j -= 1
        if _inside_word(text, spans, j):  # one word longer than half the window: cut it where it must be
            j = i + budget
        pieces.append((text[start:spans[j][0]], j - i))
        i, start = j, spans[j][0]
    pieces.append((text[start:], len(spans) - i))
    return pieces


def path_prefix(path: str, tokenizer: Any, window: int) -> tuple[str, int]:
    """The path as it heads every chunk, with its token count. A path longer than a quarter of the window
    keeps its tail (file name and nearest directories) so the lines still get most of the window."""
    spans = token_spans(tokenizer, [path])[0]
    limit = window // 4
    if len(spans) <= limit:
        return path, len(spans)
    return path[spans[-limit][0]:], limit


def split_lines(text: str) -> list[str]:
    """Lines as git and editors number them: split on LF only (not on the form feeds and Unicode separators
    `str.splitlines` also splits on), a CR before the LF dropped, no phantom line after a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def chunk_file(path: str, text: str, tokenizer: Any, window: int, max_chunks: int) -> list[Chunk]:
    """The chunks of one file, at most `max_chunks` (the head of the file), each at most `window` tokens
    including the special tokens. Blank lines never start a chunk, and a chunk of blank lines only is
    dropped; a file with no text at all gets one path-only chunk, so path words still find it."""
    prefix, prefix_tokens = path_prefix(path, tokenizer, window)
    budget = max(1, window - SPECIAL_TOKENS - prefix_tokens)
    lines = split_lines(text)
    chunks: list[Chunk] = []
    segments: list[tuple[int, str, int]] = []  # (line number, text, tokens) of the chunk being filled
    used = 0

    def flush() -> None:
        nonlocal used
        if used:
            while segments[-1][2] == 0:  # trailing blank lines belong to no chunk's span
                segments.pop()
            body, prev = [], None
            for lineno, piece, _ in segments:
                # pieces of one cut line are rejoined as they were; different lines keep their newline
                body.append(piece if prev == lineno else ("\n" if body else "") + piece)
                prev = lineno
            chunks.append(Chunk(len(chunks), segments[0][0], segments[-1][0], prefix + "\n" + "".join(body)))
        segments.clear()
        used = 0

    for first in range(0, len(lines), BLOCK_LINES):
        block = lines[first:first + BLOCK_LINES]
        for offset, (line, spans) in enumerate(zip(block, token_spans(tokenizer, block))):
            pieces = [(line, len(spans))] if len(spans) <= budget else cut_line(line, spans, budget)
            for piece, n in pieces:
                if n == 0 and not segments:
                    continue
                if used + n > budget:
                    flush()
                    if len(chunks) >= max_chunks:
                        return chunks
                segments.append((first + offset + 1, piece, n))
                used += n
    flush()
    if not chunks:
        chunks.append(Chunk(0, 0, 0, prefix))
    return chunks[:max_chunks]


# Files whose text says nothing a request asks about, and whose size would dominate the embedding work:
# lockfiles (uv.lock alone was 924 of pallets/flask's 2,480 chunks), minified bundles, vendored
# directories and files marked as generated. They keep one path-only chunk, so their names still match.
_SKIP_PATH = re.compile(
    r"(?:^|/)(?:[^/]+\.lock|package-lock\.json|npm-shrinkwrap\.json|pnpm-lock\.yaml|go\.sum|[^/]+\.min\.(?:js|css|mjs))$"
    r"|(?:^|/)(?:vendor|node_modules|third_party|bower_components)/", re.IGNORECASE)
_GENERATED = re.compile(r"@generated|do not edit|auto-?generated|generated by", re.IGNORECASE)
MINIFIED_LINE = 1000  # characters: a file whose average line is longer is minified or data


def skip_reason(path: str, text: str) -> str | None:
    """Why a file's text is not embedded (`lockfile or vendored`, `generated`, `minified`), or None."""
    if _SKIP_PATH.search(path):
        return "lockfile or vendored"
    if _GENERATED.search(text[:1000]):
        return "generated"
    lines = text.count("\n") + 1
    if len(text) > 4 * MINIFIED_LINE and len(text) / lines > MINIFIED_LINE:
        return "minified"
    return None
