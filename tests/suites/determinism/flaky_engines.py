"""Deliberately flawed engines, registered by the `flaky_engines` fixture as a plugin would be.

- stamp:    ranks like grep, but writes the build time into its artifact (rebuilds never agree);
- shuffle:  every file scores 1 + the number of query words it contains, ties broken at random;
- empty:    returns nothing, ever (perfectly repeatable, and useless);
- constant: returns the same three files for every query;
- absent:   not available on this machine;
- homebound: like constant, but any build outside the process that started the run fails;
- jitter:   ranks files like stamp (deterministically, from a deterministic artifact), but each hit's span
            is line 1 or line 2 at random (stable files, unstable spans).

`factory` makes them (and any registry engine) by spec: a module-level function, so worker processes of
`--executor local:N` can import it by name (a registry patched in this process is not theirs).
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from pathlib import Path

from ctxgauge.corpus import Corpus
from ctxgauge.engines import Engine, Hit, rank
from ctxgauge.engines._text.tokens import query_terms


class _Docs(Engine):
    artifact_file = "index.json"
    defaults: dict = {}

    def _write(self, corpus: Corpus, out_dir: Path, extra: dict) -> dict:
        docs = {f.path: data.decode("utf-8", "replace").lower() for f, data in corpus.iter_bytes()}
        (Path(out_dir) / self.artifact_file).write_text(json.dumps({"docs": docs, **extra}, sort_keys=True))
        return {"documents": len(docs)}

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        return self._write(corpus, out_dir, {})

    def _docs(self, out_dir: Path) -> dict[str, str]:
        return json.loads((Path(out_dir) / self.artifact_file).read_text())["docs"]


class StampEngine(_Docs):
    kind = "stamp"

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        return self._write(corpus, out_dir, {"built_at_ns": time.time_ns()})

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        terms = query_terms(text)
        return rank({p: float(sum(t in p.lower() + body for t in terms)) for p, body in self._docs(out_dir).items()}, k)


class ShuffleEngine(_Docs):
    kind = "shuffle"

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        terms = query_terms(text)
        scored = [(1.0 + sum(t in body for t in terms), p) for p, body in self._docs(out_dir).items()]
        rng = random.SystemRandom()  # unseeded on purpose: the flaw under test
        rng.shuffle(scored)
        scored.sort(key=lambda sp: -sp[0])  # stable: equal scores keep their random order
        return [Hit(p, s) for s, p in scored[:k]]


class EmptyEngine(_Docs):
    kind = "empty"

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        return []


class ConstantEngine(_Docs):
    kind = "constant"

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        return [Hit(p, 1.0) for p in sorted(self._docs(out_dir))[: min(3, k)]]


class AbsentEngine(_Docs):
    kind = "absent"

    def available(self) -> tuple[bool, str | None]:
        return False, "needs the frobnicator library (pip install frobnicator)"

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        raise AssertionError("an unavailable engine must never be queried")


class HomeboundEngine(ConstantEngine):
    kind = "homebound"

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        if multiprocessing.parent_process() is not None:
            raise RuntimeError("disk full in the worker")
        return super().build(corpus, out_dir)


class JitterEngine(_Docs):
    kind = "jitter"

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        terms = query_terms(text)
        hits = rank({p: float(sum(t in p.lower() + body for t in terms)) for p, body in self._docs(out_dir).items()}, k)
        rng = random.SystemRandom()  # unseeded on purpose: the flaw under test
        line = rng.choice((1, 2))  # every file of the library repository has at least two lines
        return [Hit(h.path, h.score, ((line, line),)) for h in hits]


_FLAKY = {"jitter": JitterEngine, "stamp": StampEngine, "shuffle": ShuffleEngine, "empty": EmptyEngine, "constant": ConstantEngine,
          "absent": AbsentEngine, "homebound": HomeboundEngine}


def factory(spec: str):  # type: ignore[no-untyped-def]
    """An engine object for `spec`: one of the flawed engines here by name, else the registry's."""
    if spec in _FLAKY:
        return _FLAKY[spec]()
    from ctxgauge.engines import get_engine

    return get_engine(spec)
