"""bm25's artifact files and what tells that they are still the ones an engine object wrote or read.

An engine object keeps the last index it built or loaded in memory and answers queries from it while the
files on disk are unchanged (`Stamp`); a deferred out dir's live index is held with its stamp (`Held`).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines.bm25._live import LiveIndex

DOCS_FILE = "docs.json"
NONOCCURRENCE_FILE = "nonoccurrence_array.index.npy"
INDEX_FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json",
               "params.index.json")


@dataclass
class Held:
    """A deferred out dir's live index and the corpus it holds."""

    out_dir: Path
    """Resolved."""
    corpus: Corpus
    live: LiveIndex
    stamp: "Stamp"
    """The directory as this object left it: anything else writing there voids the index."""
    written: bool = False
    """Whether `flush` wrote the artifact of `corpus` since the last change."""


def stat_of(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


FINE_NS = 20_000_000
"""How far a file time may lag the clock on a file system that keeps nanoseconds: Linux stamps files with
a clock that ticks once a jiffy (at most 10 ms, HZ >= 100); twice that."""
COARSE_NS = 3_000_000_000
"""The same where times are whole seconds (ext3, HFS+) or two (FAT): a time with no sub-second part."""


def stats(out_dir: Path) -> tuple:
    return tuple(stat_of(out_dir / name) for name in (DOCS_FILE, *INDEX_FILES))


def racy(stats: tuple, now: int) -> bool:
    """Whether a file could still be rewritten without its time changing: its time is within one
    timestamp tick of `now` (git's "racily clean" entries)."""
    return any(t + (FINE_NS if t % 1_000_000_000 else COARSE_NS) >= now
               for st in stats if st is not None for t in st[2:])


def digest(out_dir: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for name in (INDEX_FILES[0], DOCS_FILE):
        try:
            digest.update((out_dir / name).read_bytes())
        except OSError:
            digest.update(b"\0missing")
    return digest.hexdigest()


class Stamp:
    """What the index files in a directory were when this object wrote or read them, so that an index
    rewritten there since (by another engine object with other parameters, or another process) is never
    answered from memory.

    Every file's inode, size, modification and change time tell a rewrite apart, except a rewrite of the
    same sizes within one timestamp tick. So while any time is that recent ("racy", as git calls it), the
    score and document files' digest is kept and compared too; once the files are older than a tick, a
    check finds the digest unchanged once more and drops it: any later write must then move a time. A query
    costs a few `stat` calls instead of hashing the scores (about half of a determinism query's time)."""

    __slots__ = ("stats", "digest")

    def __init__(self, out_dir: Path):
        now = time.time_ns()
        self.stats = stats(out_dir)
        self.digest = digest(out_dir) if racy(self.stats, now) else None

    def holds(self, out_dir: Path) -> bool:
        """Whether the files in `out_dir` are still the ones stamped."""
        now = time.time_ns()
        seen = stats(out_dir)
        if seen != self.stats:
            return False
        if self.digest is None:
            return True
        if digest(out_dir) != self.digest:
            return False
        if not racy(seen, now):
            self.digest = None  # settled: the digest was taken after the last moment a time could stand still
        return True
