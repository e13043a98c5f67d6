"""The engine contract, checked: what `ctxgauge check ENGINE` runs (a plugin author's first command).

On a corpus with history (the bundled sample by default) it builds twice into fresh directories, queries
each request twice, updates an index built at an older revision to the newer one, and reports every
breach: writes outside the out directory (into the corpus, the working directory or the temporary
directory), artifacts that differ between builds, rankings that differ between calls, paths not in the
corpus, more than k hits, duplicate paths, hits out of order, spans breaking a rule of `engines/_spans.py`
(named in the failure: overlapping, out of range of the file, end before start, more than 50 per hit), an
identity without id or source, and an update whose artifact or rankings differ from a fresh build. A
ranking is stable only when its files and their spans are.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ctxgauge._untrusted import walk_tree
from ctxgauge.corpus import Corpus
from ctxgauge.engines._guards import ask_identity, call_engine, checked_hits
from ctxgauge.engines._registry import engine_available
from ctxgauge.errors import EngineError
from ctxgauge.fingerprints import IDENTITY_SOURCES

DEGENERATE_EMPTY_SHARE = 0.5
"""Results empty for at least this share of the requests are degenerate: identical empty lists show
repeatability, not retrieval. The contract check and the determinism suite's degenerate flag both use it."""


@dataclass
class Check:
    """One rule of the contract: passed, failed (with what was seen) or skipped (with why)."""

    name: str
    status: str = "pass"
    detail: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass
class ContractReport:
    engine: str
    identity: dict | None
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def to_dict(self) -> dict:
        return {"engine": self.engine, "identity": self.identity, "passed": self.passed,
                "checks": [c.to_dict() for c in self.checks]}


def _snapshot(roots: list[Path]) -> dict[str, tuple[int, int]]:
    seen = {}
    for root in roots:
        for dirpath, _, files in walk_tree(root):
            for fn in files:
                p = os.path.join(dirpath, fn)
                with contextlib.suppress(OSError):
                    st = os.lstat(p)
                    seen[p] = (st.st_size, st.st_mtime_ns)
    return seen


@contextlib.contextmanager
def _watched(workdir: Path, tmpdir: Path) -> Iterator[None]:
    """Run with the working directory and TMPDIR moved to watched places, restored afterwards."""
    old_cwd, old_env, old_tempdir = os.getcwd(), os.environ.get("TMPDIR"), tempfile.tempdir
    os.chdir(workdir)
    os.environ["TMPDIR"] = str(tmpdir)
    tempfile.tempdir = str(tmpdir)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        tempfile.tempdir = old_tempdir
        if old_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = old_env


def _answer(hits) -> list[tuple[str, tuple]]:
    """What a stable answer keeps the same: each hit's path and its spans."""
    return [(h.path, tuple(getattr(h, "spans", ()))) for h in hits]


def check_engine(engine, old: Corpus, new: Corpus, queries: list[str], *, k: int = 10,
                 watch: list[Path] = ()) -> ContractReport:
    """Run the contract on `engine`: `old` and `new` are two revisions of one source (for update),
    `watch` are directories the engine must not write to (the corpus source among them)."""
    from ctxgauge.fingerprints import artifact_hash_of_dir

    report = ContractReport(engine=engine.name, identity=None)
    add = report.checks.append
    ok, why = engine_available(engine)
    if not ok:
        add(Check("available", "skip", why or "not available"))
        return report
    add(Check("available"))

    # A failing identity request is a breach to report like any other (a command engine that answers garbage
    # is what `check` is run to see), not an error that ends the check without its table.
    ident, failure = ask_identity(engine)
    report.identity = ident
    if failure is not None:
        add(Check("identity", "fail", str(failure)))
    elif ident is None:
        add(Check("identity", "skip", "undeclared: its fingerprints compare as PASS (UNVERIFIED) at best"))
    elif not isinstance(ident, dict) or not ident.get("id") or ident.get("source") not in IDENTITY_SOURCES:
        add(Check("identity", "fail", f"identity() must return {{id, source in {IDENTITY_SOURCES}}}, got {ident!r}"))
    else:
        add(Check("identity"))

    artifact_file = getattr(engine, "artifact_file", None)
    with tempfile.TemporaryDirectory(prefix="ctxgauge-check-") as tmp:
        base = Path(tmp)
        work, tmpd, outs = base / "cwd", base / "tmp", base / "out"
        for d in (work, tmpd, outs):
            d.mkdir()
        roots = [work, tmpd, *watch]
        before = _snapshot(roots)
        with _watched(work, tmpd):
            # Two fresh builds of the same corpus.
            a, b = outs / "a", outs / "b"
            a.mkdir(), b.mkdir()
            try:
                call_engine("build", engine, engine.build, new, a)
                call_engine("build", engine, engine.build, new, b)
            except EngineError as exc:
                add(Check("build", "fail", str(exc)))
                return report
            add(Check("build"))
            ha, hb = artifact_hash_of_dir(a, artifact_file), artifact_hash_of_dir(b, artifact_file)
            add(Check("rebuild identical", "pass" if ha == hb else "fail",
                      "" if ha == hb else f"two builds gave artifacts {ha[:12]} and {hb[:12]}"))

            # Queries: contract of each answer, and the same answer twice and across builds.
            fresh: dict[str, list[str]] = {}
            breaches, unstable = [], []
            for q in queries:
                try:
                    r1 = checked_hits(call_engine("query", engine, engine.query, a, q, k), new, k, engine.name)
                    r2 = checked_hits(call_engine("query", engine, engine.query, a, q, k), new, k, engine.name)
                    r3 = checked_hits(call_engine("query", engine, engine.query, b, q, k), new, k, engine.name)
                except EngineError as exc:
                    breaches.append(f"{q!r}: {exc}")
                    continue
                fresh[q] = [h.path for h in r1]
                if not (_answer(r1) == _answer(r2) == _answer(r3)):
                    unstable.append(q)
            add(Check("query answers", "fail" if breaches else "pass", "; ".join(breaches[:3])))
            add(Check("query stable", "fail" if unstable else "pass",
                      f"{len(unstable)} of {len(queries)} requests ranked differently on a second call" if unstable else ""))
            empty = sum(1 for v in fresh.values() if not v)
            distinct = {tuple(v) for v in fresh.values()}
            if fresh and empty >= DEGENERATE_EMPTY_SHARE * len(fresh):
                add(Check("non-degenerate", "fail", f"{empty} of {len(fresh)} requests returned nothing"))
            elif len(fresh) >= 2 and len(distinct) == 1 and empty == 0:
                # The determinism suite's second degenerate rule (suites/determinism/_levels.degenerate_flags):
                # one answer for every request is repeatable because it ignores the question.
                add(Check("non-degenerate", "fail", f"the same {len(next(iter(distinct)))} files, in the same "
                          f"order, for every one of {len(fresh)} requests: the answer does not depend on the "
                          "request"))
            else:
                add(Check("non-degenerate"))

            # Update from the older revision must equal a fresh build of the newer one.
            if hasattr(engine, "update"):
                u = outs / "u"
                u.mkdir()
                try:
                    call_engine("build", engine, engine.build, old, u)
                    call_engine("update", engine, engine.update, u, new, old.changes_to(new))
                    hu = artifact_hash_of_dir(u, artifact_file)
                    diff = [q for q in fresh if [h.path for h in engine.query(u, q, k)] != fresh[q]]
                    if hu != ha:
                        add(Check("update = rebuild", "fail", f"updated artifact {hu[:12]} != fresh build {ha[:12]}"))
                    elif diff:
                        add(Check("update = rebuild", "fail", f"{len(diff)} requests ranked differently after update"))
                    else:
                        add(Check("update = rebuild", detail=f"{len(old.changes_to(new))} changed paths"))
                except EngineError as exc:
                    add(Check("update = rebuild", "fail", str(exc)))
            else:
                add(Check("update = rebuild", "skip", "the engine has no update(); replay rebuilds it per commit"))
            # What an engine holds while open may live in the temporary directory (an MCP server serves the
            # corpus written out there); a write that outlives close() is a stray one.
            close = getattr(engine, "close", None)
            if callable(close):
                close()
        after = _snapshot(roots)
        stray = sorted(p for p in after if before.get(p) != after[p])
        add(Check("writes only to out_dir", "fail" if stray else "pass",
                  ", ".join(os.path.relpath(p, base) if p.startswith(str(base)) else p for p in stray[:5])))
    return report
