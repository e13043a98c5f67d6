"""Which tracked files of a work tree differ from a commit, found by hashing their bytes as git hashes a blob:
no `git status`, which refreshes the index and may run the repository's clean filters (its config's
programs). Untracked files are not looked at."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

from ctxgauge._untrusted import read_untrusted
from ctxgauge.errors import UserError
from ctxgauge.git._blobs import blob_id

WORK_FILE_LIMIT = 1 << 30
"""The largest work-tree file hashed; a larger one (or one that cannot be read) counts as changed."""


def changed_in_work_tree(repo, commit: str, top: Path, wanted: Callable[[str], bool]) -> Iterator[str]:
    """Paths of the blobs of `commit` that `wanted` keeps whose file under `top` holds other bytes, is gone, or
    cannot be read (a symbolic link is compared by its target, as git stores it), in the tree's order."""
    for entry in repo.tree(commit):
        if entry.type != "blob" or not wanted(entry.path):
            continue
        full = top / entry.path
        try:
            data = os.fsencode(os.readlink(full)) if entry.mode == "120000" else \
                read_untrusted(full, WORK_FILE_LIMIT, "source file")
        except (OSError, UserError):
            data = None
        if data is None or blob_id(data) != entry.oid:
            yield entry.path
