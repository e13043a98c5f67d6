"""hybrid: reciprocal-rank fusion (RRF) of sub-engines, by default bm25, a capped minilm and graph.

    hybrid                                   bm25 + minilm (at most 6 chunks a file, 1 a test file) + graph,
                                             rrf_k=60, depth=100 (`DEFAULT_ENGINES`)
    hybrid(engines="bm25,grep",rrf_k=10)     any engines, comma-separated (spec values are scalars)
    hybrid(engines="bm25,bm25(k1=2.0)")      a sub-engine may carry parameters: commas inside its
                                             parentheses or quotes do not split

Each sub-engine is built into its own directory `out_dir/<name>/` (the sub-engine's registry name; a name
used twice gets `.1`, `.2`, ... in order) and `hybrid.json` records the fusion's configuration. A query asks
every sub-engine for its top `max(depth, k)` files and scores each file

    score(f) = sum over sub-engines e that returned f of 1 / (rrf_k + rank_e(f))

where rank_e(f) is f's 1-based position in e's answer (Cormack, Clarke and Buettcher, SIGIR 2009; ranx's
`rrf` computes the same sum, `1 / (k + i + 1)` over positions, so depending on ranx and its numba stack would
add nothing). The sub-engines' own orders already break their ties by path, so positions are deterministic;
the fused ranking breaks its ties by path too (`rank()`).

An unavailable sub-engine (minilm without the `[embed]` extra, say) makes the whole hybrid unavailable with
that reason: fusing fewer engines than named would publish numbers for an engine that was not measured.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

from ctxgauge._io import write_json_atomic
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine, files_of
from ctxgauge.engines._registry import _load_factory, engine_available, engine_names, get_engine
from ctxgauge.engines._spec import Param, parse_spec
from ctxgauge.errors import UserError
from ctxgauge.fingerprints import IDENTITY_SOURCES

PARAMS_FILE = "hybrid.json"
DEFAULT_ENGINES = "bm25,minilm(max_chunks_per_file=6,test_chunks=1),graph"
"""hybrid's sub-engines unless `engines` names others. Its minilm embeds at most 6 chunks of a file and 1 of
a test file (the head of each): chosen on the tune half's colinhacks/zod and caddyserver/caddy (50 replayed
commits each, benchmarks/quality_split.json), where it fused to hit@5 .61 / MRR .452 against .62 / .463 with
minilm's own caps (64 chunks, tests uncapped) and .59 / .449 with 8 and 2, in under 40% of the CPU time; minilm
alone loses far more (.58 -> .36 hit@5), so the caps are hybrid's choice, not minilm's defaults."""


def split_engines(text: str) -> list[str]:
    """Split `"bm25,command(cmd='a b',timeout=5)"` on the commas outside parentheses and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur).strip())
    if any(not p for p in parts) or depth or quote:
        raise UserError(f"hybrid: engines={text!r} must be engine specs separated by commas, e.g. \"bm25,graph\"")
    return parts


class HybridEngine(SpanEngine, Engine):
    """Reciprocal-rank fusion of the engines named in `engines` (see the module docstring)."""

    kind = "hybrid"
    defaults = {"engines": DEFAULT_ENGINES, "rrf_k": Param(60, ge=0), "depth": Param(100, ge=1), **SPAN_PARAMS}
    libraries: tuple[str, ...] = ()

    def __init__(self, **params: Any):
        super().__init__(**params)
        specs = split_engines(self.params["engines"])
        # (directory name, spec string, engine or None, why it cannot load)
        self.subs: list[tuple[str, str, Any, str | None]] = []
        counts: dict[str, int] = {}
        for spec in specs:
            base = parse_spec(spec).name
            if base not in engine_names():
                raise UserError(f"hybrid: unknown engine {base!r} in engines={self.params['engines']!r} "
                                f"(known: {', '.join(engine_names())})")
            try:
                _load_factory(base)
            except UserError as exc:  # a sub-engine whose module cannot load makes hybrid unavailable
                engine, why = None, str(exc)
            else:
                engine, why = get_engine(spec), None  # bad parameters stay loud errors
                if hasattr(engine, "span_store"):
                    engine.span_store = False  # a part ranks files only: hybrid's own out dir keeps the text
            # Each sub-engine by its canonical spec, so `engines="bm25(k1=1.2),graph"` is `"bm25,graph"`.
            spec = str(getattr(engine, "spec", None) or parse_spec(spec))
            n = counts[base] = counts.get(base, 0) + 1
            self.subs.append((base, spec, engine, why))
            if n > 1:
                self.subs[-1] = (f"{base}.{n - 1}", spec, engine, why)
        self._dirs = [d for d, *_ in self.subs]
        self.params["engines"] = ",".join(spec for _, spec, _, _ in self.subs)
        given = {k: v for k, v in self._given.items() if k != "engines"}
        if self.params["engines"] != self.defaults["engines"]:
            given["engines"] = self.params["engines"]
        self._given = dict(sorted(given.items()))

    # -- availability and identity --------------------------------------------------------------------------
    def available(self) -> tuple[bool, str | None]:
        for _, spec, engine, why in self.subs:
            if engine is None:
                return False, f"sub-engine {spec}: {why}"
            ok, reason = engine_available(engine)
            if not ok:
                return False, f"sub-engine {spec}: {reason}"
        return True, None

    def _engines(self) -> list[tuple[str, Any]]:
        ok, why = self.available()
        if not ok:
            raise UserError(f"engine {self.name} cannot run: {why}")
        return [(d, e) for d, _, e, _ in self.subs]

    def identity(self) -> dict | None:  # type: ignore[override]
        """A content hash over hybrid's own source and parameters (the base class's identity) and every
        sub-engine's identity, in order. Its source is the weakest of theirs (IDENTITY_SOURCES is strongest
        first: a fusion is only as recomputable as the least recomputable identity it folds in); None if any
        is undeclared."""
        own = super().identity()
        subs = [e.identity() for _, e in self._engines()]
        if any(s is None for s in subs):
            return None
        h = hashlib.sha256(own["id"].encode() + b"\0")
        h.update(json.dumps(subs, sort_keys=True).encode())
        source = max((s.get("source", "declared") for s in subs),
                     key=lambda s: IDENTITY_SOURCES.index(s) if s in IDENTITY_SOURCES else len(IDENTITY_SOURCES),
                     default="content-hash")
        return {"id": "sha256:" + h.hexdigest(), "source": source}

    def code_modules(self) -> tuple[str, ...]:
        """Its own modules and those of every sub-engine that declares them (a built-in's; a plugin's
        identity is its own affair)."""
        subs = [e.code_modules() for _, _, e, _ in self.subs if e is not None and hasattr(e, "code_modules")]
        return tuple(sorted(set(super().code_modules()).union(*subs)))

    # -- build, update, query -------------------------------------------------------------------------------
    def _write_params(self, out_dir: Path) -> None:
        write_json_atomic(out_dir / PARAMS_FILE, {
            "kind": self.kind,
            "engines": [{"dir": d, "spec": spec} for d, spec, _, _ in self.subs],
            "rrf_k": self.params["rrf_k"],
            "depth": self.params["depth"],
        })

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        out_dir = Path(out_dir)
        stats = {}
        for d, engine in self._engines():
            (out_dir / d).mkdir(parents=True, exist_ok=True)
            stats[d] = engine.build(corpus, out_dir / d)
        self._write_params(out_dir)
        self.hold(out_dir, corpus)
        return {"engines": stats}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        """Each sub-engine's own `update` (a full build for an engine that has none)."""
        out_dir = Path(out_dir)
        stats = {}
        for d, engine in self._engines():
            (out_dir / d).mkdir(parents=True, exist_ok=True)
            upd = getattr(engine, "update", None)
            stats[d] = upd(out_dir / d, corpus, changes) if callable(upd) else engine.build(corpus, out_dir / d)
        self._write_params(out_dir)
        self.hold(out_dir, corpus)
        return {"engines": stats}

    def defer_writes(self, out_dir: Path) -> bool:
        """Each sub-engine that can defer its writes defers them in its own folder; True if any does."""
        deferred = False
        for d, engine in self._engines():
            defer = getattr(engine, "defer_writes", None)
            deferred = (callable(defer) and bool(defer(Path(out_dir) / d))) or deferred
        return deferred

    def flush(self, out_dir: Path) -> None:
        for d, engine in self._engines():
            flush = getattr(engine, "flush", None)
            if callable(flush):
                flush(Path(out_dir) / d)

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        if k <= 0:
            return []
        out_dir = Path(out_dir)
        rrf_k = self.params["rrf_k"]
        depth = max(self.params["depth"], k)  # a fused top k needs every list at least k deep
        scores: dict[str, float] = {}
        for d, engine in self._engines():
            seen: set[str] = set()
            for position, hit in enumerate(files_of(engine, out_dir / d, text, depth), start=1):
                if hit.path in seen:  # a plugin that repeats a path must not vote for it twice
                    continue
                seen.add(hit.path)
                scores[hit.path] = scores.get(hit.path, 0.0) + 1.0 / (rrf_k + position)
        return rank(scores, k)

    def close(self) -> None:
        for _, _, engine, _ in self.subs:
            if engine is not None and callable(getattr(engine, "close", None)):
                engine.close()
