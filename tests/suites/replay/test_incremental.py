"""Incremental replay equals a full rebuild: on every commit of the sample, the ranking replay got from an
index moved forward by `update` is exactly (paths, scores and spans) the ranking of a fresh engine built from
scratch on that commit's parent."""

from __future__ import annotations

import filecmp
import importlib.util
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import engine_available, get_engine
from ctxgauge.git import Repo
from ctxgauge.suites.replay import ReplayConfig, replay


def _fresh_rankings(repo_path: Path, commits: list[dict], spec: str, depth: int, tmp: Path, role: str) -> None:
    with Repo(repo_path) as repo:
        parents = {c.sha: c.parents[0] for c in repo.log("HEAD") if c.parents}
        for i, c in enumerate(commits):
            engine = get_engine(spec)  # a fresh object: no cache carried over
            out = tmp / f"{spec}-{i}"
            out.mkdir()
            corpus = Corpus.from_git(repo, parents[c["sha"]])
            engine.build(corpus, out)
            fresh = [h.to_dict() for h in engine.query(out, c["request"], depth)]  # spans too: incremental spans
            replayed = c["ranking"] if role == "engine" else c["vs"]["ranking"]
            assert replayed == fresh, f"{spec} at {c['sha'][:10]} ({c['request']!r})"


def test_bm25_and_grep_rankings_equal_a_full_rebuild_on_every_commit(sample_replay, sample_repo, tmp_path):
    commits = [c for c in sample_replay.to_dict()["commits"] if c["status"] == "ok"]
    assert len(commits) >= 50
    _fresh_rankings(sample_repo, commits, "bm25", 100, tmp_path, "engine")
    _fresh_rankings(sample_repo, commits, "grep", 100, tmp_path, "vs")


def test_graph_rankings_equal_a_full_rebuild_on_every_commit(sample_repo, tmp_path):
    if importlib.util.find_spec("ctxgauge.engines.graph") is None:
        pytest.skip("ctxgauge.engines.graph does not exist yet")
    try:
        ok, why = engine_available(get_engine("graph"))
    except Exception as exc:  # an engine still being written may not import
        pytest.skip(f"graph engine does not load: {exc}")
    if not ok:
        pytest.skip(f"graph engine unavailable: {why}")
    result = replay(ReplayConfig(repo=sample_repo, engine="graph", commits=None, out=tmp_path / "run"))
    commits = [c for c in result.to_dict()["commits"] if c["status"] == "ok"]
    assert commits and not [c for c in result.to_dict()["commits"] if c["status"] == "failed"]
    _fresh_rankings(sample_repo, commits, "graph", 100, tmp_path, "engine")


def test_the_bm25_index_replay_writes_is_the_one_bm25s_writes(sample_repo, tmp_path):
    # bm25 derives its index from cached per-blob counts; the files must be exactly what bm25s's own
    # index() and save() write for the same documents.
    bm25s = pytest.importorskip("bm25s")
    engine = get_engine("bm25")
    with Repo(sample_repo) as repo:
        first = Corpus.from_git(repo, "HEAD~30")
        corpus = Corpus.from_git(repo, "HEAD")
        engine.build(first, tmp_path / "ours")   # warm the caches on another corpus, then update
        engine.update(tmp_path / "ours", corpus, first.changes_to(corpus))
        from ctxgauge.engines._text.tokens import code_tokens, path_tokens

        w = engine.params["path_weight"]
        docs = [engine._t.stem(code_tokens(corpus.text(p))) + engine._t.stem(path_tokens(p)) * w for p in corpus.paths]
    vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    theirs = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    theirs.index(([[vocab[t] for t in d] for d in docs], vocab), show_progress=False)
    theirs.save(str(tmp_path / "theirs"), show_progress=False)
    for name in ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json",
                 "params.index.json"):
        assert filecmp.cmp(tmp_path / "ours" / name, tmp_path / "theirs" / name, shallow=False), name


def test_a_bm25_replay_commit_costs_the_change_not_the_repository(sample_repo, tmp_path, monkeypatch):
    # Replay lists each commit from the previous one by the tree diff, and bm25 moves a live index by the
    # changed files: no whole listing after the first, no score matrix derived, no artifact written, and
    # each blob tokenised once. The rankings are the ones a fresh build gives (the tests above).
    import ctxgauge.engines._text.terms as _bm25_terms
    from ctxgauge.engines.bm25._engine import BM25Engine

    listed, tokenised = [], []
    real_from_git, real_counts = Corpus.from_git.__func__, _bm25_terms.Terms.content_counts
    monkeypatch.setattr(Corpus, "from_git", classmethod(lambda cls, *a, **k: listed.append(1) or
                                                         real_from_git(cls, *a, **k)))
    monkeypatch.setattr(_bm25_terms.Terms, "content_counts", lambda self, data: tokenised.append(data) or
                        real_counts(self, data))
    monkeypatch.setattr(BM25Engine, "_matrix", lambda *a: pytest.fail("derived the whole score matrix"))
    monkeypatch.setattr(BM25Engine, "_save", lambda *a: pytest.fail("wrote the artifact"))
    result = replay(ReplayConfig(repo=sample_repo, engine="bm25", commits=None, out=tmp_path / "run"))
    ok = [c for c in result.to_dict()["commits"] if c["status"] == "ok"]
    assert len(ok) >= 50 and not [c for c in result.to_dict()["commits"] if c["status"] == "failed"]
    assert len(listed) == 1  # the first parent; every later one by diff
    assert len(tokenised) == len(set(tokenised))  # every blob once
