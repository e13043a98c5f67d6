"""grep: files ranked by how many distinct query terms they contain, then by path.

The "bare agent with text search" baseline: every word of the request is searched for as a
case-insensitive substring of each file's path and content, as `grep -ilF` would, and a file scores one
point per distinct word found. The artifact is the lowercased text of every file (JSON lines, by path).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ctxgauge._io import write_text_atomic
from ctxgauge.corpus import Change, Corpus, path_key
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine
from ctxgauge.engines._text.tokens import query_terms


class GrepEngine(SpanEngine, Engine):
    kind = "grep"
    defaults: dict = {**SPAN_PARAMS}
    artifact_file = "grep.jsonl"

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        docs = {f.path: (f.blob, data.decode("utf-8", "replace").lower()) for f, data in corpus.iter_bytes()}
        self.hold(out_dir, corpus)
        return self._write(out_dir, docs)

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        docs = self._load(out_dir)
        for ch in changes:
            if ch.old_path:
                docs.pop(ch.old_path, None)
            docs.pop(ch.path, None)
        wanted = [f for f in (corpus.get(ch.path) for ch in changes if ch.status != "deleted") if f is not None]
        for f, data in corpus.iter_bytes(wanted):
            docs[f.path] = (f.blob, data.decode("utf-8", "replace").lower())
        self.hold(out_dir, corpus)
        return self._write(out_dir, docs)

    def _write(self, out_dir: Path, docs: dict[str, tuple[str, str]]) -> dict:
        lines = [
            json.dumps({"path": p, "blob": docs[p][0], "text": docs[p][1]}, ensure_ascii=False, sort_keys=True)
            for p in sorted(docs, key=path_key)
        ]
        write_text_atomic(Path(out_dir) / self.artifact_file, "".join(line + "\n" for line in lines))
        return {"documents": len(lines)}

    def _load(self, out_dir: Path) -> dict[str, tuple[str, str]]:
        docs = {}
        with open(Path(out_dir) / self.artifact_file, encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                docs[d["path"]] = (d["blob"], d["text"])
        return docs

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        terms = query_terms(text)
        if not terms:
            return []
        scores = {}
        for path, (_, body) in self._load(out_dir).items():
            hay = path.lower() + "\n" + body
            scores[path] = float(sum(1 for t in terms if t in hay))
        return rank(scores, k)
