"""The secret scan every export runs before it writes a byte: API-key shapes, tokens taken from the
environment, and absolute home paths.

A published tree is copied around and read by strangers; a key pasted into an answer, echoed by a provider
error or kept in a spec would leak with it. So a hit stops the export, naming the file and the line, and
the value itself is never printed whole (the error message may end up in a CI log).

    scanner = SecretScanner.from_environment()
    scanner.check_bytes("runs/r1/run.json", data)          # raises SecretFound on the first hit
    findings = scanner.scan_bytes("runs/r1/run.json", data) # or collect them all
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ctxgauge._redact import normalised, secret_spans
from ctxgauge.errors import UserError

MIN_ENV_SECRET_LENGTH = 8
"""Shortest environment value treated as a secret: shorter ones (`1`, `true`, `dev`) would match everywhere."""

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
"""Environment variable names whose values are treated as secrets."""

# Shapes of keys issued by the services a ctxgauge user is likely to hold keys for. Each is anchored on
# the issuer's fixed prefix, so ordinary identifiers and hashes do not match.
KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OpenAI/Anthropic-style API key", re.compile(r"\bsk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)

# Home directories on the three systems; `[^/\s"']+` is the user name. Only a path *into* a home counts
# (`/home/alice/...`), so the bare word `/home` in prose does not stop an export.
HOME_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\w.])/home/[^/\s\"'<>]+/"),
    re.compile(r"(?<![\w.])/Users/[^/\s\"'<>]+/"),
    re.compile(r"\b[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)[^\\/\s\"'<>]+"),
)


_WINDOW = 512
"""Characters of the previous lines scanned with each line by `check_file` (longer for long secrets)."""

@dataclass(frozen=True)
class Finding:
    """One secret-shaped string in one file."""

    path: str
    """The file, as the export names it (relative to the export or the runs directory)."""
    line: int
    """1-based line number."""
    kind: str
    """What matched: a key shape's name, `environment value of NAME`, or `absolute home path`."""
    excerpt: str
    """The match with all but its first few characters masked, safe to print."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind} ({self.excerpt})"


class SecretFound(UserError):
    """An export stopped because a file holds a secret or a home path; `finding` says where."""

    def __init__(self, finding: Finding):
        super().__init__(f"secret scan: {finding}; nothing was written. Remove it from the run "
                         "(or re-run without it) and export again")
        self.finding = finding


def _mask(value: str) -> str:
    # Enough to recognise which key it was, never enough to use it.
    keep = 4 if len(value) > 12 else 2
    return value[:keep] + "…" + f"[{len(value)} chars]"


@dataclass(frozen=True)
class SecretScanner:
    """Scans text for key shapes, the given environment secrets and home paths."""

    env_secrets: tuple[tuple[str, str], ...] = ()
    """(variable name, value) pairs whose values must not appear, longest value first."""
    homes: tuple[str, ...] = ()
    """This machine's home directories (e.g. `/root`), matched as path prefixes."""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None,
                         min_length: int = MIN_ENV_SECRET_LENGTH) -> "SecretScanner":
        """A scanner for `environ` (default: this process's): every value of a variable whose name looks like
        KEY, TOKEN, SECRET or PASSWORD and is at least `min_length` characters, plus `$HOME`."""
        env = dict(os.environ if environ is None else environ)
        pairs = {(name, value) for name, value in env.items()
                 if SECRET_NAME.search(name) and len(value.strip()) >= min_length}
        homes = []
        home = env.get("HOME") or env.get("USERPROFILE")
        # "/" as a home (some service users) would match every absolute path: not a useful signal.
        if home and len(home.rstrip("/\\")) > 1:
            homes.append(home.rstrip("/\\"))
        ordered = tuple(sorted(pairs, key=lambda p: (-len(p[1]), p[0])))
        return cls(env_secrets=ordered, homes=tuple(homes))

    def scan_line(self, text: str) -> list[tuple[str, str]]:
        """(kind, masked match) for every secret-shaped string in a piece of text (one line or several)."""
        return [(kind, excerpt) for _, _, kind, excerpt in self._hits(text)]

    def _hits(self, text: str) -> list[tuple[int, int, str, str]]:
        """(start, end, kind, masked match) in `text`. Environment secrets and key shapes are found however
        they were wrapped, indented, split by a tab or percent-encoded: the one normal form of
        `ctxgauge._redact`, which provider redaction uses too (a key that would pass one passes neither)."""
        hits: list[tuple[int, int, str, str]] = []
        # Key shapes are looked for in the normal form that keeps plain spaces (`(sk- prefix ...` in prose must
        # not run on into the next words as one long "key"); without its spaces it is the form secrets are
        # looked for in, so it also tells cheaply whether a secret can be there at all (most lines: no).
        shaped = normalised(text, spaces=True)
        flat = shaped.text.replace(" ", "")
        normal = None
        for name, value in self.env_secrets:
            if normalised(value).text not in flat:
                continue
            normal = normal or normalised(text)
            for start, end in secret_spans(text, value, normal):
                hits.append((start, end, f"environment value of {name}", _mask(value)))
        # And in the text as it is: a key right after a line break joins the word before it in the normal
        # form and loses its `\b`.
        seen: set[int] = set()
        for kind, pattern in KEY_SHAPES:
            found = [(shaped.starts[m.start()], shaped.ends[m.end() - 1], m.group(0))
                     for m in pattern.finditer(shaped.text)]
            if shaped.text != text:
                found += [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(text)]
            for start, end, match in found:
                if start not in seen:
                    seen.add(start)
                    hits.append((start, end, kind, _mask(match)))
        starts: set[int] = set()  # one path is one finding, whichever home shapes it matches
        for home in self.homes:
            # A prefix match must end the path component: HOME=/root must not flag /rooted.
            for m in re.finditer(re.escape(home) + r"(?=[/\\\"'\s<>]|$)", text):
                starts.add(m.start())
                hits.append((m.start(), m.end(), "absolute home path", m.group(0)))
        for pattern in HOME_SHAPES:
            for m in pattern.finditer(text):
                if m.start() not in starts:
                    starts.add(m.start())
                    hits.append((m.start(), m.end(), "absolute home path", m.group(0)))
        return sorted(hits, key=lambda h: (h[0], h[2]))

    def scan_bytes(self, path: str, data: bytes) -> list[Finding]:
        """Every finding in a file's bytes (decoded as UTF-8, undecodable bytes replaced), each at the line
        where it starts (lines split on b"\\n" only, as check_file reads them)."""
        text = data.decode("utf-8", errors="replace")
        return [Finding(path, text.count("\n", 0, start) + 1, kind, excerpt)
                for start, _, kind, excerpt in self._hits(text)]

    def check_bytes(self, path: str, data: bytes) -> None:
        """Raise SecretFound for the first finding in `data`."""
        findings = self.scan_bytes(path, data)
        if findings:
            raise SecretFound(findings[0])

    def check_file(self, name: str, path: Path) -> None:
        """Raise SecretFound for the first finding in the file at `path`, reported as `name`.

        The file is read line by line, so a large units file is never held in memory whole; the end of the
        previous lines is scanned with each line, so a secret split over a line break is still found."""
        window = max([_WINDOW, *(4 * len(v) for _, v in self.env_secrets)])
        tail = ""
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.decode("utf-8", errors="replace")
                text = tail + line
                for start, end, kind, excerpt in self._hits(text):
                    if end > len(tail):  # not already wholly inside the lines before
                        raise SecretFound(Finding(name, number if start >= len(tail) else number - 1, kind, excerpt))
                tail = text[-window:]

    def check_all(self, items: Iterable[tuple[str, Path | bytes]]) -> None:
        """Check every (name, file path or bytes) in order; raise SecretFound at the first hit."""
        for name, item in items:
            if isinstance(item, (bytes, bytearray)):
                self.check_bytes(name, bytes(item))
            else:
                self.check_file(name, item)
