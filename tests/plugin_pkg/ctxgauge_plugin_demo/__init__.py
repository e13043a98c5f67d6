"""A demonstration engine plugin: files ranked by how many query words their path contains.

It subclasses `ctxgauge.engines.Engine`, so spec handling, parameter checking and a content-hash identity
come from the base class, exactly as for a built-in engine.
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxgauge.engines import Engine, Hit, rank

__all__ = ["DemoEngine"]


class DemoEngine(Engine):
    """Scores a file by the number of distinct query words (lowercased) found in its path."""

    kind = "demo_plugin"
    defaults = {"min_length": 2}
    artifact_file = "paths.json"

    def build(self, corpus, out_dir: Path) -> dict:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / self.artifact_file).write_text(json.dumps(corpus.paths) + "\n", encoding="utf-8")
        return {"documents": len(corpus.paths)}

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        paths = json.loads((Path(out_dir) / self.artifact_file).read_text(encoding="utf-8"))
        words = {w for w in text.lower().split() if len(w) >= int(self.params["min_length"])}
        return rank({p: float(sum(w in p.lower() for w in words)) for p in paths}, k)
