"""Blobs: the git blob id of some bytes, and one long-lived `git cat-file --batch` reader."""

from __future__ import annotations

import hashlib
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Iterator

from ctxgauge.errors import UserError
from ctxgauge.git._policy import git_command, git_env, missing_object_message

SMALL_REQUEST = 48
"""Object ids (at most 65 bytes a line with SHA-256) written without a writer thread: 3,120 bytes fit in
any pipe's buffer (4,096 bytes at the least), and the pipe is empty between calls (every earlier request
was answered), so the writes return whatever cat-file does. A replay asks for a commit's few blobs at a
time: a thread per request cost more than the request."""


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (SHA-1 of the `blob <size>\\0` header and the bytes), as `git hash-object`."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class BlobReader:
    """One long-lived `git cat-file --batch` process.

    Requests are written by a writer thread while the caller reads replies: writing every request before
    reading any reply deadlocks once both pipe buffers are full.
    """

    def __init__(self, git_dir: Path, *, pinned: dict[str, str] | None = None):
        # stderr to a file, not a pipe nobody drains: when cat-file dies on an object it may not fetch, its
        # last line says which object, and that is the error the user sees.
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            git_command("cat-file", "--batch"), cwd=git_dir, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=git_env(pinned if pinned is not None else {
                "GIT_DIR": str(git_dir), "GIT_CEILING_DIRECTORIES": str(Path(git_dir).parent)}),
        )
        self._lock = threading.Lock()

    def read(self, oid: str) -> bytes | None:
        """The bytes of one blob, or None when the object is missing."""
        for _, data in self.read_many([oid]):
            return data
        return None

    def read_many(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """(oid, bytes or None when missing) for each oid, in the order given."""
        oids = list(oids)
        if not oids:
            return
        with self._lock:
            stdin, stdout = self._proc.stdin, self._proc.stdout
            assert stdin is not None and stdout is not None
            errors: queue.Queue[BaseException] = queue.Queue()

            def write() -> None:
                try:
                    for oid in oids:
                        stdin.write(oid.encode() + b"\n")
                    stdin.flush()
                except BaseException as exc:  # surfaced to the reader below
                    errors.put(exc)

            def reply() -> bytes | None:
                header = stdout.readline()
                if not header:
                    self._proc.wait()
                    self._stderr.seek(0)
                    said = self._stderr.read().decode("utf-8", "replace")
                    raise UserError(missing_object_message(said)
                                    or "git cat-file stopped answering (is the repository readable?)")
                fields = header.split()
                if len(fields) >= 2 and fields[1] == b"missing":
                    return None
                data = stdout.read(int(fields[2]))
                stdout.read(1)  # the newline after every object
                return data

            # Requests that fit in a pipe's buffer never block, whatever cat-file does: write them here.
            writer = threading.Thread(target=write, daemon=True) if len(oids) > SMALL_REQUEST else None
            if writer is None:
                write()
            else:
                writer.start()
            done = 0
            try:
                for oid in oids:
                    data = reply()
                    done += 1
                    yield oid, data
            finally:
                # A caller that stops early must not leave replies in the pipe for the next request.
                for _ in range(done, len(oids)):
                    reply()
                if writer is not None:
                    writer.join()
            if not errors.empty():
                raise errors.get()

    def close(self) -> None:
        """End the process (closing its stdin lets it exit on its own; killed after 5 s)."""
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._stderr.close()
