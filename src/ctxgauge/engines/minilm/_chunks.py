"""Line-based chunks under a model's token window, each prefixed with its file's path, cut where the content
says so, so an edit changes only the chunks around it.

A chunk is whole lines of one file. It ends before a line that would overflow the window, or before a cut
line (`_cuts`): a non-blank line stronger than every other line within a third of the token budget on
either side (after a blank line first, then less indented, then by its text's CRC-32, so even a file of
near-identical lines such as a JSON catalogue gets cuts), never within that reach of the file's start or
end. A cut depends only on the lines within reach of it, so after an edit the cuts fall on the same lines
again past the edited chunk, and every other chunk keeps its exact text (and minilm its vector: vectors are
cached by chunk text). Packing greedily from the top of the file instead, one inserted line shifted every
later cut: on 50 commits of usememos/memos 0bfeb91d50fd that embedded 5,656 new chunk texts (1.32M tokens)
after the cold build, against 3,348 (0.55M) with these cuts.

Measured on the tune half (replay, the 20 newest eligible commits of each of its five repositories, 100
commits pooled): these cuts hit@5 0.490, MRR 0.345; without the start and end rule 0.490, 0.340; greedy
packing from the top 0.440, 0.348. The cuts make more, shorter chunks (memos cold: 11,359 against 8,590;
1.80M tokens against 1.97M, as under the 64-chunk cap greedy's fuller chunks reach further into long files).

A line longer than the window on its own is cut by tokens, at the start of a word when one lies in the last
half of the window (so the pieces tokenise to the same tokens as the whole line did). Token counts come from
the model's own tokenizer: WordPiece splits at whitespace first, so the count of lines joined by newlines is
the sum of their counts and the packing is exact, not an estimate the model then truncates (the one
exception: a single word longer than half the window, cut inside the word, may re-tokenise a token longer).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

from ctxgauge.engines._text.locales import is_locale
from ctxgauge.engines._text.path_kinds import path_kind

SPECIAL_TOKENS = 2  # [CLS] and [SEP], which the model adds to every input and which count toward its window
BLOCK_LINES = 512  # lines tokenised at a time, so a huge file stops being tokenised once its cap is reached
LOCALE_CHUNKS = 1  # chunks a translation catalogue embeds (its head): see `chunk_limit`
REACH_SHARE = 0.33  # a cut line beats the lines within this share of the token budget on either side


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
    model's `_model.WordPiece`, or anything with its `spans`)."""
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


def _cuts(lines: list[str], counts: list[int], reach: int, complete: bool) -> list[bool]:
    """Which lines start a chunk by their content: a non-blank line whose strength beats every other line
    starting within `reach` tokens of it (ties go to the earlier line). Strength is (follows a blank line,
    less indentation, CRC-32 of the stripped text): a block or paragraph start, the outermost first, and the
    hash decides among equals, so even a file of near-identical lines gets cuts. The decision reads only the
    lines within `reach` tokens, so an edit moves no cut farther away than that, and no two cuts are within
    `reach` tokens of each other. No cut lies within `reach` tokens of the file's start or (when `lines` is
    the whole file) its end, so no chunk is that small and a file that fits the window stays one chunk."""
    n = len(lines)
    starts, at = [], 0
    for c in counts:
        starts.append(at)
        at += c
    keys = [None if not counts[i] else
            (i > 0 and counts[i - 1] == 0, len(lines[i].lstrip()) - len(lines[i]),
             zlib.crc32(lines[i].strip().encode("utf-8", "surrogatepass")))
            for i in range(n)]
    cuts = [False] * n
    for i in range(1, n):
        key = keys[i]
        if key is None or starts[i] < reach or (complete and at - starts[i] <= reach):
            continue
        j, best = i - 1, True
        while best and j >= 0 and starts[i] - starts[j] <= reach:
            best = keys[j] is None or keys[j] < key
            j -= 1
        j = i + 1
        while best and j < n and starts[j] - starts[i] <= reach:
            best = keys[j] is None or keys[j] <= key
            j += 1
        cuts[i] = best
    return cuts


def chunk_file(path: str, text: str, tokenizer: Any, window: int, max_chunks: int) -> list[Chunk]:
    """The chunks of one file, at most `max_chunks` (the head of the file), each at most `window` tokens
    including the special tokens. Blank lines never start a chunk, and a chunk of blank lines only is
    dropped; a file with no text at all gets one path-only chunk, so path words still find it."""
    prefix, prefix_tokens = path_prefix(path, tokenizer, window)
    budget = max(1, window - SPECIAL_TOKENS - prefix_tokens)
    reach = max(1, int(budget * REACH_SHARE))
    lines = split_lines(text)
    # Tokenised block by block, only as far as the cap can reach (plus the cuts' look-ahead): max_chunks
    # chunks of at most `budget` tokens each never need more.
    spans: list[list[tuple[int, int]]] = []
    total = 0
    while len(spans) < len(lines) and total <= max_chunks * budget + reach:
        block = token_spans(tokenizer, lines[len(spans):len(spans) + BLOCK_LINES])
        spans.extend(block)
        total += sum(len(s) for s in block)
    complete = len(spans) == len(lines)
    lines = lines[:len(spans)]
    cuts = _cuts(lines, [len(s) for s in spans], reach, complete)
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

    for i, (line, line_spans) in enumerate(zip(lines, spans)):
        pieces = [(line, len(line_spans))] if len(line_spans) <= budget else cut_line(line, line_spans, budget)
        for k, (piece, n) in enumerate(pieces):
            if n == 0 and not segments:
                continue
            if used and (used + n > budget or (k == 0 and cuts[i])):
                flush()
                if len(chunks) >= max_chunks:
                    return chunks
            segments.append((i + 1, piece, n))
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


def chunk_limit(path: str, max_chunks: int, locale_chunks: int, test_chunks: int | None = None) -> int:
    """How many chunks of a file are embedded (0: its path only). A translation catalogue (`_text.locales`) gets
    `locale_chunks`: one language's copy of words that the program's own files and its source-language
    catalogue already hold, in a language this English model reads poorly, and on a project translated into
    dozens of languages the catalogues were a quarter of the cold build's tokens (usememos/memos: 44 files,
    0.43M of 1.91M tokens). Its path still names it, and the language its name gives.

    A test file (`_text.path_kinds.path_kind`: by its folder or its name) gets `test_chunks` (None: no cap of its
    own): its head (imports, the first cases) says what it tests, and the rest calls the code it tests with
    the same words as that code, so it matched requests about the code over the files a request is about;
    on usememos/memos tests were a quarter of the tokens embedded."""
    if is_locale(path):
        return min(max_chunks, locale_chunks)
    if test_chunks is not None and path_kind(path) == "test":
        return min(max_chunks, test_chunks)
    return max_chunks
