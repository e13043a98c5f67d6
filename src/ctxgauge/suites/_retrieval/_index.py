"""One engine's live index: built once, then moved from corpus to corpus by the files that changed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ctxgauge.corpus import Corpus
from ctxgauge.engines import ask_defer_writes, call_engine, checked_hits
from ctxgauge.errors import EngineError


class LiveIndex:
    """One engine's index directory and the corpus it currently holds.

    `advance` brings it to a corpus: an update by the changed files (`Engine.update` with
    `Corpus.changes_to`) when it holds one of the same source, else a fresh build in an emptied directory.
    A failed call leaves no corpus held (the index may be torn: the next corpus builds afresh), and asking
    again for the corpus that failed raises the same error without calling the engine again."""

    def __init__(self, engine: Any, out_dir: Path):
        self.engine = engine
        self.out_dir = out_dir
        self.key: str | None = None
        self.source: str | None = None
        self.corpus: Corpus | None = None
        self._failed: tuple[str, EngineError] | None = None
        # Suites only query their indexes, never read their bytes: an engine that can keep one in memory and
        # skip writing the artifact (bm25: an update then costs the changed files, not the repository) may.
        ask_defer_writes(engine, out_dir)

    def advance(self, key: str, source: str, corpus: Corpus) -> None:
        """Bring the index to `corpus` (named `key`; updated from the corpus held when that is of the same
        `source`, a lineage of revisions); EngineError when the engine fails."""
        if self.key == key and self.corpus is not None:
            return
        if self._failed is not None and self._failed[0] == key:
            raise self._failed[1]
        eng = self.engine
        previous = self.corpus if self.source == source else None
        self.key = self.source = self.corpus = None  # unknown until the call succeeds
        try:
            if previous is None or not callable(getattr(eng, "update", None)):
                # A fresh build starts from an empty directory: a failed call may have left a torn index.
                shutil.rmtree(self.out_dir, ignore_errors=True)
                self.out_dir.mkdir(parents=True)
                call_engine("build", eng, eng.build, corpus, self.out_dir)
            else:
                changes = previous.changes_to(corpus)
                if changes:
                    call_engine("update", eng, eng.update, self.out_dir, corpus, changes)
        except EngineError as exc:
            self._failed = (key, exc)
            raise
        self.key, self.source, self.corpus, self._failed = key, source, corpus, None

    def query(self, text: str, depth: int) -> list[dict]:
        """The engine's top `depth` hits for `text`, checked against the corpus held: `[{path, score}]`."""
        eng = self.engine
        hits = checked_hits(call_engine("query", eng, eng.query, self.out_dir, text, depth), self.corpus, depth,
                            eng.name)
        return [h.to_dict() for h in hits]
