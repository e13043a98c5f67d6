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
