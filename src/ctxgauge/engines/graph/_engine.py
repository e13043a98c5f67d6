"""graph: tree-sitter imports and definitions; lexical seeds spread over the import graph.

Build. Every file in Python, JavaScript, TypeScript, Go, Java or Rust is parsed with its tree-sitter
grammar into raw imports and top-level definitions (`_parse`); imports are resolved to corpus files
(`_resolve`), giving directed edges importer -> imported. Each file gets two lexical fields: `names`, its
path tokens repeated `path_weight` times plus the split tokens of its definition names (`Store.getUser` ->
store, get, user, getuser; files in other languages, Markdown, YAML, JSON ..., have no definitions), and
`content`, the tokens of its whole text (the same tokens bm25 indexes).

Query. With request terms `q` (code_tokens, Snowball-stemmed when `stem`):
  lex_i   = BM25(q, names_i) + content_weight * BM25(q, content_i)   (k1, b; each field length
            normalised within code and text files separately), times `text_weight` for text files
  seed_i  = lex_i / sum(lex)
  ppr     = personalised PageRank with restart distribution `seed` and continuation `damping`, over the
            edges importer -> imported with weight `forward` and imported -> importer with weight
            `backward` (a file that matches pulls in what it uses and what uses it), each node's
            out-weights normalised to 1; a node without edges restarts with all its mass; at most
            `iterations` steps, fewer once the L1 change of a step is below `tolerance`
  hub_i   = ppr_i / (1 + in-degree_i) ** degree_exponent   (identity at the default 0)
  score_i = (1 - graph_weight) * lex_i / max(lex) + graph_weight * hub_i / max(hub)
Files scoring 0 are dropped; ties are broken by path (`rank`). Sums go through math.fsum and scatter-adds
through np.bincount, so a query gives the same bits on every run and machine.

Defaults: chosen on the TUNE half of benchmarks/quality_split.json only; the grids and figures are in
`docs/tuning-journal.md`.

Artifact `graph.json` (canonical JSON, sorted keys, no time, no absolute path): per file its path, blob,
language, definitions, raw imports, resolved imports and both fields' lengths; the edges as index pairs;
each field's postings in compressed-column form (`_rank.postings`); the build summary; and a fingerprint
of the parser (extraction source and grammar versions). Parse results and content counts are cached per
blob on the engine object (parses are also read back by `update` from an existing artifact with the same
parser fingerprint, and shared through the work cache), so an update parses and tokenises only new blobs;
resolution and the fields are then derived again from the whole file set, which leaves the artifact
byte-identical to a fresh build of the new corpus. The artifact a build writes is also kept in memory for
queries (what reading it back gives), so a replay step does not parse its own JSON again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import ctxgauge.cache as work_cache
from ctxgauge._io import canonical_json, write_text_atomic
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine
from ctxgauge.engines._spec import Param
from ctxgauge.engines._text.terms import WordTerms, count_terms
from ctxgauge.engines._text.tokens import code_tokens, path_tokens

FORMAT = "ctxgauge-graph/2"
PARSER_MODULES = ("ctxgauge.engines.graph._parse", "ctxgauge.engines.graph._definitions")
"""The modules whose source decides what a file parses to: the parse stage's identity and graph.json's
parser id hash them and what they import."""
LANGUAGES = ("python", "javascript", "typescript", "go", "java", "rust")


class GraphEngine(SpanEngine, Engine):
    """Lexical matching on paths and definition names and, weighted apart, file content, spread along
    resolved imports by personalised PageRank (see the module docstring for the exact score)."""

    kind = "graph"
    defaults = {
        "k1": Param(1.2, ge=0),  # BM25 term-frequency saturation
        "b": Param(0.9, ge=0, le=1),  # BM25 length normalisation
        "path_weight": Param(2, ge=0),  # times a file's path tokens count in its names field
        "content_weight": Param(1.0, ge=0),  # weight of the content field's BM25 beside the names field's
        "text_weight": Param(1.5, ge=0),  # multiplier on the lexical score of files without a grammar
        "damping": Param(0.5, ge=0, le=1),  # probability of following an edge instead of restarting at the seeds
        "forward": Param(1.0, ge=0),  # weight of importer -> imported
        "backward": Param(1.0, ge=0),  # weight of imported -> importer
        "iterations": Param(50, ge=1),  # most PageRank steps
        "tolerance": Param(1e-10, gt=0),  # stop once a step changes the scores by less than this (L1)
        "graph_weight": Param(0.2, ge=0, le=1),  # share of the final score taken from PageRank
        "degree_exponent": Param(0.0, ge=0),  # PageRank divided by (1 + in-degree) ** this before mixing
        "stem": True,  # Snowball (English) stemming of every token, request and documents alike
        **SPAN_PARAMS,  # spans: the definitions of each ranked file the request reaches (`units`)
    }
    libraries = ("tree-sitter", "tree-sitter-python", "tree-sitter-javascript", "tree-sitter-typescript",
                 "tree-sitter-go", "tree-sitter-java", "tree-sitter-rust", "numpy", "PyStemmer")
    artifact_file = "graph.json"

    def __init__(self, **params: Any):
        super().__init__(**params)
        self._parser: Any = None
        self._parsed: dict[tuple[str, str], Any] = {}  # (grammar, blob) -> Parsed
        self._def_tokens: dict[tuple[str, str], Counter] = {}  # (grammar, blob) -> definition token counts
        self._path_docs: dict[str, Counter] = {}  # path -> its weighted path tokens
        self._content: dict[str, tuple] = {}  # blob -> (term ids, counts) of its content tokens (`_content_counts`)
        self._word_terms = WordTerms()  # word -> the term ids of its tokens as indexed
        self._terms: list[str] = []  # term id -> term (ids in first-seen order, private to this object)
        self._term_id: dict[str, int] = {}
        self._manifests: dict[str, str] = {}  # blob -> text of a go.mod / Cargo.toml / package.json
        self._resolver: tuple[tuple, Any] | None = None  # (path set and manifest blobs, Resolver)
        self._loaded: tuple[tuple, dict] | None = None  # ((path, inode, mtime, size), artifact) last queried
        self._stemmer: Any = None
        self._parser_hash: str | None = None
        self.on_tree: Callable[[str, str, Any], None] | None = None
        """Called with (grammar, blob, root node) for each file this object parses with tree-sitter (not for
        parses read from the work cache), so an engine built on this one (fusion's call reader) reads the
        same tree instead of parsing the file again."""

    def _tokens(self, tokens: list[str]) -> list[str]:
        """Tokens as indexed and searched: stemmed when `stem` is set."""
        if not self.params["stem"]:
            return tokens
        if self._stemmer is None:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("english")
        return self._stemmer.stemWords(tokens)

    def available(self) -> tuple[bool, str | None]:
        try:
            import numpy  # noqa: F401
            import tree_sitter  # noqa: F401
            import tree_sitter_go, tree_sitter_java, tree_sitter_javascript  # noqa: F401, E401
            import tree_sitter_python, tree_sitter_rust, tree_sitter_typescript  # noqa: F401, E401
            if self.params["stem"]:
                import Stemmer  # noqa: F401
        except ImportError as exc:
            dist = "PyStemmer" if exc.name == "Stemmer" else (exc.name or "").replace("_", "-")
            return False, f"{exc.name} is not installed (pip install {dist})"
        return True, None

    # -- build ------------------------------------------------------------------------------------------
    def _read(self, corpus: Corpus) -> None:
        """Parse, tokenise (every file's content) and read manifests for the blobs not cached yet, in one
        pass over the corpus."""
        from ctxgauge.engines.graph._parse import Parsed, SourceParser, grammar_of
        from ctxgauge.engines.graph._resolve import is_manifest

        todo = {}
        for f in corpus.files:
            grammar = grammar_of(f.path)
            if grammar is not None and (grammar, f.blob) not in self._parsed or f.blob not in self._content \
                    or is_manifest(f.path) and f.blob not in self._manifests:
                todo.setdefault(f.path, f)
        if not todo:
            return
        stage = self._parse_stage()
        if stage is not None:  # parses from the work cache (the content is read from the file in any case)
            for f in todo.values():
                grammar = grammar_of(f.path)
                if grammar is None or (grammar, f.blob) in self._parsed:
                    continue
                payload = stage.get(hashlib.sha256(f"{grammar}\0{f.blob}".encode()).hexdigest())
                if payload is not None:
                    imports, definitions = json.loads(payload)
                    self._parsed[(grammar, f.blob)] = Parsed(tuple(imports), tuple(definitions))
        if self._parser is None:
            self._parser = SourceParser()
        for f, data in corpus.iter_bytes(list(todo.values())):
            grammar = grammar_of(f.path)
            if grammar is not None:
                if (grammar, f.blob) not in self._parsed:
                    parsed = self._parsed[(grammar, f.blob)] = self._parser.parse(grammar, data) \
                        if self.on_tree is None else \
                        self._parser.parse(grammar, data, on_tree=partial(self.on_tree, grammar, f.blob))
                    if stage is not None:
                        stage.put(hashlib.sha256(f"{grammar}\0{f.blob}".encode()).hexdigest(),
                                  json.dumps([list(parsed.imports), list(parsed.definitions)],
                                             ensure_ascii=False).encode())
            if f.blob not in self._content:
                self._content[f.blob] = self._content_counts(data)
            if is_manifest(f.path):
                self._manifests[f.blob] = data.decode("utf-8", "replace")

    def _content_counts(self, data: bytes) -> tuple:
        """`Counter(self._tokens(code_tokens(data.decode("utf-8", "replace"))))` as (term ids, sorted; their
        counts): bm25's `count_terms` over this object's own vocabulary."""
        ids, counts, _ = count_terms([data], self._word_terms, self._term_id, self._terms, self._tokens)[0]
        return ids, counts

    def _parse_stage(self):
        """The work cache's stage for one blob's parse under one grammar (None when the cache is off)."""
        store = work_cache.current()
        if store is None:
            return None
        return store.stage("graph.parse", work_cache.stage_identity(
            PARSER_MODULES, {"format": 1},
            [d for d in self.libraries if d.startswith("tree-sitter")]))

    def _parser_id(self) -> str:
        """The code identity (`ctxgauge.cache.code_identity`) of the extraction modules (`PARSER_MODULES` and
        what they compute with) and the grammar packages' versions."""
        if self._parser_hash is None:
            self._parser_hash = work_cache.code_identity(PARSER_MODULES, {
                d: work_cache.distribution_version(d) for d in self.libraries if d.startswith("tree-sitter")})
        return self._parser_hash

    def _definition_tokens(self, grammar: str, blob: str, definitions: Sequence[str]) -> Counter:
        key = (grammar, blob)
        if key not in self._def_tokens:
            self._def_tokens[key] = Counter(self._tokens([t for name in definitions for t in code_tokens(name)]))
        return self._def_tokens[key]

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        from ctxgauge.engines.graph._parse import grammar_of, language_of
        from ctxgauge.engines.graph._rank import field, postings
        from ctxgauge.engines.graph._resolve import Resolver, is_manifest

        self._read(corpus)
        self.hold(out_dir, corpus)
        # Resolution depends on the path set and the manifests only; a replay mostly modifies files, so the
        # previous build's resolver (and its memoised answers) usually still holds.
        manifests = {f.path: f.blob for f in corpus.files if is_manifest(f.path)}
        key = (tuple(corpus.paths), tuple(manifests.items()))
        if self._resolver is None or self._resolver[0] != key:
            self._resolver = (key, Resolver(corpus.paths, {p: self._manifests[b] for p, b in manifests.items()}))
        resolver = self._resolver[1]
        index = {f.path: i for i, f in enumerate(corpus.files)}
        weight = int(self.params["path_weight"])
        entries, names, contents, edges = [], [], [], set()
        path_docs = self._path_docs
        stats = {lang: {"files": 0, "imports": 0, "resolved": 0} for lang in LANGUAGES}
        for i, f in enumerate(corpus.files):
            if f.path not in path_docs:
                path_docs[f.path] = Counter({t: n * weight for t, n in Counter(self._tokens(path_tokens(f.path))).items()})
            doc = Counter(path_docs[f.path])
            grammar, language = grammar_of(f.path), language_of(f.path)
            entry: dict[str, Any] = {"path": f.path, "blob": f.blob, "language": language}
            if grammar is not None:
                parsed = self._parsed[(grammar, f.blob)]
                resolved: set[str] = set()
                st = stats[language]
                st["files"] += 1
                for spec in parsed.imports:
                    found = resolver.resolve(f.path, language, spec)
                    st["imports"] += 1
                    if found is not None:
                        st["resolved"] += 1
                        resolved.update(found)
                doc.update(self._definition_tokens(grammar, f.blob, parsed.definitions))
                targets = sorted(index[p] for p in resolved)
                edges.update((i, j) for j in targets)
                entry.update(definitions=list(parsed.definitions), imports=list(parsed.imports),
                             resolved=[corpus.files[j].path for j in targets])
            content = self._content[f.blob]
            entry["length"] = sum(doc.values())
            entry["content_length"] = int(content[1].sum())
            entries.append(entry)
            names.append(doc)
            contents.append(content)
        for st in stats.values():
            # Rounded so the summary (also stored in the artifact) is short and reads the same everywhere.
            st["share"] = round(st["resolved"] / st["imports"], 4) if st["imports"] else None
        summary = {
            "files": len(entries),
            "parsed": sum(st["files"] for st in stats.values()),
            "edges": len(edges),
            "languages": {lang: st for lang, st in stats.items() if st["files"]},
        }
        artifact = {
            "format": FORMAT,
            "parser": self._parser_id(),
            "params": self.params,
            "files": entries,
            "edges": [list(e) for e in sorted(edges)],
            "fields": {"names": postings(names), "content": field(contents, self._terms)},
            "summary": summary,
        }
        target = Path(out_dir) / self.artifact_file
        write_text_atomic(target, canonical_json(artifact) + "\n")
        self._keep(target, artifact)
        return summary

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        """Rebuild from cached parses: only blobs neither this object nor the old artifact has seen are
        parsed, and everything derived from the whole file set is computed again (see the docstring)."""
        from ctxgauge.engines.graph._parse import Parsed, grammar_of

        path = Path(out_dir) / self.artifact_file
        missing = any(g is not None and (g, f.blob) not in self._parsed
                      for f, g in ((f, grammar_of(f.path)) for f in corpus.files))
        if missing and path.is_file():  # an object that built the old corpus itself needs nothing read
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:  # a damaged artifact only costs the reuse, never the update
                old = {}
            # Parses are reused only from the same extraction code and grammars, or the update would
            # keep what an older parser saw while a fresh build sees something else.
            if old.get("format") == FORMAT and old.get("parser") == self._parser_id():
                for e in old.get("files", []):
                    grammar = grammar_of(e["path"])
                    if grammar is not None and "imports" in e:
                        self._parsed.setdefault((grammar, e["blob"]),
                                                Parsed(tuple(e["imports"]), tuple(e["definitions"])))
        return self.build(corpus, out_dir)

    # -- query ------------------------------------------------------------------------------------------
    def _load(self, out_dir: Path) -> dict:
        path = Path(out_dir) / self.artifact_file
        st = os.stat(path)
        # The inode changes on every atomic rewrite, so an update within one mtime tick is still seen.
        key = (str(path.resolve()), st.st_ino, st.st_mtime_ns, st.st_size)
        if self._loaded is None or self._loaded[0] != key:
            with open(path, encoding="utf-8") as fh:
                self._loaded = (key, self._prepared(json.load(fh)))
        return self._loaded[1]

    def _keep(self, path: Path, artifact: dict) -> None:
        """Hold the artifact just written for queries: what reading it back would give (canonical JSON of
        lists, strings, ints and None reads back as equal values), without parsing it again."""
        st = os.stat(path)
        self._loaded = ((str(path.resolve()), st.st_ino, st.st_mtime_ns, st.st_size), self._prepared(dict(artifact)))

    @staticmethod
    def _prepared(data: dict) -> dict:
        """The artifact with the arrays a query reads (keys starting with `_`)."""
        import numpy as np

        from ctxgauge.engines.graph._rank import Field

        files = data["files"]
        edges = np.asarray(data["edges"], dtype=np.int64).reshape(-1, 2)
        data["_paths"] = [f["path"] for f in files]
        data["_fields"] = {name: Field(stored) for name, stored in data["fields"].items()}
        data["_lengths"] = {"names": np.asarray([f["length"] for f in files], dtype=np.float64),
                            "content": np.asarray([f["content_length"] for f in files], dtype=np.float64)}
        data["_text"] = np.asarray([f["language"] is None for f in files], dtype=bool)
        data["_edges"] = (edges[:, 0], edges[:, 1])
        data["_in_degree"] = np.bincount(edges[:, 1], minlength=len(files)).astype(np.float64)
        return data

    def definitions(self, out_dir: Path) -> Mapping[str, tuple[str, ...]]:
        """Path -> the top-level names the file defines (tree-sitter definitions, as `_parse` reads them),
        for every file of the artifact in `out_dir`, in path order. The same object is returned until the
        artifact changes, so a caller may key what it derives from it on the object's identity."""
        data = self._load(out_dir)
        if "_definitions" not in data:
            data["_definitions"] = MappingProxyType(
                {f["path"]: tuple(f.get("definitions") or ()) for f in data["files"]})
        return data["_definitions"]

    def units(self, out_dir: Path, path: str, blob: str, read) -> tuple[tuple[int, int], ...]:
        """A ranked file's definitions as line ranges (`_blocks`): the units its spans are chosen from; none
        (fixed windows) for a file without a grammar."""
        from ctxgauge.engines.graph._blocks import DefinitionLines
        from ctxgauge.engines.graph._parse import grammar_of

        grammar = grammar_of(path)
        if grammar is None:
            return ()
        if self.__dict__.get("_blocks") is None:
            self._blocks = DefinitionLines()
        return self._blocks.of(grammar, blob, read())

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        import numpy as np

        from ctxgauge.engines.graph._rank import bm25, personalised_pagerank

        data = self._load(out_dir)
        paths = data["_paths"]
        fields = data["_fields"]
        terms = [t for t in dict.fromkeys(self._tokens(code_tokens(text))) if any(t in f for f in fields.values())]
        if not paths or not terms:
            return []
        p = self.params
        is_text = data["_text"]
        groups = is_text.astype(np.int64)
        k1, b = float(p["k1"]), float(p["b"])
        lex = bm25(terms, fields["names"], data["_lengths"]["names"], groups, k1=k1, b=b)
        if float(p["content_weight"]) > 0:
            lex = lex + float(p["content_weight"]) * bm25(terms, fields["content"], data["_lengths"]["content"],
                                                          groups, k1=k1, b=b)
        lex = np.where(is_text, lex * float(p["text_weight"]), lex)
        total = math.fsum(lex.tolist())
        if total <= 0:
            return []
        src, dst = data["_edges"]
        # Both directions of every import edge, forward weights first: a fixed layout for bincount.
        both_src, both_dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        weights = np.concatenate([np.full(len(src), float(p["forward"])), np.full(len(src), float(p["backward"]))])
        keep = weights > 0
        ppr = personalised_pagerank(len(paths), both_src[keep], both_dst[keep], weights[keep], lex / total,
                                    damping=float(p["damping"]), iterations=int(p["iterations"]),
                                    tolerance=float(p["tolerance"]))
        # PageRank piles mass on files everything imports (preludes, shared types), whatever the request.
        ppr = ppr / (1.0 + data["_in_degree"]) ** float(p["degree_exponent"])
        gw = float(p["graph_weight"])
        score = (1.0 - gw) * lex / float(lex.max()) + gw * ppr / float(ppr.max())
        return rank({path: float(s) for path, s in zip(paths, score.tolist())}, k)

