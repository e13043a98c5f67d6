"""Two `make fuzz` targets for what terminals and Markdown renderers see (issue 36, item 5):

- `terminal-text`: any text (every plane of Unicode, C0 and C1 controls, escape sequences, bidirectional and
  line separators weighted in) printed through the console every command prints through (`cli._console.
  SafeConsole`), as a table cell, as a line of markup-escaped text and as plain text, to a file as a pipe is.
  Property: nothing a terminal acts on reaches the output: no C0 control but the newlines the layout makes, no
  DEL, no C1 control, no bidirectional control, no U+2028/2029.
- `markdown-text`: any text as the Markdown report writes data (`report._markdown.md_text`), in a table cell
  and in running text, rendered by markdown-it-py with raw HTML enabled (the renderer a careless viewer uses).
  Property: no HTML element and no link or image comes from the data: the cell renders as one `<td>` of
  text in a table of the expected shape, the paragraph as text inside its one `<p>` (and nothing else).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from hypothesis import strategies as st

# Characters a terminal acts on: C0 (but the newline), DEL, C1, the bidirectional controls and the separators.
_ACTING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069\u2028\u2029]")

_HOSTILE = st.sampled_from([
    "\x1b]52;c;aGk=\x07", "\x1b]0;title\x07", "\x1b[2J", "\x9b31m", "\u202e", "\u2066", "\u2028", "\x85", "\r",
    "\x08", "\x00", "\t", "\n", "[bold]", "[/]", "[link=x]", "\\", "`", "```", "<img src=x onerror=alert(1)>",
    "</script><script>alert(2)</script>", "[x](javascript:alert(3))", "![](http://remote/x.png)", "www.x.org",
    "a@b.cd", "http://x", "|", "&amp;", "&#60;", "<!--", "-->", "*", "_", "~~", "$", "#", "> ", "- ", "1. ",
])
texts = st.lists(st.one_of(_HOSTILE, st.text(max_size=8), st.characters()), max_size=12).map("".join)

terminal_cases = st.tuples(texts, st.integers(min_value=20, max_value=200))


def check_terminal_text(case: tuple, tmp: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ctxgauge.cli._console import SafeConsole
    from targets import Breach

    text, width = case
    out = io.StringIO()
    console = SafeConsole(file=out, width=width, color_system=None, force_terminal=False, highlight=False)
    table = Table("name", "value")
    table.add_row(escape(text), "1.000")
    console.print(table)
    console.print(f"subject: {escape(text)}")
    console.print(text, markup=False)
    written = out.getvalue()
    bad = _ACTING.search(written)
    if bad:
        raise Breach(f"a control reached the terminal: {bad.group(0)!r} in {written!r}")


markdown_cases = texts


def check_markdown_text(text: str, tmp: Path) -> None:
    from markdown_it import MarkdownIt

    from ctxgauge.report._markdown import md_text
    from targets import Breach

    cell = md_text(text)
    md = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    for template in ("| name | value |\n| --- | --- |\n| x | {} |\n", "From runs: {} and more.\n"):
        html = md.render(template.format(cell))
        shape = md.render(template.format("plain"))  # the same place holding plain text: its elements only
        if _TAGS.findall(html) != _TAGS.findall(shape):
            raise Breach(f"the data became markup: {text!r} in {template!r} -> {html!r}")


_TAGS = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*")
