"""One retrieval pipeline for replay and cases (issue 35 item 3).

Replay on the bundled sample and cases on the committed SWE-bench-style fixture, run by today's code
through the shared pipeline, equal the records 5d251ae wrote (`tests/records/fixtures/v2/`, made by the
commands of its README) unit for unit and result for result, byte for byte as canonical JSON (timing,
workers, provenance and engine identities aside; issue 37's context fields, listed in `CONTEXT_*`, and the
spans each ranking entry now carries (`_unit_on_purpose`), checked present and then set aside), the results
being the typed `ctxgauge.results` objects
the suite built and wrote (cases on the sample and on a plain directory too);
`ctxgauge cases FILE --executor dask-local:2` equals `--executor local` unit for unit, also when its
client is SIGKILLed mid-run and resumed on a new cluster; and no function of suites/replay or
suites/cases indexes, queries, scores, compares or writes TREC any more.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import ctxgauge
from ctxgauge._io import canonical_json
from ctxgauge.records import comparable_unit, read_run, read_units
from ctxgauge.results import CasesResults, ReplayResults
from ctxgauge.suites.cases import CasesConfig, load_cases, load_swebench, run_cases
from ctxgauge.suites.replay import ReplayConfig, replay

FIXTURES = Path(__file__).parents[1] / "records" / "fixtures"
V2, INPUTS = FIXTURES / "v2", FIXTURES / "v2-inputs"
SUITES = Path(ctxgauge.__file__).parent / "suites"


def _units(run_dir: Path) -> list[dict]:
    return [comparable_unit(u) for u in read_units(run_dir)]


# What issue 37 added on purpose since 5d251ae, and only that (each checked present in full, then dropped):
CONTEXT_UNIT_FIELDS = ("gold_lines", "gold_blocks", "context")
"""An ok unit's gold lines, its gold blocks (when a gold line is in a definition) and its context (micro
pairs, packing per budget, the budget curve)."""
CONTEXT_SPEC_FIELDS = ("budgets", "tokenizer", "gold_lines")
"""The budgets, the tokenizer that counted them and (replay) the gold-line rule."""
CONTEXT_RESULTS_FIELDS = ("budget_curve",)
"""Per engine, line coverage over the area's budgets with intervals."""
RANKING_SPANS = "spans"
"""A ranking entry's spans (written only when the hit has some)."""


def _context_names(spec: dict) -> tuple[set[str], set[str]]:
    from ctxgauge.suites._retrieval import ContextSpec, macro_names, micro_names

    ctx = ContextSpec(tuple(spec["ks"]), tuple(spec["budgets"]))
    return set(macro_names(ctx)), set(micro_names(ctx))


def _without_context_part(part: dict, macro: set[str]) -> dict:
    part = dict(part)
    if part.get("status", "ok") == "ok" and part.get("figures"):
        assert macro <= set(part["figures"]), "every context figure is recorded"
        assert "context" in part
    part["figures"] = {k: v for k, v in part.get("figures", {}).items() if k not in macro}
    for key in CONTEXT_UNIT_FIELDS:
        part.pop(key, None)
    if "ranking" in part:
        part["ranking"] = [{k: v for k, v in h.items() if k != RANKING_SPANS} for h in part["ranking"]]
    if "vs" in part:
        part["vs"] = _without_context_part(part["vs"], macro)
    return part


def _without_context_summary(summary: dict | None, names: set[str], every: bool = True) -> dict | None:
    """`summary` without the context metrics; `every`: all of them are there (a summary holds every metric,
    None where undefined; a comparison only those some unit defines on both sides)."""
    if summary is None:
        return None
    assert names <= set(summary) or not every
    return {k: v for k, v in summary.items() if k not in names}


IDENTITIES = ("engine_identity", "vs_identity")
"""Spec values that follow the engines' code (the identity service), not the records' layout."""


def _on_purpose(results: dict, spec: dict) -> tuple[dict, dict]:
    """Today's results and spec without what changed on purpose since 5d251ae, and only that: replay counts one
    more skip reason, `outside-subtree`, and records the `subtree` it read (issue 39 item 2): zero and none for
    a whole repository."""
    results = json.loads(json.dumps(results))
    if "outside-subtree" in results.get("skipped", {}):
        assert results["skipped"].pop("outside-subtree") == 0
    spec = {k: v for k, v in spec.items() if k not in IDENTITIES}
    if "subtree" in spec:
        assert spec.pop("subtree") in (None, "", ".")
    # Issue 37: context metrics beside every ranking figure (summaries, the comparison), the budget curve.
    if "budgets" in spec:
        macro, micro = _context_names(spec)
        names = macro | micro
        for key in ("summary", "vs_summary", "known_gap_summary"):
            if key in results:
                results[key] = _without_context_summary(results[key], names)
        for kind in results.get("by_kind", {}).values():
            kind["summary"] = _without_context_summary(kind["summary"], names)
        if results.get("comparison"):
            results["comparison"]["metrics"] = _without_context_summary(results["comparison"]["metrics"], names,
                                                                        every=False)
        for key in CONTEXT_RESULTS_FIELDS:
            results.pop(key, None)
        assert spec["tokenizer"]["name"] == "o200k_base"
        for key in CONTEXT_SPEC_FIELDS:
            spec.pop(key, None)
    # A comparison's point means are the suite's own means (math.fsum, `metrics.stats._mean`), where 5d251ae
    # took numpy's pairwise mean: equal but for the last bit, read back at the v2 records' rounding.
    for c in (results.get("comparison") or {}).get("metrics", {}).values():
        for key in ("mean_a", "mean_b", "mean_diff"):
            c[key] = float(f"{c[key]:.15g}")
    return results, spec


def _unit_on_purpose(unit: dict) -> tuple[dict, int]:
    """Today's unit without what changed on purpose since 5d251ae, and only that: built-in engines return spans
    by default (issue 37 item 6), so each ranking entry, the engine's and the `vs` engine's, carries
    `"spans": [[s, e], ...]`, 1-based inclusive pairs, at most 3 (`max_spans`). Returns the unit without
    them and how many entries had any."""
    unit = json.loads(json.dumps(unit))
    with_spans = 0
    for ranking in (unit.get("ranking") or [], (unit.get("vs") or {}).get("ranking") or []):
        for entry in ranking:
            spans = entry.pop("spans", [])  # absent: the whole file (an empty file)
            assert len(spans) <= 3 and all(len(p) == 2 and 1 <= p[0] <= p[1] for p in spans), entry
            with_spans += bool(spans)
    return unit, with_spans


def _assert_equal_records(run_dir: Path, reference: Path, result=None) -> None:
    ours, theirs = read_run(run_dir), read_run(reference)
    assert ours.status == "success"
    if "budgets" in theirs.spec:  # two runs of today's code: equal in full, context included
        assert [canonical_json(u) for u in _units(run_dir)] == [canonical_json(u) for u in _units(reference)]
        assert canonical_json(ours.results) == canonical_json(theirs.results)
        assert canonical_json({k: v for k, v in ours.spec.items() if k not in IDENTITIES}) == \
            canonical_json({k: v for k, v in theirs.spec.items() if k not in IDENTITIES})
        return
    macro = _context_names(ours.spec)[0]
    assert sum(_unit_on_purpose(u)[1] for u in _units(run_dir)) > 0  # built-in engines hand over spans by default
    # Canonical JSON, not ==: 1 == 1.0 in Python, but a record holding one where it held the other differs.
    assert [canonical_json(_without_context_part(u, macro)) for u in _units(run_dir)] == \
        [canonical_json(u) for u in _units(reference)]
    results, spec = _on_purpose(ours.results, ours.spec)
    assert canonical_json(results) == canonical_json(_on_purpose(theirs.results, {})[0])
    assert canonical_json(spec) == canonical_json({k: v for k, v in theirs.spec.items() if k not in IDENTITIES})
    assert ours.headline == theirs.headline
    if result is not None:
        # The suite built the typed results it wrote: the object it returns is the record's `results`.
        assert isinstance(result.results, (ReplayResults, CasesResults))
        assert canonical_json(result.results.to_json()) == canonical_json(ours.results)


@pytest.fixture(scope="module")
def swebench(tmp_path_factory) -> Path:
    """The fixture's working folder as make_fixtures.sh lays it out: swebench.jsonl, repos/acme__{widgets,gadgets}."""
    work = tmp_path_factory.mktemp("v2-inputs")
    (work / "swebench.jsonl").write_bytes((INPUTS / "swebench.jsonl").read_bytes())
    for name in ("widgets", "gadgets"):
        subprocess.run(["git", "-c", "init.defaultBranch=main", "clone", "-q", str(INPUTS / f"{name}.bundle"),
                        str(work / "repos" / f"acme__{name}")], check=True)
    return work


@pytest.mark.parametrize("run, engine, vs", [("replay", "bm25", None), ("replay-vs", "grep", "bm25")])
def test_replay_on_the_sample_equals_the_v2_records(tmp_path, sample_repo, run, engine, vs):
    result = replay(ReplayConfig(repo=sample_repo, engine=engine, vs=vs, ks=(5,), depth=5, commits=4,
                                 out=tmp_path / run))
    _assert_equal_records(result.run_dir, V2 / run, result)


def test_cases_on_the_swebench_fixture_equal_the_v2_records(tmp_path, swebench):
    case_file, _ = load_swebench(swebench / "swebench.jsonl", swebench / "repos")
    result = run_cases(case_file, CasesConfig(engine="grep", vs="bm25", ks=(5,), depth=5, out=tmp_path / "run"))
    _assert_equal_records(result.run_dir, V2 / "cases-swebench", result)
    # The four base commits of two repositories: one index per engine per repository moved between them.
    assert {u["corpus"]["name"] for u in _units(result.run_dir)} == {"acme__widgets", "acme__gadgets"}


@pytest.mark.parametrize("run, cases, corpus, engine, vs", [
    ("cases", "cases.yaml", "shelfd", "bm25", None), ("cases-vs", "cases.yaml", "shelfd", "grep", "bm25"),
    ("cases-dir", "notes-cases.yaml", "notes", "grep", "bm25"),
])
def test_cases_on_the_sample_and_a_directory_equal_the_v2_records(tmp_path, sample_repo, run, cases, corpus,
                                                                 engine, vs):
    # Laid out as make_fixtures.sh does: the case file beside its corpus (the sample as `shelfd`, `notes/`).
    work = tmp_path / "work"
    work.mkdir()
    (work / cases).write_bytes((INPUTS / cases).read_bytes())
    if corpus == "shelfd":
        subprocess.run(["git", "clone", "-q", str(sample_repo), str(work / "shelfd")], check=True)
    else:
        (work / "notes").mkdir()
        for f in (INPUTS / "notes").iterdir():
            (work / "notes" / f.name).write_bytes(f.read_bytes())
    result = run_cases(load_cases(work / cases), CasesConfig(engine=engine, vs=vs, ks=(5,), depth=5,
                                                             out=tmp_path / run))
    _assert_equal_records(result.run_dir, V2 / run, result)


@pytest.mark.parametrize("size", [1, 3])
def test_sliced_cases_equal_the_v2_records(tmp_path, swebench, size):
    case_file, _ = load_swebench(swebench / "swebench.jsonl", swebench / "repos")
    result = run_cases(case_file, CasesConfig(engine="grep", vs="bm25", ks=(5,), depth=5, out=tmp_path / "run",
                                              slice_size=size))
    _assert_equal_records(result.run_dir, V2 / "cases-swebench")


# -- cases --executor, through the CLI -----------------------------------------------------------------------

def _cases(swebench: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "ctxgauge", "cases", "swebench.jsonl", "--repos", "repos", "--engine", "grep",
           "--vs", "bm25", "-k", "5", "--depth", "5", "--out", str(out), *extra]
    scratch = out.parent / "tmp"  # a SIGKILLed run cannot remove its temporary directories
    scratch.mkdir(exist_ok=True)
    return subprocess.run(cmd, cwd=swebench, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(scratch), **(env or {})})


def _workers(run_dir: Path) -> set[str]:
    return {w for u in read_units(run_dir) for w in u.to_json().get("workers", [])}


def test_cases_on_a_dask_local_cluster_equal_local_after_a_sigkill_and_resume(tmp_path, swebench):
    pytest.importorskip("distributed")
    local = _cases(swebench, tmp_path / "local", "--executor", "local")
    assert local.returncode == 0, local.stderr[-2000:]
    assert _workers(tmp_path / "local") == {"local/main"}
    _assert_equal_records(tmp_path / "local", V2 / "cases-swebench")

    dask = _cases(swebench, tmp_path / "dask", "--executor", "dask-local:2")
    assert dask.returncode == 0, dask.stderr[-2000:]
    _assert_equal_records(tmp_path / "dask", tmp_path / "local")
    workers = _workers(tmp_path / "dask")
    assert len(workers) == 2 and all(w.startswith("dask/tcp://") for w in workers)

    # The client killed right after its second unit is written, then resumed on a new cluster.
    killed = _cases(swebench, tmp_path / "killed", "--executor", "dask-local:2",
                    env={"CTXGAUGE_KILL_AT": "write-after/units.jsonl@2"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert read_run(tmp_path / "killed").status == "started"
    assert len(read_units(tmp_path / "killed")) == 2
    resumed = _cases(swebench, tmp_path / "killed", "--executor", "dask-local:2", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    _assert_equal_records(tmp_path / "killed", tmp_path / "local")
    lines = [json.loads(x) for x in (tmp_path / "killed" / "units.jsonl").read_text().splitlines() if x.strip()]
    assert max(Counter(u["id"] for u in lines).values()) == 1, "a unit was recorded twice"


def test_a_bad_executor_is_refused_before_anything_is_written(tmp_path, swebench):
    done = _cases(swebench, tmp_path / "run", "--executor", "local:x")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--executor" in done.stderr and not (tmp_path / "run").exists()


# -- the pipeline exists once --------------------------------------------------------------------------------

# What only the pipeline does: open an engine from its spec, index, query, score, compare, write TREC files.
_PIPELINE_CALLS = {"get_engine", "engine_available", "ask_defer_writes", "call_engine", "checked_hits", "score",
                   "compare", "paired_comparison", "write_run", "write_qrels", "encode_docno", "run_slice"}


def test_no_function_of_replay_or_cases_indexes_queries_scores_compares_or_writes_trec():
    found = []
    for suite in ("replay", "cases"):
        for path in sorted((SUITES / suite).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                    if name in _PIPELINE_CALLS or (isinstance(f, ast.Attribute) and name in ("build", "query")):
                        found.append(f"{path.relative_to(SUITES)}:{node.lineno} {name}")
    assert found == []
