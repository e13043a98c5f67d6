"""The text an index keeps for its spans: each indexed file's bytes, by content id, inside the out directory.

The engine contract's `query(out_dir, text, k)` gets no corpus, yet spans are lines of the files ranked. An
engine object remembers the corpus it built or updated an out directory from (the fast path); this store is
what makes the index answer for itself when another engine object, or another process, queries it:

- `span-text/files.json`: `{"files": {path: content id}}`, sorted by path (the corpus at the index's revision);
- `span-text/blobs/<content id>`: the bytes of each file version, written once (content-addressed: an update
  writes only the versions it has not got, and removes the ones no file uses any more, so an update leaves
  the same bytes as a fresh build of the new corpus).

Content ids are the corpus's (git blob ids, or the same id computed for a plain file): no absolute path, no
time, nothing of the machine, so the store is the same on every machine and build.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from ctxgauge._io import write_bytes_atomic, write_text_atomic
from ctxgauge.corpus import Corpus, path_key

STORE_DIR = "span-text"
FILES_JSON = "files.json"
BLOBS_DIR = "blobs"
_CONTENT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

Stamp = tuple[int, int, int]
"""(inode, size, mtime in ns) of `files.json`: a store rewritten by anyone since shows a different stamp."""


def stamp(out_dir: Path) -> Stamp | None:
    """The stamp of the store in `out_dir`, None when it has none."""
    try:
        st = os.stat(Path(out_dir) / STORE_DIR / FILES_JSON)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def write(out_dir: Path, corpus: Corpus) -> Stamp | None:
    """Make the store in `out_dir` hold `corpus`: its file map, the bytes of versions not yet stored, and no
    version no file uses. Returns the new stamp."""
    root = Path(out_dir) / STORE_DIR
    blobs = root / BLOBS_DIR
    blobs.mkdir(parents=True, exist_ok=True)
    have = {p.name for p in blobs.iterdir()}
    wanted = {f.blob for f in corpus.files}
    missing = {}
    for f in corpus.files:
        if f.blob not in have and f.blob not in missing:
            if not _CONTENT_ID.fullmatch(f.blob):
                raise ValueError(f"not a content id: {f.blob!r}")
            missing[f.blob] = f
    for f, data in corpus.iter_bytes(sorted(missing.values(), key=lambda f: path_key(f.path))):
        write_bytes_atomic(blobs / f.blob, data)
    for name in sorted(have - wanted):
        (blobs / name).unlink(missing_ok=True)
    files = {f.path: f.blob for f in sorted(corpus.files, key=lambda f: path_key(f.path))}
    write_text_atomic(root / FILES_JSON, json.dumps({"files": files}, ensure_ascii=False, separators=(",", ":")))
    return stamp(out_dir)


class StoredFiles:
    """The files of a store, read back: `blob_of(path)` and `read(path)`, as a held corpus answers them."""

    def __init__(self, out_dir: Path):
        self.root = Path(out_dir) / STORE_DIR
        with open(self.root / FILES_JSON, encoding="utf-8") as fh:
            self.files: dict[str, str] = json.load(fh)["files"]

    def blob_of(self, path: str) -> str | None:
        return self.files.get(path)

    def read(self, path: str) -> bytes:
        blob = self.files[path]
        if not _CONTENT_ID.fullmatch(blob):
            raise ValueError(f"not a content id: {blob!r}")
        return (self.root / BLOBS_DIR / blob).read_bytes()

