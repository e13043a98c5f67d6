"""`path:line` anchors in gold text, and their check against the code at the battery's commit.

Corograph's gold cites its evidence inline: `server/server.go:153-174`, `internal/webhook/webhook.go:120`,
`sse_hub.go:31-32,135-141`, and shorthand that leans on the anchor before it: `(:715)` (the same file) or
`validate.go:62` (a file named earlier in full, or the one file of that name in the repository). An anchor
passes only when its file exists at the commit and has every line it names; a shorthand that names no
file we can find is `unresolved`, a failure too, and one that several files fit (and no word before it
picks out, as `sqlite` in `sqlite user_delete.go:383`) is `ambiguous`: reported, not passed, not failed.
Without the code, anchors are `not checked`: never passed.

The gold text read is the answer key, its accepted variants and the facet guide (all three are what a
judge is told is true). A `~` before an anchor (`~cache.go:201`) marks it approximate and it is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxgauge._untrusted import parse_int

# A path ends in a file name with an extension (so `api/v1:37`, a count, is not an anchor); lines are a
# number, a range, or a comma list of either. The look-behind keeps `v1:37` or `~x.go:1` from matching.
_ANCHOR = re.compile(r"(?<![\w/.~:-])(?P<path>(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]*)?"
                     r":(?P<lines>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)(?![\w.:-]*\w)")
# Any file path mentioned (with or without lines): what a bare `:N` or a bare file name refers back to.
_PATH = re.compile(r"(?<![\w/.~-])(?:[\w.-]+/)+[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]*")

STATUSES = ("ok", "no-file", "no-line", "unresolved", "ambiguous", "not-checked")
FAILED = ("no-file", "no-line", "unresolved")
"""Statuses that are a defect of the gold; `ambiguous` (a shorthand several files fit) and `not-checked`
are reported, never passed, and fail nothing."""


@dataclass(frozen=True)
class Anchor:
    """One `path:line` anchor as written in one gold field."""

    qid: str
    field: str
    """answer_gold, answer_gold_variants or facet_guide."""
    text: str
    """The anchor as written (`webhook.go:59`, `:715`)."""
    path: str | None
    """The file as written; None for a bare `:N`."""
    lines: tuple[tuple[int, int], ...]
    """Line ranges, inclusive; a single line is (n, n)."""
    offset: int
    """Where it starts in its field (what came before resolves a shorthand)."""


@dataclass(frozen=True)
class AnchorCheck:
    """The outcome of one anchor against the code."""

    anchor: Anchor
    status: str
    """ok, no-file, no-line, unresolved, ambiguous or not-checked (see STATUSES)."""
    resolved: str | None = None
    """The corpus path the anchor was taken to mean."""
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "ok"

    def line(self) -> str:
        """One line saying what is wrong (empty when it passed)."""
        if self.passed:
            return ""
        where = f"gold {self.anchor.qid} ({self.anchor.field}): anchor {self.anchor.text!r}"
        return f"{where}: {self.detail}" if self.detail else f"{where}: {self.status}"


def _ranges(spec: str, where: str = "anchor") -> tuple[tuple[int, int], ...]:
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.append((parse_int(lo, where), parse_int(hi or lo, where)))
    return tuple(out)


def find_anchors(qid: str, field: str, text: str) -> list[Anchor]:
    """Every anchor of one gold field, in the order written."""
    return [Anchor(qid, field, m.group(0), m.group("path"), _ranges(m.group("lines"), f"gold {qid} ({field}): anchor {m.group(0)[:40]!r}"),
                   m.start())
            for m in _ANCHOR.finditer(text)]


def gold_anchors(gold) -> list[Anchor]:
    """The anchors of one question's gold (answer key, variants, facet guide)."""
    fields = [("answer_gold", gold.answer_gold), *(("answer_gold_variants", v) for v in gold.answer_gold_variants),
              ("facet_guide", gold.facet_guide)]
    return [a for name, text in fields for a in find_anchors(gold.qid, name, text or "")]


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _resolve(anchor: Anchor, text: str, corpus, by_name: dict[str, list[str]]) -> tuple[str | None, str]:
    """The corpus path an anchor means, or None with why."""
    before = text[:anchor.offset]
    earlier = [m.group(0) for m in _PATH.finditer(before)] + [m.group("path") for m in _ANCHOR.finditer(before)
                                                             if m.group("path")]
    earlier.sort(key=lambda p: before.rfind(p))
    if anchor.path is None:
        if not earlier:
            return None, "a bare line number with no file named before it"
        return _resolve(Anchor(anchor.qid, anchor.field, anchor.text, earlier[-1], anchor.lines, anchor.offset),
                        text, corpus, by_name)
    if anchor.path in corpus:
        return anchor.path, ""
    if "/" in anchor.path:
        return None, f"no file {anchor.path} at the commit"
    for prev in reversed(earlier):  # `validate.go` beside `internal/webhook/webhook.go` named earlier
        if "/" in prev:
            candidate = prev.rsplit("/", 1)[0] + "/" + anchor.path
            if candidate in corpus:
                return candidate, ""
    found = by_name.get(anchor.path, [])
    if len(found) > 1:
        # `sqlite user_delete.go:383`, `mysql :417-425`: the word just before names the directory.
        word = re.search(r"([\w-]+)\W*$", before)
        if word:
            found = [f for f in found if word.group(1).lower() in f.lower().split("/")[:-1]] or found
    if len(found) == 1:
        return found[0], ""
    if found:
        return None, f"ambiguous: {len(found)} files are named {anchor.path} and none was named in full before it"
    return None, f"no file named {anchor.path} at the commit"


def check_anchors(battery, corpus=None) -> list[AnchorCheck]:
    """Every anchor of the battery's gold, checked against `corpus` (the code at the commit); without a
    corpus every anchor is `not-checked`."""
    checks: list[AnchorCheck] = []
    by_name: dict[str, list[str]] = {}
    if corpus is not None:
        for p in corpus.paths:
            by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    for q in battery.questions:
        gold = battery.gold[q.qid]
        texts = {"answer_gold": gold.answer_gold, "facet_guide": gold.facet_guide or ""}
        for a in gold_anchors(gold):
            if corpus is None:
                checks.append(AnchorCheck(a, "not-checked", detail="no code to check against (give --repo PATH)"))
                continue
            text = texts.get(a.field) or next((v for v in gold.answer_gold_variants if a.text in v), "")
            path, why = _resolve(a, text, corpus, by_name)
            if path is None:
                status = "ambiguous" if why.startswith("ambiguous") else \
                    "no-file" if a.path and "/" in a.path else "unresolved"
                checks.append(AnchorCheck(a, status, detail=why))
                continue
            n = _line_count(corpus.text(path))
            bad = [hi for _, hi in a.lines if hi > n] + [lo for lo, _ in a.lines if lo < 1]
            if bad:
                checks.append(AnchorCheck(a, "no-line", path, f"{path} has {n} lines, not line {max(bad)}"))
            else:
                checks.append(AnchorCheck(a, "ok", path))
    return checks


def anchor_summary(checks: list[AnchorCheck]) -> dict:
    """Counts by status, and one line per anchor that did not pass (not-checked ones excluded)."""
    counts = {s: 0 for s in STATUSES}
    for c in checks:
        counts[c.status] += 1
    return {"anchors": len(checks), **{s.replace("-", "_"): n for s, n in counts.items()},
            "problems": [c.line() for c in checks if c.status in FAILED],
            "unsure": [c.line() for c in checks if c.status == "ambiguous"]}
