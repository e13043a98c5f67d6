"""The one TREC writer of replay and cases: `run.trec` (and `run-vs.trec` with --vs) and `qrels.txt`."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ctxgauge.results import RetrievalUnit
from ctxgauge.trec import write_qrels, write_run


def write_trec(directory: Path, units: Sequence[RetrievalUnit], engine: str, vs: str | None = None) -> list[Path]:
    """Write the ok units' rankings and labels: query id = unit id (a commit id, a case name; whitespace
    and `%` percent-encoded), relevant = expected files the corpus indexed, so trec_eval's recall equals
    ours. Any-of groups have no TREC form (qrels judge files, not groups): their members are written
    relevant. Returns the files written."""
    ok = [u for u in units if u.ok]
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    qid = {u.id: u.id for u in ok}  # the TREC writer escapes a query id's whitespace, the reader undoes it
    written = [directory / "run.trec", directory / "qrels.txt"]
    write_run(written[0], {qid[u.id]: [h.path for h in u.ranking or []] for u in ok}, engine)
    gaps = {u.id: set(u.coverage_gap or ()) for u in ok}
    write_qrels(written[1], {
        qid[u.id]: list(dict.fromkeys([p for p in u.expected or [] if p not in gaps[u.id]] + u.any_of_members()))
        for u in ok})
    if vs is not None:
        written.append(directory / "run-vs.trec")
        write_run(written[2], {qid[u.id]: [h.path for h in u.vs.ranking] for u in ok if u.vs is not None}, vs)
    return written
