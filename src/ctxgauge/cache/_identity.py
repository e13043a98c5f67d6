"""The one identity service: what must change whenever the work a piece of code produces could change.

An engine's identity and a work-cache stage's identity are both hashes of *what computes*: the source of
every module the code runs, its configuration, and the versions of the libraries it calls. Hashing source
rather than trusting a hand-bumped version means an edit to a tokeniser can never be served work its
previous version produced, nor pass for the system that earned an old figure.

Which modules: computed, never declared. From a root module (an engine's class module, a stage's modules)
the static imports are read from the source files (`ast`, every `import` at any depth, those inside
functions included: graph loads its parser only when it builds, and the parser still computes its
figures) and followed transitively, together with the parent packages Python runs on the way. Nothing
is read through import state, so the set, and the hash, do not depend on what happens to be imported.

The boundary (`HASHED`): every `ctxgauge` module reached, except those that never decide a result:

    ctxgauge              the version alone (a release that leaves an engine's code alone keeps its id)
    ctxgauge.cache        storage keyed by these identities, and this service (its scheme is IDENTITY_SCHEME)
    ctxgauge.errors       error types
    ctxgauge._killpoints  the kill/resume tests' hook
    ctxgauge.fingerprints the fingerprint format (hybrid reads its list of identity sources)

and the layers above the engines (records, report, executors, suites, export, demo, cli), which an engine
never imports. So `ctxgauge.engines` (the package top, the engine's own package, the shared text tools),
`ctxgauge.corpus`, `ctxgauge.git` and `ctxgauge._io` are hashed wherever an engine reaches them. Imports
by a computed name (`importlib.import_module(spec)`: the registry loading an engine by name) are not
followed; an engine built of others by name (hybrid) folds in their identities. A module outside
`ctxgauge` (a plugin's) is hashed as the root and followed within its own top-level package.

What of a module: its text with comments (`tokenize`'s COMMENT tokens) and docstrings (every statement
that is a string alone, as `ast` finds them: first in a module, class or function body, or after an
attribute it describes; none does anything when run) cut out by source position,
then trailing whitespace and whitespace-only lines dropped, so an edit to prose is never a new system.
Positions, not `ast.dump`: its output differs between Python 3.11, 3.12 and 3.13; cut text does not.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import tokenize
from pathlib import Path
from typing import Any, Iterable

IDENTITY_SCHEME = 2
"""How identities are computed. 1: raw source (docstrings included) of declared modules, only those already
imported. 2: this module. Written into fingerprints (`ctxgauge.identity_scheme`) so `compare` names a scheme
change as the reason two ids differ."""

_ROOT = "ctxgauge"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent
NOT_HASHED = tuple(f"{_ROOT}.{name}" for name in (
    "cache", "errors", "_killpoints", "fingerprints", "records", "report", "executors", "suites", "export", "demo",
    "cli", "__main__"))
"""ctxgauge packages and modules outside the boundary (besides `ctxgauge` itself): see the module docstring."""

_source_hashes: dict[str, str] = {}  # module -> sha256 hex of its normalised source (files do not change in a run)


def normalized_source(text: str) -> str:
    """`text` (Python source) without comments and docstrings, trailing whitespace and blank lines.

    Cut by position: COMMENT tokens from `tokenize`, docstrings located by `ast` (line and column; `ast`
    counts columns in UTF-8 bytes, `tokenize` in characters, both are turned into character offsets).
    Source that does not parse is returned with only whitespace normalised (it cannot run either)."""
    return _normalize(text, _parse(text))


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _normalize(text: str, tree: ast.Module | None) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def at(row: int, col: int, *, utf8: bool) -> int:
        if row > len(lines):
            return starts[-1]
        line = lines[row - 1]
        return starts[row - 1] + (len(line.encode("utf-8")[:col].decode("utf-8", "replace")) if utf8 else col)

    cuts: list[tuple[int, int]] = []
    if tree is not None:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                cuts.append((at(*tok.start, utf8=False), at(*tok.end, utf8=False)))
        # Every statement that is a string and nothing else: a docstring (first in a module, class or function)
        # or an attribute's docstring (after the assignment it describes); at run time a no-op either way.
        for node in _statements(tree):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str) and node.end_lineno is not None:
                cuts.append((at(node.lineno, node.col_offset, utf8=True),
                             at(node.end_lineno, node.end_col_offset or 0, utf8=True)))
    out, pos = [], 0
    for start, end in sorted(cuts):
        if start >= pos:
            out.append(text[pos:start])
            pos = end
    out.append(text[pos:])
    kept = (line.rstrip() for line in "".join(out).splitlines())
    return "".join(line + "\n" for line in kept if line)


def _statements(node: ast.AST):
    """Every statement under `node`, at any depth of blocks (docstrings and imports are statements; walking
    the expressions too would cost twice the time for nothing)."""
    for _, value in ast.iter_fields(node):  # body, orelse, finalbody, handlers and a match's cases
        if isinstance(value, list):
            for child in value:
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    yield child
                    yield from _statements(child)


def source_hash(text: str) -> str:
    """SHA-256 hex of `normalized_source(text)`: the hash of one module's code."""
    return hashlib.sha256(normalized_source(text).encode("utf-8")).hexdigest()


def _hashed(module: str, top: str) -> bool:
    """Whether `module` is inside the boundary for a root in the top-level package `top`."""
    if module.split(".")[0] == _ROOT:
        return module != _ROOT and not any(module == n or module.startswith(n + ".") for n in NOT_HASHED)
    return module.split(".")[0] == top


@functools.cache
def _package_dir(top: str) -> Path | None:
    """The folder of a top-level package (None for a single-file module or none found). A top-level name's
    spec is found without running anything; ctxgauge's own folder is this file's parent's parent."""
    if top == _ROOT:
        return _PACKAGE_DIR
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    return Path(locations[0]) if locations else None


@functools.cache
def module_file(module: str) -> Path | None:
    """The source file of `module`, found from its top-level package's folder without importing anything
    (`a/b/__init__.py` or `a/b.py`); None when there is no Python source."""
    top, *rest = module.split(".")
    folder = _package_dir(top)
    if folder is None:
        if rest:
            return None
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return None
        origin = getattr(spec, "origin", None)
        return Path(origin) if origin and origin.endswith(".py") and Path(origin).is_file() else None
    base = folder.joinpath(*rest)
    for path in (base / "__init__.py", base.with_name(base.name + ".py") if rest else None):
        if path is not None and path.is_file():
            return path
    return None


@functools.cache
def _module_source(module: str) -> tuple[str, ast.Module | None]:
    """A module's text ("" when it has none) and its syntax tree (None when it does not parse)."""
    path = module_file(module)
    text = path.read_text(encoding="utf-8") if path is not None else ""
    return text, _parse(text)


@functools.cache
def static_imports(module: str) -> tuple[str, ...]:
    """Every module `module`'s source imports, at any depth of its syntax tree, sorted: `import a.b` gives
    a.b; `from a.b import c` gives a.b and a.b.c when that is a module; relative imports are resolved."""
    path = module_file(module)
    tree = _module_source(module)[1]
    if path is None or tree is None:
        return ()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target:
                continue
            out.add(target)
            if target.split(".")[0] in (_ROOT, module.split(".")[0]):  # other libraries are never followed
                out.update(f"{target}.{alias.name}" for alias in node.names
                           if alias.name != "*" and module_file(f"{target}.{alias.name}") is not None)
    return tuple(sorted(out))


@functools.cache
def _closure(roots: tuple[str, ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    todo: list[str] = []
    for root in roots:
        top = root.split(".")[0]
        todo.append(root)
        seen.add(root)
        while todo:
            module = todo.pop()
            parts = module.split(".")
            near = [".".join(parts[:i]) for i in range(1, len(parts))] + list(static_imports(module))
            for other in near:
                if other not in seen and _hashed(other, top) and module_file(other) is not None:
                    seen.add(other)
                    todo.append(other)
    return tuple(sorted(seen))


def computing_modules(*roots: str) -> tuple[str, ...]:
    """The roots and every module they compute with (static imports followed within the boundary, and the
    parent packages Python runs on the way), sorted. The roots themselves are always included."""
    return _closure(tuple(sorted(set(roots))))


def module_hash(module: str) -> str:
    """SHA-256 hex of one module's normalised source ("" source when it has none)."""
    if module not in _source_hashes:
        text, tree = _module_source(module)
        _source_hashes[module] = hashlib.sha256(_normalize(text, tree).encode("utf-8")).hexdigest()
    return _source_hashes[module]


def code_hashes(*roots: str) -> dict[str, str]:
    """`{module: hash}` of `computing_modules(*roots)`, sorted by module."""
    return {m: module_hash(m) for m in computing_modules(*roots)}


def code_identity(roots: Iterable[str], config: Any = None) -> str:
    """`sha256:<hex>` over the identity scheme, the code hashes of `roots` and a JSON-ready `config`: an
    engine's id (config: its kind, parameters and library versions)."""
    payload = {"scheme": IDENTITY_SCHEME, "modules": code_hashes(*roots), "config": config}
    return "sha256:" + hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@functools.cache  # asked for every stage lookup, engine identity and record (~1 ms each uncached)
def distribution_version(dist: str) -> str | None:
    """The installed version of a distribution, None when it is not installed. Read once per process."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def stage_identity(modules: Iterable[str], config: dict[str, Any] | None = None,
                   libraries: Iterable[str] = ()) -> dict[str, Any]:
    """`{scheme, modules: {name: code hash}, config, libraries: {dist: version}}`, sorted, JSON-ready: the
    given modules and every module they compute with (`computing_modules`)."""
    return {
        "scheme": IDENTITY_SCHEME,
        "modules": code_hashes(*modules),
        "config": dict(sorted((config or {}).items())),
        "libraries": {d: distribution_version(d) for d in sorted(set(libraries))},
    }

