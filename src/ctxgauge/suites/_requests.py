"""Requests derived from commit subjects, cleaned so an engine gets no hint a real requester would not give.

Used by replay (the request of each commit) and by every suite that needs default requests for a corpus.
"""

from __future__ import annotations

import re

from ctxgauge.corpora import Corpus

# `fix(gate): `, `feat!: `, `chore(deps)!: ` ... at the start of a subject.
_CONVENTIONAL = re.compile(r"^\s*[A-Za-z]+(?:\([^)]*\))?!?:\s*")
# A trailing pull-request reference: `(#123)`, possibly repeated.
_PR_REF = re.compile(r"(?:\s*\(#\d+\))+\s*$")
# Leading emoji and gitmoji shortcodes (`:bug: `).
_GITMOJI = re.compile(r"^\s*(?::[a-z0-9_+\-]+:\s*)+")


def _strip_leading_symbols(text: str) -> str:
    i = 0
    while i < len(text) and not (text[i].isalnum() or text[i] in "`'\"[(<#@$_./-"):
        i += 1
    return text[i:]


def clean_subject(subject: str) -> str:
    """The request a commit subject makes: without a conventional-commit prefix, leading emoji or
    gitmoji, and a trailing `(#123)`. `fix(loans): ✨ Handle late fees (#12)` -> `Handle late fees`."""
    text = subject.strip()
    for _ in range(2):  # emoji before or after the prefix
        text = _GITMOJI.sub("", text)
        text = _strip_leading_symbols(text)
        text = _CONVENTIONAL.sub("", text)
    text = _PR_REF.sub("", text)
    return text.strip()


def recent_requests(corpus: Corpus, n: int = 10) -> list[str]:
    """Up to n distinct cleaned subjects of the corpus's most recent commits that replay would count as
    requests (no merges, bots or releases: "Release 0.2.0" asks for no file), else requests made of the
    corpus's own file stems (plain directories)."""
    from ctxgauge.suites.replay._select import is_bot, is_release  # replay builds on this module

    out: dict[str, None] = {}
    if corpus.history is not None:
        for c in corpus.history.commits():
            req = clean_subject(c.subject)
            if len(c.parents) != 1 or is_bot(c.author_name, c.author_email) or is_release(c.subject, req):
                continue
            if len(req.split()) >= 2:
                out.setdefault(req, None)
            if len(out) >= n:
                break
    if not out:
        stems = [p.rsplit("/", 1)[-1].split(".")[0].replace("_", " ") for p in corpus.paths]
        for s in stems:
            if len(s) >= 3:
                out.setdefault(f"where is {s} handled", None)
            if len(out) >= n:
                break
    return list(out)
