"""An engine's context as ContextBench predictions (`ctxgauge runs contextbench RUN -o FILE`).

ContextBench's evaluator (`python -m contextbench.evaluate --gold G --pred FILE`) reads a prediction record
as `{instance_id, traj_data: {pred_steps, pred_files, pred_spans}}` (`parsers.trajectory.parse_trajectory`):

    {"instance_id": "acme__shop-12",
     "traj_data": {"pred_steps": [{"files": ["a.py", "b.py"], "spans": {"a.py": [{"start": 4, "end": 9}], ...}}],
                   "pred_files": ["a.py", "b.py"],
                   "pred_spans": {"a.py": [{"start": 4, "end": 9}], "b.py": [{"start": 1, "end": 30}]}}}

One record per unit of a finished replay or cases run that scored (status ok), in unit id order: the unit's
id is the instance id (a ContextBench case's name is its instance id). The context is the top k files of
the unit's ranking (`-k`, default 10, as `line_coverage@10` reads it), each with its spans in the engine's
order; a hit without spans hands over the whole file, written as the one span `1..N` with N counted at the
unit's corpus revision (ContextBench scores lines only through spans: a file listed without one would count
at file level only). Counting needs the repository: `--repos DIR`, the clone itself or a folder holding it
under the corpus's name; an empty file has no span. There is one step, the final context, so
ContextBench's trajectory figures (AUC, redundancy) are those of that single step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ctxgauge.errors import UserError
from ctxgauge.metrics._lines import line_count
from ctxgauge.results import CasesUnit, ReplayUnit, RetrievalUnit, classes

DEFAULT_K = 10
"""Files of each ranking written when `-k` is not given."""
# Names ContextBench's `load_pred` reads as some agent's own trajectory format instead of prediction records.
_RESERVED_ENDINGS = ("output.jsonl", ".checkpoints.jsonl", ".traj.json", "_traj.json", ".context.json")


@dataclass(frozen=True)
class Predictions:
    """The records written and what was left out."""

    records: list[dict]
    """One prediction record per exported unit, in unit id order."""
    left_out: dict[str, int]
    """Units not exported, by status (`failed`, `skipped`)."""
    k: int
    """Files of each ranking written."""


def record(instance_id: str, hits: Iterable[tuple[str, tuple[tuple[int, int], ...]]]) -> dict:
    """One ContextBench prediction record from `(path, spans)` in rank order (spans already whole-file
    expanded): one step holding the final context, `pred_files` in rank order, `pred_spans` by file."""
    files: list[str] = []
    spans: dict[str, list[dict[str, int]]] = {}
    for path, ss in hits:
        files.append(path)
        if ss:
            spans[path] = [{"start": s, "end": e} for s, e in ss]
    step = {"files": list(files), "spans": {p: [dict(x) for x in v] for p, v in spans.items()}}
    return {"instance_id": instance_id,
            "traj_data": {"pred_steps": [step], "pred_files": files, "pred_spans": spans}}


class _LineCounts:
    """Line counts of files at a revision, read from a clone under `--repos` (each tree read once)."""

    def __init__(self, repos: Path | None):
        self.repos = repos
        self._trees: dict[tuple[str, str], dict[str, str]] = {}
        self._repos: dict[str, Any] = {}

    def clone(self, name: str) -> Path:
        assert self.repos is not None
        for c in (self.repos / name, self.repos):
            if (c / ".git").exists():
                return c
        raise UserError(f"--repos {self.repos}: no clone of corpus {name!r} there (looked for {self.repos / name} "
                        "and the folder itself)")

    def count(self, name: str, rev: str, path: str, unit: str) -> int:
        from ctxgauge.git import Repo

        if self.repos is None:
            raise UserError(f"unit {unit}: {path} is handed over whole; writing it as a line span needs its "
                            "line count: give --repos DIR (the clone, or a folder holding it)")
        key = (name, rev)
        if key not in self._trees:
            clone = self.clone(name)
            repo = self._repos.setdefault(str(clone), Repo(clone))
            self._trees[key] = {e.path: e.oid for e in repo.tree(repo.resolve(rev)) if e.type == "blob"}
        oid = self._trees[key].get(path)
        if oid is None:
            raise UserError(f"unit {unit}: {path} is not in {name} at {rev[:12]}; is --repos the clone the run "
                            "measured?")
        clone = self.clone(name)
        data = self._repos[str(clone)].read_blob(oid)
        if data is None:
            raise UserError(f"unit {unit}: {path} at {rev[:12]}: the blob is missing from the clone")
        return line_count(data)


def _corpus(unit: RetrievalUnit) -> tuple[str, str]:
    """(corpus name, revision) of a unit: cases record `corpus: {name, rev}`, replay the parent commit."""
    corpus = unit.corpus if isinstance(unit, CasesUnit) else None
    rev = unit.parent if isinstance(unit, ReplayUnit) else corpus.rev if corpus is not None else None
    return (corpus.name if corpus is not None else ""), str(rev or "")


def predictions(run_dir: str | Path, *, k: int = DEFAULT_K, repos: str | Path | None = None) -> Predictions:
    """ContextBench prediction records of a finished replay or cases run (see the module docstring)."""
    from ctxgauge.report import read_checked

    if k < 1:
        raise UserError(f"-k {k}: write at least one file per ranking (k >= 1)")
    ref = read_checked(run_dir)
    suite = classes(ref.suite)
    if suite is None or not issubclass(suite.unit, RetrievalUnit):  # replay and cases: units with rankings
        raise UserError(f"{run_dir}: a {ref.suite} run has no rankings to export; give a replay or cases run")
    if not ref.finished:
        raise UserError(f"{run_dir}: the run did not finish (status {ref.status}); finish it with --resume first")
    counts = _LineCounts(Path(repos) if repos is not None else None)
    records, left_out = [], {}
    for unit in sorted(ref.units(), key=lambda u: u.id.encode()):
        if unit.status != "ok":
            left_out[unit.status] = left_out.get(unit.status, 0) + 1
            continue
        name, rev = _corpus(unit)
        hits = []
        for h in (unit.ranking or [])[:k]:
            spans = tuple((int(s), int(e)) for s, e in h.spans)
            if not spans:
                n = counts.count(name, rev, h.path, unit.id)
                spans = ((1, n),) if n else ()
            hits.append((h.path, spans))
        records.append(record(unit.id, hits))
    return Predictions(records, dict(sorted(left_out.items())), k)


def check_name(out: Path) -> None:
    """A predictions file is JSON lines (`.jsonl`) or a JSON list (`.json`), and not named as ContextBench
    names an agent's own trajectory files (it would read it as one)."""
    name = out.name
    if not name.endswith((".jsonl", ".json")):
        raise UserError(f"--out {out}: name a .jsonl file (JSON lines) or a .json file (a JSON list); "
                        "ContextBench's evaluator reads those")
    for ending in _RESERVED_ENDINGS:
        if name.endswith(ending):
            raise UserError(f"--out {out}: ContextBench reads a file named *{ending} as an agent's trajectory, "
                            "not as predictions; choose another name (e.g. predictions.jsonl)")


def render(records: list[dict], out: Path) -> str:
    """The file's text: one record a line for `.jsonl`, a JSON list for `.json`."""
    if out.name.endswith(".jsonl"):
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return json.dumps(records, ensure_ascii=False, indent=1) + "\n"


def write_predictions(run_dir: str | Path, out: str | Path, *, k: int = DEFAULT_K,
                      repos: str | Path | None = None, force: bool = False) -> Predictions:
    """Write the run's predictions to `out` under the one output rule (`_output.check_output_target`: a file
    already there is replaced only with `force`, since a JSON file carries no generator mark; the run
    itself is never written over)."""
    from ctxgauge._io import write_text_atomic
    from ctxgauge._output import check_output_target

    out = Path(out)
    check_name(out)
    check_output_target(out, option="--out", inputs=[run_dir], force=force)
    done = predictions(run_dir, k=k, repos=repos)
    write_text_atomic(out, render(done.records, out))
    return done
