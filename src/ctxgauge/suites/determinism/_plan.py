"""Plan a determinism run: the corpus, the queries, the revision to update from, the fingerprints to meet.

Everything that can be wrong with the options is found here, before the first build, and reported as a
UserError; everything that varies per engine (availability, failures) is found later and recorded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ctxgauge.corpus import Corpus, open_corpus
from ctxgauge.engines import canonical_spec, engine_names, get_engine, parse_spec, refuse_own_tree, unknown_engine
from ctxgauge.errors import UserError
from ctxgauge.fingerprints import Fingerprint, read_fingerprint
from ctxgauge.git import Repo
from ctxgauge.suites._requests import recent_requests

from ._config import DeterminismConfig
from ._fingerprint import fingerprint_file_names
from ._noise import NOISE_SEED, noise_directory

__all__ = ["UPDATE_DISTANCE", "Plan", "make_plan"]

UPDATE_DISTANCE = 10
"""Default Update Identity distance: revision A is this many first-parent commits before the measured one."""


@dataclass
class Plan:
    """A validated run: what every engine is measured on."""

    config: DeterminismConfig
    """The options."""
    corpus: Corpus
    """The corpus at the measured revision."""
    queries: list[str]
    """The queries, in order."""
    queries_from: str
    """Where the queries came from (`file queries.json sha256:...` or `recent commit subjects`)."""
    engines: list[str]
    """Engine spec strings, canonical where they parse, each once."""
    old_corpus: Corpus | None = None
    """Revision A of Update Identity; None when the family does not apply."""
    update_why_not: str | None = None
    """Why `old_corpus` is None."""
    against: list[Fingerprint] = field(default_factory=list)
    """Fingerprints from other machines."""
    repo: Repo | None = None
    """The repository read for revision A (closed by close())."""
    fingerprint_names: dict[str, str] = field(default_factory=dict)
    """Spec -> its fingerprint's file name, one per engine (two specs never share one: refused at plan time)."""

    def record_spec(self) -> dict[str, Any]:
        """The run record's `spec`: every option that changes a figure, and no local path (records are shared)."""
        c = self.config
        return {
            "corpus": {"name": self.corpus.name, "kind": self.corpus.kind, "rev": self.corpus.rev,
                       "hash": self.corpus.content_hash()},
            "engines": list(self.engines),
            "queries": list(self.queries),
            "queries_from": self.queries_from,
            "rebuilds": c.rebuilds,
            "trials": c.trials,
            "k": c.k,
            "families": list(c.families),
            "update_from": self.old_corpus.rev if self.old_corpus is not None else None,
            "against": [{"file": fp.path.name if fp.path else None, "sha256": fp.file_sha256} for fp in self.against],
            "noise": list(c.noise),
            "noise_dir": c.noise_dir,
            "noise_seed": NOISE_SEED,
        }

    def close(self) -> None:
        """Close the repository opened for revision A."""
        if self.repo is not None:
            self.repo.close()
            self.repo = None


def _queries(config: DeterminismConfig, corpus: Corpus) -> tuple[list[str], str]:
    if config.queries is not None:
        return list(config.queries), "given"
    queries = recent_requests(corpus, config.query_count)
    if corpus.kind == "git" and corpus.history is not None and queries and not queries[0].startswith("where is "):
        return queries, "recent commit subjects"
    return queries, "file names of the corpus"


def _engines(config: DeterminismConfig, factory: Callable[[str], Any]) -> list[str]:
    specs: list[str] = []
    for spec in config.engines:
        parsed = parse_spec(spec)
        # An unknown name is a typo to mend (exit 2); a known engine that cannot load here is reported as
        # skipped with its reason. A caller-supplied factory knows its own names.
        if factory is get_engine and parsed.name not in engine_names():
            raise UserError(unknown_engine(parsed.name))
        # One system, one name: `bm25(k1=1.2)` (k1's default) is `bm25`, measured once.
        specs.append(str(canonical_spec(parsed) if factory is get_engine else parsed))
        if factory is get_engine and parsed.name in engine_names():
            _refuse_own_tree(parsed)
    return list(dict.fromkeys(specs))


def _refuse_own_tree(spec) -> None:
    try:
        engine = get_engine(spec)
    except UserError:
        return  # cannot load here: reported as skipped by the run
    try:
        refuse_own_tree(engine, "determinism")
    finally:
        close = getattr(engine, "close", None)
        if callable(close):
            close()


def _update_base(config: DeterminismConfig, corpus: Corpus) -> tuple[Repo | None, Corpus | None, str | None]:
    if "update" not in config.families:
        return None, None, "not requested (--families)"
    if corpus.kind != "git":
        if config.update_from is not None:
            raise UserError("--update-from needs a git repository, and the source is a plain directory")
        return None, None, "the source is a plain directory: it has no earlier revision to update from"
    repo = Repo(config.source)
    if config.update_from is not None:
        return repo, Corpus.from_git(repo, config.update_from, max_bytes=corpus.max_bytes, name=corpus.name), None
    chain = repo.run(["rev-list", "--first-parent", f"--max-count={UPDATE_DISTANCE + 1}", str(corpus.rev)]).split()
    if len(chain) < 2:
        repo.close()
        return None, None, f"revision {str(corpus.rev)[:10]} has no parent to update from"
    # REV~10, or the oldest first-parent ancestor when the history is shorter.
    old_rev = chain[min(UPDATE_DISTANCE, len(chain) - 1)]
    return repo, Corpus.from_git(repo, old_rev, max_bytes=corpus.max_bytes, name=corpus.name), None


def _keep_published(config: DeterminismConfig, names: dict[str, str]) -> None:
    """A fingerprint already in --fingerprint-dir (perhaps signed and published) is never replaced by a new
    run: refuse before measuring anything. A resumed run rewrites only the files it wrote itself."""
    if config.fingerprint_dir is None or config.resume:
        return
    for name in names.values():
        target = config.fingerprint_dir / name
        if target.exists():
            raise UserError(f"--fingerprint-dir: {target} already exists (an earlier fingerprint is never "
                            "replaced); move it away or choose another --fingerprint-dir")


def make_plan(config: DeterminismConfig, factory: Callable[[str], Any] = get_engine) -> Plan:
    """Read what the run needs (`config` already validated: `run_determinism` validates it before it opens
    the executor); UserError for anything the user must mend."""
    engines = _engines(config, factory)
    names = fingerprint_file_names(engines)  # two specs sharing a file name: refused before anything runs
    _keep_published(config, names)
    # Held: every build (base, rebuilds, drift's noisy one, update's full rebuild) gets the same bytes, read from
    # the source once. Independence is about the engine (a fresh object, no work cache), not reading git again.
    corpus = open_corpus(config.source, config.rev, name=config.corpus_name).require_files().held()
    if "drift" in config.families and config.noise_dir is not None:
        noise_directory(corpus, config.noise_dir)  # a directory the corpus lacks is a typo: say so now
    queries, source = _queries(config, corpus)
    if source == "given" and config.queries is not None:
        text = "\n".join(config.queries)
        source = f"given, sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"
    against = [read_fingerprint(p) for p in config.against]
    repo, old, why = _update_base(config, corpus)
    return Plan(config=config, corpus=corpus, queries=queries, queries_from=source, engines=engines,
                old_corpus=old, update_why_not=why, against=against, repo=repo, fingerprint_names=names)
