"""fusion: lexical, structural and historical evidence added up, the strongest built-in engine.

Sub-engines, each built into `out_dir/<name>/`: `bm25` (content and path), `graph` (path and tree-sitter
definition names, spread over imports; also the definitions table) and `history` (the repository's own
ancestry). `fusion.json` holds the fusion's parameters, the corpus paths, the packages each manifest
declares and those each lockfile holds. A query reads the request once (`_request`) and scores every file

    score(f) =  bm25    * lex(f)        BM25 over content + path, / its max
              + graph   * graph(f)      graph's score, / its max
              + vote    * vote(f)       earlier commits with similar subjects vote for their files, / max
              + vote_rare * rare(f)     the same votes divided by sqrt(the file's changes in the window),
                                        / max: a file changed by most commits is everyone's neighbour
              + prior   * prior(f)      recency and frequency of change in the ancestry, / max
              + cochange* co(f)         co-change with the top `seeds` files of the stages above, / max
              + mention * named(f)      a path or dotted module the request names (1, or 1/n of n matches)
              + define  * defines(f)    a file defining a class or function the request names (1/n)
              + literal * quoted(f)     a message the request quotes (an error, a warning, a message
                                        id) that a string literal of f holds (1/n of n files; `_literals`)
              + title   * title(f)      long requests only: BM25 over the request's first line (an
                                        issue's title says what is wrong in few words), / its max
              + frame   * frame(f)      a stack-trace frame of the request in f, the innermost project
                                        frame of its trace 1, each file further out .7 times (`_frames`)
              + call    * call(f)       f defines what a function the request names (or a frame runs)
                                        calls: one call deeper than `define` (`_calls`), / max
              + rule    * rule(f)       dependency requests: the manifest declaring the named package (1)
                                        and its lockfile (0.9); a package only a lockfile holds: that
                                        lockfile (1) and its manifest (.5); no package named ("update
                                        dependencies", an advisory id): the shallowest lockfiles and their
                                        manifests (.5); runtime requests: the version pin file (1)

The sum is then multiplied by `tests` for test files and by `generated` for generated or vendored files
(bundles, source maps, snapshots, lockfiles, changelogs: nobody edits them for a request by hand; a file
the rule names is exempt, so a lockfile the request asks for is not pushed down), by `docs` for prose, by
`ci` for CI configuration (`.github/` workflows and templates: they change with many commits, so history
votes for them, and name every tool) and by `manifests` for manifests (package.json names every
dependency: its words match many code requests). A subject that asks for a kind by word ("docs: ...",
"ci: cache the toolchain", `_request.ASKED_WORDS`) keeps that kind's files unmultiplied; translation
files (`locales`, `_text.locales`) likewise when the subject is about translations or names a language, and a
subject naming a language by code or (beside "translation", "locale") by name mentions its locale files.

A request of more than `long_words` words (an issue text, a stack trace) uses the `long_*` twin of every
weight and multiplier: its named paths and definitions say more, its many words make the lexical and
history stages noisier. Subjects and issue texts are tuned apart, each on its own weights.

An environment listing in a request (a `pip list`, `pip freeze` or `show_versions()` dump: at least
three lines of one package and its version, `_request.without_environment`) is taken out before any
component reads it: its hundreds of package names matched every manifest, CI file and changelog, and
buried the file an issue is about (whether a request is long is still read from all of it).

A dependency request's package words are taken out of the lexical request (`shell-quote` must not pull in
a quote-templates controller); if nothing is left the request is used whole. Components are computed
over the top `depth` files of each sub-engine (the prior and the rule over every file); ties are broken
by path (`rank`); sums run in a fixed order, so a query gives the same bits every time.

Weights: chosen by `benchmarks/quality_tune.py` on the TUNE half of `benchmarks/quality_split.json` only;
how, and every session's figures, are in `docs/tuning-journal.md` (kept out of the source, which is the
engine's identity). No weight names a repository, commit or case.
`benchmarks/quality.py` gives the figures on the report half, which tuning never read.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Collection, Sequence

from ctxgauge._io import canonical_json, write_text_atomic
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine, files_of
import ctxgauge.engines.fusion._calls as cl
import ctxgauge.engines.fusion._frames as fr
import ctxgauge.engines.fusion._literals as lit
import ctxgauge.engines._text.path_kinds as pk
import ctxgauge.engines.fusion._request as rq
from ctxgauge.engines._text.locales import locale_files

ARTIFACT = "fusion.json"
FORMAT = "ctxgauge-fusion/3"
COMPONENTS = ("bm25", "graph", "vote", "vote_rare", "prior", "cochange", "mention", "define", "rule", "literal",
              "title", "frame", "call")


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {p: s / top for p, s in scores.items()} if top > 0 else {}


LONG_WEIGHTS = ("bm25", "graph", "vote", "vote_rare", "prior", "cochange", "mention", "define", "rule", "literal",
                "title", "frame", "call", "tests", "generated", "docs", "ci", "locales", "manifests")
"""Every weight has a `long_` twin, so the weights of subjects and of issue texts are tuned apart."""


def is_long(text: str, words: int) -> bool:
    """Whether a request is long (an issue text, a stack trace) rather than a one-line subject."""
    return len(text.split()) > words


def fuse(comp: dict[str, dict[str, float]], weights: dict, exclude: Sequence[str] = (),
         long: bool = False, asked: Collection[str] = ()) -> dict[str, float]:
    """sum over components of weight * score, then times `tests` for test files, `generated` for generated
    or vendored files, `docs` for prose, `ci` for CI configuration and `manifests` for manifests
    (`_text.path_kinds.path_kind`); a generated file or manifest the `rule` component names keeps its sum (the
    lockfile a dependency request asks for), and so does a file of a kind a short request `asked` for by
    word (`_request.asked_kinds`). A long request reads every weight from its `long_<name>` twin where one
    is given. Components are added in COMPONENTS order and files in path order, so the sum is the same bits
    every time."""
    total: dict[str, float] = {}
    for name in COMPONENTS:
        wt = float(weights.get(f"long_{name}", weights.get(name, 0.0)) if long else weights.get(name, 0.0))
        if name in exclude or not wt:
            continue
        for f, s in sorted(comp.get(name, {}).items()):
            total[f] = total.get(f, 0.0) + wt * s

    def weight(name: str) -> float:
        return float(weights.get(f"long_{name}", weights.get(name, 1.0)) if long else weights.get(name, 1.0))

    factor = {"test": weight("tests"), "generated": weight("generated"), "docs": weight("docs"),
              "ci": weight("ci"), "locale": weight("locales"), "manifest": weight("manifests")}
    for kind in () if long else asked:
        factor.pop(kind, None)
    ruled = comp.get("rule", {}) if "rule" not in exclude else {}
    out = {}
    for f, s in total.items():
        kind = pk.path_kind(f)
        # A lockfile or manifest the dependency rule names is the answer, not noise: no multiplier.
        out[f] = s if ruled.get(f) and kind in RULE_KINDS else s * factor.get(kind, 1.0)
    return out


RARE_HUB = 0.5
"""`vote_rare`: a file's votes divided by its change count in the window to this power (`history._model`)."""


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    return name.rsplit(".", 1)[-1] if "." in name else ""


RULE_KINDS = frozenset(("generated", "manifest"))
"""Path kinds whose multiplier does not apply to a file the `rule` component names."""


class FusionEngine(SpanEngine, Engine):
    """Weighted sum of normalised bm25, graph and history evidence plus request rules (module docstring)."""

    kind = "fusion"
    # Chosen by benchmarks/quality_tune.py on the tune half only (see the module docstring).
    defaults = {
        "bm25": 1.0, "graph": 0.5, "vote": 0.75, "vote_rare": 0.0, "prior": 0.05, "cochange": 0.3, "mention": 4.0,
        "define": 0.25, "rule": 2.0, "literal": 0.0, "title": 0.0, "frame": 0.0, "call": 0.0,
        "tests": 0.3,  # multiplier on test files (requests mostly ask for the code under test)
        "generated": 0.3,  # multiplier on generated or vendored files (dist/, *.min.js, lockfiles, ...)
        "docs": 0.85,  # multiplier on prose (Markdown, reStructuredText, plain text)
        "manifests": 0.85,  # multiplier on manifests the dependency rule does not name (package.json, ...)
        "ci": 0.85,  # multiplier on CI configuration (.github/ workflows and templates, .gitlab-ci.yml, ...)
        "locales": 0.3,  # multiplier on translation files (locales/*.json, i18n/, *.po) a subject does not ask for
        # Requests over `long_words` words (issue texts, stack traces) use these weights instead.
        "long_words": 40,
        "long_bm25": 1.0, "long_graph": 0.0, "long_vote": 1.5, "long_vote_rare": 0.0, "long_prior": 0.2,
        "long_cochange": 0.1, "long_mention": 2.0, "long_define": 0.5, "long_rule": 2.0, "long_literal": 2.0,
        "long_title": 2.0, "long_tests": 0.3, "long_generated": 0.3, "long_docs": 0.3, "long_ci": 1.0,
        "long_locales": 0.3, "long_manifests": 1.0, "long_frame": 3.0, "long_call": 0.25,
        "depth": 100,  # files asked of each sub-engine
        "seeds": 5,  # top files whose co-changes are lifted
        "window": 3000,  # commits of the ancestry the history reads
        **SPAN_PARAMS,
    }
    libraries: tuple[str, ...] = ()
    artifact_file = ARTIFACT

    def __init__(self, **params: Any):
        super().__init__(**params)
        from ctxgauge.engines.bm25._engine import BM25Engine
        from ctxgauge.engines.graph import GraphEngine
        from ctxgauge.engines.history._engine import HistoryEngine

        self.subs: dict[str, Any] = {"bm25": BM25Engine()}
        p = self.params
        if any(p[n] or p[f"long_{n}"] for n in ("graph", "define", "call")):  # graph supplies the definitions
            self.subs["graph"] = GraphEngine()
        if any(p[n] or p[f"long_{n}"] for n in ("vote", "prior", "cochange")):
            self.subs["history"] = HistoryEngine(window=int(p["window"]))
        for sub in self.subs.values():
            sub.span_store = False  # the parts rank files only: fusion's own out dir keeps the text for spans
        self._manifest_cache: dict[tuple[str, str], frozenset[str]] = {}  # (blob, file name) -> package names
        self._literal_cache: dict[tuple[str, str], list[str]] = {}  # (blob, file suffix) -> literal fragments
        self._calls = cl.CallCache()  # (grammar, blob) -> each definition's callees
        if self._wants_calls() and "graph" in self.subs:  # callees read from graph's parse, not a second one
            self.subs["graph"].on_tree = self._calls.take_tree
        self._loaded: tuple[tuple, dict] | None = None
        self._defs: tuple[Any, dict] | None = None

    def available(self) -> tuple[bool, str | None]:
        for name, eng in self.subs.items():
            ok, why = eng.available()
            if not ok:
                return False, f"sub-engine {name}: {why}"
        return True, None

    def identity(self) -> dict:
        """Own source and parameters, and every sub-engine's identity."""
        own = super().identity()
        h = hashlib.sha256(own["id"].encode() + b"\0")
        h.update(json.dumps({n: e.identity() for n, e in sorted(self.subs.items())}, sort_keys=True).encode())
        return {"id": "sha256:" + h.hexdigest(), "source": "content-hash"}

    def code_modules(self) -> tuple[str, ...]:
        """Its own modules (which import every sub-engine's) and each sub-engine's."""
        return tuple(sorted(set(super().code_modules()).union(*(e.code_modules() for e in self.subs.values()))))

    # -- build --------------------------------------------------------------------------------------------
    def _write(self, corpus: Corpus, out_dir: Path) -> None:
        manifests = [f for f in corpus.files if pk.is_manifest(f.path)]
        lockfiles = [f for f in corpus.files if pk.is_lockfile(f.path)]
        # Keyed by blob and path: the same bytes read as a manifest and as a lockfile give different names.
        todo = [f for f in manifests + lockfiles if (f.blob, pk.base_name(f.path)) not in self._manifest_cache]
        for f, data in corpus.iter_bytes(todo):
            read = rq.locked_packages if pk.is_lockfile(f.path) else rq.declared_packages
            self._manifest_cache[(f.blob, pk.base_name(f.path))] = read(f.path, data.decode("utf-8", "replace"))
        code = [f for f in corpus.files if lit.is_code(f.path)] if self._wants_literals() else []
        # Keyed by blob and suffix: whether backticks quote a string depends on the language.
        todo = [f for f in code if (f.blob, _suffix(f.path)) not in self._literal_cache]
        for f, data in corpus.iter_bytes(todo):
            self._literal_cache[(f.blob, _suffix(f.path))] = sorted(lit.fragments(f.path, data.decode("utf-8", "replace")))
        calls = self._calls.read(corpus, self._definitions(out_dir)) if self._wants_calls() else {}
        artifact = {
            "format": FORMAT,
            "params": self.params,
            "paths": corpus.paths,
            "manifests": {f.path: sorted(self._manifest_cache[(f.blob, pk.base_name(f.path))]) for f in manifests},
            "lockfiles": [f.path for f in lockfiles],
            "locked": {f.path: sorted(self._manifest_cache[(f.blob, pk.base_name(f.path))]) for f in lockfiles},
            "literals": {f.path: self._literal_cache[(f.blob, _suffix(f.path))] for f in code
                         if self._literal_cache[(f.blob, _suffix(f.path))]},
            "calls": calls,
        }
        write_text_atomic(out_dir / ARTIFACT, canonical_json(artifact) + "\n")

    def _wants_calls(self) -> bool:
        return bool(self.params["call"] or self.params["long_call"])

    def _wants_literals(self) -> bool:
        return bool(self.params["literal"] or self.params["long_literal"])

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        out_dir = Path(out_dir)
        stats = {}
        for name, eng in self.subs.items():
            (out_dir / name).mkdir(parents=True, exist_ok=True)
            stats[name] = eng.build(corpus, out_dir / name)
        self._write(corpus, out_dir)
        self.hold(out_dir, corpus)
        return {"engines": stats}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        out_dir = Path(out_dir)
        stats = {}
        for name, eng in self.subs.items():
            (out_dir / name).mkdir(parents=True, exist_ok=True)
            stats[name] = eng.update(out_dir / name, corpus, changes)
        self._write(corpus, out_dir)
        self.hold(out_dir, corpus)
        return {"engines": stats}

    # -- query --------------------------------------------------------------------------------------------
    def _artifact(self, out_dir: Path) -> dict:
        path = out_dir / ARTIFACT
        st = os.stat(path)
        key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
        if self._loaded is None or self._loaded[0] != key:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            data["_index"] = rq.PathIndex(data["paths"])
            data["_declared"] = {m: frozenset(p) for m, p in data["manifests"].items()}
            data["_locked"] = {m: frozenset(p) for m, p in data["locked"].items()}
            data["_literals"] = lit.LiteralIndex(data.get("literals", {}))
            data["_calls"] = cl.calls_by_name(data.get("calls", {}))
            self._loaded = (key, data)
        return self._loaded[1]

    def _definitions(self, out_dir: Path) -> dict[str, list[str]]:
        """identifier (lowercased; every dotted segment) -> files defining it, from graph's artifact."""
        defined = self.subs["graph"].definitions(out_dir / "graph")
        if self._defs is None or self._defs[0] is not defined:  # the same object until the artifact changes
            table: dict[str, set[str]] = {}
            for path, names in defined.items():
                for d in names:
                    for seg in {d.lower(), *d.lower().split(".")}:
                        table.setdefault(seg, set()).add(path)
            self._defs = (defined, {k: sorted(v) for k, v in table.items()})
        return self._defs[1]

    def components(self, out_dir: Path, text: str) -> dict[str, dict[str, float]]:
        """Each component's normalised scores for one request (the terms of the module docstring's sum)."""
        out_dir = Path(out_dir)
        p = self.params
        depth = int(p["depth"])
        art = self._artifact(out_dir)
        long = is_long(text, int(p["long_words"]))
        text = rq.without_environment(text)  # whether a request is long is still read from all of it
        words = rq.package_words(text)
        rule, packages = rq.dependency_files(words, art["_declared"], art["lockfiles"], art["_locked"])
        rule.update({f: max(rule.get(f, 0.0), w) for f, w in rq.runtime_files(words, art["paths"]).items()})
        lexical_text = text
        if packages:
            kept = [w for w in words if w.lower() not in packages]
            lexical_text = " ".join(kept) if kept else text
        comp: dict[str, dict[str, float]] = {name: {} for name in COMPONENTS}
        comp["rule"] = rule
        comp["bm25"] = _normalised({h.path: h.score for h in files_of(self.subs["bm25"], out_dir / "bm25", lexical_text, depth)})
        if "graph" in self.subs:
            if p["graph"] or p["long_graph"]:
                comp["graph"] = _normalised({h.path: h.score for h in
                                             files_of(self.subs["graph"], out_dir / "graph", lexical_text, depth)})
            if p["define"] or p["long_define"]:
                comp["define"] = _normalised(rq.defining_files(rq.mentioned_identifiers(text),
                                                               self._definitions(out_dir)))
        comp["mention"] = rq.mentioned_files(text, art["_index"])
        if not long:  # "improve french translation" names locales/fr.*
            for f, w in sorted(locale_files(text, art["paths"]).items()):
                comp["mention"][f] = max(comp["mention"].get(f, 0.0), w)
        if self._wants_literals():
            comp["literal"] = _normalised(art["_literals"].match(text))
        comp["frame"] = _normalised(fr.frame_scores(text, art["_index"]))
        if self._wants_calls():
            named = rq.mentioned_identifiers(text) + fr.frame_names(text, art["_index"])
            comp["call"] = _normalised(cl.callee_files(named, art["calls"], art["_calls"], self._definitions(out_dir)))
        # A subject is its own first line: the title component is bm25's again, so only long requests get one.
        if (p["title"] or p["long_title"]) and long:
            comp["title"] = _normalised({h.path: h.score for h in
                                         files_of(self.subs["bm25"], out_dir / "bm25", rq.title(text), depth)})
        if "history" in self.subs:
            hist = self.subs["history"]
            model = hist.model(out_dir / "history")
            terms = hist.terms(lexical_text)
            # vote_rare is computed even at weight 0 (the same search): benchmarks/quality_tune.py records it.
            vote, rare = model.votes(terms, (0.0, RARE_HUB))
            comp["vote"], comp["vote_rare"] = _normalised(vote), _normalised(rare)
            comp["prior"] = _normalised(model.prior())
            if p["cochange"] or p["long_cochange"]:
                pre = fuse(comp, p, ("vote", "vote_rare", "prior", "cochange"), long, rq.asked_kinds(text))
                top = sorted(pre.items(), key=lambda x: (-x[1], x[0]))[: int(p["seeds"])]
                comp["cochange"] = _normalised(model.cochange(dict(top)))
        return comp

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        if k <= 0:
            return []
        long = is_long(text, int(self.params["long_words"]))
        return rank(fuse(self.components(Path(out_dir), text), self.params, long=long, asked=rq.asked_kinds(text)), k)

    def close(self) -> None:
        for eng in self.subs.values():
            eng.close()
