"""The fingerprint record: typed fields for what ContextBenchmark defines, `extra` for everything else.

Field order, names and JSON spelling follow ContextBenchmark's writer (contextbenchmark.mjs, the `fp` object
literal in its `run` loop, format 2), so a file we write reads like one of theirs and their `compare` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ._jsjson import js_json_stringify

__all__ = [
    "BENCHMARK_VERSION",
    "FORMAT_KEY",
    "FORMAT_VERSION",
    "IDENTITY_SOURCES",
    "NAMESPACE",
    "RUN_ID_KEY",
    "CorpusRef",
    "Fingerprint",
    "SystemIdentity",
]

FORMAT_VERSION: Final = 2
"""The fingerprint format we write (`contextbenchmarkFingerprint`); we read 1 and 2."""

FORMAT_KEY: Final = "contextbenchmarkFingerprint"
"""Top-level key holding the format number."""

LEGACY_FORMAT_KEY: Final = "detbenchFingerprint"
"""The format key of format 1 files written before ContextBenchmark was renamed from detbench (commit b9440de)."""

BENCHMARK_VERSION: Final = "0.1.0"
"""The ContextBenchmark version whose determinism protocol we implement (its package.json `version`).

Their `compare` treats `benchmarkVersion` as a controlled variable, so ours says which protocol the numbers
follow, not which ctxgauge wrote them; that goes under `ctxgauge.version`.
"""

NAMESPACE: Final = "ctxgauge"
"""The one top-level key that holds our own fields, so ContextBenchmark (which ignores unknown keys) reads ours."""

RUN_ID_KEY: Final = "runId"
"""The key under our namespace naming the run a fingerprint was measured in (`Fingerprint.run_id`)."""

IDENTITY_SOURCES: Final = ("content-hash", "git-sha", "declared")
"""Values of `system.source` defined by ContextBenchmark's adapters/ADAPTER.md, strongest first."""

# Keys the reference defines, in the order its writer emits them. Everything else is kept in `extra`.
KNOWN_KEYS: Final = (
    FORMAT_KEY, "benchmarkVersion", "adapter", "system", "corpus", "k", "env", "artifactHash", "queryHashes",
)


@dataclass(frozen=True)
class SystemIdentity:
    """What produced the results: `{id, source, note?}` as returned by an engine's `identity()`."""

    id: str
    """Identifier, e.g. `sha256:8685c22bb69f6eb9` or a dependency chain."""
    source: str
    """How `id` was obtained: content-hash, git-sha or declared (others are kept as read)."""
    note: str | None = None
    """Free-text caveat, e.g. that a model is pinned by name only."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of the `system` object beyond id, source and note, kept so a rewrite loses nothing."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object, keys in the reference's order, `note` only when present."""
        out: dict[str, Any] = {"id": self.id, "source": self.source}
        if self.note is not None:
            out["note"] = self.note
        out.update((key, value) for key, value in self.extra.items() if key not in ("id", "source", "note"))
        return out


@dataclass(frozen=True)
class CorpusRef:
    """The corpus a fingerprint was measured on."""

    name: str
    """Base name of the corpus (never a path: a fingerprint is published and must not leak home directories)."""
    hash: str | None
    """Content hash of the corpus; None for format 1, which recorded only the name."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of the `corpus` object beyond name and hash, kept so a rewrite loses nothing."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object, keys in the reference's order."""
        out: dict[str, Any] = {"name": self.name, "hash": self.hash}
        out.update((key, value) for key, value in self.extra.items() if key not in ("name", "hash"))
        return out


@dataclass(frozen=True)
class Fingerprint:
    """One run's determinism fingerprint, in ContextBenchmark's format.

    Fields mirror the file; `None` means "not recorded" (format 1 files, or `system: null` when an engine
    declares no identity), which `compare` treats as unattributable rather than as a value.
    The dict fields are not copied: treat a Fingerprint as read-only.
    """

    format: int
    """Format number as read (1 or 2); a fingerprint we build is 2, and we always write 2."""
    benchmark_version: str | None
    """`benchmarkVersion`: the ContextBenchmark protocol version; None in format 1."""
    adapter: str
    """`adapter`: the engine's name."""
    system: SystemIdentity | None
    """`system`: the engine's identity; None when absent or null (undeclared)."""
    corpus: CorpusRef
    """`corpus`: name and content hash."""
    k: int | None
    """`k`: how many results each query asked for."""
    env: dict[str, Any]
    """`env`: the machine, `os` and `arch` at least (Node's names); the independent variable of a comparison."""
    artifact_hash: str
    """`artifactHash`: SHA-256 hex of the built artifact."""
    query_hashes: dict[str, str]
    """`queryHashes`: query text -> SHA-256 hex of `JSON.stringify` of its ranked paths."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level keys outside the reference's set, in file order: our `ctxgauge` namespace and unknown keys."""
    # Provenance, set only by read_fingerprint. init=False makes dataclasses.replace() drop it, so a modified
    # copy never claims the file (or the bytes) of its original, which would make compare() refuse it.
    path: Path | None = field(default=None, init=False, compare=False)
    """File this was read from, if any (used to refuse comparing a file with itself)."""
    file_sha256: str | None = field(default=None, init=False, compare=False)
    """SHA-256 of the exact bytes read, if read from a file."""

    def __post_init__(self) -> None:
        clash = [key for key in self.extra if key in KNOWN_KEYS or key == LEGACY_FORMAT_KEY]
        if clash:
            # An extra key named like a reference field would silently overwrite it on write.
            raise ValueError(f"extra keys shadow fingerprint fields: {', '.join(clash)}")

    @property
    def ctxgauge(self) -> dict[str, Any]:
        """Our namespace (`extra["ctxgauge"]`), empty when the file was written by another tool."""
        value = self.extra.get(NAMESPACE)
        return value if isinstance(value, dict) else {}

    @property
    def run_id(self) -> str | None:
        """The run this fingerprint was measured in (`ctxgauge.runId`: the run directory's name and a random
        part drawn when the run started); None in a file another tool, or an older ctxgauge, wrote."""
        value = self.ctxgauge.get(RUN_ID_KEY)
        return value if isinstance(value, str) and value else None

    def to_json(self) -> dict[str, Any]:
        """The JSON object as written: format 2, the reference's key order, then `extra` in its own order.

        A format 1 fingerprint is upgraded: fields format 1 did not record are written as null, which is how
        the reference itself normalises them, so the upgrade never invents a value.
        """
        out: dict[str, Any] = {
            FORMAT_KEY: FORMAT_VERSION,
            "benchmarkVersion": self.benchmark_version,
            "adapter": self.adapter,
            # The reference writes `system: null` (the key present) when an adapter declares nothing.
            "system": self.system.to_json() if self.system is not None else None,
            "corpus": self.corpus.to_json(),
            "k": self.k,
            "env": dict(self.env),
            "artifactHash": self.artifact_hash,
            "queryHashes": dict(self.query_hashes),
        }
        for key, value in self.extra.items():
            out[key] = value
        return out

    def to_text(self) -> str:
        """The file's text: `JSON.stringify(obj, null, 1)`, one-space indent and no trailing newline, like theirs."""
        return js_json_stringify(self.to_json(), indent=1)
