"""bm25: BM25 (bm25s, Lucene variant) over code-aware, Snowball-stemmed tokens, path terms weighted.

Each document is a file's content tokens plus its path tokens repeated `path_weight` times. Tokens are
cached per blob id on the engine object, so a replay over many commits tokenises each unique blob once;
`update` re-derives the index from those token lists (BM25's idf and mean length depend on every
document) and so leaves exactly the bytes a fresh build writes. The vocabulary is sorted, and ties that
bm25s leaves in arbitrary order are broken by path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ctxgauge._io import write_text_atomic
from ctxgauge.corpora import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._tokens import code_tokens, path_tokens

DOCS_FILE = "docs.json"


class BM25Engine(Engine):
    kind = "bm25"
    defaults = {"k1": 1.2, "b": 0.75, "path_weight": 2, "method": "lucene"}
    libraries = ("bm25s", "PyStemmer", "numpy", "scipy")
    identity_modules = ("ctxgauge.engines._base", "ctxgauge.engines._tokens")

    def __init__(self, **params):
        super().__init__(**params)
        self._tokens: dict[str, list[str]] = {}  # blob id -> stemmed content tokens
        self._stemmer = None

    def available(self) -> tuple[bool, str | None]:
        try:
            import bm25s  # noqa: F401
            import Stemmer  # noqa: F401
        except ImportError as exc:
            return False, f"{exc.name} is not installed (pip install bm25s PyStemmer)"
        return True, None

    def _stem(self, tokens: list[str]) -> list[str]:
        if self._stemmer is None:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("english")
        return self._stemmer.stemWords(tokens)

    def _content_tokens(self, corpus: Corpus) -> list[list[str]]:
        todo = [f for f in corpus.files if f.blob not in self._tokens]
        for f, data in corpus.iter_bytes(list({f.blob: f for f in todo}.values())):
            self._tokens[f.blob] = self._stem(code_tokens(data.decode("utf-8", "replace")))
        return [self._tokens[f.blob] for f in corpus.files]

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        import bm25s

        out_dir = Path(out_dir)
        content = self._content_tokens(corpus)
        weight = int(self.params["path_weight"])
        docs = [c + self._stem(path_tokens(f.path)) * weight for f, c in zip(corpus.files, content)]
        vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
        ids = [[vocab[t] for t in d] for d in docs]
        retriever = bm25s.BM25(k1=float(self.params["k1"]), b=float(self.params["b"]), method=self.params["method"])
        if docs:
            retriever.index((ids, vocab), show_progress=False)
            retriever.save(str(out_dir), show_progress=False)
        write_text_atomic(
            out_dir / DOCS_FILE,
            json.dumps({"paths": [f.path for f in corpus.files], "blobs": [f.blob for f in corpus.files]},
                       ensure_ascii=False) + "\n",
        )
        return {"documents": len(docs), "vocabulary": len(vocab)}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        # Only changed blobs are tokenised (the rest come from the per-blob cache); the index is then derived
        # again from the token lists, which is what keeps it byte-identical to a fresh build.
        return self.build(corpus, out_dir)

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        import bm25s

        out_dir = Path(out_dir)
        with open(out_dir / DOCS_FILE, encoding="utf-8") as fh:
            paths = json.load(fh)["paths"]
        if not paths:
            return []
        retriever = bm25s.BM25.load(str(out_dir), mmap=False)
        terms = [t for t in dict.fromkeys(self._stem(code_tokens(text))) if t in retriever.vocab_dict]
        if not terms:
            return []
        scores = retriever.get_scores(terms)
        return rank({p: float(s) for p, s in zip(paths, scores)}, k)
