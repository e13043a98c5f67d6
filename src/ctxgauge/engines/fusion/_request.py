"""What a request names outright: files, modules and code identifiers; dependency and runtime intents.

Issue texts and stack traces name the files they are about (`File ".../sympy/core/basic.py", line 12`,
`requests/models.py`, `sympy.physics.units`), the classes and functions they call (`Matrix.col_insert`,
`lambdify(`, `` `ManyToManyField` ``); dependency requests name a package (`bump shell-quote to 1.8`) and
belong to the manifest declaring it and that manifest's lockfile; runtime requests (`use node 20`) belong
to version pin files. Each function here maps a request to path -> weight; the fusion engine adds them.
An environment listing an issue pastes (`pip list`) is taken out first (`without_environment`).

Mentions are matched against the corpus by path suffix at a `/` boundary, the longest suffix that matches
anything winning (an absolute site-packages path still finds the repository's file); a mention matching n
files gives each 1/n, so a bare `utils.py` in a monorepo says little.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

from ctxgauge.engines._text.locales import LOCALE_WORDS, named_languages
from ctxgauge.engines._text.path_kinds import base_name
from ctxgauge.engines._text.tokens import split_identifier

_EXT = (r"py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|php|swift|scala|toml|json|"
        r"ya?ml|md|rst|txt|cfg|ini|html|css|scss|vue|svelte|sh|lock|mod|sum|gradle|xml")
_PATHLIKE = re.compile(r"(?<![\w@])((?:[\w.\-]+/)*[\w.\-]+\.(?:" + _EXT + r"))(?![\w/])")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,6})(?![\w(])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*\(")
_TICKED = re.compile(r"`([^`\s]{2,80})`")
_CAMEL = re.compile(r"(?<![\w.])([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)(?!\w)")
_SNAKE = re.compile(r"(?<![\w.])([a-z][a-z0-9]*_[a-z0-9_]+)(?!\w)")

# Not `vulnerable`/`vulnerability`: "fix a potential vulnerability warning" asks for code as often as for a
# dependency; a vulnerable dependency is named with an advisory id, a version or one of these words.
DEPENDENCY_WORDS = frozenset(
    "bump bumps bumped upgrade upgrades upgraded patch audit cve deps dep dependency dependencies pin unpin "
    "downgrade lockfile lockfiles".split())
# Words that make a dependency request even when no package is named ("update dependencies", "bump deps",
# "cargo audit"): the project's manifests and lockfiles are then the answer. `patch`, `pin` and the
# vulnerability words are left out: "fix HTTPoxy vulnerability" and "patch the parser" ask for code.
GENERIC_DEPENDENCY_WORDS = frozenset(
    "bump bumps bumped upgrade upgrades upgraded audit deps dep dependency dependencies downgrade lockfile "
    "lockfiles".split())
LOCK_WORDS = frozenset(("lockfile", "lockfiles"))
# "update" is in most requests ("update the docs"): it marks a dependency request only beside a version, or
# beside a package whose name no plain word has (`h2`, `serde_json`, `shell-quote`, `@types/node`).
UPDATE_WORDS = frozenset(("update", "updates", "updated"))
_VERSION = re.compile(r"\bv?\d+\.\d+")
# Security advisory ids (RustSec, CVE, GitHub): a request fixing one is a dependency update even though the
# advisory, not the request, names the package.
ADVISORY = re.compile(r"(?<![\w-])(?:rustsec-\d{4}-\d{3,}|cve-\d{4}-\d{4,}|ghsa(?:-[0-9a-z]{4}){3})(?![\w-])", re.I)
_PACKAGE_LIKE = re.compile(r".*[\d_\-@/.].*")
RUNTIME_PINS: Mapping[str, tuple[str, ...]] = {
    "node": (".nvmrc", ".node-version", ".tool-versions"),
    "nodejs": (".nvmrc", ".node-version", ".tool-versions"),
    "python": (".python-version", ".tool-versions", "runtime.txt"),
    "rust": ("rust-toolchain", "rust-toolchain.toml", ".tool-versions"),
    "msrv": ("rust-toolchain", "rust-toolchain.toml"),
    "toolchain": ("rust-toolchain", "rust-toolchain.toml", "go.mod"),
    "go": ("go.mod", ".go-version", ".tool-versions"),
    "golang": ("go.mod", ".go-version", ".tool-versions"),
    "ruby": (".ruby-version", ".tool-versions"),
    "java": (".java-version", ".sdkmanrc", ".tool-versions"),
    "deno": (".dvmrc",),
    "bun": (".bun-version",),
}


# Words by which a one-line request asks for a kind of file that is otherwise pushed down
# (`_text.path_kinds.path_kind`): "docs: explain X" wants prose, "ci: cache the toolchain" a workflow. The fusion
# engine leaves the multiplier of an asked kind off for subjects (an issue text names tests and docs in
# passing). Not tests: "add a test for X" still wants X first (on the tune half exempting tests lowered MRR).
ASKED_WORDS: Mapping[str, frozenset[str]] = {
    "docs": frozenset("doc docs documentation document documents documented readme guide typo typos".split()),
    "locale": LOCALE_WORDS,
    "ci": frozenset("ci workflow workflows github action actions pipeline pipelines runner runners job jobs "
                    "release releases publish publishing dependabot renovate".split()),
}


def asked_kinds(text: str) -> frozenset[str]:
    """The path kinds a request asks for by word (`ASKED_WORDS`), e.g. `docs` for "docs: fix a typo";
    `locale` also when it names a language (`_text.locales.named_languages`)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text)}
    kinds = {kind for kind, vocab in ASKED_WORDS.items() if words & vocab}
    if "locale" in kinds or named_languages(text):
        kinds.add("locale")
    return frozenset(kinds)


class PathIndex:
    """Corpus paths by every suffix at a `/` boundary, for matching what a request mentions."""

    def __init__(self, paths: Sequence[str]):
        self._by_suffix: dict[str, list[str]] = defaultdict(list)
        for p in paths:
            parts = p.split("/")
            for i in range(len(parts)):
                self._by_suffix["/".join(parts[i:])].append(p)

    def exact_suffix(self, suffix: str) -> list[str]:
        """Corpus paths ending with `suffix` at a `/` boundary (the whole of it), sorted."""
        return sorted(self._by_suffix.get(suffix, ()))

    def exact(self, path: str) -> list[str]:
        """`[path]` if the corpus holds that path, else `[]`."""
        return [p for p in self._by_suffix.get(path, ()) if p == path]

    def match(self, mention: str) -> list[str]:
        """Corpus paths ending with the longest matching suffix of `mention` (whole components only)."""
        parts = [x for x in mention.strip("./").split("/") if x and x != "."]
        # A mention with a directory must match it too (`units/__init__.py` is not any `__init__.py`).
        for i in range(max(len(parts) - 1, 1)):
            hit = self._by_suffix.get("/".join(parts[i:]))
            if hit:
                # A bare file name matching many files is no mention of any one of them.
                return sorted(hit) if (i < len(parts) - 1 or len(hit) <= 3) else []
        return []


def mentioned_files(text: str, index: PathIndex) -> dict[str, float]:
    """Files named by path or by dotted module (`a.b.c` -> `a/b/c.py`, `a/b/c/__init__.py`, `a/b.py`)."""
    out: dict[str, float] = {}

    def add(paths: list[str], weight: float) -> None:
        for p in paths:
            out[p] = max(out.get(p, 0.0), weight / len(paths))

    for m in _PATHLIKE.finditer(text):
        add(index.match(m.group(1)), 1.0)
    for m in _DOTTED.finditer(text):
        segs = m.group(1).split(".")
        for cut in range(len(segs), 1, -1):
            stem = "/".join(segs[:cut])
            found = sorted(set(index.match(stem + ".py") + index.match(stem + "/__init__.py")
                               + index.match(stem + ".rs") + index.match(stem + "/mod.rs")))
            if found and "/" in stem:
                add(found, 0.5)
                break
    return out


# One installed package and its version on a line of its own: `pip list` (`attrs   19.3.0`), `pip freeze`
# (`attrs==19.3.0`), `xr.show_versions()` (`numpy: 1.19.1`), a bullet's `- pytest 6.2.5`.
# (The separator is one alternation, `\s*op\s*` or `\s+`: `\s*(?:op|\s)\s*` tried every split of a run of
# blanks, and a line of 10,000 spaces took 1 s.)
_VERSION_LINE = re.compile(r"^[ \t]*(?:[-*][ \t]+)?[A-Za-z][\w.\-\[\]]*(?:[ \t]*(?:==|>=|<=|~=|:)[ \t]*|[ \t]+)v?\d+(?:\.\d+)+"
                           r"[\w.+\-]*"
                           r"(?:\s+\S*[/\\]\S*)?\s*$")  # pip list's last column: an editable install's path
_LISTING_FRAME = re.compile(r"^\s*(?:package[ \t]+version(?:[ \t]+\S+)?\s*|[-=][-=\s]*)$", re.I)  # pip list's head and rule
ENVIRONMENT_LINES = 3
"""A request with at least this many version lines carries an environment listing."""


def without_environment(text: str) -> str:
    """The request without the lines of an environment listing (`pip list`, `pip freeze`, a
    `show_versions()` dump) when it holds at least ENVIRONMENT_LINES of them: hundreds of package names say
    nothing about which file to change, yet match every manifest, CI file and changelog naming those
    packages (an issue's `pip list` put `setup.cfg` and `tox.ini` on top); a listing's head (`Package
    Version`) and rules (`-------`) go with it. Fewer version lines stay (`fails on numpy 1.19.1` is a
    clue)."""
    lines = text.splitlines(keepends=True)
    listed = [bool(_VERSION_LINE.match(line)) for line in lines]
    if sum(listed) < ENVIRONMENT_LINES:
        return text
    return "".join(line for line, drop in zip(lines, listed) if not (drop or _LISTING_FRAME.match(line)))


def title(text: str) -> str:
    """A long request's first non-blank line: an issue's title, a commit message's subject."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def mentioned_identifiers(text: str) -> list[str]:
    """Code identifiers a request names: called, back-ticked, dotted, CamelCase or snake_case words, each
    as its last dotted segment, lowercased, in first-seen order."""
    found: dict[str, None] = {}
    for rx in (_TICKED, _CALL, _DOTTED, _CAMEL, _SNAKE):
        for m in rx.finditer(text):
            for seg in re.split(r"[.:()\[\]]+", m.group(1)):
                seg = seg.strip("_")
                if len(seg) >= 3 and re.fullmatch(r"\w+", seg) and len(split_identifier(seg)) >= 1:
                    found.setdefault(seg.lower(), None)
    return list(found)


def defining_files(identifiers: Iterable[str], definitions: Mapping[str, list[str]], *,
                   max_files: int = 5) -> dict[str, float]:
    """Files defining a named identifier; a name defined in n files gives each 1/n, and a name defined in
    more than `max_files` (a common method name like `get`) gives nothing."""
    out: dict[str, float] = {}
    for ident in identifiers:
        files = definitions.get(ident, [])
        if 0 < len(files) <= max_files:
            for f in files:
                out[f] = out.get(f, 0.0) + 1.0 / len(files)
    return out


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def dependency_files(words: Sequence[str], declared: Mapping[str, frozenset[str]],
                     lockfiles: Sequence[str], locked: Mapping[str, frozenset[str]] | None = None,
                     manifests: Sequence[str] = ()) -> tuple[dict[str, float], set[str]]:
    """For a dependency request: path -> weight, and the package words (which the lexical stage should not
    chase). Empty when the request is no dependency request. A request is one when it has a dependency word
    (`DEPENDENCY_WORDS`), names an advisory (`ADVISORY`), or says `update` beside a version or a package-like
    name. Then
      - a package a manifest declares: that manifest (1.0) and the lockfiles beside it (0.9);
      - a package only a lockfile holds (a transitive dependency): that lockfile (1.0) and the manifests
        beside it (`UNNAMED`: a bump may have to widen the range);
      - no package at all, with a generic word or an advisory ("update dependencies", "fix RUSTSEC-..."):
        the lockfiles in a folder the request names (`examples` for examples/Cargo.lock), else the
        shallowest lockfiles, and the manifests beside them (`UNNAMED` each), weaker than a named one.
    `locked` is lockfile -> the package names it holds; `manifests` every manifest path (declared's keys by
    default)."""
    lowered = [w.lower() for w in words]
    versioned = any(_VERSION.match(w) for w in lowered)
    advisory = any(ADVISORY.fullmatch(w) for w in lowered)
    locked = locked or {}
    said = set(lowered)
    # A runtime is no package: `python = "^3.9"` in a pyproject, `"node": ">=18"` under engines (`runtime_files`).
    names = said - RUNTIME_PINS.keys()
    known = set().union(*declared.values(), *locked.values()) if (declared or locked) else set()
    update_named = UPDATE_WORDS.intersection(lowered) and any(
        n in known and _PACKAGE_LIKE.fullmatch(n) for n in names)
    if not (DEPENDENCY_WORDS.intersection(lowered) or advisory or update_named
            or (versioned and UPDATE_WORDS.intersection(lowered))):
        return {}, set()
    out: dict[str, float] = {}
    packages: set[str] = set()

    all_manifests = sorted(manifests or declared)

    def lift(path: str, weight: float) -> None:
        out[path] = max(out.get(path, 0.0), weight)

    def lift_lock(lock: str, weight: float) -> None:
        """A lockfile and, at UNNAMED, the manifests in its folder (the request reached it, not them)."""
        lift(lock, weight)
        for manifest in all_manifests:
            if _folder(manifest) == _folder(lock):
                lift(manifest, UNNAMED)

    direct: set[str] = set()  # packages a manifest declares: their lockfiles come with the manifest
    for manifest, pkgs in sorted(declared.items()):
        hit = names & pkgs
        if hit:
            direct |= hit
            lift(manifest, 1.0)
            for lock in lockfiles:
                if _folder(lock) == _folder(manifest):
                    lift(lock, 0.9)
    # A lockfile holds hundreds of names, plain words among them (`quote`, `time`, `log`): one counts only
    # with a word that is about dependencies for sure, not with `patch` or `vulnerable` alone.
    strong = bool(GENERIC_DEPENDENCY_WORDS.intersection(lowered) or advisory or update_named or versioned)
    for lock, pkgs in sorted(locked.items()) if strong else ():
        hit = (names & pkgs) - direct
        if hit:
            lift_lock(lock, 1.0)
            packages |= hit
    packages |= direct
    # A folder the request names ("update the docs lockfile", "bump examples deps") says which lockfiles.
    named = [lock for lock in lockfiles if said.intersection(_folder(lock).lower().split("/"))]
    if LOCK_WORDS.intersection(lowered):
        # "fix the pyodide lockfile": the lockfile in that folder, though a manifest elsewhere declares `pyodide`.
        for lock in named:
            lift_lock(lock, 1.0)
    if not out and (advisory or GENERIC_DEPENDENCY_WORDS.intersection(lowered)) and lockfiles:
        # Otherwise the project's own lockfiles, the shallowest.
        top = min(p.count("/") for p in lockfiles)
        for lock in named or lockfiles:
            if named or lock.count("/") == top:
                lift_lock(lock, UNNAMED)
    return out, packages


UNNAMED = 0.5
"""Rule weight of a manifest or lockfile a dependency request reaches without naming its package."""


def locked_packages(path: str, text: str) -> frozenset[str]:
    """Package names a lockfile holds, lowercased: `name = "..."` entries (Cargo.lock, poetry.lock,
    uv.lock), `node_modules/...` keys (package-lock.json), `name@range` heads (yarn.lock, pnpm-lock.yaml)
    and module paths (go.sum, with their last segment)."""
    names: set[str] = set()
    name = base_name(path)
    if name in ("cargo.lock", "poetry.lock", "uv.lock", "pipfile.lock") or name.startswith("pylock."):
        names.update(m.group(1) for m in re.finditer(r'(?m)^name\s*=\s*"([^"]+)"', text))
        names.update(m.group(1) for m in re.finditer(r'(?m)^\s*"([\w.\-]+)":\s*\{', text))  # Pipfile.lock
    elif name in ("package-lock.json", "npm-shrinkwrap.json"):
        names.update(m.group(1) for m in re.finditer(r'"(?:[^"]*/)?node_modules/((?:@[\w.\-]+/)?[\w.\-]+)"', text))
    elif name in ("yarn.lock", "pnpm-lock.yaml", "bun.lock", "deno.lock"):
        names.update(m.group(1) for m in re.finditer(
            r'(?m)^\s*["\']?/?((?:@[\w.\-]+/)?[\w.\-]+)@(?:npm:)?[\^~<>=*\d]', text))
    elif name == "go.sum":
        for m in re.finditer(r"(?m)^(\S+) v\d", text):
            names.add(m.group(1))
            names.add(m.group(1).rsplit("/", 1)[-1])
    elif name in ("gemfile.lock", "composer.lock"):
        names.update(m.group(1) for m in re.finditer(r'(?m)^\s{4}([\w.\-]+) \(', text))
        names.update(m.group(1) for m in re.finditer(r'"name":\s*"([^"]+)"', text))
    return frozenset(n.lower() for n in names if len(n) >= 2)


# A runtime word alone is often no runtime ("a memoized node", "go to the definition"): a pin file is
# wanted only beside a version number or a word about versions.
RUNTIME_CONTEXT = frozenset(
    "version versions runtime require requires required minimum support supported drop lts toolchain msrv "
    "unpin".split()) | DEPENDENCY_WORDS | UPDATE_WORDS
_NUMBER = re.compile(r"v?\d+(?:\.\d+)*(?:\.x)?")


def runtime_files(words: Sequence[str], paths: Sequence[str]) -> dict[str, float]:
    """Version pin files of the runtimes a request names (`node 20` -> `.nvmrc`, ...), when the request
    also has a version number or a word about versions (`RUNTIME_CONTEXT`)."""
    lowered = [w.lower() for w in words]
    if not (RUNTIME_CONTEXT.intersection(lowered) or any(_NUMBER.fullmatch(w) for w in lowered)):
        return {}
    wanted = {pin for w in lowered for pin in RUNTIME_PINS.get(w, ())}
    return {p: 1.0 for p in paths if base_name(p) in wanted}


_PKG = re.compile(r"[@\w][\w.\-/@]*")


def package_words(text: str) -> list[str]:
    """Words of a request as package names are written (`shell-quote`, `@types/node`, `serde_json`)."""
    return [m.group(0).rstrip(".") for m in _PKG.finditer(text)]


def declared_packages(path: str, text: str) -> frozenset[str]:
    """Package names a manifest declares, lowercased: a cheap, format-agnostic reading (quoted keys and
    names at the start of a requirement line) that catches package.json, Cargo.toml, pyproject, go.mod,
    requirements files and pom.xml artifact ids alike."""
    names: set[str] = set()
    for m in re.finditer(r"[\"']((?:@[\w.\-]+/)?[\w.\-]+)[\"']\s*[:=]", text):  # "name": "^1.2" / name = "1"
        names.add(m.group(1).lower())
    for m in re.finditer(r"(?m)^\s*((?:@[\w.\-]+/)?[A-Za-z][\w.\-]*)\s*(?:=|[<>=!~^]=?|\[)", text):
        names.add(m.group(1).lower())
    for m in re.finditer(r"(?m)^\s*(?:require\s+)?([\w.\-]+(?:/[\w.\-]+)+)\s+v\d", text):  # go.mod
        names.add(m.group(1).lower())
        names.add(m.group(1).lower().rsplit("/", 1)[-1])
    for m in re.finditer(r"<artifactId>([\w.\-]+)</artifactId>", text):
        names.add(m.group(1).lower())
    for m in re.finditer(r"[\"']((?:@[\w.\-]+/)?[\w.\-]+)(?:[<>=!~^ ][^\"']*)?[\"']", text):  # ["requests>=2"]
        names.add(m.group(1).lower())
    generic = {"name", "version", "description", "dependencies", "scripts", "type", "main", "module", "license",
               "private", "author", "files", "exports", "types", "edition", "require", "go", "module", "test"}
    return frozenset(n for n in names if len(n) >= 2 and n not in generic)
