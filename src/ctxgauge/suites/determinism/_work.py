"""What every family shares: the engine's workspace, a family's outcome, cold builds, ranked queries."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import ctxgauge.cache as work_cache
from ctxgauge.engines import call_engine, checked_hits
from ctxgauge.corpus import Corpus
from ctxgauge.fingerprints import artifact_hash_of_dir

__all__ = ["FAMILIES", "OK", "FAILED", "NOT_MEASURED", "Answer", "FamilyResult", "Workspace", "build_into",
           "close_engine"]

Answer = list[tuple[str, tuple[tuple[int, int], ...]]]
"""One query's ranked paths, each with the spans its hit handed over (empty: the whole file)."""

FAMILIES: Final = ("rebuild", "query", "drift", "update", "cross-machine")
"""Every family, in the order the pipeline runs them (cross-machine needs the fingerprint the others make)."""

OK: Final = "ok"
"""Family status: measured; its figures are in `figures`."""
NOT_MEASURED: Final = "not measured"
"""Family status: not requested or not applicable here; `reason` says which. Never counts as a pass."""
FAILED: Final = "failed"
"""Family status: the engine failed at its work; `reason` holds the error."""

StepDone = Callable[[str, int], None]
"""`progress(description, advance)`: a family reports each step done (an advance of 0 only relabels);
`suites._progress.Steps.step` turns it into the one `progress(done, total, label)` protocol."""


@dataclass(frozen=True)
class FamilyResult:
    """The outcome of one family for one engine: what becomes one unit of the run record."""

    family: str
    """Family name (one of FAMILIES)."""
    status: str
    """`ok`, `not measured` or `failed`."""
    reason: str | None = None
    """Why it was not measured or failed; None when ok."""
    figures: dict[str, Any] = field(default_factory=dict)
    """The family's figures (see each family's module for its keys)."""

    @property
    def unit_status(self) -> str:
        """The run-record unit status: ok, skipped (not measured) or failed."""
        return {OK: "ok", NOT_MEASURED: "skipped", FAILED: "failed"}[self.status]

    def to_json(self) -> dict[str, Any]:
        """`{status, reason, figures}`."""
        return {"status": self.status, "reason": self.reason, "figures": self.figures}


@dataclass
class Workspace:
    """One engine's run: its spec, the corpus and queries, a scratch directory, and how to make engines.

    `new_engine()` returns a fresh engine object each call: Rebuild Identity builds every artifact with a
    fresh one, so a per-blob cache inside an engine object cannot make two builds agree that would not
    agree on two machines.
    """

    spec: str
    """The engine spec string as given."""
    corpus: Corpus
    """The corpus at the measured revision."""
    queries: list[str]
    """The queries, in order."""
    k: int
    """How many results each query asks for."""
    scratch: Path
    """A directory for builds, deleted when the run ends."""
    factory: Callable[[str], Any]
    """Spec string -> engine object (the registry's get_engine unless a caller injects one)."""
    progress: StepDone = lambda description, advance: None
    """Step callback."""
    _counter: int = field(default=0, init=False)
    _engines: list[Any] = field(default_factory=list, init=False)

    def new_engine(self) -> Any:
        """A fresh engine object for the spec; closed by close()."""
        engine = self.factory(self.spec)
        self._engines.append(engine)
        return engine

    def new_dir(self, label: str) -> Path:
        """A fresh, empty directory under the scratch directory."""
        self._counter += 1
        path = self.scratch / f"{self._counter:03d}-{label}"
        path.mkdir(parents=True)
        return path

    def build(self, engine: Any, corpus: Corpus, label: str, *, cached: bool = False) -> tuple[Path, str]:
        """Build `corpus` with `engine` into a fresh directory; return (directory, artifact hash).

        With no work cache unless `cached`: the base build, every rebuild and drift's noisy build must each
        compute everything themselves, or Rebuild Identity would measure the cache instead of the build."""
        out = self.new_dir(label)
        return out, build_into(engine, corpus, out, cached=cached)

    def rank(self, engine: Any, out_dir: Path, query: str, corpus: Corpus | None = None) -> list[str]:
        """The ranked paths of one query, after checking the answer keeps the engine contract."""
        return [path for path, _ in self.answer(engine, out_dir, query, corpus)]

    def answer(self, engine: Any, out_dir: Path, query: str, corpus: Corpus | None = None) -> Answer:
        """The ranked paths of one query with each hit's spans (empty: the whole file), after checking the
        answer keeps the engine contract."""
        hits = call_engine("query", engine, engine.query, out_dir, query, self.k)
        return [(h.path, tuple(getattr(h, "spans", ()))) for h in checked_hits(hits, corpus or self.corpus,
                                                                               self.k, engine.name)]

    def answer_all(self, engine: Any, out_dir: Path, corpus: Corpus | None = None) -> dict[str, Answer]:
        """Every query's answer once, in order."""
        return {q: self.answer(engine, out_dir, q, corpus) for q in self.queries}

    def rank_all(self, engine: Any, out_dir: Path, corpus: Corpus | None = None) -> dict[str, list[str]]:
        """Every query once, in order."""
        return {q: self.rank(engine, out_dir, q, corpus) for q in self.queries}

    def discard(self, engine: Any) -> None:
        """Close one engine object made here, now (a rebuild's engine is used for one build only)."""
        if engine in self._engines:
            self._engines.remove(engine)
        close_engine(engine)

    def close(self) -> None:
        """Close every engine object made here (external engines end their process)."""
        while self._engines:
            close_engine(self._engines.pop())


def build_into(engine: Any, corpus: Corpus, out: Path, *, cached: bool = False) -> str:
    """Build `corpus` with `engine` into the existing directory `out` and return the artifact hash; with no
    work cache unless `cached` (`Workspace.build`, and Rebuild Identity's units in any process)."""
    with contextlib.nullcontext() if cached else work_cache.disabled():
        call_engine("build", engine, engine.build, corpus, out)
    return artifact_hash_of_dir(out, getattr(engine, "artifact_file", None))


def close_engine(engine: Any) -> None:
    """Call the engine's optional close(); a failure to close never hides the run's results."""
    close = getattr(engine, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


def remove_dir(path: Path) -> None:
    """Delete a build directory no longer needed (large repositories: R builds would fill a disk)."""
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def scratch_dir(root: Path) -> Iterator[Path]:
    """A directory removed on exit, however the block ends."""
    root.mkdir(parents=True, exist_ok=True)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def mean(values: Sequence[float]) -> float:
    """Exact-as-floats mean (math.fsum), so a threshold is compared with the true mean, not a rounded one."""
    import math

    return math.fsum(values) / len(values)
