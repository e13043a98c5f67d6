"""Messages a request quotes, found in the source file whose string literal holds them.

An issue text quotes what the program printed: an error (`Using pytest.skip outside of a test is not
allowed`), a warning (`WARNING: no number is assigned for table`), a message id (`unused-variable`), an
option name (`rst_prolog`). That text is a string literal in the file that prints it, often in that file
alone, while its words are in many files. So each code file's single-line string literals are cut at their
format placeholders (`%s`, `%(name)r`, `{}`, `{0:>4}`, escapes) into fragments, and a request that holds
a fragment verbatim (case and runs of white space aside, at word boundaries) points at the files holding it:
a fragment held by n files gives each 1/n, a fragment held by more than `MAX_FILES` gives nothing.

Only fragments with two words or more (`unused-variable` has two, `importlib` one) and `MIN_CHARS`
characters count: a one-word literal (`name`, `utf-8`) is in too many requests by chance; so is a short
pair of plain words (`not found`, `instead of`: under `PLAIN_CHARS` characters, letters only).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Mapping

CODE_SUFFIXES = (".py", ".pyi", ".pyx", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java",
                 ".kt", ".rb", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".php", ".swift", ".scala")
MIN_CHARS = 8
MAX_FILES = 5
MAX_FRAGMENT = 200
PLAIN_CHARS = 16
"""A fragment of two plain words (letters and one space) counts from this many characters on (`_common`)."""

# A quoted string on one line, its escapes kept whole ("a \"b\" c" is one literal); backticks quote a string
# in JavaScript and TypeScript (template literals) and Go, but only mark up names in Python docstrings.
_STRING = re.compile(r""""((?:[^"\\\n]|\\.){2,400})"|'((?:[^'\\\n]|\\.){2,400})'""")
_TICKED = re.compile(r"`([^`\\\n]{2,400})`")
_TICKED_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go")
# Where a literal's text is filled in at run time: printf and format placeholders, escapes.
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[a-zA-Z%]|\{[^{}]*\}|\$\{[^{}]*\}|\\.")
_SPACE = re.compile(r"\s+")
_WORDS = re.compile(r"[a-z]{2,}")
_PLAIN = re.compile(r"[a-z]+ [a-z]+")
_EDGE = " \t.,:;!?\"'`()[]<>"


def is_code(path: str) -> bool:
    return path.lower().endswith(CODE_SUFFIXES)


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower())


def _head(text: str) -> list[str]:
    """A normalised text's words with their edge punctuation off: the keys fragments are looked up by."""
    return [w for w in (w.strip(_EDGE) for w in text.split(" ")) if w]


def _common(frag: str) -> bool:
    """Two plain words in few letters (`not found`, `instead of`, `error message`, `test session`): any
    prose says them, so a request holding one points nowhere; `unconditional skip`, `system-err`,
    `no number is assigned` are a program's own."""
    return len(frag) < PLAIN_CHARS and _PLAIN.fullmatch(frag) is not None


def fragments(path: str, text: str) -> frozenset[str]:
    """The fragments of a source file's string literals worth matching (module docstring), normalised."""
    out = set()
    bodies = [m.group(1) or m.group(2) or "" for m in _STRING.finditer(text)]
    if path.lower().endswith(_TICKED_SUFFIXES):
        bodies += [m.group(1) for m in _TICKED.finditer(text)]
    for body in bodies:
        for piece in _PLACEHOLDER.split(body):
            frag = _norm(piece).strip(_EDGE)
            if MIN_CHARS <= len(frag) <= MAX_FRAGMENT and len(_WORDS.findall(frag)) >= 2 and not _common(frag):
                out.add(frag)
    return frozenset(out)


def _at_boundaries(text: str, frag: str) -> bool:
    start = text.find(frag)
    while start >= 0:
        end = start + len(frag)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(frag, start + 1)
    return False


class LiteralIndex:
    """Fragment -> files holding it, looked up by a fragment's first two words."""

    def __init__(self, by_path: Mapping[str, Iterable[str]]):
        files: dict[str, list[str]] = defaultdict(list)
        for path, frags in sorted(by_path.items()):
            for frag in frags:
                files[frag].append(path)
        self._files = {f: ps for f, ps in files.items() if len(ps) <= MAX_FILES}
        self._by_head: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for frag in sorted(self._files):
            self._by_head[tuple(_head(frag)[:2])].append(frag)

    def match(self, text: str) -> dict[str, float]:
        """path -> sum over the fragments `text` quotes of 1/(files holding the fragment)."""
        norm = _norm(text)
        words = _head(norm)
        heads = {(a,) for a in words} | {(a, b) for a, b in zip(words, words[1:])}
        out: dict[str, float] = {}
        for head in sorted(heads):
            for frag in self._by_head.get(head, ()):
                if _at_boundaries(norm, frag):
                    paths = self._files[frag]
                    for p in paths:
                        out[p] = out.get(p, 0.0) + 1.0 / len(paths)
        return out
