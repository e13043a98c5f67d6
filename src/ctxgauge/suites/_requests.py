"""Requests derived from commit subjects, cleaned so an engine gets no hint a real requester would not give.

Used by replay (the request of each commit, and which commits make none: bots, releases) and by every
suite that needs default requests for a corpus. Replay builds on this module, never the other way round.
"""

from __future__ import annotations

import re

from ctxgauge.corpus import Corpus

# `fix(gate): `, `feat!: `, `chore(deps)!: ` ... at the start of a subject.
_CONVENTIONAL = re.compile(r"^\s*[A-Za-z]+(?:\([^)]*\))?!?:\s*")
# A trailing pull-request reference: `(#123)`, possibly repeated.
_PR_REF = re.compile(r"(?:\s*\(#\d+\))+\s*$")
# Leading emoji and gitmoji shortcodes (`:bug: `).
_GITMOJI = re.compile(r"^\s*(?::[a-z0-9_+\-]+:\s*)+")


BOT_MARKERS = ("dependabot", "renovate", "github-actions", "[bot]")
"""Substrings of an author's name or e-mail (lowercased) that mark an automated author."""

_VERSION = r"v?\d+(?:\.\d+)+(?:[-.+]?[0-9a-z]+)*"
RELEASE_PATTERNS = (
    # conventional-commit releases, read on the raw subject: `chore(release): 1.2.0`, `release: v2`
    re.compile(r"^\s*[a-z]+\(release\)!?:"),
    re.compile(r"^\s*release(?:\([^)]*\))?!?:"),
    # and on the cleaned request:
    re.compile(rf"^{_VERSION}(?:\s+release[d]?)?$"),                                # v1.2.3, 2.0.0 release
    re.compile(rf"^(?:release|releasing|released|prepare (?:the )?release|preparing release|cut release"
               rf"|version)(?: version)?\s*:?\s*{_VERSION}\b"),                     # Release 2.0
    re.compile(r"^bump(?:ed|ing|s)?\s+(?:the\s+)?(?:package\s+|project\s+)?version\b(?!\s+(?:of|for)\b)"),
    re.compile(rf"^bump(?:ed|ing|s)?\s+(?:to\s+)?{_VERSION}\b"),                    # Bump to 2.1.0
    re.compile(r"^version bump\b"),
    re.compile(rf"^(?:start|begin|open)(?:ing)?\s+{_VERSION}\s+(?:development|dev|cycle)\b"),  # start 0.2.0 development
    re.compile(r"^(?:back to (?:development|dev)|post-?release)\b"),
    re.compile(r"^(?:bump|prepare|ready|get ready)\s+(?:version\s+)?for\s+(?:the\s+)?(?:next\s+)?"
               r"(?:release|development|dev)\b"),                                  # pip: Bump for release
)
"""Subjects (lowercased) of releases and own-version bumps. `Bump requests from 2.1 to 2.2` matches none:
a dependency update is a real request, whose manifests and lockfiles an engine should find."""

def is_bot(name: str, email: str) -> bool:
    """Whether an author is automated (see `BOT_MARKERS`)."""
    who = f"{name}\n{email}".lower()
    return any(m in who for m in BOT_MARKERS)


def is_release(subject: str, request: str) -> bool:
    """Whether a commit releases or bumps the project's own version (see `RELEASE_PATTERNS`)."""
    raw, clean = subject.strip().lower(), request.strip().lower()
    return any(p.search(raw) for p in RELEASE_PATTERNS[:2]) or any(p.search(clean) for p in RELEASE_PATTERNS[2:])


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
