"""JavaScript and TypeScript import resolution for the graph engine (see `_resolve` for the rules)."""

from __future__ import annotations

import json
import posixpath
import re

from ctxgauge.engines.graph._paths import dirname, join, norm

_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json")
_JS_ALIASES = ("@/", "~/", "#/", "~~/", "@@/")


class JsResolution:
    """Mixin of `Resolver`: relative specifiers, workspace packages and path aliases."""

    paths: frozenset[str]

    def _js_init(self) -> None:
        self._packages: dict[str, tuple[str, dict]] = {}  # npm package name -> (directory, package.json)
        self._package_meta: dict[str, dict] = {}  # directory -> its package.json

    def _package_json(self, path: str, text: str) -> None:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser descends: no package
            return
        if isinstance(data, dict):
            self._package_meta[dirname(path)] = data
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            self._packages.setdefault(data["name"], (dirname(path), data))

    def _js_file(self, base: str) -> str | None:
        """The file a resolved specifier path names, trying extensions and index files as bundlers do."""
        stem, ext = posixpath.splitext(base)
        if base in self.paths and ext:
            return base
        for e in _JS_EXTS:
            if base + e in self.paths:
                return base + e
        # TypeScript's ESM convention: `./x.js` in source names x.ts (the file it compiles to).
        if ext in (".js", ".jsx", ".mjs", ".cjs"):
            swap = {".js": (".ts", ".tsx", ".d.ts"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
            for e in swap[ext]:
                if stem + e in self.paths:
                    return stem + e
        for e in _JS_EXTS:
            if f"{base}/index{e}" in self.paths:
                return f"{base}/index{e}"
        return None

    def _javascript(self, importer: str, spec: str) -> list[str]:
        spec = spec.split("?")[0]  # bundler queries: `./x.svg?raw`
        if spec.startswith(("./", "../")) or spec in (".", ".."):
            base = norm(join(dirname(importer), spec))
            found = self._js_file(base) if base is not None else None
            return [found] if found else []
        if spec.startswith("/"):
            found = self._js_file(spec.lstrip("/"))
            return [found] if found else []
        if spec.startswith("#"):  # Node subpath imports, declared in the importer's package.json
            pdir = self._package_dir(importer)
            targets = _pattern(self._package_meta.get(pdir, {}).get("imports"), spec)
            found = next((f for f in (self._package_entry(pdir, t) for t in targets) if f), None)
            if found:
                return [found]
        found = self._js_package(spec)
        # A bare one-word specifier ("react", "path") is a package, never a baseUrl path; aliases and
        # multi-segment specifiers may be paths inside the project.
        if found is None and ("/" in spec and not spec.startswith("node:")):
            found = self._js_alias(importer, spec)
        return [found] if found else []

    _typescript = _javascript

    def _js_package(self, spec: str) -> str | None:
        parts = spec.split("/")
        n = 2 if spec.startswith("@") else 1
        name, sub = "/".join(parts[:n]), "/".join(parts[n:])
        if name not in self._packages:
            return None
        pdir, meta = self._packages[name]
        entries: list[str] = []
        exports = meta.get("exports")
        key = "./" + sub if sub else "."
        if isinstance(exports, dict) and any(k.startswith(".") for k in exports):
            entries += _pattern(exports, key)
        elif isinstance(exports, (str, dict)) and not sub:
            entries += _leaves(exports if isinstance(exports, str) or "." not in exports else exports["."])
        if not sub:
            entries += [meta[f] for f in ("source", "types", "typings", "module", "main") if isinstance(meta.get(f), str)]
        else:
            entries += [sub, "src/" + sub]
        for entry in entries:
            found = self._package_entry(pdir, entry)
            if found:
                return found
        for entry in ("src/index", "index", "src/main", "lib/index") if not sub else ():
            found = self._js_file(join(pdir, entry))
            if found:
                return found
        return None

    def _package_entry(self, pdir: str, entry: str) -> str | None:
        base = norm(join(pdir, entry))
        if base is None:
            return None
        found = self._js_file(base)
        if found:
            return found
        # Manifests point at build output that is not committed: map dist/x.js (or .d.ts) back to src/x.ts.
        rel = base[len(pdir) + 1:] if pdir else base
        head, _, tail = rel.partition("/")
        if head in ("dist", "lib", "build", "out", "esm", "cjs") and tail:
            tail = re.sub(r"(\.d)?\.(m|c)?[jt]sx?$", "", tail)
            return self._js_file(join(pdir, "src", tail))
        return None

    def _js_alias(self, importer: str, spec: str) -> str | None:
        rest = spec
        for alias in _JS_ALIASES:
            if spec.startswith(alias):
                rest = spec[len(alias):]
                break
        pkg = self._package_dir(importer)
        # The `src` directory enclosing the importer is where `@/` points in most projects' configs.
        parts = dirname(importer).split("/")
        src = "/".join(parts[:len(parts) - parts[::-1].index("src")]) if "src" in parts else None
        roots = ([src] if src is not None else []) + [pkg, join(pkg, "src"), "", "src"]
        for root in dict.fromkeys(roots):
            found = self._js_file(join(root, rest)) if rest else None
            if found:
                return found
        return None

    def _package_dir(self, path: str) -> str:
        d = dirname(path)
        while d:
            if f"{d}/package.json" in self.paths:
                return d
            d = dirname(d)
        return ""


def _leaves(value: object) -> list[str]:
    """String leaves of a package.json `exports` entry (condition objects nest), in document order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return []


def _pattern(table: object, key: str) -> list[str]:
    """Targets of `key` in a package.json `exports` or `imports` map: an exact key, else the pattern
    with one `*` and the longest prefix that matches (Node's rule), with `*` substituted in its targets."""
    if not isinstance(table, dict):
        return []
    if key in table:
        return _leaves(table[key])
    best = None
    for k in table:
        head, star, tail = k.partition("*")
        if star and key.startswith(head) and key.endswith(tail) and len(key) >= len(head) + len(tail):
            if best is None or len(head) > len(best[0]):
                best = (head, tail, k)
    if best is None:
        return []
    head, tail, k = best
    middle = key[len(head):len(key) - len(tail)]
    return [t.replace("*", middle) for t in _leaves(table[k])]
