"""The engine contract check: every built-in engine keeps it; engines that break a rule are caught."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from ctxgauge.engines import check_engine
from ctxgauge.corpus import Corpus
from ctxgauge.engines import Engine, Hit, engine_available, get_engine, rank
from ctxgauge.git import Repo
from ctxgauge.suites._requests import recent_requests


@pytest.fixture(scope="module")
def revisions(sample_repo):
    repo = Repo(sample_repo)
    new = Corpus.from_git(repo, "HEAD")
    old = Corpus.from_git(repo, "HEAD~12")
    yield old, new, recent_requests(new, 6), sample_repo
    repo.close()


def _statuses(report):
    return {c.name: c.status for c in report.checks}


@pytest.mark.parametrize("spec", ["grep", "bm25", "graph", "minilm", "hybrid"])
def test_builtin_engines_keep_the_contract(revisions, spec):
    old, new, queries, path = revisions
    try:
        engine = get_engine(spec)
    except Exception as exc:  # an engine module not written yet, or its extra not installed
        pytest.skip(f"{spec}: {exc}")
    ok, why = engine_available(engine)
    if not ok:
        pytest.skip(why)
    report = check_engine(engine, old, new, queries, k=10, watch=[Path(path)])
    failed = [c for c in report.checks if c.status == "fail"]
    assert not failed, failed
    assert _statuses(report)["update = rebuild"] == "pass"


class _Words(Engine):
    """A tiny honest engine the broken ones below derive from: path-word matching."""

    kind = "words"
    artifact_file = "index.txt"

    def build(self, corpus, out_dir):
        (Path(out_dir) / self.artifact_file).write_text("\n".join(corpus.paths))

    def query(self, out_dir, text, k):
        words = text.lower().split()
        paths = (Path(out_dir) / self.artifact_file).read_text().splitlines()
        return rank({p: float(sum(w in p.lower() for w in words)) for p in paths}, k)


class _TimeStamped(_Words):
    def build(self, corpus, out_dir):
        super().build(corpus, out_dir)
        with open(Path(out_dir) / self.artifact_file, "a") as fh:
            fh.write(f"\n# built {time.time_ns()}")

    def query(self, out_dir, text, k):
        paths = [p for p in (Path(out_dir) / self.artifact_file).read_text().splitlines() if not p.startswith("#")]
        return rank({p: float(sum(w in p.lower() for w in text.lower().split())) for p in paths}, k)


class _RandomTies(_Words):
    def query(self, out_dir, text, k):
        paths = (Path(out_dir) / self.artifact_file).read_text().splitlines()
        random.shuffle(paths)  # unseeded on purpose: all tied, in a new order each call
        return [Hit(p, 1.0) for p in paths[:k]]


class _Litters(_Words):
    def build(self, corpus, out_dir):
        super().build(corpus, out_dir)
        Path("engine-cache.txt").write_text("written to the working directory")


class _Outsider(_Words):
    def query(self, out_dir, text, k):
        return [Hit("../../etc/passwd", 1.0)]


class _PastTheEnd(_Words):
    """Spans beyond the last line of every file it returns."""

    def query(self, out_dir, text, k):
        return [Hit(h.path, h.score, ((1, 10**6),)) for h in super().query(out_dir, text, k)]


class _WanderingSpans(_Words):
    """Stable files, spans that change between calls: not stable (a context is its lines, not its files)."""

    calls = 0

    def query(self, out_dir, text, k):
        _WanderingSpans.calls += 1
        return [Hit(h.path, h.score, ((1, 1),) if _WanderingSpans.calls % 2 else ())
                for h in super().query(out_dir, text, k)]


class _NoIdentity(_Words):
    """Crashes when asked its identity (a command engine echoing its input, `command(cmd="cat")`, did the
    same: `check` then ended with `error: engine failed` and exit 2, without its table)."""

    def identity(self):
        raise RuntimeError("answered JSON that is not an object with a boolean 'ok'")


@pytest.mark.parametrize("cls, breach", [
    (_NoIdentity, "identity"),
    (_TimeStamped, "rebuild identical"),
    (_RandomTies, "query stable"),
    (_Litters, "writes only to out_dir"),
    (_Outsider, "query answers"),
    (_PastTheEnd, "query answers"),
    (_WanderingSpans, "query stable"),
])
def test_breaches_are_reported(revisions, cls, breach):
    old, new, queries, path = revisions
    report = check_engine(cls(), old, new, queries, k=10, watch=[Path(path)])
    assert _statuses(report)[breach] == "fail"
    assert not report.passed
    honest = check_engine(_Words(), old, new, queries, k=10, watch=[Path(path)])
    assert _statuses(honest)[breach] == "pass"


class _HalfEmpty(_Words):
    """Answers only the requests in `answered`; every other request gets an empty list."""

    answered: frozenset[str] = frozenset()

    def query(self, out_dir, text, k):
        return super().query(out_dir, text, k) if text in self.answered else []


def test_the_degenerate_threshold_is_one_number_the_contract_and_determinism_share(revisions):
    from ctxgauge.engines import DEGENERATE_EMPTY_SHARE
    from ctxgauge.suites import determinism

    assert determinism.DEGENERATE_EMPTY_SHARE is DEGENERATE_EMPTY_SHARE
    old, new, _, path = revisions
    stems = [s for s in (p.rsplit("/", 1)[-1].split(".")[0] for p in new.paths) if len(s) >= 3]
    queries = sorted(set(stems))[:4]  # each names a file, so an honest answer is never empty
    for answered, degenerate in ((queries[:2], True), (queries[:3], False)):
        engine = type("E", (_HalfEmpty,), {"answered": frozenset(answered)})()
        report = check_engine(engine, old, new, queries, k=10, watch=[Path(path)])
        # Distinct non-empty answers, so only the empty share can make the determinism flag fire.
        flags = determinism.degenerate_flags({q: ([f"{q}.py"] if q in answered else []) for q in queries})
        share = (len(queries) - len(answered)) / len(queries)
        assert (share >= DEGENERATE_EMPTY_SHARE) is degenerate
        assert (_statuses(report)["non-degenerate"] == "fail") is degenerate
        assert any(f.name == "degenerate" for f in flags) is degenerate


def test_the_contract_names_the_span_rule(revisions):
    old, new, queries, path = revisions
    report = check_engine(_PastTheEnd(), old, new, queries, k=10, watch=[Path(path)])
    detail = {c.name: c.detail for c in report.checks}["query answers"]
    assert "span-range: span 0 (1-1000000) ends past the file's" in detail


class _SameForAll(_Words):
    """One fixed ranking, whatever the request (issue 39: `check` passed it as non-degenerate)."""

    def query(self, out_dir, text, k):
        return super().query(out_dir, self.fixed, k)


def test_one_ranking_for_every_request_is_degenerate(revisions):
    old, new, queries, path = revisions
    stems = sorted({s for s in (p.rsplit("/", 1)[-1].split(".")[0] for p in new.paths) if len(s) >= 3})
    engine = type("E", (_SameForAll,), {"fixed": stems[0]})()
    report = check_engine(engine, old, new, stems[:3], k=10, watch=[Path(path)])
    detail = {c.name: (c.status, c.detail) for c in report.checks}["non-degenerate"]
    assert detail[0] == "fail" and "for every one of 3 requests" in detail[1]
    assert not report.passed
    assert _statuses(check_engine(_Words(), old, new, stems[:3], k=10, watch=[Path(path)]))["non-degenerate"] == "pass"
