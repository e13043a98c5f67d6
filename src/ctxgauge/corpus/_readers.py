"""Where a corpus file's bytes come from: a directory, a git object database (one `git cat-file --batch`),
bytes held in memory (`Corpus.held`), or an overlay of extra files over another reader (`Corpus.overlay`).
A reader reads only the `path` and `blob` of the file it is given."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Protocol, TypeVar

from ctxgauge.errors import UserError
from ctxgauge.git import Repo


class _File(Protocol):
    """What a reader reads of a `CorpusFile` (the corpus module imports this one, not the other way)."""

    path: str
    blob: str


CorpusFile = TypeVar("CorpusFile", bound=_File)


class Reader:
    def read(self, f: CorpusFile) -> bytes:
        raise NotImplementedError

    def read_many(self, files: list[CorpusFile]) -> Iterator[tuple[CorpusFile, bytes]]:
        for f in files:
            yield f, self.read(f)

    def close(self) -> None:
        """End any process the reader holds; a later read starts it again."""


class DirReader(Reader):
    def __init__(self, root: Path):
        self.root = root

    def read(self, f: CorpusFile) -> bytes:
        return (self.root / f.path).read_bytes()


class GitReader(Reader):
    def __init__(self, repo: Repo, sniffed: dict[str, bytes] | None = None):
        self.repo = repo
        self.sniffed: dict[str, bytes] = sniffed if sniffed is not None else {}
        """The text blobs the latest listing read whole to sniff them (`list_entries`), served from here: a
        blob new to a replay or a cases run is then read once, not once to sniff and again to tokenise.
        Shared by the corpora derived from one another (`Corpus.at`), replaced by each listing, so it
        holds one listing's new blobs at most (and at most `SNIFF_HOLD` bytes of them)."""

    def read(self, f: CorpusFile) -> bytes:
        data = self.sniffed.get(f.blob)
        if data is None:
            data = self.repo.read_blob(f.blob)
        if data is None:
            raise UserError(f"{f.path}: object {f.blob} is missing from the repository")
        return data

    def read_many(self, files: list[CorpusFile]) -> Iterator[tuple[CorpusFile, bytes]]:
        sniffed = self.sniffed
        got = {f.blob: sniffed[f.blob] for f in files if f.blob in sniffed}
        order = list(dict.fromkeys(f.blob for f in files if f.blob not in got))
        for oid, data in self.repo.read_blobs(order):
            if data is None:
                raise UserError(f"object {oid} is missing from the repository")
            got[oid] = data
        for f in files:
            yield f, got[f.blob]

    def __getstate__(self) -> dict:
        # A corpus sent to a worker process carries its repository, not the bytes of the latest listing.
        return {**self.__dict__, "sniffed": {}}

    def close(self) -> None:
        self.repo.close()  # the repository's `git cat-file --batch`; `Repo.reader` starts a new one if needed


class HeldReader(Reader):
    def __init__(self, data: dict[str, bytes]):
        self.data = data

    def read(self, f: CorpusFile) -> bytes:
        return self.data[f.blob]


class OverlayReader(Reader):
    def __init__(self, base: Reader, extra: dict[str, bytes]):
        self.base, self.extra = base, extra

    def read(self, f: CorpusFile) -> bytes:
        return self.extra[f.path] if f.path in self.extra else self.base.read(f)

    def read_many(self, files: list[CorpusFile]) -> Iterator[tuple[CorpusFile, bytes]]:
        base = [f for f in files if f.path not in self.extra]
        got = dict((f.path, d) for f, d in self.base.read_many(base))
        for f in files:
            yield f, self.extra[f.path] if f.path in self.extra else got[f.path]

    def close(self) -> None:
        self.base.close()
