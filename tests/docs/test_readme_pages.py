"""README's Documentation table: one row per page of docs/, each page once (a duplicated row said two
different things about docs/security.md)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_every_docs_page_has_exactly_one_row_in_the_readme_table():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| [docs/")]
    named = [re.findall(r"\[(docs/[^\]]+\.md)\]", row)[0] for row in rows]
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    assert sorted(set(named)) == sorted(set(named) & set(pages)), "a row names a page that does not exist"
    assert len(named) == len(set(named)), f"a page has two rows: {sorted(n for n in named if named.count(n) > 1)}"
