"""bm25's per-blob term counts: a blob's tokens stemmed, interned and counted once per engine object.

Terms are interned once per object (id -> term, term -> id) and kept in term order as they arrive, so
ordering a build's vocabulary is a boolean mask. Counts are kept per blob id (content) and per path (path
tokens, weighted), and the content counts are shared through the work cache across processes and bm25
configurations (they depend on neither k1, b nor path_weight).
"""

from __future__ import annotations

import bisect
from itertools import chain
from typing import Callable, Sequence

import numpy as np

import ctxgauge.cache as work_cache
from ctxgauge.corpus import Corpus, CorpusFile
from ctxgauge.engines._text.term_delta import apply_delta, line_delta
from ctxgauge.engines._text.keyed import sum_by_key
from ctxgauge.engines._text.tokens import path_tokens, split_words, word_counts

Counts = tuple[np.ndarray, np.ndarray, int]
"""(term ids, sorted; their counts; number of tokens)"""

BATCH_BYTES = 16 << 20
"""Blob bytes counted in one numpy pass (its arrays: at most about 40 bytes per word of the blobs)."""


class Terms:
    """The interned terms of one bm25 engine object and its per-blob and per-path counts."""

    def __init__(self, path_weight: int):
        self.path_weight = path_weight
        self._stemmer = None
        self.terms: list[str] = []  # id -> term
        self.term_id: dict[str, int] = {}
        self._sorted_ids = np.zeros(0, dtype=np.int64)
        self._order_terms: list[str] = []  # every interned term, in term order
        self._order_ids: list[int] = []  # their ids, in the same order
        self.word_terms = WordTerms()  # word -> its tokens' stemmed term ids
        self.blob_counts: dict[str, Counts] = {}
        self.path_counts: dict[str, Counts] = {}

    def stem(self, tokens: list[str]) -> list[str]:
        if self._stemmer is None:
            import Stemmer

            # No PyStemmer cache: content_counts stems each distinct token once per engine object, and the
            # cache only costs there (3x the stemming time of a 1,000-file repository's distinct tokens).
            self._stemmer = Stemmer.Stemmer("english", 0)
        return self._stemmer.stemWords(tokens)

    def ids(self, terms: list[str]) -> np.ndarray:
        """Each term's id, a new term given the next id (first seen, first numbered)."""
        intern(terms, self.term_id, self.terms)
        return np.fromiter(map(self.term_id.__getitem__, terms), dtype=np.int64, count=len(terms))

    def counts(self, tokens: list[str], weight: int = 1) -> Counts:
        ids = self.ids(tokens)
        uniq, counts = np.unique(ids, return_counts=True)
        return uniq, counts * weight, len(tokens) * weight

    def path_counts_many(self, paths: Sequence[str]) -> list[Counts]:
        """Each path's `counts(stem(path_tokens(path)), path_weight)`, for many paths at once: their tokens
        stemmed in one call and interned in the same order (path by path), then summed per path by one
        numpy sort instead of a numpy unique per path. Tested equal to the path-by-path definition."""
        tokens = [path_tokens(p) for p in paths]
        sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        ids = self.ids(self.stem(list(chain.from_iterable(tokens))))
        doc = np.repeat(np.arange(len(tokens), dtype=np.int64), sizes)
        weight = self.path_weight
        return [(i, c * weight, n * weight) for i, c, n in
                sum_per_doc(doc, ids, np.ones(len(ids), dtype=np.int64), len(tokens), len(self.terms))]

    def content_counts(self, data: bytes) -> Counts:
        """`_counts(self.stem(code_tokens(data.decode("utf-8", "replace"))))`: one blob's `content_counts_many`."""
        return self.content_counts_many([data])[0]

    def content_counts_many(self, blobs: Sequence[bytes]) -> list[Counts]:
        """Each blob's `_counts(self.stem(code_tokens(blob.decode("utf-8", "replace"))))` (`count_terms`)."""
        return count_terms(blobs, self.word_terms, self.term_id, self.terms, self.stem)

    def term_order(self) -> np.ndarray:
        """Every term id in term order, merging the terms interned since the last call into the order.

        Python orders str by code point, which is UTF-8 byte order. (A fixed-width numpy byte array was
        tried first: one 50,000-character token in a data file widened every key to its length, and a
        2,193-file repository then took 1.7 GB and 30 s to build.)"""
        start = len(self._order_ids)
        if start < len(self.terms):
            terms = self.terms
            if len(terms) - start > 64:  # many new terms (a first build): one sort of everything is cheaper
                # the terms are distinct, so sorting them (no key function) and looking their ids up gives
                # the order of a sort of the ids by term, in half its time
                self._order_terms = sorted(terms)
                self._order_ids = list(map(self.term_id.__getitem__, self._order_terms))
            else:  # a few new terms (an update): insert each at its place (distinct: in any order)
                for i in range(start, len(terms)):
                    at = bisect.bisect_left(self._order_terms, terms[i])
                    self._order_terms.insert(at, terms[i])
                    self._order_ids.insert(at, i)
            self._sorted_ids = np.array(self._order_ids, dtype=np.int64)
        return self._sorted_ids

    def content_stage(self):
        """The work cache's stage for a blob's content terms (None when the cache is off). Keyed by this
        module's and the tokeniser's source and the stemmer's version, not by k1, b or path_weight: every
        bm25 configuration shares the same per-blob work."""
        store = work_cache.current()
        if store is None:
            return None
        return store.stage("bm25.content-terms", work_cache.stage_identity(
            (__name__, "ctxgauge.engines._text.tokens", "ctxgauge.engines._text.term_delta"), {"stemmer": "english", "format": 2},
            ("PyStemmer",)))

    def cached_counts(self, payload: bytes) -> Counts:
        n, k = int.from_bytes(payload[:8], "little"), int.from_bytes(payload[8:16], "little")
        counts = np.frombuffer(payload, dtype="<i8", count=k, offset=16).astype(np.int64)
        terms = payload[16 + 8 * k:].decode("utf-8").split(" ") if k else []
        ids = self.ids(terms)
        order = np.argsort(ids, kind="stable")
        return ids[order], counts[order], n

    def _payload(self, counts: Counts) -> bytes:
        """A blob's content counts for the work cache: token count, term count, the counts (int64), then the
        terms joined by spaces (a term is made of word characters, never a space). Bytes, not JSON: a cold
        replay writes one entry per changed blob, and encoding JSON cost more than tokenising."""
        ids, cnt, n = counts
        terms = " ".join(map(self.terms.__getitem__, ids.tolist()))
        return n.to_bytes(8, "little") + len(ids).to_bytes(8, "little") + cnt.astype("<i8").tobytes() + terms.encode()

    def doc_counts(self, corpus: Corpus, files: Sequence[CorpusFile] | None = None, before: Corpus | None = None
                   ) -> tuple[list[Counts], list[Counts]]:
        """Content and path counts of `files` (default: every file of the corpus), tokenising only blobs
        and paths not counted before. With `before` (the corpus an update comes from), a blob whose path
        held another blob there that was counted is counted by the lines that changed (`term_delta`)."""
        files = corpus.files if files is None else files
        todo = {f.blob: f for f in files if f.blob not in self.blob_counts}
        stage = self.content_stage() if todo else None
        if stage is not None:
            for blob in list(todo):
                payload = stage.get(blob)
                if payload is not None:
                    self.blob_counts[blob] = self.cached_counts(payload)
                    del todo[blob]
        known = self.blob_counts
        olds: dict[str, CorpusFile] = {}  # new blob -> the counted blob its path held in `before`
        if before is not None and before.kind == "git":  # a directory's old files may hold other bytes by now
            for blob, f in todo.items():
                o = before.get(f.path)
                if o is not None and o.blob in known:
                    olds[blob] = o
        batch: list[tuple[CorpusFile, bytes]] = []
        held = 0

        def count() -> None:
            old_bytes = dict((o.blob, d) for o, d in before.iter_bytes([olds[f.blob] for f, _ in batch
                                                                         if f.blob in olds])) if olds else {}
            texts: list[bytes] = []
            plan: list[tuple[CorpusFile, int, int]] = []  # (file, where its text(s) start, 1 full | 2 delta)
            for f, data in batch:
                o = olds.get(f.blob)
                delta = line_delta(old_bytes[o.blob], data) if o is not None and o.blob in old_bytes else None
                plan.append((f, len(texts), 1 if delta is None else 2))
                texts.extend((data,) if delta is None else delta)
            counted = self.content_counts_many(texts)
            for f, at, kind in plan:
                counts = counted[at] if kind == 1 else apply_delta(known[olds[f.blob].blob], counted[at],
                                                                    counted[at + 1])
                known[f.blob] = counts
                if stage is not None:
                    stage.put(f.blob, self._payload(counts))
            batch.clear()

        for f, data in corpus.iter_bytes(list(todo.values())):
            batch.append((f, data))
            held += len(data) + (olds[f.blob].size if f.blob in olds else 0)
            if held >= BATCH_BYTES:  # bounded: a batch's arrays hold a few entries per word of its bytes
                count()
                held = 0
        if batch:
            count()
        new_paths = [p for p in dict.fromkeys(f.path for f in files) if p not in self.path_counts]
        if new_paths:
            self.path_counts.update(zip(new_paths, self.path_counts_many(new_paths)))
        return [self.blob_counts[f.blob] for f in files], [self.path_counts[f.path] for f in files]

    def doc_terms(self, f: CorpusFile) -> tuple[np.ndarray, np.ndarray, int]:
        """One document's distinct term ids (sorted), their frequencies (content and path summed) and its
        length, from counts already made: what `_entries` gives that document."""
        (ci, cc, cn), (pi, pc, pn) = self.blob_counts[f.blob], self.path_counts[f.path]
        ids, where = np.unique(np.concatenate([ci, pi]), return_inverse=True)
        return ids, np.bincount(where, weights=np.concatenate([cc, pc]), minlength=len(ids)).astype(np.int64), cn + pn

    # -- index --------------------------------------------------------------------------------------------


def intern(new: Sequence[str], term_id: dict[str, int], terms: list[str]) -> None:
    """Give each term of `new` not yet in `term_id` the next id (first seen, first numbered; `terms`: id ->
    term), by dict operations rather than a Python step per term."""
    fresh = [t for t in dict.fromkeys(new) if t not in term_id]
    term_id.update(zip(fresh, range(len(terms), len(terms) + len(fresh))))
    terms.extend(fresh)


class WordTerms:
    """Each word a vocabulary has met -> the term ids of its tokens (`split_words`, stemmed, interned), as
    rows of one CSR table (`row`: word -> row, in first-seen order; row r's ids are `ids[ptr[r]:ptr[r+1]]`),
    so the words of a batch of blobs are looked up by one `map` in C and their ids gathered by numpy."""

    def __init__(self):
        self.row: dict[bytes, int] = {}
        self.ptr = np.zeros(1, dtype=np.int64)
        self.ids = np.zeros(0, dtype=np.int64)

    def add(self, words: list[bytes], sizes: np.ndarray, ids: np.ndarray) -> None:
        """Rows for new `words`: word i's ids are the next `sizes[i]` of `ids`."""
        self.row.update(zip(words, range(len(self.row), len(self.row) + len(words))))
        self.ptr = np.concatenate([self.ptr, self.ptr[-1] + np.cumsum(sizes)])
        self.ids = np.concatenate([self.ids, ids])

    def gather(self, words: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """(each word's number of term ids, all their ids concatenated word by word)."""
        rows = np.fromiter(map(self.row.__getitem__, words), dtype=np.int64, count=len(words))
        starts = self.ptr[rows]
        lens = self.ptr[rows + 1] - starts
        total = int(lens.sum())
        at = np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
        return lens, self.ids[at]


def count_terms(blobs: Sequence[bytes], terms_of: WordTerms, term_id: dict[str, int],
                terms: list[str], stem: Callable[[list[str]], list[str]]) -> list[Counts]:
    """Each blob's `_counts(stem(code_tokens(blob.decode("utf-8", "replace"))))`, computed per distinct word:
    each word's term ids are made once per vocabulary (`terms_of`; `term_id`/`terms`: the interned terms,
    new ones appended in first-seen order) and its occurrences added up, and the blobs' (term, occurrences)
    pairs are summed in one numpy pass for them all (a numpy sort per blob cost more than counting its
    words; tested equal to the per-token definition). bm25 and graph both count content this way."""
    words: list[bytes] = []
    times: list[int] = []
    sizes: list[int] = []
    for data in blobs:
        counts = word_counts(data)
        words.extend(counts)
        times.extend(counts.values())
        sizes.append(len(counts))
    # Words this vocabulary has not met, first seen first (so terms are numbered as blob by blob):
    # split, stem and intern them. dict.fromkeys dedups in C (a blob's words recur in the next ones).
    distinct = dict.fromkeys(words)
    row = terms_of.row
    new = [w for w in distinct if w not in row] if row else list(distinct)
    if new:
        tokens, per_word = split_words(new)
        distinct_tokens = list(dict.fromkeys(tokens))
        stemmed = stem(distinct_tokens)
        intern(stemmed, term_id, terms)
        token_id = dict(zip(distinct_tokens, map(term_id.__getitem__, stemmed)))
        terms_of.add(new, per_word, np.fromiter(map(token_id.__getitem__, tokens), dtype=np.int64,
                                                count=len(tokens)))
    # every (blob, term, occurrences of its word) triple, summed per (blob, term) by one sort
    lens, flat = terms_of.gather(words)
    occurrences = np.repeat(np.array(times, dtype=np.int64), lens)
    blob = np.repeat(np.repeat(np.arange(len(sizes), dtype=np.int64), sizes), lens)
    return sum_per_doc(blob, flat, occurrences, len(sizes), len(terms))


def sum_per_doc(doc: np.ndarray, ids: np.ndarray, occurrences: np.ndarray, n_docs: int, n_terms: int
                ) -> list[Counts]:
    """Each of `n_docs` documents' Counts from (document, term id, occurrences) triples: the occurrences of
    a (document, term) summed, its terms sorted, the document's token count the sum of its occurrences."""
    width = max(n_terms, 1)  # key = doc * width + term: one sort orders by document, then term
    key, cnt = sum_by_key(doc * width + ids, occurrences)
    ids_ = key % width
    bounds = np.searchsorted(key // width, np.arange(n_docs + 1))
    return [(ids_[a:b], cnt[a:b], int(cnt[a:b].sum())) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
