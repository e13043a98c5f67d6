"""The determinism suite's options: one typed object the CLI fills and the run record stores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxgauge._io import read_data
from ctxgauge.errors import UserError
from ctxgauge.executors import parse_executor

from ._noise import NOISE_KINDS
from ._work import FAMILIES

__all__ = ["DEFAULT_FAMILIES", "DeterminismConfig", "load_queries", "parse_list"]

DEFAULT_FAMILIES = FAMILIES
"""Every family runs unless `families` says otherwise (cross-machine is not measured without `against`)."""


def _near(word: str, known) -> str:
    """`did you mean 'rebuild'? ` for a typo (`rebuld`, `Drift`), as engine names get; else nothing."""
    import difflib

    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return f"did you mean {lowered[close[0]]!r}? " if close else ""


@dataclass(frozen=True)
class DeterminismConfig:
    """Everything a determinism run depends on. Mirrors `ctxgauge determinism`'s options."""

    source: Path
    """A directory, or a git repository (read at `rev`)."""
    rev: str | None = None
    """Revision of a git source (default HEAD); an error for a plain directory."""
    engines: tuple[str, ...] = ("bm25",)
    """Engine spec strings, each measured on its own."""
    queries: tuple[str, ...] | None = None
    """The queries; None derives them from the corpus (recent commit subjects, cleaned as replay does)."""
    query_count: int = 10
    """How many queries to derive when `queries` is None."""
    rebuilds: int = 3
    """R, the cold builds Rebuild Identity compares (at least 2: one build is no evidence)."""
    trials: int = 5
    """T, the trials per query of Query Stability (at least 2)."""
    k: int = 10
    """How many results each query asks for."""
    families: tuple[str, ...] = DEFAULT_FAMILIES
    """Families to run; the others are reported as not measured."""
    update_from: str | None = None
    """Revision A of Update Identity; default the revision 10 first-parent commits back, or the oldest."""
    against: tuple[Path, ...] = ()
    """Fingerprints written on other machines, for Cross-Machine Identity (CTL 4)."""
    noise: tuple[str, ...] = ("prose",)
    """Noise kinds for Drift Under Noise (prose, near-duplicate, large)."""
    noise_dir: str | None = None
    """Corpus directory for prose and large noise; default the directory with the most files."""
    corpus_name: str | None = None
    """Name of the corpus in fingerprints; default the source's base name."""
    out: Path | None = None
    """Run directory; default ctxgauge-runs/determinism-<time>-<id>."""
    fingerprint_dir: Path | None = None
    """Where to write `<engine>.fingerprint.json` besides the run directory's `fingerprints/`."""
    resume: bool = False
    """Continue an unfinished run in `out`, skipping the families already recorded."""
    executor: str = "local"
    """Where Rebuild Identity's builds 2..R run: `local` (this process, one after another) or `local:N` (N
    processes: N - 1 workers make them while this one makes the base build and the other families). Not a
    figure's input: the record is the same either way."""

    def validate(self) -> None:
        """Raise UserError for options that cannot give evidence (one rebuild, one trial) or are unknown."""
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise UserError(f"unknown family {unknown[0]!r} ({_near(unknown[0], FAMILIES)}known: "
                            f"{', '.join(FAMILIES)})")
        if not self.families:
            raise UserError("--families names no family")
        bad = [n for n in self.noise if n not in NOISE_KINDS]
        if bad:
            raise UserError(f"unknown noise kind {bad[0]!r} ({_near(bad[0], NOISE_KINDS)}known: "
                            f"{', '.join(NOISE_KINDS)})")
        if "drift" in self.families and not self.noise:
            raise UserError("the drift family needs at least one --noise kind")
        if not self.engines:
            raise UserError("no engine to measure (give --engine)")
        # Whether or not their family runs: a value that is never right is a typo, and it is recorded in the plan.
        if self.rebuilds < 2:
            raise UserError("--rebuilds must be at least 2: one build cannot disagree with itself")
        if self.trials < 2:
            raise UserError("--trials must be at least 2: one trial cannot disagree with itself")
        if self.k < 1:
            raise UserError("-k must be at least 1")
        if self.query_count < 1:
            raise UserError("the number of derived queries must be at least 1")
        if self.queries is not None:
            _check_queries(list(self.queries), "queries")
        if parse_executor(self.executor)[0] != "local":
            raise UserError(f"--executor {self.executor}: determinism builds and queries on this machine "
                            "(its queries read the build directories); use local or local:N")


def parse_list(text: str | Sequence[str] | None, default: Sequence[str]) -> tuple[str, ...]:
    """`"rebuild,query"` or a repeated option -> ("rebuild", "query"); None -> default."""
    if text is None:
        return tuple(default)
    items = [text] if isinstance(text, str) else list(text)
    out: list[str] = []
    for item in items:
        out.extend(part.strip() for part in item.split(",") if part.strip())
    return tuple(dict.fromkeys(out))


def _check_queries(queries: list[object], where: str) -> list[str]:
    if not queries:
        raise UserError(f"{where}: the query list is empty")
    seen: set[str] = set()
    for q in queries:
        if not isinstance(q, str) or not q.strip():
            raise UserError(f"{where}: every query must be a non-empty string, got {q!r}")
        if q in seen:
            # Fingerprints key results by query text: a repeat would silently collapse into one entry.
            raise UserError(f"{where}: query {q!r} is listed twice")
        seen.add(q)
    return [str(q) for q in queries]


def load_queries(path: str | Path) -> tuple[str, ...]:
    """A JSON list of query strings, as ContextBenchmark's `queries.json`; UserError for anything else."""
    p = Path(path)
    data = read_data(p, "queries", fmt="json", expect=list, shape="a JSON list of strings")
    return tuple(_check_queries(data, f"queries {p}"))
