"""`path:line` anchors in gold text, and their check against the code at the battery's commit.

Corograph's gold cites its evidence inline: `server/server.go:153-174`, `internal/webhook/webhook.go:120`,
`sse_hub.go:31-32,135-141`, a path by its trailing directories only (`auth/authenticator.go:87` for
`server/auth/authenticator.go`: the one file whose path ends so), and shorthand that leans on what came
before: `(:715)` or `LATEST.sql; sqlite :47` (the file named last, with or without a directory) or
`validate.go:62` (beside a file named earlier in full, or the one file of that name in the repository).
An anchor passes only when its file is found at the commit and has every line it names; one whose file has
fewer lines fails (`no-line`). One whose file cannot be found (`no-file`, `unresolved`) is a warning, and
one that several files fit (and no word before it picks out, as `sqlite` in `sqlite user_delete.go:383`)
is `ambiguous`: both reported, neither passed nor failed. Without the code, anchors are `not checked`:
never passed.

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
# A bare file name (`LATEST.sql`): a mention only when the corpus has a file of that name.
_NAME = re.compile(r"(?<![\w/.~-])[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]*(?![\w/])")

STATUSES = ("ok", "no-file", "no-line", "unresolved", "ambiguous", "not-checked")
FAILED = ("no-line",)
"""The status that is a defect of the gold: a file found, without the line named. An anchor whose file cannot
be found (`no-file`, `unresolved`) is a warning: the publisher's own reader may know a shorthand this one
does not, and a battery its publisher ships is never refused for it. `ambiguous` (several files fit) and
`not-checked` are reported, never passed, and fail nothing."""
WARNED = ("no-file", "unresolved")
"""Statuses reported as warnings (never passed, never failed)."""


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


def _mentions(before: str, by_name: dict[str, list[str]]) -> list[str]:
    """The files named in `before`, in the order written: paths with a directory, anchors' paths, and bare
    file names the corpus has (`LATEST.sql; sqlite :47`: the bare `:47` means the file named before it;
    a bare word with a dot that names no file, `e.g.`, is not a mention)."""
    found: dict[int, str] = {}
    for m in _PATH.finditer(before):
        found[m.start()] = m.group(0)
    for m in _ANCHOR.finditer(before):
        if m.group("path"):
            found.setdefault(m.start("path"), m.group("path"))
    for m in _NAME.finditer(before):
        if m.group(0) in by_name:
            found.setdefault(m.start(), m.group(0))
    return [found[k] for k in sorted(found)]


def _pick(found: list[str], before: str) -> list[str]:
    """Of several files that fit, those under a directory named by the word just before the anchor
    (`sqlite user_delete.go:383`, `mysql :417-425`); all of them when that word names none."""
    if len(found) > 1:
        word = re.search(r"([\w-]+)\W*$", before)
        if word:
            return [f for f in found if word.group(1).lower() in f.lower().split("/")[:-1]] or found
    return found


def _trailing(path: str, corpus, by_name: dict[str, list[str]]) -> list[str]:
    """The corpus files `path` names: itself, or every file whose path ends with its components
    (`auth/authenticator.go` for `server/auth/authenticator.go`)."""
    if path in corpus:
        return [path]
    return sorted(f for f in by_name.get(path.rsplit("/", 1)[-1], []) if f.endswith("/" + path))


def _resolve(anchor: Anchor, text: str, corpus, by_name: dict[str, list[str]]) -> tuple[str | None, str]:
    """The corpus path an anchor means, or None with why."""
    before = text[:anchor.offset]
    earlier = _mentions(before, by_name)
    if anchor.path is None:
        if not earlier:
            return None, "a bare line number with no file named before it"
        return _resolve(Anchor(anchor.qid, anchor.field, anchor.text, earlier[-1], anchor.lines, anchor.offset),
                        text, corpus, by_name)
    if anchor.path in corpus:
        return anchor.path, ""
    if "/" in anchor.path:
        found = _pick(_trailing(anchor.path, corpus, by_name), before)
        if len(found) == 1:
            return found[0], ""
        if found:
            return None, f"ambiguous: {len(found)} files end with {anchor.path} ({', '.join(found[:3])})"
        return None, f"no file {anchor.path} at the commit"
    for prev in reversed(earlier):  # `validate.go` beside `internal/webhook/webhook.go` named earlier
        if "/" in prev:
            full = _trailing(prev, corpus, by_name)
            if len(full) == 1:
                candidate = full[0].rsplit("/", 1)[0] + "/" + anchor.path
                if candidate in corpus:
                    return candidate, ""
    found = _pick(by_name.get(anchor.path, []), before)
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
            "warnings": [c.line() for c in checks if c.status in WARNED],
            "unsure": [c.line() for c in checks if c.status == "ambiguous"]}
