"""Step and edit types for the sample history, plus helpers that generate content.

Conventions for the edit helpers:

* ``W(path, text)`` writes a whole file; ``B(path, data)`` writes bytes.
* ``R(path, old, new)`` replaces ``old``, which must occur exactly once.
* ``A(path, text)`` appends.
* ``Move(src, dst)`` is ``git mv``; ``Delete(path)`` is ``git rm``.

A text argument that starts with a newline loses that one newline, so file
contents can begin on the line after the opening quotes.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

# ---------------------------------------------------------------------------
# Step and edit types


@dataclass(frozen=True)
class Author:
    name: str
    email: str


@dataclass(frozen=True)
class Write:
    path: str
    data: bytes


@dataclass(frozen=True)
class Replace:
    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Append:
    path: str
    text: str


@dataclass(frozen=True)
class Move:
    src: str
    dst: str


@dataclass(frozen=True)
class Delete:
    path: str


Edit = Write | Replace | Append | Move | Delete


def _message(subject: str, body: str) -> str:
    return f"{subject}\n\n{body.strip()}\n" if body.strip() else f"{subject}\n"


@dataclass(frozen=True)
class Commit:
    subject: str
    author: Author
    edits: tuple[Edit, ...]
    body: str = ""
    committer: Author | None = None

    @property
    def message(self) -> str:
        return _message(self.subject, self.body)


@dataclass(frozen=True)
class Branch:
    """Create a branch at the current commit and switch to it."""

    name: str


@dataclass(frozen=True)
class Checkout:
    name: str


@dataclass(frozen=True)
class Merge:
    """``git merge --no-ff`` of ``branch`` into the current branch, then delete it."""

    branch: str
    subject: str
    author: Author
    body: str = ""
    committer: Author | None = None

    @property
    def message(self) -> str:
        return _message(self.subject, self.body)


@dataclass(frozen=True)
class Tag:
    """A lightweight tag on the current commit."""

    name: str


Step = Commit | Branch | Checkout | Merge | Tag


def _text(text: str) -> str:
    return text[1:] if text.startswith("\n") else text


def W(path: str, text: str) -> Write:
    return Write(path, _text(text).encode("utf-8"))


def B(path: str, data: bytes) -> Write:
    return Write(path, data)


def R(path: str, old: str, new: str) -> Replace:
    return Replace(path, _text(old), _text(new))


def A(path: str, text: str) -> Append:
    return Append(path, _text(text))


def C(subject: str, author: Author, *edits: Edit, body: str = "",
      committer: Author | None = None) -> Commit:
    return Commit(subject, author, tuple(edits), _text(body), committer)


# ---------------------------------------------------------------------------
# People

MAYA = Author("Maya Lindqvist", "maya@lindqvist.dev")
TOMASZ = Author("Tomasz Nowak", "tomasz.nowak@fastmail.com")
PRIYA = Author("Priya Raman", "priya.raman@outlook.com")
DIEGO = Author("Diego Alvarez", "diego@alvarez.io")
DEPENDABOT = Author("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")
# GitHub commits on behalf of the bot, as it does for real dependabot PRs.
GITHUB = Author("GitHub", "noreply@github.com")


# ---------------------------------------------------------------------------
# Generated content

# A 16x16 greyscale PNG (an open book). Literal bytes rather than generated
# with zlib, so the fixture cannot change with the zlib version.
LOGO_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000100000001008000000003a98a0bd"
    "0000001a4944415478da63f88f0618b0096803415717881cfa02f87d0b006e69a4"
    "89ee8808c60000000049454e44ae426082"
)


def _integrity(name: str, version: str) -> str:
    # Stands in for the registry's tarball hash: same shape, stable per version.
    digest = hashlib.sha512(f"{name}@{version}".encode()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def package_json(version: str, dev: dict[str, str]) -> str:
    data = {
        "name": "shelfd-web",
        "version": version,
        "private": True,
        "type": "module",
        "scripts": {
            "build": "tsc -p .",
            "typecheck": "tsc --noEmit -p .",
            "test": "vitest run",
        },
        "devDependencies": dict(sorted(dev.items())),
    }
    return json.dumps(data, indent=2) + "\n"


def package_lock(version: str, dev: dict[str, str], resolved: dict[str, str]) -> str:
    """A small package-lock.json in npm's v3 layout.

    ``dev`` holds the ranges from package.json, ``resolved`` the exact
    versions installed (transitive ones included).
    """
    packages: dict[str, object] = {
        "": {"name": "shelfd-web", "version": version, "devDependencies": dict(sorted(dev.items()))}
    }
    for name, exact in sorted(resolved.items()):
        tarball = name.split("/")[-1]
        packages[f"node_modules/{name}"] = {
            "version": exact,
            "resolved": f"https://registry.npmjs.org/{name}/-/{tarball}-{exact}.tgz",
            "integrity": _integrity(name, exact),
            "dev": True,
        }
    data = {
        "name": "shelfd-web",
        "version": version,
        "lockfileVersion": 3,
        "requires": True,
        "packages": packages,
    }
    return json.dumps(data, indent=2) + "\n"
