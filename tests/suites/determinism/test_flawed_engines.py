"""Engines with known flaws get the levels and flags the flaws deserve (engines in flaky_engines.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.suites.determinism import DeterminismConfig, grade, evidence_of, run_determinism

pytestmark = pytest.mark.usefixtures("flaky_engines")

R, T, K = 3, 5, 10


def _run(source: Path, out: Path, *engines: str):  # type: ignore[no-untyped-def]
    return run_determinism(DeterminismConfig(source=source, out=out, engines=engines, rebuilds=R, trials=T, k=K))


def test_a_time_stamp_in_the_artifact_gives_ctl2(library_repo: Path, tmp_path: Path) -> None:
    e = _run(library_repo, tmp_path / "run", "stamp").engines["stamp"]
    rebuild = e.families["rebuild"].figures
    assert (rebuild["rebuilds"], rebuild["distinct_hashes"], rebuild["identical"]) == (R, R, False)
    assert rebuild["hashed"] == "artifact file index.json"
    assert e.families["query"].figures["exact_match_rate"] == 1.0
    g = e.grade
    assert g.level == 2
    assert g.reasons == (f"CTL 3 needs identical artifacts; the rebuilds gave {R} distinct hashes",)
    # Update Identity sees the same flaw: the updated artifact is not the fresh build's.
    assert e.families["update"].figures["artifact_identical"] is False
    assert e.families["update"].figures["queries_identical"] == 10


def test_random_tie_breaks_give_ctl0(library_repo: Path, tmp_path: Path) -> None:
    e = _run(library_repo, tmp_path / "run", "shuffle").engines["shuffle"]
    q = e.families["query"].figures
    # Every file is returned (10 files, k=10), so the sets agree and only the order moves.
    assert q["mean_jaccard"] == 1.0
    assert q["exact_match_rate"] < 1.0 and q["mean_kendall_tau"] < 0.9
    assert q["unstable_queries"] == q["queries"]
    g = e.grade
    assert g.level == 0 and g.reasons[0].startswith("CTL 1 needs mean Jaccard@k and tau >= 0.9")
    assert e.families["rebuild"].figures["identical"] is True  # the artifact itself is deterministic
    assert e.flags == []


def test_always_empty_is_flagged_degenerate_and_earns_ctl0(library_repo: Path, tmp_path: Path) -> None:
    e = _run(library_repo, tmp_path / "run", "empty").engines["empty"]
    q = e.families["query"].figures
    # Perfectly repeatable nothing: the reference grades this CTL 3 with drift 0.00.
    assert (q["exact_match_rate"], q["mean_jaccard"], q["mean_kendall_tau"], q["empty_results"]) == (1.0, 1.0, 1.0, 10)
    assert e.drift == {"prose": 0.0}
    unflagged = grade(evidence_of(e.families, []))
    assert unflagged.level == 3
    g = e.grade
    assert g.level == 0 and [f.name for f in g.flags] == ["degenerate"]
    assert "no results for 10 of 10 queries" in g.flags[0].reason
    assert g.reasons[0].startswith("capped at CTL 0 (would be CTL 3): degenerate results")
    out = e.to_json()
    assert (out["level"], out["label"], out["flags"][0]["flag"]) == (0, "CTL 0", "degenerate")


def test_the_same_list_for_every_query_is_flagged(library_repo: Path, tmp_path: Path) -> None:
    e = _run(library_repo, tmp_path / "run", "constant").engines["constant"]
    assert e.grade.level == 0
    assert "the same 3 files" in e.flags[0].reason


def test_an_unavailable_engine_is_skipped_with_its_reason_never_passed(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", "absent", "grep")
    e = result.engines["absent"]
    assert (e.status, e.reason) == ("skipped", "needs the frobnicator library (pip install frobnicator)")
    assert all(f.status == "not measured" and "engine unavailable" in (f.reason or "") for f in e.families.values())
    out = e.to_json()
    assert (out["level"], out["label"], out["fingerprint"]) == (None, "skipped", None)
    assert result.engines["grep"].grade.level == 3  # the others still run


def test_a_crashing_engine_fails_its_units_and_the_run_goes_on(library_repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import flaky_engines  # type: ignore[import-not-found]

    def boom(self, out_dir, text, k):  # type: ignore[no-untyped-def]
        raise RuntimeError("index corrupted")

    monkeypatch.setattr(flaky_engines.ConstantEngine, "query", boom)
    result = _run(library_repo, tmp_path / "run", "constant", "grep")
    e = result.engines["constant"]
    assert e.families["query"].status == "failed" and "index corrupted" in (e.families["query"].reason or "")
    assert e.status == "failed" and e.grade.level is None
    assert result.engines["grep"].grade.level == 3


def test_stable_files_with_unstable_spans_grade_below_ctl3(library_repo: Path, tmp_path: Path) -> None:
    from ctxgauge.fingerprints import compare, read_fingerprint

    e = _run(library_repo, tmp_path / "run", "jitter").engines["jitter"]
    q = e.families["query"].figures
    assert q["exact_match_rate"] == 1.0 and q["mean_jaccard"] == 1.0  # the files never move
    assert q["span_exact_match_rate"] < 1.0 and q["unstable_spans"] > 0
    assert e.families["rebuild"].figures["identical"] is True
    g = e.grade
    assert g.level == 2
    assert g.reasons[0].startswith("CTL 3 needs the same spans in every trial (span EMR 1.0); measured 0.")
    fp = read_fingerprint(tmp_path / "run" / e.fingerprint_record)
    assert set(fp.ctxgauge["spanHashes"]) == set(fp.query_hashes)
    # A second run ranks the same files (queryHashes equal) but hands over other lines somewhere: compare
    # sees it through the span hashes.
    for attempt in range(5):
        e2 = _run(library_repo, tmp_path / f"run{attempt}", "jitter").engines["jitter"]
        fp2 = read_fingerprint(tmp_path / f"run{attempt}" / e2.fingerprint_record)
        assert fp2.query_hashes == fp.query_hashes
        if fp2.ctxgauge["spanHashes"] != fp.ctxgauge["spanHashes"]:
            break
    else:
        pytest.fail("five runs of random spans all agreed")
    c = compare(fp, fp2)
    assert c.verdict.label == "FAIL"
    assert any("handed over different lines (spans)" in r for r in c.reasons)
