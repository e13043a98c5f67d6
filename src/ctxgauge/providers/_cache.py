"""The response cache: one JSON file per request hash, so a re-run is free and gives the same answers.

    <cache dir>/<first two hex digits>/<sha256 of the request>.json

Entries hold the result and the provider kind and model that produced it, never a key or a base URL
(the request hash is computed without them). Writes are atomic, so two runs sharing a cache never read
half an entry; a corrupt entry is treated as a miss and overwritten.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ctxgauge._io import write_json_atomic
from ctxgauge.providers._base import ChatResult

CACHE_ENV = "CTXGAUGE_CACHE_DIR"


def default_cache_dir() -> Path:
    """`$CTXGAUGE_CACHE_DIR`, else `$XDG_CACHE_HOME/ctxgauge`, else `~/.cache/ctxgauge`."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxgauge"


class ResponseCache:
    """Request hash -> ChatResult, on disk under `root/responses`."""

    def __init__(self, root: str | Path):
        self.root = Path(root) / "responses"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResult | None:
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            return ChatResult.from_dict(entry["result"], cached=True)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result: ChatResult, *, provider: str, model: str) -> None:
        write_json_atomic(self._path(key), {"key": key, "provider": provider, "model": model,
                                            "result": result.to_dict()})

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0
