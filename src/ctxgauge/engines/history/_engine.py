"""history: files ranked by what the repository's own past says about a request (`_model`).

    score(f) = vote(f) / max(vote) + prior_weight * prior(f) / max(prior)

vote: earlier commits whose subjects resemble the request vote for the files they changed; prior: files
changed recently and often. Both read only the corpus's own ancestry, the `window` newest commits up to and
including its revision (never a later commit, another ref or the reflog). A corpus without history (a plain
directory) gives an empty artifact and empty rankings.

Artifact `history.json` (canonical JSON: the revision, the window's usable commits as subject tokens and
changed-file indices, no time, no absolute path). Extracted commits are cached on the engine object by
revision, so a revision is walked once however many engines or queries ask.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

from ctxgauge._io import canonical_json, write_text_atomic
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine
from ctxgauge.engines.history._model import HistoryModel, extract, from_json, to_json
from ctxgauge.engines._text.tokens import code_tokens
from ctxgauge.errors import UserError

ARTIFACT = "history.json"


class HistoryEngine(SpanEngine, Engine):
    """Subject-similar earlier commits vote for their files, plus a recency/frequency prior."""

    kind = "history"
    defaults = {
        "window": 3000,  # newest commits of the ancestry read (counted in commits, not time)
        "max_files": 30,  # commits changing more files than this are sweeps and vote for nothing
        "neighbours": 20,  # best-matching earlier commits that vote
        "half_life": 300.0,  # age in commits at which a change counts half in the prior
        "prior_weight": 0.1,  # share of the prior in the score
        **SPAN_PARAMS,
    }
    libraries = ("PyStemmer",)
    artifact_file = ARTIFACT

    def __init__(self, **params: Any):
        super().__init__(**params)
        self._stemmer: Any = None
        self._by_rev: dict[tuple, dict] = {}  # (rev, corpus paths hash) -> artifact content
        self._loaded: tuple[tuple, HistoryModel] | None = None

    def available(self) -> tuple[bool, str | None]:
        try:
            import Stemmer  # noqa: F401
        except ImportError:
            return False, "PyStemmer is not installed (pip install PyStemmer)"
        return True, None

    def stem(self, tokens: list[str]) -> list[str]:
        if self._stemmer is None:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("english")
        return self._stemmer.stemWords(tokens)

    def terms(self, text: str) -> list[str]:
        """A request's terms as the subjects are indexed: code tokens, stemmed."""
        return self.stem(code_tokens(text))

    def content(self, corpus: Corpus) -> dict:
        """The artifact's content for `corpus` (cached by revision and file set)."""
        # The file set is part of the key: a derived corpus (an overlay) shares its revision, not its files.
        key = (corpus.rev, corpus.content_hash())
        if key not in self._by_rev:
            window, max_files = int(self.params["window"]), int(self.params["max_files"])
            commits = self._window(corpus, window)
            past = extract(commits, set(corpus.paths), max_files=max_files, stem=self.stem)
            if len(self._by_rev) > 8:  # replay moves forward: old revisions are not asked again
                self._by_rev.pop(next(iter(self._by_rev)))
            self._by_rev[key] = to_json(corpus.rev, window, max_files, past)
        return self._by_rev[key]

    @staticmethod
    def _window(corpus: Corpus, window: int) -> list:
        """The newest `window` commits; in a clone missing old objects (shallow, partial), the longest
        halving of the window git can still read, so the same clone always gives the same window."""
        if corpus.history is None:
            return []
        while window > 0:
            try:
                return corpus.history.commits(limit=window)
            except UserError:
                window //= 2
        return []

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        data = self.content(corpus)
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out_dir / ARTIFACT, canonical_json(data) + "\n")
        self._loaded = None
        self.hold(out_dir, corpus)
        return {"commits": len(data["commits"]), "files": len(data["paths"])}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        # The window moves with the revision; extraction is one bounded `git log`, so a build is the update.
        return self.build(corpus, out_dir)

    def model(self, out_dir: Path) -> HistoryModel:
        """The signals of the artifact in `out_dir` (kept in memory while the file is unchanged)."""
        path = Path(out_dir) / ARTIFACT
        st = os.stat(path)
        stamp = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
        if self._loaded is None or self._loaded[0] != stamp:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            p = self.params
            self._loaded = (stamp, HistoryModel(from_json(data), neighbours=int(p["neighbours"]),
                                                half_life=float(p["half_life"])))
        return self._loaded[1]

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        model = self.model(out_dir)
        vote, prior = model.vote(self.terms(text)), model.prior()
        if not vote:
            return []
        top_v, top_p = max(vote.values()), max(prior.values(), default=0.0) or 1.0
        w = float(self.params["prior_weight"])
        scores = {f: vote.get(f, 0.0) / top_v + w * prior.get(f, 0.0) / top_p for f in vote}
        return rank(scores, k)
