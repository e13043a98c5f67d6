"""The fingerprint a determinism run writes per engine, and where it goes.

The file is ContextBenchmark's format 2 (ctxgauge.fingerprints.make_fingerprint): the base build's
artifact hash and each query's base ranking, hashed (`queryHashes`, files only, so ContextBenchmark's tool
reads it), and under our namespace `spanHashes`: each query's base answer with the lines of each hit
(`fingerprints.span_hash`), which `compare` checks beside the files. Under our `ctxgauge` namespace it also records how
the engine's id was computed (`identity_scheme`, `ctxgauge.cache.IDENTITY_SCHEME`), the runtime settings
that can move floating-point results on one machine (thread counts, OpenBLAS core type, torch's CPU
capability, locale) and the level this run reached: two runs that differ in those settings are
two honest data points, and their files differ in those bytes, so compare() does not refuse them as copies.
No path and no time is recorded (a fingerprint is published; time lives in the run record).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ctxgauge._io import safe_file_names
from ctxgauge.cache import IDENTITY_SCHEME
from ctxgauge.corpus import Corpus
from ctxgauge.fingerprints import (IDENTITY_SOURCES, SPAN_HASHES, Fingerprint, make_fingerprint, span_hash,
                                   write_fingerprint)

__all__ = ["FINGERPRINT_DIR", "RUNTIME_VARIABLES", "build_fingerprint", "fingerprint_file_name",
           "fingerprint_file_names", "runtime_info", "save_fingerprint"]

FINGERPRINT_DIR: Final = "fingerprints"
"""Folder of the run directory holding `<engine>.fingerprint.json`."""

RUNTIME_VARIABLES: Final = (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY",
    "LC_ALL", "LANG",
)
"""Environment variables recorded under `ctxgauge.runtime`: each can change results a second machine gets."""


def runtime_info() -> dict[str, Any]:
    """`{variables: {name: value or null}, cpus}`: the settings of this process that a second machine varies."""
    return {
        "variables": {name: os.environ.get(name) for name in RUNTIME_VARIABLES},
        "cpus": os.cpu_count(),
    }


RUN_NONCE = "fingerprint_nonce"
"""The run record's `context` key holding 16 random hex digits drawn once when the run starts (a resumed run
keeps them): with the run directory's name, the run id every fingerprint of the run records."""


def new_run_nonce() -> str:
    """16 random hex digits (`RUN_NONCE`): two machines running with the same `--out` name still name two runs."""
    return secrets.token_hex(8)


def fingerprint_run_id(record: Any) -> str:
    """The run id a fingerprint records as `ctxgauge.runId`: `<run directory name>-<nonce>`. A run recorded
    before the nonce existed has none; one is drawn then (its fingerprints are written once)."""
    nonce = (record.context or {}).get(RUN_NONCE)
    if not isinstance(nonce, str) or not nonce:
        nonce = new_run_nonce()
        record.context[RUN_NONCE] = nonce
    return f"{record.run_id}-{nonce}"


def fingerprint_file_names(engines: Sequence[str]) -> dict[str, str]:
    """`{spec: <engine>.fingerprint.json}`, each spec string made safe for every file system by the one
    safe-name rule (`bm25(k1=2.0)` -> `bm25_k1_2.0_`). Two specs that come out alike (`command(cmd="e a")`
    and `command(cmd="e:a")`) are refused with one line: one engine's fingerprint must never overwrite
    another's."""
    return {spec: f"{name}.fingerprint.json" for spec, name in safe_file_names(engines, "engine spec").items()}


def fingerprint_file_name(engine: str) -> str:
    """The file name of one engine's fingerprint (see `fingerprint_file_names`)."""
    return fingerprint_file_names([engine])[engine]


def build_fingerprint(engine: str, identity: Mapping[str, Any] | None, corpus: Corpus, k: int, artifact_hash: str,
                      rankings: Mapping[str, Sequence[str]], queries: Sequence[str],
                      extra: Mapping[str, Any],
                      answers: Mapping[str, Sequence[tuple[str, Sequence[Sequence[int]]]]] | None = None
                      ) -> Fingerprint:
    """The fingerprint of one engine's run, queries in the run's order; `answers` (each query's paths with
    their spans) give `ctxgauge.spanHashes`, written for every query (a query without an answer hashes its
    ranking with no spans).

    An identity without a string id or with a source outside ContextBenchmark's vocabulary is written as
    undeclared (`system: null`): a malformed identity must not crash the run after every family measured,
    and a comparison with it is then honestly unverified.
    """
    system = None
    if isinstance(identity, Mapping) and isinstance(identity.get("id"), str) and identity["id"] \
            and identity.get("source") in IDENTITY_SOURCES:
        system = {key: identity[key] for key in ("id", "source", "note") if key in identity}
        if not isinstance(system.get("note", ""), str):
            system.pop("note")
    return make_fingerprint(
        engine, system, corpus.name, corpus.content_hash(), k, artifact_hash,
        {q: list(rankings.get(q, [])) for q in queries},
        extra={"identity_scheme": IDENTITY_SCHEME, "runtime": runtime_info(), **extra,
               **({SPAN_HASHES: {q: span_hash(answers[q] if q in answers else
                                             [(p, ()) for p in rankings.get(q, [])]) for q in queries}}
                  if answers is not None else {})},
    )


def save_fingerprint(fp: Fingerprint, name: str, run_dir: Path, fingerprint_dir: Path | None) -> tuple[str, Path]:
    """Write `fp` as `name` (the plan's `fingerprint_names` entry of its spec) into the run directory and, if
    given, copy it to `fingerprint_dir`.

    Returns (path relative to the run directory, for the record; the path to show the user).
    """
    recorded = write_fingerprint(fp, run_dir / FINGERPRINT_DIR / name)
    shown = recorded
    if fingerprint_dir is not None:
        fingerprint_dir.mkdir(parents=True, exist_ok=True)
        shown = fingerprint_dir / name
        if shown.resolve() != recorded.resolve():  # --fingerprint-dir may name the run's own folder
            shutil.copyfile(recorded, shown)
    return f"{FINGERPRINT_DIR}/{name}", shown
