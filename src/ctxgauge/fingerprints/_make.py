"""Building a fingerprint from a determinism run: the machine description and the record itself."""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ctxgauge import __version__

from ._hashing import query_hash
from ._model import (
    BENCHMARK_VERSION,
    FORMAT_VERSION,
    IDENTITY_SOURCES,
    NAMESPACE,
    CorpusRef,
    Fingerprint,
    SystemIdentity,
)

__all__ = ["corpus_base_name", "env_info", "make_fingerprint", "namespace_info"]

# platform.machine() spelling -> Node's process.arch. Node reports the arch its binary was built for and Python
# the kernel's, which agree except under emulation (Rosetta, WOW64).
_NODE_ARCH = {
    "x86_64": "x64", "amd64": "x64", "x64": "x64",
    "aarch64": "arm64", "arm64": "arm64", "armv8l": "arm64",
    "i386": "ia32", "i486": "ia32", "i586": "ia32", "i686": "ia32", "x86": "ia32",
    "armv6l": "arm", "armv7l": "arm", "arm": "arm",
    "ppc64le": "ppc64", "ppc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64", "loongarch64": "loong64",
}

# sys.platform prefix -> Node's process.platform (Python appends a version to some BSDs, "freebsd14").
_NODE_PLATFORM = (
    ("linux", "linux"), ("win32", "win32"), ("cygwin", "win32"), ("darwin", "darwin"), ("freebsd", "freebsd"),
    ("openbsd", "openbsd"), ("netbsd", "netbsd"), ("sunos", "sunos"), ("aix", "aix"),
)


def _node_platform() -> str:
    for prefix, name in _NODE_PLATFORM:
        if sys.platform.startswith(prefix):
            return name
    return sys.platform


def _node_release(node_platform: str) -> str:
    # Node's os.release(): uname's release on POSIX ("6.8.0-45-generic", Darwin "23.4.0"), and on Windows the
    # "major.minor.build" version ("10.0.19045"), which Python reports as platform.version().
    return platform.version() if node_platform == "win32" else platform.release()


def env_info() -> dict[str, str]:
    """The `env` object of a fingerprint, as ContextBenchmark's runner writes it, without the `node` key.

    - `os`: `"<platform> <release>"`, Node's `` `${os.platform()} ${os.release()}` `` (e.g. `"linux 6.8.0-45"`,
      `"win32 10.0.19045"`); the first word is what Node calls process.platform (linux, win32, darwin, ...).
    - `arch`: Node's process.arch name (x64, arm64, ia32, ...).

    Our Python version is not here (the reference's `env.node` describes its runtime) but under our namespace;
    see namespace_info().
    """
    name = _node_platform()
    release = _node_release(name)
    machine = platform.machine()
    return {
        "os": f"{name} {release}" if release else name,
        "arch": _NODE_ARCH.get(machine.lower(), machine.lower() or "unknown"),
    }


def namespace_info() -> dict[str, str]:
    """The fields every ctxgauge fingerprint carries under `"ctxgauge"`: our version and Python's."""
    return {"version": __version__, "python": platform.python_version()}


def corpus_base_name(name: str) -> str:
    """Reduce a corpus name or path to its base name, as the reference does (`path.split('/').pop()`).

    Backslashes count as separators and trailing separators are ignored, so `C:\\src\\app\\` gives `app`.
    """
    parts = [part for part in name.replace("\\", "/").split("/") if part]
    if not parts or parts[-1] in (".", ".."):
        raise ValueError(f"corpus name has no base name: {name!r}")
    return parts[-1]


def _identity(system: SystemIdentity | Mapping[str, Any] | None) -> SystemIdentity | None:
    if system is None:
        return None
    if isinstance(system, Mapping):
        unknown = set(system) - {"id", "source", "note"}
        if unknown:
            raise ValueError(f"system identity has unknown keys: {', '.join(sorted(unknown))}")
        system = SystemIdentity(id=system.get("id", ""), source=system.get("source", ""), note=system.get("note"))
    if not isinstance(system.id, str) or not system.id:
        raise ValueError("system identity needs a non-empty string id")
    # Writing is where the vocabulary is enforced; reading keeps whatever another tool wrote.
    if system.source not in IDENTITY_SOURCES:
        raise ValueError(f"system source must be one of {', '.join(IDENTITY_SOURCES)}, got {system.source!r}")
    return system


def make_fingerprint(
    adapter: str,
    system: SystemIdentity | Mapping[str, Any] | None,
    corpus_name: str,
    corpus_hash: str,
    k: int,
    artifact_hash: str,
    query_results: Mapping[str, Sequence[str]],
    extra: Mapping[str, Any] | None = None,
) -> Fingerprint:
    """Build the format 2 fingerprint of one engine's run on this machine.

    - `system`: the engine's `identity()` (`{id, source, note?}`, source one of content-hash, git-sha,
      declared) or None when it declares none, which makes every later comparison unverified.
    - `corpus_name`: reduced to its base name (a published file must not carry a local path).
    - `query_results`: query text -> ranked corpus-relative paths; each is hashed with query_hash(), in the
      mapping's order (the reference writes queries in the order of its queries.json).
    - `extra`: our own fields, written under the `"ctxgauge"` key after `version` and `python`
      (namespace_info()), which it may not replace.

    `env` is env_info(); `benchmarkVersion` is BENCHMARK_VERSION, the protocol we implement.
    """
    if not adapter:
        raise ValueError("adapter name must not be empty")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    namespace: dict[str, Any] = namespace_info()
    clash = set(namespace) & set(extra or {})
    if clash:
        raise ValueError(f"extra may not replace ctxgauge's own fields: {', '.join(sorted(clash))}")
    namespace.update(extra or {})
    return Fingerprint(
        format=FORMAT_VERSION,
        benchmark_version=BENCHMARK_VERSION,
        adapter=adapter,
        system=_identity(system),
        corpus=CorpusRef(name=corpus_base_name(corpus_name), hash=corpus_hash),
        k=k,
        env=env_info(),
        artifact_hash=artifact_hash,
        query_hashes={query: query_hash(paths) for query, paths in query_results.items()},
        extra={NAMESPACE: namespace},
    )
