"""User text made one printable line, with the standard library only (the crash line uses it before the
command app, and Rich with it, could be imported)."""

from __future__ import annotations


def printable(text: object) -> str:
    """`text` as one printable line: control characters such as a newline in a path shown as escapes (they
    would split a one-line error), bytes that are not UTF-8 (surrogate escapes) shown as `\\xNN`."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else (f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF
                                             else c.encode("unicode_escape").decode("ascii")) for c in s)


def _is_unsafe(c: str) -> bool:
    o = ord(c)
    return (o < 0x20 and c != "\n") or 0x7F <= o <= 0x9F or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069 \
        or o in (0x2028, 0x2029, 0x200E, 0x200F, 0x061C) or 0xD800 <= o <= 0xDFFF


def _escaped(c: str) -> str:
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (surrogate escape): the byte itself
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def terminal_text(text: str) -> str:
    """`text` with every character a terminal would act on instead of showing shown as an escape: the C0
    controls but the newline (ESC starts OSC 52, a clipboard write, OSC 0, a window title, and `ESC[2J`, a
    cleared screen), DEL and the C1 controls (U+009B is CSI by itself), the bidirectional controls U+202A-202E,
    U+2066-2069, U+200E/200F and U+061C (they reorder what follows on screen), the line and paragraph
    separators U+2028/2029, and lone surrogates. `\\x1b`, `\\u202e`: what the data held, visibly. The
    newline stays, because the layout (a table's rows, one printed line after another) needs it."""
    if not any(_is_unsafe(c) for c in text):
        return text
    return "".join(_escaped(c) if _is_unsafe(c) else c for c in text)


def json_text(document: str) -> str:
    """A JSON document (from `json.dumps(..., ensure_ascii=False)`) with the characters `terminal_text` escapes
    written as JSON's `\\uXXXX` escapes: the same value to any parser, nothing a terminal acts on. (JSON has
    already escaped the C0 controls; these can only sit inside strings.)"""
    if not any(_is_unsafe(c) for c in document):
        return document
    return "".join(f"\\u{ord(c):04x}" if _is_unsafe(c) and c != "\n" else c for c in document)


def resume_command(argv: list[str], run_dir: object) -> str:
    """The command that continues an interrupted run, to copy whole: the same arguments, with `--out RUN_DIR`
    when none was given (the run went to a generated folder) and `--resume`, quoted for a POSIX shell."""
    import shlex

    args = list(argv)
    if not any(a == "--out" or a.startswith("--out=") for a in args):
        args += ["--out", str(run_dir)]
    if "--resume" not in args:
        args.append("--resume")
    return shlex.join(["ctxgauge", *args])
