"""command: any executable that speaks JSON lines on stdin/stdout is an engine.

    command(cmd="node engine.js --fast",timeout=30,name="my-engine")

`cmd` is split with shlex and run directly (never through a shell). One long-lived process serves every
request of an engine object: started at the first request, ended by `close()`, when the engine is collected
or at interpreter exit. One request per line, one answer per line:

    {"op":"build","corpus":DIR,"out":OUT}                  -> {"ok":true, ...stats}
    {"op":"query","out":OUT,"text":TEXT,"k":K}             -> {"ok":true,"hits":[{"path":P,"score":S},...]}
    {"op":"identity"}                                      -> {"ok":true,"identity":{"id":ID,"source":SRC}}
    {"op":"update","corpus":DIR,"out":OUT,"changes":[...]} -> {"ok":true, ...stats}      (optional)
    any failure                                            -> {"ok":false,"error":"what went wrong"}

Decisions, and the failures they prevent:
- The corpus is handed over as a temporary directory written from the Corpus, removed after the request:
  the source directory itself would show the program the binaries, `.git` and large files the corpus
  filters out, and miss a drift-under-noise overlay. Its name differs per build: do not record it.
- Identity is the program's answer (`content-hash`, `git-sha` or `declared`); a program that answers
  `ok:false` is undeclared and `identity()` is None (a fingerprint's `system: null`). A hash of the command
  line would claim an identity the program never gave: the same line runs new code once the program changes.
  Arguments that change what the program computes are its to fold into its identity.
- A breach of the contract is an EngineError, never silently mended: more than k hits, a repeated path, a
  path that is absolute or climbs out with `..`, a score that is not a finite number (truncating would hide
  what a measurement exists to find). The program's order is kept as it is: an external engine's order is
  its own.
- `update` falls back to a full build when the answer is `ok:false` with an error reading "unsupported",
  "unknown op", "not supported" or "not implemented" (or `"unsupported":true`), then builds from there on.
  Any other failure is an EngineError: a rebuild over a failed update would hide what update-identity tests
  are there to catch.
- Every request has a deadline (`timeout` seconds): no answer in time kills the process. After any protocol
  error (garbage, a crash, a timeout, an answer nobody asked for) the process is ended, so a late answer is
  never read as the next request's; the next request starts a new process.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Iterator, Sequence

from ctxgauge.corpora import Change, Corpus
from ctxgauge.engines._base import Engine, Hit
from ctxgauge.engines._spec import Param
from ctxgauge.errors import EngineError, UserError
from ctxgauge.fingerprints import IDENTITY_SOURCES
STDERR_TAIL_BYTES = 4000
MAX_ANSWER_BYTES = 8 << 20
"""The longest answer line read (a k=100 answer is a few kB): a program flooding stdout without a newline
must fail its request, not grow ctxgauge's memory until the timeout."""
_UNSUPPORTED = re.compile(r"unsupported|unknown op|not supported|not implemented", re.I)
_EOF = object()
_TOO_LONG = object()
_UNASKED = object()


def _split(cmd: Any) -> list[str]:
    try:
        argv = shlex.split(cmd) if isinstance(cmd, str) else []
    except ValueError as exc:
        raise UserError(f"command engine: cannot split cmd {cmd!r}: {exc} (check its quotes)") from None
    if not argv:
        raise UserError('engine "command" needs cmd=...: command(cmd="PROGRAM ARGS")')
    return argv


class _Process:
    """One child process and the threads that read it; knows nothing of the protocol's ops.

    stdout is read line by line by a thread into a queue, so a request waits with a deadline instead of
    blocking in readline(); stderr is drained by another thread into a bounded tail, so a chatty program
    can never fill the pipe and stall.
    """

    def __init__(self, argv: list[str], label: str):
        self.label = label
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                # Its own process group, so ending it also ends anything it started (a shell shim's child
                # would otherwise keep the pipes open and live on).
                start_new_session=os.name == "posix",
            )
        except FileNotFoundError:
            raise UserError(_not_found(argv[0])) from None
        except PermissionError:
            raise UserError(f"command engine: {argv[0]!r} is not executable (chmod +x it, or run it "
                            f"through its interpreter: cmd=\"node {argv[0]}\")") from None
        self.lines: queue.Queue = queue.Queue()
        self._tail = bytearray()
        self._tail_lock = threading.Lock()
        threading.Thread(target=self._read_stdout, name=f"{label}-stdout", daemon=True).start()
        self._err = threading.Thread(target=self._read_stderr, name=f"{label}-stderr", daemon=True)
        self._err.start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_stdout(self) -> None:
        try:
            for line in iter(lambda: self.proc.stdout.readline(MAX_ANSWER_BYTES + 1), b""):
                if len(line) > MAX_ANSWER_BYTES:
                    self.lines.put(_TOO_LONG)  # stop reading: the request fails and the process is killed
                    return
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(_EOF)

    def _read_stderr(self) -> None:
        try:
            for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
                with self._tail_lock:
                    self._tail += chunk
                    del self._tail[:-STDERR_TAIL_BYTES]
        except (OSError, ValueError):
            pass

    def stderr_tail(self) -> str:
        self._err.join(timeout=1.0)  # the last words usually arrive just after the exit
        with self._tail_lock:
            text = bytes(self._tail).decode("utf-8", "replace").strip()
        return text[-STDERR_TAIL_BYTES:] or "(nothing on stderr)"

    def send(self, line: bytes, deadline: float) -> str:
        """Write one request line: "sent", "broken" (the pipe is closed: the process is gone) or "timeout".

        The write runs in a thread: a program that stops reading its stdin would otherwise block a large
        request (an update's change list) forever once the pipe buffer fills.
        """
        done: list[str] = []

        def write() -> None:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
                done.append("sent")
            except (OSError, ValueError):
                done.append("broken")

        writer = threading.Thread(target=write, name=f"{self.label}-stdin", daemon=True)
        writer.start()
        writer.join(timeout=max(deadline - time.monotonic(), 0))
        return done[0] if done else "timeout"

    def close(self, grace: float = 3.0) -> None:
        """End the process: close its stdin (a polite program exits on EOF), after `grace` seconds kill it."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):  # a broken pipe's unflushed request cannot be flushed now
                stream.close()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.proc.poll() is None and os.name == "posix":
                os.killpg(self.proc.pid, signal.SIGKILL)  # its own group (start_new_session), never ours
            elif self.proc.poll() is None:
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)


def _out(out_dir: Path) -> Path:
    out = Path(out_dir).resolve()  # absolute: the program's working directory is not ours to assume
    out.mkdir(parents=True, exist_ok=True)
    return out


def _not_found(program: str) -> str:
    return (f"command engine: program {program!r} not found on PATH "
            f"(install it, or give its full path: command(cmd=\"/path/to/{Path(program).name} ...\"))")


def _close_channel(holder: dict) -> None:
    proc = holder.get("proc")
    if proc is not None:
        proc.close()
        holder["proc"] = None


class CommandEngine(Engine):
    """An external program as an engine, over the JSON-lines protocol described in this module."""

    kind = "command"
    defaults = {"cmd": Param(None, "string"), "timeout": Param(120.0, gt=0), "name": Param(None, "string")}

    def __init__(self, **params: Any):
        super().__init__(**params)
        self.argv = _split(self.params["cmd"])
        self.timeout = float(self.params["timeout"])
        label = self.params["name"]
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise UserError(f"command engine: name must be a non-empty string, got {label!r}")
        # The process lives in a holder the finalizer can reach without keeping the engine alive, so it is
        # ended when the engine is collected or at interpreter exit, whichever comes first.
        self._holder: dict[str, _Process | None] = {"proc": None}
        self._finalizer = weakref.finalize(self, _close_channel, self._holder)
        self._lock = threading.Lock()
        self._update_supported = True
        self._identity: Any = _UNASKED

    @property
    def name(self) -> str:
        """The `name` label when one is given, else the canonical spec string."""
        return self.params["name"] or super().name

    @property
    def pid(self) -> int | None:
        """The process id of the running program, or None when none is running."""
        proc = self._holder["proc"]
        return proc.proc.pid if proc is not None and proc.alive() else None

    def available(self) -> tuple[bool, str | None]:
        if shutil.which(self.argv[0]) is None:
            return False, _not_found(self.argv[0])
        return True, None

    # -- the protocol ---------------------------------------------------------------------------------------
    def _process(self) -> _Process:
        proc = self._holder["proc"]
        if proc is not None and proc.alive():
            return proc
        if proc is not None:
            proc.close()
        if shutil.which(self.argv[0]) is None:
            raise UserError(_not_found(self.argv[0]))
        self._holder["proc"] = proc = _Process(self.argv, f"ctxgauge-{self.kind}")
        return proc

    def _fail(self, proc: _Process, op: str, what: str) -> EngineError:
        """End the process (its protocol state is unknown now) and describe what went wrong."""
        proc.kill()
        proc.close(grace=0)
        self._holder["proc"] = None
        return EngineError(f"engine {self.name}: {op}: {what}")

    def request(self, req: dict) -> dict:
        """Send one request and return its answer object (`ok` true or false); EngineError on a timeout, a
        crash, or an answer that is not a JSON object with a boolean `ok`."""
        op = str(req.get("op"))
        line = json.dumps(req, ensure_ascii=True, allow_nan=False).encode() + b"\n"
        timed_out = f"timed out after {self.timeout:g}s (process killed)"
        with self._lock:
            proc = self._process()
            self._refuse_stray(proc, op)
            deadline = time.monotonic() + self.timeout
            # A broken pipe means the process is gone: read on, so its exit is reported with its stderr.
            if proc.send(line, deadline) == "timeout":
                raise self._fail(proc, op, timed_out + "; it stopped reading its requests")
            raw = b""
            while not raw.strip():  # blank lines between answers are tolerated
                try:
                    raw = proc.lines.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    raise self._fail(proc, op, timed_out) from None
                if raw is _TOO_LONG:
                    raise self._fail(proc, op, f"answered a line longer than {MAX_ANSWER_BYTES >> 20} MiB "
                                               "(process killed)")
                if raw is _EOF:
                    try:
                        code: int | None = proc.proc.wait(timeout=5.0)
                    except subprocess.TimeoutExpired:
                        code = None
                    tail = proc.stderr_tail()
                    raise self._fail(proc, op, f"the process exited (code {code}) without answering; "
                                               f"stderr tail:\n{tail}")
            shown = raw.decode("utf-8", "replace").strip()[:200]
            try:
                answer = json.loads(raw)
            except ValueError:
                raise self._fail(proc, op, f"answered something that is not JSON: {shown!r}") from None
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
                raise self._fail(proc, op, f"answered JSON that is not an object with a boolean 'ok': {shown!r}")
            return answer

    def _refuse_stray(self, proc: _Process, op: str) -> None:
        """A line waiting before the request is sent is an answer to no request (a program that answered
        twice): read later, it would pass for the answer to this request."""
        while True:
            try:
                stray = proc.lines.get_nowait()
            except queue.Empty:
                return
            if stray is _EOF or stray is _TOO_LONG:
                proc.lines.put(stray)  # it exited since its last answer: the request reports that
                return
            if stray.strip():
                shown = stray.decode("utf-8", "replace").strip()[:200]
                raise self._fail(proc, op, f"answered a line no request asked for (before {op}): {shown!r}")

    def _ok(self, req: dict, answer: dict | None = None) -> dict:
        """The answer to `req` (sent now unless given); EngineError with the program's error unless ok."""
        answer = self.request(req) if answer is None else answer
        if not answer["ok"]:
            raise EngineError(f"engine {self.name}: {req['op']} failed: {str(answer.get('error'))[:500]}")
        return answer

    # -- the engine contract --------------------------------------------------------------------------------
    def identity(self) -> dict | None:  # type: ignore[override]
        """The program's own `{id, source, note?}`, or None when it declares none (undeclared)."""
        if self._identity is _UNASKED:
            answer = self.request({"op": "identity"})
            self._identity = _check_identity(self.name, answer.get("identity")) if answer["ok"] else None
        return dict(self._identity) if self._identity is not None else None

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        out = _out(out_dir)
        with _materialized(corpus) as corpus_dir:
            answer = self._ok({"op": "build", "corpus": str(corpus_dir), "out": str(out)})
        return {k: v for k, v in answer.items() if k != "ok"}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        """The program's own update, or a full build once it says it has none (see the module docstring)."""
        if not self._update_supported:
            return self.build(corpus, out_dir)
        out = _out(out_dir)
        payload = [{"status": c.status, "path": c.path, "old_path": c.old_path, "old_blob": c.old_blob,
                    "new_blob": c.new_blob} for c in changes]
        with _materialized(corpus) as corpus_dir:
            req = {"op": "update", "corpus": str(corpus_dir), "out": str(out), "changes": payload}
            answer = self.request(req)
            unsupported = answer.get("unsupported") is True or _UNSUPPORTED.search(str(answer.get("error")))
            if not answer["ok"] and unsupported:
                self._update_supported = False
                answer = self.request({"op": "build", "corpus": str(corpus_dir), "out": str(out)})
                req = {"op": "build"}
            self._ok(req, answer)
        return {k: v for k, v in answer.items() if k != "ok"}

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        answer = self._ok({"op": "query", "out": str(Path(out_dir).resolve()), "text": text, "k": k})
        return _check_hits(self.name, answer.get("hits"), k)

    def close(self) -> None:
        """End the program's process (it is started again by the next request)."""
        with self._lock:
            _close_channel(self._holder)


@contextlib.contextmanager
def _materialized(corpus: Corpus) -> Iterator[Path]:
    """A temporary plain directory holding exactly the corpus's files, removed on exit."""
    path = Path(tempfile.mkdtemp(prefix="ctxgauge-corpus-")).resolve()
    try:
        yield corpus.materialize(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _check_identity(name: str, ident: Any) -> dict:
    if not isinstance(ident, dict) or not isinstance(ident.get("id"), str) or not ident["id"]:
        raise EngineError(f"engine {name}: identity: answer needs identity: {{id, source}}, got {str(ident)[:200]!r}")
    if ident.get("source") not in IDENTITY_SOURCES:
        raise EngineError(f"engine {name}: identity: source must be one of {', '.join(IDENTITY_SOURCES)}, "
                          f"got {ident.get('source')!r}")
    out = {"id": ident["id"], "source": ident["source"]}
    if isinstance(ident.get("note"), str):
        out["note"] = ident["note"]
    return out


def _check_hits(name: str, hits: Any, k: int) -> list[Hit]:
    """The answer's hits as Hit objects, in the program's order; EngineError on any breach of the contract."""
    if not isinstance(hits, list):
        raise EngineError(f"engine {name}: query: answer needs a list 'hits', got {str(hits)[:200]!r}")
    if len(hits) > max(k, 0):
        raise EngineError(f"engine {name}: query: answered {len(hits)} hits for k={k} (the contract allows at most k)")
    out, seen = [], set()
    for i, h in enumerate(hits):
        path = h.get("path") if isinstance(h, dict) else None
        score = h.get("score") if isinstance(h, dict) else None
        if not isinstance(path, str) or not path:
            raise EngineError(f"engine {name}: query: hit {i} has no path: {str(h)[:200]!r}")
        if re.match(r"^([/\\]|[A-Za-z]:)", path) or ".." in re.split(r"[/\\]", path):
            raise EngineError(f"engine {name}: query: hit {i} path {path!r} is not relative to the corpus")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise EngineError(f"engine {name}: query: hit {i} ({path}) score {score!r} is not a finite number")
        if path in seen:
            raise EngineError(f"engine {name}: query: path {path!r} is answered twice")
        seen.add(path)
        out.append(Hit(path, float(score)))
    return out
