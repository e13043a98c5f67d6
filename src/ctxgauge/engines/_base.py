"""The engine contract: `build(corpus, out_dir)`, `query(out_dir, text, k)`, `identity()`, optional `update`.

A suite never knows which engine it runs; an engine never knows which suite calls it. Built-in engines
subclass `Engine` (which supplies spec handling, identity and parameter checking); a plugin may subclass it
too or be any object with the same attributes (see `EngineLike`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from ctxgauge.cache import code_identity, computing_modules, distribution_version
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._spec import EngineSpec, resolve_params


@dataclass(frozen=True)
class Hit:
    """One ranked file: its path relative to the corpus root, the engine's score (higher is better) and the
    lines it hands over: `spans`, `(start_line, end_line)` pairs, 1-based and inclusive, in the engine's
    order of preference; empty means the whole file (the rules: `engines/_spans.py`)."""

    path: str
    score: float
    spans: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict:
        # A file-only hit writes what it always wrote: records of file-only engines stay byte for byte.
        out: dict = {"path": self.path, "score": self.score}
        if self.spans:
            out["spans"] = [[s, e] for s, e in self.spans]
        return out


def rank(scores: dict[str, float], k: int) -> list[Hit]:
    """The top k of path -> score, best first, ties broken by path bytes so equal scores order the same
    on every run (libraries leave ties in arbitrary order). Files scoring 0 or less are not returned."""
    items = [(p, s) for p, s in scores.items() if s > 0]
    items.sort(key=lambda ps: (-ps[1], ps[0].encode("utf-8", "surrogateescape")))
    return [Hit(p, float(s)) for p, s in items[: max(k, 0)]]


@runtime_checkable
class EngineLike(Protocol):
    """What a suite needs of an engine; plugins only have to look like this."""

    name: str

    def identity(self) -> dict: ...

    def build(self, corpus: Corpus, out_dir: Path) -> dict | None: ...

    def query(self, out_dir: Path, text: str, k: int) -> Sequence[Hit]: ...


class Engine:
    """Base class of the built-in engines.

    Subclasses set `kind` (the registry name), `defaults` (every parameter with its default value, or a
    `Param` declaring its type and range),
    `libraries` (distributions whose versions enter the identity), and implement `build` and `query`.
    `update` defaults to a full rebuild; engines that can do better override it, and must leave the artifact
    byte-identical to a fresh build of the new corpus.
    """

    kind: ClassVar[str] = ""
    defaults: ClassVar[dict[str, Any]] = {}
    libraries: ClassVar[tuple[str, ...]] = ()
    artifact_file: ClassVar[str | None] = None

    def __init__(self, **params: Any):
        # Every parameter checked against its declaration, and the ones at their default dropped from the
        # name: two specs that compute the same thing must not appear as two systems.
        self.params, self._given = resolve_params(self.kind, self.defaults, params)

    @property
    def spec(self) -> EngineSpec:
        return EngineSpec(self.kind, tuple(self._given.items()))

    @property
    def name(self) -> str:
        """The canonical spec string: the engine's name in records, reports and CLI flags."""
        return str(self.spec)

    def available(self) -> tuple[bool, str | None]:
        """(True, None), or (False, why): an unavailable engine is reported as skipped, never as passed."""
        return True, None

    def identity(self) -> dict:
        """`{id, source: "content-hash"}`: a hash of the code the engine computes with (its module and every
        module that imports, `ctxgauge.cache.code_identity`: docstrings and comments out), its full
        configuration and the versions of the libraries it uses, so any change to what it computes changes
        its id, and nothing else does."""
        config = {
            "kind": self.kind,
            "params": self.params,
            "libraries": {d: distribution_version(d) for d in self.libraries},
        }
        return {"id": code_identity(self.code_modules(), config), "source": "content-hash"}

    def code_modules(self) -> tuple[str, ...]:
        """The modules whose source enters the identity, computed from the engine's module's imports
        (`ctxgauge.cache.computing_modules`); an engine that runs others chosen by name adds theirs."""
        return computing_modules(type(self).__module__)

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        raise NotImplementedError

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        raise NotImplementedError

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        """Bring the artifact in `out_dir` up to `corpus` (the new corpus) given the changed paths."""
        return self.build(corpus, out_dir)

    def defer_writes(self, out_dir: Path) -> bool:
        """Ask that builds and updates into `out_dir` may keep their index in memory and leave the artifact
        unwritten until `flush(out_dir)`, queries through this object staying exact. True when the engine
        does so (the default engine does not). Only a caller that never reads the artifact's bytes asks
        (replay, cases); every artifact that is hashed or fingerprinted is written by a plain build or update."""
        return False

    def flush(self, out_dir: Path) -> None:
        """Write the artifact a deferred build or update left unwritten (byte-identical to a fresh build)."""

    def close(self) -> None:
        """Release processes or models the engine holds (external engines end their process here)."""

    def __repr__(self) -> str:
        return f"<engine {self.name}>"
