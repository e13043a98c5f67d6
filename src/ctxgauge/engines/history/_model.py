"""What a repository's own past says about a request: the history component any engine may use.

Read only through the git corpus's own view of its past (`Corpus.history`): the `window` newest commits of
the revision's ancestry, the revision itself included (for replay that is the parent of the commit under
test, so the commit under test and everything later are out of reach by construction: no other ref, no
reflog, no `--all`). "Recent" counts commits in git's walk order, never wall-clock time.

Extraction (`extract`, per revision): each commit's subject tokens and the files it changed, mapped to
today's paths through the renames seen (walking newest to oldest) and kept only when the corpus still
holds them. Merges carry no changes; commits touching more than `max_files` files (sweeps, formatting,
vendoring) say nothing about one request and are left out.

Signals (`HistoryModel`), each a path -> score map, 0 where a file has nothing:
- `vote(terms)`: BM25 (k1 1.2, b 0.75) of the request terms against commit subjects; the `neighbours`
  best-matching commits vote for the files they changed, each vote its subject score divided by the
  square root of the commit's file count (a commit changing one file says more about it than a sweep).
  With `hub` > 0 a file's votes are divided by (the commits of the window that changed it) ** hub: a file
  that changes in most commits (a server's central handler, the CI workflow) is among any request's
  neighbours by chance, and its votes say less.
- `prior()`: sum over the commits that changed a file of `0.5 ** (age / half_life)`, age in commits.
- `cochange(seeds)`: for seed files with weights, the share of each seed's recent commits (at most
  `cochange_depth`) that also changed the file, summed over seeds by weight (seeds themselves excluded).

Everything is sorted and summed in a fixed order (math.fsum), so the same revision gives the same bits.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ctxgauge.engines._text.tokens import code_tokens

FORMAT = "ctxgauge-history/1"


@dataclass(frozen=True)
class PastCommit:
    """One usable commit of the window: its subject's tokens and the (today's) paths it changed."""

    terms: tuple[str, ...]
    """Subject tokens (code_tokens, stemmed as the caller's stemmer does)."""
    files: tuple[str, ...]
    """Changed files, renamed to today's paths, present in the corpus, sorted."""
    age: int
    """Position in git's walk from the revision: 0 is the revision itself."""


def extract(commits: Sequence, present: set[str], *, max_files: int, stem=None) -> list[PastCommit]:
    """The window's usable commits (see the module docstring), newest first."""
    alias: dict[str, str] = {}  # a historic path -> the path it has today
    out: list[PastCommit] = []
    for age, c in enumerate(commits):
        files: set[str] = set()
        for ch in c.changes:
            cur = alias.get(ch.path, ch.path)
            if ch.status.startswith("R") and ch.old_path:
                alias[ch.old_path] = cur
            if cur in present:
                files.add(cur)
        if not files or len(c.changes) > max_files:
            continue
        terms = code_tokens(c.subject)
        if stem is not None:
            terms = stem(terms)
        out.append(PastCommit(tuple(terms), tuple(sorted(files)), age))
    return out


class HistoryModel:
    """The signals of one revision's window, computed from its `PastCommit`s (see the module docstring)."""

    def __init__(self, commits: Sequence[PastCommit], *, neighbours: int = 20, half_life: float = 300.0,
                 cochange_depth: int = 30, k1: float = 1.2, b: float = 0.75):
        self.commits = list(commits)
        self.neighbours = neighbours
        self.half_life = half_life
        self.cochange_depth = cochange_depth
        self.k1, self.b = k1, b
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._by_file: dict[str, list[int]] = defaultdict(list)
        lengths = []
        for i, c in enumerate(self.commits):
            counts: dict[str, int] = {}
            for t in c.terms:
                counts[t] = counts.get(t, 0) + 1
            for t in sorted(counts):
                self._postings[t].append((i, counts[t]))
            lengths.append(len(c.terms))
            for f in c.files:
                self._by_file[f].append(i)
        self._lengths = lengths
        self._avg = (math.fsum(lengths) / len(lengths)) if lengths else 0.0
        self._prior: dict[str, float] | None = None

    def similar(self, terms: Iterable[str]) -> list[tuple[int, float]]:
        """The `neighbours` commits whose subjects best match `terms`: (index, BM25 score), best first."""
        n = len(self.commits)
        if not n or self._avg == 0:
            return []
        scores: dict[int, list[float]] = defaultdict(list)
        for t in dict.fromkeys(terms):
            post = self._postings.get(t)
            if not post:
                continue
            idf = math.log(1 + (n - len(post) + 0.5) / (len(post) + 0.5))
            for i, tf in post:
                norm = self.k1 * (1 - self.b + self.b * self._lengths[i] / self._avg)
                scores[i].append(idf * tf / (tf + norm))
        ranked = sorted(((i, math.fsum(v)) for i, v in scores.items()), key=lambda x: (-x[1], x[0]))
        return ranked[: self.neighbours]

    def vote(self, terms: Iterable[str], hub: float = 0.0) -> dict[str, float]:
        """path -> the votes of the commits most similar to `terms` (module docstring), each file's sum
        divided by its change count ** `hub`."""
        return self.votes(terms, (hub,))[0]

    def votes(self, terms: Iterable[str], hubs: Sequence[float]) -> list[dict[str, float]]:
        """`vote(terms, hub)` for each of `hubs`, from one search for the similar commits."""
        parts: dict[str, list[float]] = defaultdict(list)
        for i, s in self.similar(terms):
            c = self.commits[i]
            w = s / math.sqrt(len(c.files))
            for f in c.files:
                parts[f].append(w)
        sums = {f: math.fsum(v) for f, v in sorted(parts.items())}
        return [{f: v / (len(self._by_file[f]) ** hub if hub else 1.0) for f, v in sums.items()} for hub in hubs]

    def prior(self) -> dict[str, float]:
        if self._prior is None:
            decay = math.log(2) / self.half_life if self.half_life > 0 else 0.0
            self._prior = {f: math.fsum(math.exp(-decay * self.commits[i].age) for i in idx)
                           for f, idx in sorted(self._by_file.items())}
        return dict(self._prior)

    def cochange(self, seeds: Mapping[str, float]) -> dict[str, float]:
        parts: dict[str, list[float]] = defaultdict(list)
        for s, weight in sorted(seeds.items()):
            idx = self._by_file.get(s, [])[: self.cochange_depth]
            if not idx or weight <= 0:
                continue
            share = weight / len(idx)
            for i in idx:
                for f in self.commits[i].files:
                    if f not in seeds:
                        parts[f].append(share)
        return {f: math.fsum(v) for f, v in sorted(parts.items())}


def to_json(rev: str | None, window: int, max_files: int, commits: Sequence[PastCommit]) -> dict:
    """The artifact's content: files as indices into one sorted path table, so it stays small."""
    paths = sorted({f for c in commits for f in c.files}, key=lambda p: p.encode("utf-8", "surrogateescape"))
    index = {p: i for i, p in enumerate(paths)}
    return {"format": FORMAT, "rev": rev, "window": window, "max_files": max_files, "paths": paths,
            "commits": [[c.age, list(c.terms), [index[f] for f in c.files]] for c in commits]}


def from_json(data: Mapping) -> list[PastCommit]:
    paths = data["paths"]
    return [PastCommit(tuple(terms), tuple(paths[i] for i in files), age) for age, terms, files in data["commits"]]
