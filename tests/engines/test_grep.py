from __future__ import annotations

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine


def _corpus(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / "c" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return Corpus.from_directory(tmp_path / "c")


def test_scores_count_distinct_terms_and_ties_break_by_path(tmp_path):
    c = _corpus(tmp_path, {
        "b.py": "overdue overdue overdue",           # one distinct term, however often
        "a.py": "overdue",                            # same score as b.py: path order decides
        "fees/rounding.py": "def fee(): overdue",     # fee (path and content) + overdue + rounding (path)
        "z.md": "nothing here",
    })
    e = get_engine("grep")
    out = tmp_path / "out"
    out.mkdir()
    e.build(c, out)
    files = lambda hits: [(h.path, h.score) for h in hits]  # noqa: E731 - scores and order; spans are pinned elsewhere
    assert files(e.query(out, "Fix overdue fee rounding", 10)) == [
        ("fees/rounding.py", 3.0), ("a.py", 1.0), ("b.py", 1.0),
    ]
    assert files(e.query(out, "overdue", 1)) == [("a.py", 1.0)]
    assert e.query(out, "the of a", 5) == []
