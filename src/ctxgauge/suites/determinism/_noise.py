"""The noise files Drift Under Noise adds to a corpus: unrelated prose, a near-duplicate, a large generated file.

Every kind is placed in a directory the corpus already has (the reference writes to `src/shared/`, and
crashes on a corpus without one), gets a name no corpus file has, and is a pure function of the corpus,
the queries and NOISE_SEED, so two machines inject the same bytes.

- `prose`: sentences of words from a fixed vocabulary of everyday nouns, minus every word that shares
  anything with a query: a word is dropped when it contains a query word or is contained in one (grep
  matches substrings) or when the two share an English stem (bm25 stems). The file has the extension most
  common in its directory, with the prose written as comments of that language, so an engine that reads
  only code still sees it.
- `near-duplicate`: a copy of the file the queries rank first most often (the file most likely to compete),
  beside it, with one line added at the end.
- `large`: generated comment lines in the same vocabulary, LARGE_BYTES long (at most half the corpus's
  size limit, so a fresh read of the noisy source would index it too).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

from ctxgauge.corpus import Corpus, path_key
from ctxgauge.engines._text.tokens import code_tokens, query_terms
from ctxgauge.errors import UserError

__all__ = ["LARGE_BYTES", "NOISE_KINDS", "NOISE_SEED", "Noise", "make_noise", "noise_directory", "unrelated_words"]

NOISE_KINDS: Final = ("prose", "near-duplicate", "large")
"""The noise kinds, in the order they run when several are asked for."""

NOISE_SEED: Final = 20260717
"""Seed of the local RNG that picks the noise words (a local random.Random: no global state is touched)."""

LARGE_BYTES: Final = 256 * 1024
"""Target size of the `large` noise file, before the corpus's size limit caps it."""

# Everyday nouns that rarely name anything in a code base. Filtered against the queries before use.
_VOCABULARY: Final = tuple("""
meadow lantern heron willow pebble thistle marigold saffron quill harbor lagoon orchard juniper fennel clover
bramble sparrow kestrel falcon otter badger walrus narwhal pelican puffin tundra glacier canyon prairie
savanna marsh estuary dune reef atoll fjord geyser volcano ember cinder amber copper bronze pewter velvet linen
tweed burlap wicker porcelain terracotta mosaic fresco tapestry lullaby sonnet ballad madrigal minuet waltz
tango polka banjo cello oboe bassoon tuba harp lute zither marimba ukulele accordion violin pumpkin turnip
parsnip radish rhubarb apricot plum quince fig olive almond walnut hazelnut chestnut acorn truffle nutmeg
cinnamon clove ginger paprika oregano thyme basil rosemary lavender tulip daisy orchid peony poppy lilac
magnolia camellia dahlia begonia crimson scarlet indigo ochre umber teal mauve saddle stirrup lasso barn
haystack windmill lighthouse gondola canoe kayak sailboat rowboat sextant telescope candle wick quilt blanket
pillow teapot kettle saucer ladle whisk colander skillet griddle mitten scarf bonnet galoshes parasol
""".split())

# Line-comment prefix by extension; files of other extensions get prose in a `.txt` file.
_COMMENT: Final = {
    **dict.fromkeys((".py", ".rb", ".sh", ".bash", ".yaml", ".yml", ".toml", ".r", ".pl", ".ex", ".exs",
                     ".cfg", ".ini", ".mk", ".nim", ".jl", ".cmake", ".ps1", ".tf", ".coffee"), "# "),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".c", ".h", ".cc",
                     ".cpp", ".hpp", ".cs", ".kt", ".kts", ".swift", ".scala", ".php", ".dart", ".groovy",
                     ".gradle", ".zig", ".vue", ".svelte", ".proto", ".sol", ".m"), "// "),
    **dict.fromkeys((".sql", ".lua", ".hs", ".elm", ".ada"), "-- "),
    **dict.fromkeys((".md", ".txt", ".rst", ".adoc"), ""),
}


@dataclass(frozen=True)
class Noise:
    """One noise file to overlay on the corpus."""

    kind: str
    """One of NOISE_KINDS."""
    path: str
    """Corpus-relative path of the new file (in a directory the corpus has)."""
    data: bytes
    """Its bytes."""
    about: str
    """One line saying what it is (the original of a near-duplicate, say)."""


def _stems(words: Sequence[str]) -> list[str]:
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a core dependency
        return list(words)
    return list(Stemmer.Stemmer("english").stemWords(list(words)))


def unrelated_words(queries: Sequence[str]) -> list[str]:
    """The vocabulary words that share no word, substring or English stem with any query."""
    terms: set[str] = set()
    for query in queries:
        terms.update(query_terms(query))
        terms.update(code_tokens(query))
        terms.update(re.findall(r"[a-z0-9]+", query.lower()))
    terms = {t for t in terms if len(t) >= 2}
    stems = set(_stems(sorted(terms)))
    kept = []
    for word, stem in zip(_VOCABULARY, _stems(_VOCABULARY)):
        if stem in stems or any(t in word or word in t for t in terms):
            continue
        kept.append(word)
    if len(kept) < 12:
        raise UserError("the queries share words with nearly every noise word; drift needs unrelated prose "
                        f"(only {len(kept)} noise words left)")
    return kept


def _directories(corpus: Corpus) -> Counter[str]:
    return Counter(str(PurePosixPath(f.path).parent) if "/" in f.path else "" for f in corpus.files)


def noise_directory(corpus: Corpus, requested: str | None = None) -> str:
    """Where prose and large noise go: `requested` if the corpus has files there, else the directory with
    the most files (ties by path bytes); `""` is the corpus root."""
    dirs = _directories(corpus)
    if requested is not None:
        wanted = requested.strip("/")
        if wanted != "" and not any(f.path.startswith(wanted + "/") for f in corpus.files):
            raise UserError(f"--noise-dir {requested!r} is not a directory of the corpus")
        return wanted
    if not dirs:
        return ""
    return min(dirs, key=lambda d: (-dirs[d], path_key(d)))


def _extension(corpus: Corpus, directory: str) -> str:
    exts = Counter(PurePosixPath(f.path).suffix.lower() for f in corpus.files
                   if (str(PurePosixPath(f.path).parent) if "/" in f.path else "") == directory)
    known = [(n, e) for e, n in exts.items() if e in _COMMENT]
    if not known:
        return ".txt"
    return min(known, key=lambda ne: (-ne[0], ne[1]))[1]


def _free_path(corpus: Corpus, directory: str, stem: str, ext: str) -> str:
    prefix = f"{directory}/" if directory else ""
    candidate, n = f"{prefix}{stem}{ext}", 2
    while candidate in corpus:
        candidate, n = f"{prefix}{stem}-{n}{ext}", n + 1
    return candidate


def _sentences(rng: random.Random, words: Sequence[str], count: int) -> list[str]:
    out = []
    for _ in range(count):
        picked = [rng.choice(words) for _ in range(rng.randint(7, 12))]
        out.append(" ".join(picked).capitalize() + ".")
    return out


def _prose(corpus: Corpus, queries: Sequence[str], directory: str) -> Noise:
    words = unrelated_words(queries)
    rng = random.Random(NOISE_SEED)
    ext = _extension(corpus, directory)
    prefix = _COMMENT.get(ext, "")
    stem = "_".join(rng.sample(words, 2))
    lines = [prefix + s for s in _sentences(rng, words, 24)]
    return Noise("prose", _free_path(corpus, directory, stem, ext), ("\n".join(lines) + "\n").encode("utf-8"),
                 f"{len(lines)} lines of prose sharing no word with the queries")


def _large(corpus: Corpus, queries: Sequence[str], directory: str) -> Noise:
    words = unrelated_words(queries)
    rng = random.Random(NOISE_SEED + 1)
    ext = _extension(corpus, directory)
    prefix = _COMMENT.get(ext, "")
    target = min(LARGE_BYTES, corpus.max_bytes // 2)
    stem = "_".join(rng.sample(words, 3))
    lines: list[str] = []
    size = 0
    while size < target:
        line = f"{prefix}{len(lines):06d} " + " ".join(rng.choice(words) for _ in range(10))
        lines.append(line)
        size += len(line) + 1
    data = ("\n".join(lines) + "\n").encode("utf-8")
    return Noise("large", _free_path(corpus, directory, stem, ext), data,
                 f"{len(data)} bytes of generated lines sharing no word with the queries")


def _near_duplicate(corpus: Corpus, rankings: Mapping[str, Sequence[str]]) -> Noise:
    if not corpus.files:
        raise UserError("the corpus has no file to duplicate")
    tops = Counter(paths[0] for paths in rankings.values() if paths)
    original = (min(tops, key=lambda p: (-tops[p], path_key(p))) if tops else corpus.files[0].path)
    pure = PurePosixPath(original)
    directory = str(pure.parent) if "/" in original else ""
    text = corpus.read(original)
    first = next((line for line in text.splitlines() if line.strip()), b"")
    data = text + (b"" if not text or text.endswith(b"\n") else b"\n") + first + b"\n"
    return Noise("near-duplicate", _free_path(corpus, directory, pure.stem, pure.suffix), data,
                 f"a copy of {original} with its first line repeated at the end")


def make_noise(kind: str, corpus: Corpus, queries: Sequence[str], rankings: Mapping[str, Sequence[str]],
               directory: str | None = None) -> Noise:
    """The noise file of `kind` for this corpus (`rankings`: base rankings, for the near-duplicate)."""
    if kind == "near-duplicate":
        return _near_duplicate(corpus, rankings)
    where = noise_directory(corpus, directory)
    if kind == "prose":
        return _prose(corpus, queries, where)
    if kind == "large":
        return _large(corpus, queries, where)
    raise UserError(f"unknown noise kind {kind!r} (known: {', '.join(NOISE_KINDS)})")
