"""Reading fingerprint files tolerantly (formats 1 and 2) and writing them atomically (format 2)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxgauge._io import InputError, parse_data, read_input_bytes, write_bytes_atomic
from ctxgauge.errors import UserError

from ._model import FORMAT_KEY, FORMAT_VERSION, KNOWN_KEYS, LEGACY_FORMAT_KEY, CorpusRef, Fingerprint, SystemIdentity

__all__ = ["parse_fingerprint", "read_fingerprint", "write_fingerprint"]


class _Malformed(Exception):
    """Internal: one thing wrong with a parsed document; turned into a UserError naming the file."""


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _optional_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise _Malformed(f"{where}{key!r} must be a string or null, got {_type_name(value)}")
    return value


def _required_str(obj: Mapping[str, Any], key: str, where: str = "") -> str:
    if key not in obj:
        raise _Malformed(f"missing {where}{key!r}")
    value = obj[key]
    if not isinstance(value, str) or not value:
        raise _Malformed(f"{where}{key!r} must be a non-empty string, got {_type_name(value)}")
    return value


def _format_of(obj: Mapping[str, Any]) -> int:
    key = FORMAT_KEY if FORMAT_KEY in obj else LEGACY_FORMAT_KEY if LEGACY_FORMAT_KEY in obj else None
    if key is None:
        # The reference reads a missing key as format 1 (`?? 1`); we follow it only for a document that has
        # the body of a fingerprint, so an unrelated JSON file gets a clear error instead of odd field errors.
        if "artifactHash" in obj or "queryHashes" in obj:
            return 1
        raise _Malformed(f"not a ContextBenchmark fingerprint (no {FORMAT_KEY!r} key)")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Malformed(f"{key!r} must be an integer format number, got {_type_name(value)}")
    if value > FORMAT_VERSION:
        raise UserError(
            f"fingerprint format {value} is newer than this ctxgauge reads (formats 1 to {FORMAT_VERSION}); "
            "upgrade ctxgauge to read it"
        )
    if value < 1:
        raise _Malformed(f"{key!r} must be 1 or {FORMAT_VERSION}, got {value}")
    return value


def _system(value: Any) -> SystemIdentity | None:
    if value is None:
        return None
    if isinstance(value, str):
        # The reference's runner turns a plain-string version() into {id, source: 'declared'}; do the same.
        return SystemIdentity(id=value, source="declared") if value else None
    if not isinstance(value, dict):
        raise _Malformed(f"'system' must be an object or null, got {_type_name(value)}")
    return SystemIdentity(
        id=_required_str(value, "id", "system."),
        source=_required_str(value, "source", "system."),
        note=_optional_str(value, "note", "system."),
        extra={key: val for key, val in value.items() if key not in ("id", "source", "note")},
    )


def _corpus(value: Any) -> CorpusRef:
    if isinstance(value, str) and value:
        return CorpusRef(name=value, hash=None)  # format 1 wrote `corpus: 'micro-app'`
    if not isinstance(value, dict):
        raise _Malformed(f"'corpus' must be an object {{name, hash}} or a name, got {_type_name(value)}")
    return CorpusRef(
        name=_required_str(value, "name", "corpus."),
        hash=_optional_str(value, "hash", "corpus."),
        extra={key: val for key, val in value.items() if key not in ("name", "hash")},
    )


def _k(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Malformed(f"'k' must be a positive integer, got {value!r}")
    return value


def _query_hashes(value: Any) -> dict[str, str]:
    if value is None:
        return {}  # the reference reads a missing map as empty (`?? {}`): a run without the query family
    if not isinstance(value, dict):
        raise _Malformed(f"'queryHashes' must be an object of query text to hash, got {_type_name(value)}")
    for query, digest in value.items():
        if not isinstance(digest, str):
            raise _Malformed(f"'queryHashes'[{query!r}] must be a string, got {_type_name(digest)}")
    return dict(value)


def _parse(obj: Any) -> Fingerprint:
    if not isinstance(obj, dict):
        raise _Malformed(f"top level must be a JSON object, got {_type_name(obj)}")
    fmt = _format_of(obj)
    env = obj.get("env", {})
    if not isinstance(env, dict):
        raise _Malformed(f"'env' must be an object, got {_type_name(env)}")
    return Fingerprint(
        format=fmt,
        benchmark_version=_optional_str(obj, "benchmarkVersion", ""),
        adapter=_required_str(obj, "adapter"),
        system=_system(obj.get("system")),
        corpus=_corpus(obj.get("corpus")),
        k=_k(obj.get("k")),
        env=dict(env),
        artifact_hash=_required_str(obj, "artifactHash"),
        query_hashes=_query_hashes(obj.get("queryHashes")),
        # The legacy key is consumed as the format marker: keeping it would write two format numbers.
        extra={key: val for key, val in obj.items() if key not in KNOWN_KEYS and key != LEGACY_FORMAT_KEY},
    )


def parse_fingerprint(data: Any, source: str = "<data>") -> Fingerprint:
    """Build a Fingerprint from already-decoded JSON (format 1 or 2).

    `source` names the origin in error messages. Raises UserError for a newer format or a malformed document.
    """
    try:
        return _parse(data)
    except _Malformed as exc:
        raise UserError(f"malformed fingerprint {source}: {exc}") from None
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None


def read_fingerprint(path: str | os.PathLike[str]) -> Fingerprint:
    """Read a fingerprint file written by ContextBenchmark (format 1 or 2) or by ctxgauge.

    Tolerant where the reference is: format 1's string `corpus`, the pre-rename `detbenchFingerprint` key, a
    missing `queryHashes`, `system` null or absent, a UTF-8 byte-order mark. Unknown top-level keys (and our
    `ctxgauge` namespace) land in `extra`, in file order, and are written back unchanged.
    Raises UserError naming the file for an unreadable file, invalid JSON, a malformed field, or a format
    newer than 2.
    """
    path = Path(path)
    try:
        raw = read_input_bytes(path, "fingerprint")
    except InputError as exc:
        raise UserError(f"cannot read fingerprint {path}: {exc.problem}") from None
    # The one input reader: a BOM an editor on Windows added is dropped (the same fingerprint); NaN and
    # Infinity are refused (JavaScript's JSON.parse rejects them, so their tool could not read the file);
    # invalid UTF-8, lone surrogates (`\ud800`) and deep nesting are one-line errors, never a traceback.
    data = parse_data(raw, "malformed fingerprint", path, fmt="json")
    fp = parse_fingerprint(data, str(path))
    # Provenance (not part of equality, not settable through __init__) lets compare() refuse a file compared
    # with itself.
    object.__setattr__(fp, "path", path)
    object.__setattr__(fp, "file_sha256", hashlib.sha256(raw).hexdigest())
    return fp


def write_fingerprint(fp: Fingerprint, path: str | os.PathLike[str]) -> Path:
    """Write `fp` as a format 2 file, byte for byte as ContextBenchmark's writer lays it out, atomically.

    The text is `JSON.stringify(obj, null, 1)`: one-space indent, no trailing newline, non-ASCII unescaped.
    Refuses (UserError) a corpus name that is a path, since published files must not carry local paths.
    Returns the path written.
    """
    name = fp.corpus.name
    if "/" in name or "\\" in name or Path(name).is_absolute():
        raise UserError(f"corpus name must be a base name, not a path: {name!r}")
    return write_bytes_atomic(path, fp.to_text().encode("utf-8"))
