"""The pipeline end to end on a small git repository: families, levels, run record, fingerprints, resume."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ctxgauge.corpus import open_corpus
from ctxgauge.engines import get_engine
from ctxgauge.errors import UserError
from ctxgauge.fingerprints import artifact_hash_of_dir, query_hash, read_fingerprint
from ctxgauge.records import read_run as _read_run, read_units as _read_units
from ctxgauge.suites._requests import recent_requests
from ctxgauge.suites.determinism import FAMILIES, DeterminismConfig, fingerprint_file_name, run_determinism


# These tests check the JSON layout the suite wrote: the typed record and units in their JSON form.
def read_run(run_dir):
    return _read_run(run_dir).to_json()


def read_units(run_dir):
    return [u.to_json() for u in _read_units(run_dir)]


FAST = dict(rebuilds=2, trials=2, k=5)


def _run(source: Path, out: Path, **over: object):  # type: ignore[no-untyped-def]
    return run_determinism(DeterminismConfig(source=source, out=out, **{**FAST, **over}))  # type: ignore[arg-type]


def test_grep_and_bm25_reach_ctl3_with_every_family_measured(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", engines=("grep", "bm25"))
    for name in ("grep", "bm25"):
        e = result.engines[name]
        g = e.grade
        assert (g.level, g.not_measured[0][0]) == (3, 4), g.reasons
        fams = e.families
        assert [f for f in FAMILIES if fams[f].status == "ok"] == ["rebuild", "query", "drift", "update"]
        assert fams["cross-machine"].status == "not measured" and "--against" in fams["cross-machine"].reason
        assert fams["rebuild"].figures["rebuilds"] == 2 and fams["rebuild"].figures["distinct_hashes"] == 1
        q = fams["query"].figures
        assert (q["queries"], q["trials"], q["exact_match_rate"], q["mean_jaccard"], q["mean_kendall_tau"]) == (
            10, 2, 1.0, 1.0, 1.0)
        d = fams["drift"].figures["prose"]
        assert d["drift"] == 1.0 - d["mean_jaccard_vs_base"]
        assert d["noise_file"].startswith("src/loans/")  # the directory with most files
        assert e.flags == []


def test_queries_default_to_recent_cleaned_commit_subjects(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", families=("query",))
    assert result.queries == recent_requests(open_corpus(library_repo), 10)
    assert result.queries[0] == "Explain renewal limits in the guide"
    assert "waive overdue fees for new members" in result.queries  # prefix and (#12) cleaned


def test_update_defaults_to_ten_first_parent_commits_back(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", families=("update", "query"))
    u = result.engines["bm25"].families["update"].figures
    chain = subprocess.run(["git", "rev-list", "--first-parent", "HEAD"], cwd=library_repo, capture_output=True,
                           text=True, check=True).stdout.split()
    assert (u["from_rev"], u["to_rev"]) == (chain[10], chain[0])
    # Ten commits, each modifying one file; three of them touch files touched again later.
    assert u["changes"] == {"modified": len({"src/loans/renewals.py", "src/loans/holds.py", "src/members/accounts.py",
                                              "src/members/cards.py", "src/catalog/search.py", "src/catalog/isbn.py",
                                              "src/notify/email.py", "docs/guide.md", "src/loans/fees.py"})}
    assert u["artifact_identical"] and u["identical"] and u["queries_identical"] == u["queries"] == 10


def test_update_from_an_explicit_revision(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", families=("update",), update_from="HEAD~2")
    u = result.engines["bm25"].families["update"].figures
    assert u["changes"] == {"modified": 2}


def test_plain_directory_marks_update_not_measured(plain_library: Path, tmp_path: Path) -> None:
    result = _run(plain_library, tmp_path / "run", engines=("grep",))
    fam = result.engines["grep"].families["update"]
    assert fam.status == "not measured" and "plain directory" in (fam.reason or "")
    assert result.engines["grep"].grade.level == 3  # update does not enter the level
    with pytest.raises(UserError, match="--update-from needs a git repository"):
        _run(plain_library, tmp_path / "run2", update_from="HEAD~1")


def test_family_not_requested_is_not_measured_and_caps_the_level(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", families=("query",))
    e = result.engines["bm25"]
    assert e.families["rebuild"].reason == "not requested (--families)"
    g = e.grade
    assert g.level == 2 and g.not_measured == ((3, "not requested (--families)"), (4, "not requested (--families)"))
    only_rebuild = _run(library_repo, tmp_path / "run2", families=("rebuild",)).engines["bm25"].grade
    assert only_rebuild.level is None and only_rebuild.label == "not measured"


def test_run_record_has_one_unit_per_engine_and_family(library_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(library_repo, out, engines=("grep", "bm25"))
    record = read_run(out)
    assert record["status"] == "success" and record["suite"] == "determinism"
    units = read_units(out)
    assert sorted(u["id"] for u in units) == sorted(f"{e}/{f}" for e in ("grep", "bm25") for f in FAMILIES)
    assert {u["id"]: u["status"] for u in units}["bm25/cross-machine"] == "skipped"
    query_unit = next(u for u in units if u["id"] == "bm25/query")
    assert query_unit["figures"]["exact_match_rate"] == 1.0 and "seconds" in query_unit["timing"]
    assert set(record["files"]) == {"units.jsonl", "fingerprints/grep.fingerprint.json",
                                    "fingerprints/bm25.fingerprint.json"}
    assert record["results"]["engines"]["bm25"]["fingerprint"] == "fingerprints/bm25.fingerprint.json"
    assert str(library_repo) not in json.dumps(record)  # a record names no local path


def test_an_existing_fingerprint_in_fingerprint_dir_is_never_replaced(library_repo: Path, tmp_path: Path) -> None:
    fps = tmp_path / "fps"
    fps.mkdir()
    published = fps / fingerprint_file_name("bm25")
    published.write_text('{"signed": "by someone"}\n')
    with pytest.raises(UserError, match="already exists"):
        _run(library_repo, tmp_path / "run", engines=("bm25",), fingerprint_dir=fps)
    assert published.read_text() == '{"signed": "by someone"}\n'
    assert not (tmp_path / "run").exists()  # refused before anything was measured or recorded


def test_fingerprint_holds_the_base_build_and_first_trial_rankings(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", engines=("bm25",), fingerprint_dir=tmp_path / "fps")
    e = result.engines["bm25"]
    assert e.fingerprint_path == tmp_path / "fps" / "bm25.fingerprint.json"
    fp = read_fingerprint(e.fingerprint_path)
    assert (tmp_path / "run" / "fingerprints" / "bm25.fingerprint.json").read_bytes() == e.fingerprint_path.read_bytes()
    corpus = open_corpus(library_repo)
    engine = get_engine("bm25")
    out = tmp_path / "independent"
    out.mkdir()
    engine.build(corpus, out)
    assert fp.artifact_hash == artifact_hash_of_dir(out) == e.families["rebuild"].figures["hashes"][0]
    assert fp.query_hashes == {q: query_hash([h.path for h in engine.query(out, q, 5)]) for q in result.queries}
    assert (fp.adapter, fp.k, fp.corpus.name, fp.corpus.hash) == ("bm25", 5, "shelf", corpus.content_hash())
    assert fp.system is not None and fp.system.id == engine.identity()["id"]
    assert fp.ctxgauge["runtime"]["variables"].keys() >= {"OMP_NUM_THREADS", "ATEN_CPU_CAPABILITY", "LC_ALL"}


def test_corpus_name_option_names_the_fingerprint_corpus(library_repo: Path, tmp_path: Path) -> None:
    result = run_determinism(DeterminismConfig(source=library_repo, out=tmp_path / "run", families=("query",),
                                               corpus_name="shelf-lib", **FAST))  # type: ignore[arg-type]
    assert read_fingerprint(result.engines["bm25"].fingerprint_path).corpus.name == "shelf-lib"  # type: ignore[arg-type]


def test_engine_names_are_file_safe() -> None:
    assert fingerprint_file_name("bm25(k1=2.0,b=0.5)") == "bm25_k1_2.0_b_0.5_.fingerprint.json"


def test_two_engines_whose_names_become_one_file_name_are_refused(library_repo: Path, tmp_path: Path) -> None:
    # `e a` and `e:a` both sanitise to `e_a`: the second engine's fingerprint would overwrite the first's.
    fps = tmp_path / "fps"
    engines = ('command(cmd="e a")', 'command(cmd="e:a")')
    with pytest.raises(UserError, match=r"both become the file name 'command_cmd__e_a__'"):
        _run(library_repo, tmp_path / "run", engines=engines, fingerprint_dir=fps)
    assert not (tmp_path / "run").exists() and not fps.exists()  # refused before anything ran or was written


@pytest.mark.parametrize("over, message", [
    ({"rebuilds": 1}, "--rebuilds must be at least 2"),
    ({"trials": 1}, "--trials must be at least 2"),
    ({"families": ("rebuild", "speed")}, "unknown family 'speed'"),
    ({"noise": ("static",)}, "unknown noise kind 'static'"),
    # A typo gets the near name, as engine names do (`determinism --families rebuld` on logrus had none).
    ({"families": ("rebuld",)}, r"unknown family 'rebuld' \(did you mean 'rebuild'\? known: rebuild, "),
    ({"noise": ("Prose",)}, r"unknown noise kind 'Prose' \(did you mean 'prose'\? known: "),
    ({"engines": ("nope",)}, "unknown engine 'nope'"),
    ({"queries": ("a b", "a b")}, "listed twice"),
])
def test_options_that_give_no_evidence_are_refused(library_repo: Path, tmp_path: Path, over: dict, message: str) -> None:
    with pytest.raises(UserError, match=message):
        _run(library_repo, tmp_path / "run", **over)


def test_given_queries_are_used_in_order(library_repo: Path, tmp_path: Path) -> None:
    result = _run(library_repo, tmp_path / "run", families=("query",), queries=("isbn codes", "overdue fee"))
    assert result.queries == ["isbn codes", "overdue fee"]
    per_query = result.engines["bm25"].families["query"].figures["per_query"]
    assert [q["query"] for q in per_query] == ["isbn codes", "overdue fee"]


def test_an_interrupted_run_resumes_at_the_first_family_not_recorded(library_repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxgauge.suites.determinism import _run as pipeline

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    out = tmp_path / "run"
    monkeypatch.setattr(pipeline, "run_drift", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run(library_repo, out, engines=("grep",))
    assert read_run(out)["status"] == "cancelled"
    assert sorted(u["id"] for u in read_units(out)) == ["grep/query", "grep/rebuild"]
    before = {u["id"]: u for u in read_units(out)}
    monkeypatch.undo()

    result = _run(library_repo, out, engines=("grep",), resume=True)
    assert read_run(out)["status"] == "success"
    after = {u["id"]: u for u in read_units(out)}
    assert sorted(after) == sorted(f"grep/{f}" for f in FAMILIES)
    assert after["grep/query"] == before["grep/query"]  # recorded once, reused
    assert result.engines["grep"].grade.level == 3
    with pytest.raises(UserError, match="already finished"):
        _run(library_repo, out, engines=("grep",), resume=True)


@pytest.mark.parametrize("identity", [{}, {"id": "x", "source": "vibes"}, {"source": "declared"}, None])
def test_a_malformed_identity_is_written_as_undeclared(library_repo: Path, tmp_path: Path, identity: object) -> None:
    from ctxgauge.engines import get_engine as registry

    def factory(spec: str):  # type: ignore[no-untyped-def]
        engine = registry(spec)
        engine.identity = lambda: identity  # type: ignore[method-assign]
        return engine

    result = run_determinism(DeterminismConfig(source=library_repo, out=tmp_path / "run", families=("query",),
                                               **FAST), factory=factory)  # type: ignore[arg-type]
    assert read_fingerprint(result.engines["bm25"].fingerprint_path).system is None  # type: ignore[arg-type]


def test_independent_builds_read_and_write_no_work_cache(library_repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The base build, every rebuild and drift's noisy build compute everything themselves: the cache
    # directory stays empty, even though the environment asks for one; the record says so.
    monkeypatch.setenv("CTXGAUGE_CACHE", str(tmp_path / "cache"))
    result = _run(library_repo, tmp_path / "run", engines=("bm25", "graph"), families=("rebuild", "query", "drift"))
    assert not (tmp_path / "cache").exists() or not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))
    for name in ("bm25", "graph"):
        fams = result.engines[name].families
        assert fams["rebuild"].figures["work_cache"] == "off"
        assert fams["drift"].figures["prose"]["work_cache"] == "off"
    # the update path may use the cache, and still equals the fresh (uncached) build
    result = _run(library_repo, tmp_path / "run2", engines=("bm25",), families=("update",))
    u = result.engines["bm25"].families["update"].figures
    assert u["work_cache"] == {"update": "on", "rebuild": "off"} and u["identical"]
    assert any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


def test_the_sample_gives_the_same_figures_with_the_corpus_read_for_every_build(
        sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Holding the corpus for every build (read from git once) changes no figure: the run whose builds each
    # read git again gives the same fingerprint and the same figures of every family.
    import ctxgauge.corpus._corpus as corpora

    families = ("rebuild", "query", "drift", "update")
    fast = _run(sample_repo, tmp_path / "fast", engines=("bm25",), families=families, rebuilds=3, trials=3, k=10)
    monkeypatch.setattr(corpora, "HOLD_LIMIT", 0)
    slow = _run(sample_repo, tmp_path / "slow", engines=("bm25",), families=families, rebuilds=3, trials=3, k=10)
    a, b = fast.engines["bm25"], slow.engines["bm25"]
    fa, fb = read_fingerprint(a.fingerprint_path), read_fingerprint(b.fingerprint_path)  # type: ignore[arg-type]
    assert (fa.artifact_hash, fa.query_hashes) == (fb.artifact_hash, fb.query_hashes)
    assert {f: r.to_json() for f, r in a.families.items()} == {f: r.to_json() for f, r in b.families.items()}
    assert a.families["rebuild"].figures["identical"] and a.families["update"].figures["identical"]
