"""One external program as a child process: started in its own session, read and written with deadlines,
ended with everything it started. Knows nothing of the command engine's JSON protocol (`command.py`).

Decisions, and the failures they prevent:
- The program starts in a session (and process group) of its own, and ending it kills the whole group, even
  after the program itself has exited: a shell shim (`sh -c 'helper & exec engine'`) or a helper the program
  started inherits its pipes and would otherwise live on holding them.
- No read ever waits for end-of-file alone. A grandchild that holds stdout keeps the pipe open after the
  program exits, so the program's exit is watched directly (`receive` reports it within EXIT_GRACE seconds),
  and the reader threads wait on the pipe *and* a wake-up pipe of our own, so `close()` ends them at once
  whoever still holds the other end. (Closing a buffered pipe while a thread blocks in its readline waits
  for that thread's lock: `ctxgauge query` hung until the grandchild exited.)
- Writes are non-blocking with a deadline: a program that stops reading its stdin cannot block a request
  once the pipe buffer fills.
- Reads are bounded: an answer line longer than MAX_LINE_BYTES fails its request (a no-newline flood grew
  memory to gigabytes before the timeout), and stderr keeps only its last STDERR_TAIL_BYTES.

A helper that leaves the session on purpose (a daemon that calls setsid) is out of reach of the group kill;
its pipes are closed on our side and nothing here waits for it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

from ctxgauge._lifeline import die_with_parent
from ctxgauge.errors import UserError

MAX_LINE_BYTES = 8 << 20
"""The longest answer line read (a k=100 answer is a few kB): a program flooding stdout without a newline
must fail its request, not grow ctxgauge's memory until the timeout."""
STDERR_TAIL_BYTES = 4000
"""How much of the end of the program's stderr is kept for failure reasons."""
EXIT_GRACE = 0.5
"""Seconds a request keeps reading after the program exited: its last answer may still be in the pipe."""
POSIX = os.name == "posix"

EOF = object()
"""The program closed stdout (or exited without answering)."""
TOO_LONG = object()
"""An answer line longer than MAX_LINE_BYTES: reading stopped."""
TIMEOUT = object()
"""Nothing arrived before the deadline."""


def not_found(program: str) -> str:
    """The one line for a program that cannot be found."""
    return (f"command engine: program {program!r} not found on PATH "
            f"(install it, or give its full path: command(cmd=\"/path/to/{Path(program).name} ...\"))")


def not_executable(program: str) -> str:
    """The one line for a file that is there but cannot be run."""
    return (f"command engine: {program!r} is not executable (chmod +x it, or run it through its "
            f"interpreter: cmd=\"python3 {program}\")")


def exit_words(code: int) -> str:
    """`status 3` or `signal 9 (SIGKILL)`."""
    if code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


class Process:
    """A started program with threads draining its stdout (into lines) and its stderr (into a bounded tail).

    `cwd` is the program's working directory. Every program is started with `_lifeline.die_with_parent`: on
    Linux the kernel kills it when the thread that started it ends, ctxgauge killed with SIGKILL included, so
    start a program from a thread that lives as long as the program should (the mcp engine's event-loop
    thread)."""

    def __init__(self, argv: list[str], label: str, *, cwd: str | Path | None = None):
        self.label = label
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                start_new_session=POSIX, cwd=cwd, preexec_fn=die_with_parent(),  # killed with its parent (`_lifeline`)
            )
        except FileNotFoundError:
            raise UserError(not_found(argv[0])) from None
        except PermissionError:
            raise UserError(not_executable(argv[0])) from None
        except OSError as exc:  # e.g. a script without a #! line: the system cannot run it
            raise UserError(f"command engine: cannot start {argv[0]!r} ({exc.strerror or exc}); "
                            "check that it is a program, or name its interpreter in cmd") from None
        if POSIX:
            os.set_blocking(self.proc.stdin.fileno(), False)
        self.lines: queue.Queue = queue.Queue()
        self._tail = bytearray()
        self._tail_lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe() if POSIX else (-1, -1)
        self._closed = False
        self._threads = [
            threading.Thread(target=self._read_stdout, name=f"{label}-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"{label}-stderr", daemon=True),
        ]
        for t in self._threads:
            t.start()

    @property
    def pid(self) -> int:
        """The program's process id (also its process group's id)."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the program itself is still running."""
        return self.proc.poll() is None

    # -- reading ----------------------------------------------------------------------------------------
    def _chunks(self, stream) -> Iterator[bytes]:
        """The pipe's bytes as they arrive, until end-of-file or `close()` (whichever comes first)."""
        fd = stream.fileno()
        while True:
            try:
                if POSIX:
                    ready, _, _ = select.select([fd, self._wake_r], [], [])
                    if self._wake_r in ready:
                        return
                chunk = os.read(fd, 65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            yield chunk

    def _read_stdout(self) -> None:
        pending = bytearray()
        for chunk in self._chunks(self.proc.stdout):
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                self.lines.put(bytes(pending[:end + 1]))
                del pending[:end + 1]
            if len(pending) > MAX_LINE_BYTES:
                self.lines.put(TOO_LONG)  # stop reading: the request fails and the process is killed
                return
        if pending:
            self.lines.put(bytes(pending))  # a last answer without its newline
        self.lines.put(EOF)

    def _read_stderr(self) -> None:
        for chunk in self._chunks(self.proc.stderr):
            with self._tail_lock:
                self._tail += chunk
                del self._tail[:-STDERR_TAIL_BYTES]

    def receive(self, deadline: float) -> object:
        """The next line of stdout (bytes), or EOF, TOO_LONG or TIMEOUT.

        EOF also when the program exited and nothing more arrived within EXIT_GRACE seconds: a grandchild
        holding stdout must not make the request wait for an end-of-file that never comes."""
        exited_at = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                return TIMEOUT
            try:
                return self.lines.get(timeout=min(deadline - now, 0.05 if exited_at else 0.25))
            except queue.Empty:
                pass
            if self.proc.poll() is not None:
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at >= EXIT_GRACE:
                    return EOF

    def stray(self) -> object | None:
        """A line waiting before any request was sent (or EOF/TOO_LONG, left in place), else None."""
        while True:
            try:
                item = self.lines.get_nowait()
            except queue.Empty:
                return None
            if item is EOF or item is TOO_LONG:
                self.lines.put(item)  # it exited since its last answer: the next request reports that
                return item
            if item.strip():
                return item

    def stderr_tail(self) -> str:
        """The end of what the program wrote on stderr, decoded, stripped (possibly empty)."""
        if not self.alive():
            self._threads[1].join(timeout=EXIT_GRACE)  # its last words usually arrive just after the exit
        with self._tail_lock:
            return bytes(self._tail).decode("utf-8", "replace").strip()

    def exit_code(self, wait: float = 2.0) -> int | None:
        """The program's exit code (negative: the signal), waiting up to `wait` seconds; None if still running."""
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    # -- writing ----------------------------------------------------------------------------------------
    def send(self, line: bytes, deadline: float) -> str:
        """Write one request line: "sent", "broken" (the pipe is closed: the program is gone) or "timeout"."""
        fd = self.proc.stdin.fileno()
        view = memoryview(line)
        while view:
            if POSIX:
                left = deadline - time.monotonic()
                if left <= 0:
                    return "timeout"
                _, ready, _ = select.select([], [fd], [], left)
                if not ready:
                    return "timeout"
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: nobody reads the other end any more
                return "broken"
        return "sent"

    # -- ending -----------------------------------------------------------------------------------------
    def kill(self) -> None:
        """Kill the program's whole process group at once (anything it started too) and reap the program."""
        if POSIX:
            # The group outlives its leader while a member lives; its id stays reserved until then, so this
            # reaches only what the program started. Never our own group: the program has a session of its own.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        elif self.alive():
            with contextlib.suppress(OSError):
                self.proc.kill()
        self.exit_code(wait=5.0)

    def close(self, grace: float = 3.0) -> None:
        """End the program: close its stdin (a polite program exits on EOF), after `grace` seconds kill it;
        then kill what is left of its group, stop the reader threads and close every pipe. Never blocks on
        a pipe, whoever holds its other end."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        if self.alive() and grace > 0:
            self.exit_code(wait=grace)
        self.kill()
        if POSIX:
            os.write(self._wake_w, b"x")
            for t in self._threads:
                t.join(timeout=2.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        if POSIX:
            for fd in (self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
