"""Import resolution for the graph engine: raw import strings (see `_parse`) to files of the corpus.

Resolution depends only on the corpus's paths and a few manifests read from it (go.mod, Cargo.toml,
package.json), never on the file system or the network, so the same corpus always gives the same edges.
An import that names no corpus file (the standard library, a third-party package) resolves to nothing
and is counted, not reported as an error.

- Python: relative imports walk up from the importing file's package. Absolute names are looked up among
  the corpus's modules, each registered under its qualified name (directories with `__init__.py` above it
  form the package chain, so `src/shelfd/models.py` is `shelfd.models` whatever the source root), its
  dotted path from the corpus root and its dotted path below a `src`/`lib`/`python` directory. The longest
  prefix of the import that names a module wins (`from shelfd import models` -> shelfd/models.py, or
  shelfd/__init__.py when `models` is a name inside it). Several files with one name: nearest to the importer.
  A module in a directory without `__init__.py` (outside the root and `src`) answers to its bare stem only
  for importers in the same directory (a script's sys.path[0]), so `import types` never finds tools/types.py.
- JavaScript/TypeScript: relative specifiers with the extension and `index` resolution of bundlers and
  TypeScript (`./x` -> x.ts, x.tsx, x.d.ts, x.js ... x/index.ts ...; `./x.js` may name x.ts). Bare
  specifiers: Node subpath imports (`#x`, from the importer's package.json `imports`, `*` patterns
  included); workspace packages by their package.json `name` (entry from `exports`, then `source`/`types`/
  `module`/`main`, built paths such as dist/x.js mapped back to src/x.ts, else src/index.*); and path
  aliases without reading tsconfig: `@/x`, `~/x`, `#/x`, `~~/x`, `@@/x` and baseUrl-style `a/b` (never a
  one-word specifier: that is a package) are tried below the `src` directory enclosing the importer, its
  package directory, that directory's `src`, the corpus root and its `src`.
- Go: the import path is matched against the `module` lines of every go.mod (longest module wins) and
  names a package directory; it resolves to that directory's non-test .go files. Without a matching
  go.mod, the longest tail of two or more path segments that is a directory with Go files is used.
- Java: `a.b.C` -> a file whose path ends in a/b/C.java (trailing segments dropped for nested classes and
  static members); `a.b.*` -> the .java files of directories ending in a/b.
- Rust: `crate::` starts at the crate's source directory (the `src` holding lib.rs or main.rs, or a
  Cargo.toml `[lib] path`), `self::` at the importing module's directory, `super::` one directory up, a
  workspace crate's name (Cargo.toml `[package] name`, `-` as `_`, or the alias of a renamed dependency
  `arrow = { package = "polars-arrow" }`) at that crate's source directory, and a bare path is tried as
  `self::` then `crate::`. The longest prefix that is a module file (`a/b.rs` or `a/b/mod.rs`) wins; when
  no segment is a module file, an explicit start (`crate::`, `self::`, `super::`, a crate name) names the
  start module's own file (`crate::Item` is an item of lib.rs), while a bare path stays unresolved.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterable, Mapping

from ctxgauge.corpus import path_key
from ctxgauge.engines.graph._paths import dirname, join, nearest
from ctxgauge.engines.graph._resolve_js import JsResolution
from ctxgauge.engines.graph._resolve_rust import RustResolution

MANIFEST_NAMES = ("go.mod", "Cargo.toml", "package.json")
_PY_ROOT_DIRS = ("src", "lib", "python")


def is_manifest(path: str) -> bool:
    """Whether resolution reads this file (go.mod, Cargo.toml, package.json outside node_modules)."""
    return posixpath.basename(path) in MANIFEST_NAMES and "node_modules/" not in path


class Resolver(JsResolution, RustResolution):
    """Resolves import strings against one corpus's paths and manifests (path -> text)."""

    def __init__(self, paths: Iterable[str], manifests: Mapping[str, str]):
        self.paths = frozenset(paths)
        self._memo: dict[tuple[str, str, str], tuple[str, ...] | None] = {}
        self.dirs: dict[str, list[str]] = {}
        for p in sorted(self.paths, key=path_key):
            self.dirs.setdefault(dirname(p), []).append(p)
        self._python_index()
        self._java_index()
        self._js_init()
        self._rust_init()
        self._go_modules: list[tuple[str, str]] = []  # (module path, directory), longest module first
        for path in sorted(manifests, key=path_key):
            name, text = posixpath.basename(path), manifests[path]
            if name == "go.mod":
                m = re.search(r"^\s*module\s+\"?([^\s\"]+)", text, re.M)
                if m:
                    self._go_modules.append((m.group(1), dirname(path)))
            elif name == "Cargo.toml":
                self._cargo(path, text)
            elif name == "package.json":
                self._package_json(path, text)
        self._go_modules.sort(key=lambda md: (-len(md[0]), md[0], path_key(md[1])))
        self._rust_finish()

    # -- dispatch --------------------------------------------------------------------------------------
    def resolve(self, importer: str, language: str, spec: str) -> tuple[str, ...] | None:
        """The corpus files `spec` names when the file `importer`, written in `language`, imports it:
        None when it names no corpus file, else the files other than the importer, sorted (so `()` when
        it names the importer itself, as Rust's `use self::Item` does: resolved, but no edge).
        Answers are memoised: a resolver lives as long as its corpus's path set and manifests."""
        key = (importer, language, spec)
        if key not in self._memo:
            fn = getattr(self, "_" + language, None)
            found = fn(importer, spec) if fn is not None else []
            self._memo[key] = tuple(sorted({p for p in found if p != importer}, key=path_key)) if found else None
        return self._memo[key]

    # -- Python ----------------------------------------------------------------------------------------
    def _python_index(self) -> None:
        self._py_names: dict[str, list[str]] = {}
        self._py_paths: dict[str, list[str]] = {}
        self._py_loose: dict[str, list[str]] = {}
        for p in sorted(self.paths, key=path_key):
            stem, ext = posixpath.splitext(p)
            if ext not in (".py", ".pyi"):
                continue
            parts = stem.split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or not all(s.isidentifier() for s in parts[-1:]):
                continue
            # Walk up while the directory is a package: the qualified name does not depend on the root.
            d, names = dirname(p), [] if posixpath.basename(stem) == "__init__" else [parts[-1]]
            chain = d
            while chain and (f"{chain}/__init__.py" in self.paths or f"{chain}/__init__.pyi" in self.paths):
                names.insert(0, posixpath.basename(chain))
                chain = dirname(chain)
            if names and chain == d and d and posixpath.basename(d) not in _PY_ROOT_DIRS:
                # A module in a plain directory is importable by its stem only from scripts beside it
                # (sys.path[0]); elsewhere `import types` must not find tools/types.py.
                self._py_loose.setdefault(names[0], []).append(p)
            elif names:
                self._py_names.setdefault(".".join(names), []).append(p)
            self._py_paths.setdefault(".".join(parts), []).append(p)
            for i, seg in enumerate(parts[:-1]):
                if seg in _PY_ROOT_DIRS:
                    self._py_paths.setdefault(".".join(parts[i + 1:]), []).append(p)
                    break

    def _py_module_file(self, base: str) -> str | None:
        for cand in (base + ".py", base + "/__init__.py", base + ".pyi", base + "/__init__.pyi"):
            if cand in self.paths:
                return cand
        return None

    def _python(self, importer: str, spec: str) -> list[str]:
        if spec.startswith("."):
            dots = len(spec) - len(spec.lstrip("."))
            base: str | None = dirname(importer)
            for _ in range(dots - 1):
                base = dirname(base) if base else None
            if base is None:
                return []
            parts = [s for s in spec[dots:].split(".") if s]
            for k in range(len(parts), -1, -1):
                found = self._py_module_file(join(base, *parts[:k])) if k or base else \
                    self._py_module_file("__init__")
                if found:
                    return [found]
            return []
        parts = spec.split(".")
        for k in range(len(parts), 0, -1):
            name = ".".join(parts[:k])
            for index in (self._py_names, self._py_paths):
                if name in index:
                    return [nearest(importer, index[name])]
            beside = [f for f in self._py_loose.get(name, ()) if dirname(f) == dirname(importer)]
            if beside:
                return beside[:1]
        return []

    # -- Go ----------------------------------------------------------------------------------------------
    def _go_files(self, d: str) -> list[str]:
        return [p for p in self.dirs.get(d, []) if p.endswith(".go") and not p.endswith("_test.go")]

    def _go(self, importer: str, spec: str) -> list[str]:
        for module, mdir in self._go_modules:
            if spec == module or spec.startswith(module + "/"):
                return self._go_files(join(mdir, spec[len(module) + 1:]))
        parts = spec.split("/")
        for k in range(len(parts) - 2, -1, -1):  # GOPATH-style trees: the longest tail of >= 2 segments
            files = self._go_files("/".join(parts[k:]))
            if files:
                return files
        return []

    # -- Java --------------------------------------------------------------------------------------------
    def _java_index(self) -> None:
        self._java_classes: dict[str, list[str]] = {}
        self._java_dirs: dict[str, list[str]] = {}
        for p in sorted(self.paths, key=path_key):
            if not p.endswith(".java"):
                continue
            parts = p[:-5].split("/")
            for i in range(len(parts)):
                self._java_classes.setdefault(".".join(parts[i:]), []).append(p)
                if i < len(parts) - 1:
                    self._java_dirs.setdefault(".".join(parts[i:-1]), []).append(p)

    def _java(self, importer: str, spec: str) -> list[str]:
        parts = spec.split(".")
        if parts[-1] == "*":
            parts = parts[:-1]
            if ".".join(parts) in self._java_dirs:
                return list(self._java_dirs[".".join(parts)])
        for k in range(len(parts), 1, -1):
            name = ".".join(parts[:k])
            if name in self._java_classes:
                return [nearest(importer, self._java_classes[name])]
        return []
