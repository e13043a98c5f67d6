"""Files in and out: atomic, canonical writes (a reader never sees half a file, equal data gives equal bytes),
the one rule for names that become paths, and the one reader of JSON and YAML input with its user errors."""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path
from typing import Any, Iterable

from ctxgauge.errors import UserError

from ctxgauge._killpoints import checkpoint
from ctxgauge._untrusted import INPUT_FILE_LIMIT, JSON_DEPTH_LIMIT, Refused, kind_of, read_regular


def canonical_json(obj: Any, *, indent: int | None = None) -> str:
    """JSON with sorted keys and no ASCII escaping: the same object always serialises to the same bytes.

    Lone surrogates (a file name with bytes that are not UTF-8, read with surrogateescape) are written as
    `\\udcxx` escapes, so the text is valid UTF-8 and reads back as the same string."""
    if indent is None:
        text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    else:
        text = json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent, allow_nan=False)
    return escape_surrogates(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate as its `\\uXXXX` escape (only possible inside a string literal,
    where the escape is valid JSON and decodes back to the same character)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write `data` so a reader sees the old file or the new one, never half of one; returns the path.

    The bytes go to a uniquely named temporary file in the same directory (os.replace is atomic only within
    one file system), are synced, then renamed over the target. O_EXCL never follows or reuses a file someone
    else placed at the temporary name; mode 0o666 lets the umask decide, as for any file a user writes
    (mkstemp's 0o600 would leave records unreadable to others).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        exc.filename = str(path)
        raise
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            checkpoint(f"fsync-before/{path.name}")
            os.fsync(handle.fileno())
            checkpoint(f"fsync-after/{path.name}")
        os.replace(tmp, path)
        checkpoint(f"rename-after/{path.name}")
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and (exc.filename is None or str(exc.filename) == str(tmp)):
            exc.filename = str(path)  # a full disk or read-only folder is reported at the file the user knows
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Canonical JSON (sorted keys), newline-terminated, written atomically."""
    write_text_atomic(path, canonical_json(obj, indent=indent) + "\n")


def read_json(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


# -- names that become paths --------------------------------------------------------------------------------
# One rule for every writer that turns a name it did not choose (a tree entry of an inspected repository, a
# question, case, run, engine or battery id read from an input file) into a path: a name may not climb out
# (`..`), vanish (empty, `.`), reach into git's own directory (`.git` in any case: case-insensitive file
# systems treat `.GIT` as `.git`), or hold a separator or byte some file system reads as structure
# (`\` on Windows, NUL, control characters, which also split the one-line error a user sees).
_UNSAFE_CHARS = re.compile(r"[\\\x00-\x1f\x7f]")
_SURROGATES = re.compile("[\ud800-\udfff]")  # what os.fsdecode makes of bytes that are not UTF-8


def unsafe_name_reason(name: str) -> str | None:
    """Why `name` may not be one path component, or None when it may (see the rule above)."""
    if name in ("", ".", ".."):
        return f"the name {name!r} is not a file name"
    if name.casefold() == ".git":
        return f"{name!r} is git's own directory"
    if "/" in name:
        return f"{name!r} holds a '/'"
    bad = _UNSAFE_CHARS.search(name)
    if bad:
        return f"{name!r} holds the character {bad.group()!r}"
    if not name.isascii() and _SURROGATES.search(name):
        return f"{name!r} holds bytes that are not UTF-8"
    return None


def safe_relpath(path: str, what: str = "path") -> str:
    """`path` (POSIX, relative) when every component is a safe name; a UserError naming the bad component."""
    if path.startswith("/"):
        raise UserError(f"{what} {path!r} is absolute; only relative paths are written")
    for part in path.split("/"):
        reason = unsafe_name_reason(part)
        if reason:
            raise UserError(f"{what} {path!r} refused: {reason}")
    return path


def safe_join(root: str | Path, path: str, what: str = "path") -> Path:
    """`root / path` for a relative POSIX `path` that cannot leave `root` (checked by `safe_relpath`)."""
    return Path(root).joinpath(*safe_relpath(path, what).split("/"))


MAX_NAME_BYTES = 200
"""Longest data-derived file name kept as it is. File systems allow 255 bytes a name; a writer adds a suffix
(`.fingerprint.json`, 17) and the atomic writer's temporary name adds about 24 more, so a 215-character engine
spec failed after every unit was measured (ENAMETOOLONG). 200 keeps every name written so far unchanged."""
NAME_HASH_HEX = 12
"""Hex digits of the SHA-256 of the original name that end a shortened one."""


def bounded_name(made: str, original: str | None = None) -> str:
    """`made` when it is at most MAX_NAME_BYTES in UTF-8, else its head cut on a character boundary plus `-`
    and NAME_HASH_HEX hex digits of the SHA-256 of `original` (default `made`), MAX_NAME_BYTES in all: names
    that share a long head still differ, and the same name always shortens the same way."""
    if len(made.encode("utf-8", "surrogateescape")) <= MAX_NAME_BYTES:
        return made
    import hashlib

    digest = hashlib.sha256((made if original is None else original).encode("utf-8", "surrogatepass")).hexdigest()
    head = made.encode("utf-8", "surrogateescape")[: MAX_NAME_BYTES - NAME_HASH_HEX - 1]
    return head.decode("utf-8", "ignore") + "-" + digest[:NAME_HASH_HEX]


def safe_file_names(names: Iterable[str], what: str) -> dict[str, str]:
    """A file name for each of `names` (ids read from input), unchanged when already safe and plain,
    otherwise made safe (every character outside letters, digits, `-`, `_`, `.` and `@` becomes `_`, a leading
    dot too), and at most MAX_NAME_BYTES long (`bounded_name`). Two names that come out the same are refused,
    never written over each other."""
    out: dict[str, str] = {}
    taken: dict[str, str] = {}
    for name in names:
        if name in out:
            continue
        made = bounded_name(re.sub(r"[^\w.@-]|^\.", "_", name, flags=re.ASCII) or "_", name)
        other = taken.get(made.casefold())
        if other is not None:
            raise UserError(f"{what}s {other!r} and {name!r} both become the file name {made!r}; rename one of them")
        taken[made.casefold()] = name
        out[name] = made
    return out


# -- reading JSON and YAML input ----------------------------------------------------------------------------
MAX_DEPTH = JSON_DEPTH_LIMIT
"""Deepest nesting accepted in an input file (the limit is named with the others in `_untrusted`): deeper
documents are refused with one line, where they would otherwise raise RecursionError when parsed, compared
or written back."""

_KINDS = {dict: "an object (a mapping of names to values)", list: "a list", str: "text"}


class InputError(UserError):
    """An input file that cannot be read as the data it should hold: missing, unreadable, not UTF-8, not
    valid JSON/YAML, nested too deeply, holding a lone surrogate, a non-text key, a non-finite number, or
    of the wrong top-level type. One line: `<what> <path>: <problem>`, exit code 2."""

    def __init__(self, what: str, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{what} {_shown(path)}: {problem}")


def _shown(path: str | Path) -> str:
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape", "backslashreplace").decode("ascii")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def read_data(path: str | Path, what: str = "file", *, fmt: str | None = None, expect: type | None = None,
              finite: bool = True, surrogates: bool = False, shape: str | None = None) -> Any:
    """THE reader of JSON and YAML input files: the parsed document, or an InputError saying what is wrong.

    `fmt` is `json` or `yaml` (default: by suffix, `.yaml`/`.yml` YAML, anything else JSON); a UTF-8
    byte-order mark is accepted; `expect` (dict or list) is the required top-level type (`shape` says what the
    document should be, for the message, e.g. "a JSON list of strings"); `finite` refuses
    NaN and infinities (JSON's `NaN`, YAML's `.inf`), which no record can be written with. Every string and
    key is checked to be encodable UTF-8 (`surrogates`: except the `\\udcxx` escapes ctxgauge's own records
    use for file names that are not UTF-8), every key to be text, and the depth to be at most MAX_DEPTH.
    """
    p = Path(path)
    raw = read_input_bytes(p, what)
    if fmt is None:
        fmt = "yaml" if p.suffix.lower() in (".yaml", ".yml") else "json"
    return parse_data(raw, what, p, fmt=fmt, expect=expect, finite=finite, surrogates=surrogates, shape=shape)


def parse_data(raw: bytes | str, what: str, where: str | Path, *, fmt: str = "json", expect: type | None = None,
               finite: bool = True, surrogates: bool = False, shape: str | None = None) -> Any:
    """`read_data` for bytes or text already in hand (one line of a JSON-lines file, a child's answer)."""
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise InputError(what, where, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                         "save it as UTF-8") from None
    try:
        if fmt == "yaml":
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text, parse_constant=_reject_constant if finite else None)
    except RecursionError:
        raise InputError(what, where, f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except json.JSONDecodeError as exc:
        raise InputError(what, where, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:
        raise InputError(what, where, f"not valid JSON ({exc})") from None
    except Exception as exc:  # yaml.YAMLError and its kin (ConstructorError, ScannerError, ...)
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(what, where, f"not valid YAML{at} ({problem})") from None
    problem = check_data(data, finite=finite, surrogates=surrogates)
    if problem:
        raise InputError(what, where, problem)
    if expect is not None and not isinstance(data, expect):
        wanted = shape or f"{_KINDS.get(expect, expect.__name__)} at the top"
        raise InputError(what, where, f"expected {wanted}, got {_kind_of(data)}")
    return data


def _kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def check_data(data: Any, *, finite: bool = True, surrogates: bool = False) -> str | None:
    """Why parsed data cannot be used safely (see read_data), or None. Iterative, and each container is
    visited once, so neither deep nesting nor a YAML alias bomb can exhaust the stack or the clock."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not surrogates and not _encodable(value):
                return f"holds text that is not valid Unicode (a lone surrogate such as \\ud800 in {value[:40]!r})"
        elif isinstance(value, float):
            if finite and (value != value or value in (float("inf"), float("-inf"))):
                return f"holds the non-finite number {value}; write a finite number"
        elif isinstance(value, (dict, list)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if depth > MAX_DEPTH:
                return f"nested too deeply (more than {MAX_DEPTH} levels)"
            if isinstance(value, dict):
                for key in value:
                    if not isinstance(key, str):
                        return f"the key {key!r} is not text (quote it: keys are names)"
                    if not surrogates and not _encodable(key):
                        return f"holds a key that is not valid Unicode ({key[:40]!r})"
                stack.extend((v, depth + 1) for v in value.values())
            else:
                stack.extend((v, depth + 1) for v in value)
        elif value is not None and not isinstance(value, (bool, int)):
            return f"holds a value of type {type(value).__name__} ({str(value)[:40]!r}); only text, numbers, " \
                   "true/false, null, lists and mappings are read"
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_input_bytes(path: str | Path, what: str = "file", *, limit: int = INPUT_FILE_LIMIT) -> bytes:
    """The bytes of a file the user named, or the InputError a user can mend (missing, a directory, a FIFO
    or device, too large, unreadable).

    The path is resolved once (a link the user named is theirs to name), then that final path is opened
    `O_NOFOLLOW | O_NONBLOCK` (a link swapped in afterwards is refused, a FIFO does not block the open), the
    open descriptor must be a regular file (fstat: no swap between check and read) of at most `limit` bytes
    (`_untrusted.INPUT_FILE_LIMIT`), and at most that many bytes are read even if it grows."""
    p = Path(path)
    try:
        real = os.path.realpath(p)
    except (OSError, ValueError) as exc:
        raise InputError(what, p, f"cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        return read_regular(real, limit)
    except Refused as r:
        if r.kind == "missing":
            raise InputError(what, p, "no such file") from None
        if r.kind == "directory":
            raise InputError(what, p, "is a directory, not a file") from None
        if r.kind == "special":
            raise InputError(what, p, f"is {kind_of(r.mode)}, not a regular file; ctxgauge reads nothing it "
                                      "would wait on") from None
        if r.kind == "too-large":
            raise InputError(what, p, f"{r.size} bytes, more than the {limit} an input file may hold") from None
        if r.kind == "grew":
            raise InputError(what, p, f"more than the {limit} bytes an input file may hold") from None
        raise InputError(what, p, f"cannot read ({r.reason})") from None



def read_text(path: str | Path, what: str = "file") -> str:
    """A UTF-8 text input file (byte-order mark dropped), or an InputError: missing, unreadable, not UTF-8."""
    p = Path(path)
    raw = read_input_bytes(p, what)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(what, p, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                         "save it as UTF-8") from None
