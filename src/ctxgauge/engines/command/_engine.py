"""command: any executable that speaks JSON lines on stdin/stdout is an engine.

    command(cmd="node engine.js --fast",timeout=30,name="my-engine")

`cmd` is split with shlex and run directly (never through a shell). One long-lived process serves every
request of an engine object: started at the first request, ended by `close()`, when the engine is collected
or at interpreter exit. One request per line, one answer per line:

    {"op":"build","corpus":DIR,"out":OUT}                  -> {"ok":true, ...stats}
    {"op":"query","out":OUT,"text":TEXT,"k":K}             -> {"ok":true,"hits":[{"path":P,"score":S},...]}
                                                              a hit may add "spans":[{"start":N,"end":M},...]
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
  what a measurement exists to find). So is a hit's spans breaking a rule of `engines/_spans.py`
  (overlapping, out of range, end before start, more than 50): the failure names the rule. The program's
  order is kept as it is: an external engine's order is its own.
- `update` falls back to a full build when the answer is `ok:false` with an error reading "unsupported",
  "unknown op", "not supported" or "not implemented" (or `"unsupported":true`), then builds from there on.
  Any other failure is an EngineError: a rebuild over a failed update would hide what update-identity tests
  are there to catch.
- Every request has a deadline (`timeout` seconds): no answer in time kills the process. After any protocol
  error (garbage, a crash, a timeout, an answer nobody asked for) the process is ended, so a late answer is
  never read as the next request's; the next request starts a new process. Starting, reading, writing
  and ending the process (its own session, bounded reads, never a wait on a pipe's end) is `_process.py`.
- Whose failure it is. A program that cannot be started at all (not found, not executable, not a program the
  system can run) is the user's to mend: a UserError, exit 2 before any run starts. A program that starts
  and then exits, answers `ok:false`, breaks the protocol or never answers (its `identity` included) is an
  EngineError with a one-line reason (what it said last on stderr, cut, and its exit status): the suites
  record the units it served as failed, and `--resume` retries them once it is mended.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import shutil
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Iterator, Sequence

from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit
from ctxgauge.engines.command._process import (
    EOF, MAX_LINE_BYTES, TIMEOUT, TOO_LONG, Process, exit_words, not_executable, not_found,
)
from ctxgauge.engines._spans import spans_from_wire
from ctxgauge.engines._spec import Param
from ctxgauge._untrusted import JSON_DEPTH_LIMIT
from ctxgauge.errors import EngineError, UserError
from ctxgauge.fingerprints import IDENTITY_SOURCES

REASON_STDERR_CHARS = 300
"""How much of the end of the program's stderr a failure reason quotes (its last words: a traceback's last
line names the error). A reason is one line in a unit of record, never the whole stream."""
_UNSUPPORTED = re.compile(r"unsupported|unknown op|not supported|not implemented", re.I)
_UNASKED = object()


def _split(cmd: Any) -> list[str]:
    try:
        argv = shlex.split(cmd) if isinstance(cmd, str) else []
    except ValueError as exc:
        raise UserError(f"command engine: cannot split cmd {cmd!r}: {exc} (check its quotes)") from None
    if not argv:
        raise UserError('engine "command" needs cmd=...: command(cmd="PROGRAM ARGS")')
    return argv


_HOME_WARNED: set[str] = set()


def _home() -> str | None:
    """This user's home directory as it prefixes paths, or None (unset, or `/`: every path would match)."""
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE")
    home = home.rstrip("/\\") if home else ""
    return home if len(home) > 1 else None


def _tilde_places(home: str) -> re.Pattern[str]:
    # The home directory where a path starts: at the start of an argument, after a quote, or after `=`
    # (`--config=/root/x`), and followed by a separator or the argument's end.
    return re.compile(r"(?:^|(?<=[\s'\"=]))" + re.escape(home) + r"(?=[/\\\s'\"]|$)")


def _tilde(text: str) -> str:
    home = _home()
    return text if home is None else _tilde_places(home).sub("~", text)


def home_as_tilde(cmd: str) -> str:
    """`cmd` with this user's home directory written `~`, and one warning line on stderr per command.

    The spec is recorded in the run (the engine's name, the fingerprint's `adapter`) and export refuses any
    file holding a home path: a command engine named by its absolute path was accepted by the run and
    refused only at export (issue 39). Written `~`, the record names no user and still runs here; the
    program is started with `~` expanded (`_expand_tilde`), never through a shell."""
    out = _tilde(cmd)
    if out != cmd and cmd not in _HOME_WARNED:
        _HOME_WARNED.add(cmd)
        import sys

        print(f"note: command engine: cmd names your home directory ({_home()}); recorded as ~ so the run "
              f"can be exported: {out}", file=sys.stderr)
    return out


def _expand_tilde(arg: str) -> str:
    """An argument with a leading `~` (or `~` after `=`) expanded to this user's home directory."""
    home = _home()
    if home is None:
        return arg
    return re.sub(r"(?:^|(?<==))~(?=[/\\]|$)", lambda _: home, arg)


def _why_not_runnable(program: str) -> str | None:
    """Why `program` cannot be started (the user's to mend), or None when it can be."""
    if shutil.which(program) is not None:
        return None
    if os.sep in program and Path(program).is_file():
        return not_executable(program)
    return not_found(program)


def _out(out_dir: Path) -> Path:
    out = Path(out_dir).resolve()  # absolute: the program's working directory is not ours to assume
    out.mkdir(parents=True, exist_ok=True)
    return out


def _last_words(stderr: str) -> str:
    """The end of a program's stderr as one line: its lines joined by ` | `, the last REASON_STDERR_CHARS."""
    text = " | ".join(line.strip() for line in stderr.splitlines() if line.strip())
    if not text:
        return "nothing on stderr"
    return f"stderr: {text}" if len(text) <= REASON_STDERR_CHARS else f"stderr (end): …{text[-REASON_STDERR_CHARS:]}"


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
        if isinstance(params.get("cmd"), str):
            params["cmd"] = home_as_tilde(params["cmd"])
        super().__init__(**params)
        self.argv = [_expand_tilde(a) for a in _split(self.params["cmd"])]
        self.timeout = float(self.params["timeout"])
        label = self.params["name"]
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise UserError(f"command engine: name must be a non-empty string, got {label!r}")
        # The process lives in a holder the finalizer can reach without keeping the engine alive, so it is
        # ended when the engine is collected or at interpreter exit, whichever comes first.
        self._holder: dict[str, Process | None] = {"proc": None}
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
        return proc.pid if proc is not None and proc.alive() else None

    def available(self) -> tuple[bool, str | None]:
        why = _why_not_runnable(self.argv[0])
        return (why is None), (None if why is None else _tilde(why))  # a skip reason is recorded

    # -- the protocol ---------------------------------------------------------------------------------------
    def _process(self) -> Process:
        proc = self._holder["proc"]
        if proc is not None and proc.alive():
            return proc
        if proc is not None:
            proc.close(grace=0)
        why = _why_not_runnable(self.argv[0])
        if why is not None:
            raise UserError(why)
        self._holder["proc"] = proc = Process(self.argv, f"ctxgauge-{self.kind}")
        return proc

    def _fail(self, proc: Process, op: str, what: str) -> EngineError:
        """End the process (its protocol state is unknown now) and describe what went wrong, on one line."""
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
            raw: Any = b""
            while not raw.strip():  # blank lines between answers are tolerated
                raw = proc.receive(deadline)
                if raw is TIMEOUT:
                    raise self._fail(proc, op, timed_out)
                if raw is TOO_LONG:
                    raise self._fail(proc, op, f"answered a line longer than {MAX_LINE_BYTES >> 20} MiB "
                                               "(process killed)")
                if raw is EOF:
                    code = proc.exit_code()
                    what = ("closed its stdout without answering (process killed)" if code is None else
                            f"the process exited with {exit_words(code)} before answering")
                    raise self._fail(proc, op, f"{what}; {_last_words(proc.stderr_tail())}")
            shown = raw.decode("utf-8", "replace").strip()[:200]
            try:
                answer = json.loads(raw)
            except RecursionError:
                raise self._fail(proc, op, f"answered JSON nested more than {JSON_DEPTH_LIMIT} levels deep: "
                                           f"{shown[:40]!r}") from None
            except ValueError:
                raise self._fail(proc, op, f"answered something that is not JSON: {shown!r}") from None
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
                raise self._fail(proc, op, f"answered JSON that is not an object with a boolean 'ok': {shown!r}")
            return answer

    def _refuse_stray(self, proc: Process, op: str) -> None:
        """A line waiting before the request is sent is an answer to no request (a program that answered
        twice): read later, it would pass for the answer to this request."""
        stray = proc.stray()
        if isinstance(stray, bytes):
            shown = stray.decode("utf-8", "replace").strip()[:200]
            raise self._fail(proc, op, f"answered a line no request asked for (before {op}): {shown!r}")

    def _ok(self, req: dict, answer: dict | None = None) -> dict:
        """The answer to `req` (sent now unless given); EngineError with the program's error unless ok."""
        answer = self.request(req) if answer is None else answer
        if not answer["ok"]:
            error = " ".join(str(answer.get("error")).split())  # one line in a unit's reason
            raise EngineError(f"engine {self.name}: {req['op']} failed: {error[:500]}")
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
        spans = spans_from_wire(h.get("spans"), f"engine {name}: query: hit {i} ({path})")
        out.append(Hit(path, float(score), spans))
    return out
