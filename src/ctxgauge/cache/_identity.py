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
Imports in an `if TYPE_CHECKING:` block are not followed: they never run.

Re-export packages count only for the names taken from them. A package `__init__` whose statements are
only imports, docstrings and `__all__` (every `__init__` of ctxgauge's computing layers: `metrics`,
`engines`, `corpus`, `git`, `syntax`) computes nothing itself; it only binds names. So:
- run on the way to a submodule (`from ctxgauge.metrics._lines import Span` runs `metrics/__init__`, which
  imports every metric and the paired statistics), it adds nothing: neither its text nor its imports;
- `from ctxgauge.git import Repo` follows the module the name is bound from (`git._repo`), not the package's
  other imports, and the package enters the hash as the bindings of the names taken (`Repo=ctxgauge.git.
  _repo:Repo`), so re-pointing a name is a new system and re-exporting one more is not;
- `import pkg`, `from pkg import *`, a name the `__init__` does not bind, and a package `__init__` with code
  of its own (a def, a call, any other assignment) count in full, as any module does.
A module imported only for what its import does (a registration) is then not reached through a re-export
package: the module that relies on the effect imports it itself.

The boundary (`HASHED`): every `ctxgauge` module reached, except those that never decide a result:

    ctxgauge              the version alone (a release that leaves an engine's code alone keeps its id)
    ctxgauge.cache        storage keyed by these identities, and this service (its scheme is IDENTITY_SCHEME)
    ctxgauge.errors       error types
    ctxgauge._killpoints  the kill/resume tests' hook
    ctxgauge.fingerprints the fingerprint format (hybrid reads its list of identity sources)

and the layers above the engines (records, report, executors, suites, export, demo, cli), which an engine
never imports. So the modules of `ctxgauge.engines` (the engine's own package, the shared text tools, the
span ranker), `ctxgauge.corpus`, `ctxgauge.git`, `ctxgauge.metrics`, `ctxgauge.syntax` and `ctxgauge._io` are
hashed wherever an engine reaches them, and only those it reaches. Imports
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

IDENTITY_SCHEME = 3
"""How identities are computed. 1: raw source (docstrings included) of declared modules, only those already
imported. 2: normalised source of every module imported, package `__init__`s followed in full. 3: this
module (re-export packages count only for the names taken from them; `TYPE_CHECKING` imports left out).
Written into fingerprints (`ctxgauge.identity_scheme`) so `compare` names a scheme change as the reason two
ids differ."""

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


def _skipped(node: ast.stmt) -> bool:
    """An `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) block: read by type checkers, never run."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_statements(node: ast.AST):
    """Every `import` statement under `node` at any depth of blocks, except those in `if TYPE_CHECKING:`
    bodies (their `else:` runs, so it is read)."""
    for _, value in ast.iter_fields(node):
        if isinstance(value, list):
            for child in value:
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    yield child
                elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    if _skipped(child):
                        for other in child.orelse:
                            yield from _import_statements(ast.Module(body=[other], type_ignores=[]))
                    else:
                        yield from _import_statements(child)


def _from_target(package: list[str], node: ast.ImportFrom) -> str:
    """The module a `from ... import` reads, relative levels resolved against `package` (its parts)."""
    if not node.level:
        return node.module or ""
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


@functools.cache
def _imports(module: str) -> tuple[tuple[str, tuple[tuple[str, str], ...] | None], ...]:
    """`module`'s imports as `(target, names)`, in source order: `import a.b` gives `("a.b", None)` (the
    whole module), `from a.b import c as d` gives `("a.b", (("c", "d"),))` (each name and what it is bound
    to; `*` gives None), relative imports resolved."""
    path = module_file(module)
    tree = _module_source(module)[1]
    if path is None or tree is None:
        return ()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: list[tuple[str, tuple[tuple[str, str], ...] | None]] = []
    for node in _import_statements(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, None) for alias in node.names)
            continue
        target = _from_target(package, node)
        if target:
            names = tuple((a.name, a.asname or a.name) for a in node.names)
            out.append((target, None if any(n == "*" for n, _ in names) else names))
    return tuple(out)


@functools.cache
def static_imports(module: str) -> tuple[str, ...]:
    """Every module `module`'s source imports, at any depth of its syntax tree, sorted: `import a.b` gives
    a.b; `from a.b import c` gives a.b and a.b.c when that is a module; relative imports are resolved;
    imports in `if TYPE_CHECKING:` blocks are left out."""
    top = module.split(".")[0]
    out: set[str] = set()
    for target, names in _imports(module):
        out.add(target)
        if names and target.split(".")[0] in (_ROOT, top):  # other libraries are never followed
            out.update(f"{target}.{n}" for n, _ in names if module_file(f"{target}.{n}") is not None)
    return tuple(sorted(out))


@functools.cache
def reexports(module: str) -> dict[str, tuple[str, str | None]] | None:
    """For a package `__init__` that only imports and re-exports (its statements are imports, docstrings
    and `__all__`): each name it binds -> `(module, name)` it comes from (`(module, None)` for a module
    bound by `import`). None for any other module: one that runs code of its own, or imports with `*`."""
    path = module_file(module)
    tree = _module_source(module)[1]
    if path is None or tree is None or path.name != "__init__.py":
        return None
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else None
        if targets is not None and all(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        return None
    bound: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):  # `import a.b as c` binds c to a.b; `import a.b` binds a
            for alias in node.names:
                name = alias.name if alias.asname else alias.name.split(".")[0]
                bound[alias.asname or name] = (name, None)
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(module.split("."), node)
            for alias in node.names:
                if alias.name == "*":
                    return None  # which names a star import binds is not in the source
                bound[alias.asname or alias.name] = (target, alias.name)
    return dict(sorted(bound.items()))


class _Walk:
    """One closure: modules computed with in full, and re-export packages reached only for some names."""

    def __init__(self, top: str, full: set[str], names: dict[str, set[str]]):
        self.top, self.full, self.names = top, full, names

    def inside(self, module: str) -> bool:
        return _hashed(module, self.top) and module_file(module) is not None

    def run(self, module: str) -> None:
        """`module` in full: its source is hashed, its parent packages run and its imports are followed
        (`module` itself counts even outside the boundary: a root)."""
        todo = [module]
        while todo:
            current = todo.pop()
            if current in self.full or (current != module and not self.inside(current)):
                continue
            self.full.add(current)
            parts = current.split(".")
            for parent in (".".join(parts[:i]) for i in range(1, len(parts))):
                if reexports(parent) is None:  # a re-export package run on the way computes nothing
                    todo.append(parent)
            for target, names in _imports(current):
                todo.extend(self.imported(target, names))

    def imported(self, target: str, names: tuple[tuple[str, str], ...] | None, depth: int = 0) -> list[str]:
        """The modules to follow in full for `import target` / `from target import names`, recording the
        names taken from re-export packages on the way."""
        if not self.inside(target):
            return []
        table = reexports(target) if names is not None and depth < 50 else None
        if table is None:  # a module of code, `import target` or `*`: the whole of it
            subs = [f"{target}.{n}" for n, _ in names or () if module_file(f"{target}.{n}") is not None]
            return [target, *subs]
        out: list[str] = []
        for name, _ in names:
            source = table.get(name)
            if source is None or source == (target, name):  # not bound by the package: a submodule, or unknown
                sub = f"{target}.{name}"
                out.append(sub if module_file(sub) is not None else target)
                continue
            self.names.setdefault(target, set()).add(name)
            if source[1] is None:
                out.append(source[0])
            else:
                out.extend(self.imported(source[0], ((source[1], source[1]),), depth + 1))
        return out


@functools.cache
def _closure(roots: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """`(modules in full, ((re-export package, names taken from it), ...))` for `roots`, sorted.

    A root that is a re-export package counts for the names the other roots take from it, and in full only
    when they take none: so the modules of a closure, given back as roots (an engine's identity hashes its
    `code_modules()`, fusion and hybrid hash the union of their sub-engines'), give the same closure."""
    full: set[str] = set()
    names: dict[str, set[str]] = {}
    packages = [root for root in roots if reexports(root) is not None]
    for root in roots:
        if root not in packages:
            _Walk(root.split(".")[0], full, names).run(root)
    for root in packages:
        if root not in names:
            _Walk(root.split(".")[0], full, names).run(root)
    partial = tuple((p, tuple(sorted(n))) for p, n in sorted(names.items()) if p not in full)
    return tuple(sorted(full)), partial


def computing_modules(*roots: str) -> tuple[str, ...]:
    """The roots and every module they compute with (static imports followed within the boundary, the
    parent packages Python runs on the way that run code of their own, and the re-export packages names
    are taken from), sorted. The roots themselves are always included."""
    full, partial = _closure(tuple(sorted(set(roots))))
    return tuple(sorted(set(full) | {p for p, _ in partial}))


def _binding_hash(package: str, names: tuple[str, ...]) -> str:
    """SHA-256 hex of what `names` are bound to in a re-export package (`name=module:attr` lines): the part
    of its `__init__` a module that imports those names computes with."""
    table = reexports(package) or {}
    lines = []
    for name in names:
        source = table.get(name)
        lines.append(f"{name}=" + ("" if source is None else f"{source[0]}:{source[1] or ''}"))
    return hashlib.sha256("".join(line + "\n" for line in lines).encode("utf-8")).hexdigest()


def module_hash(module: str) -> str:
    """SHA-256 hex of one module's normalised source ("" source when it has none)."""
    if module not in _source_hashes:
        text, tree = _module_source(module)
        _source_hashes[module] = hashlib.sha256(_normalize(text, tree).encode("utf-8")).hexdigest()
    return _source_hashes[module]


def code_hashes(*roots: str) -> dict[str, str]:
    """`{module: hash}` of `computing_modules(*roots)`, sorted by module: a module's normalised source, or
    for a re-export package reached only for names, what those names are bound to."""
    full, partial = _closure(tuple(sorted(set(roots))))
    out = {m: module_hash(m) for m in full}
    out.update((p, _binding_hash(p, names)) for p, names in partial)
    return dict(sorted(out.items()))


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

