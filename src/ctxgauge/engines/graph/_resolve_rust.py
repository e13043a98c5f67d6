"""Rust import resolution for the graph engine (see `_resolve` for the rules)."""

from __future__ import annotations

import posixpath
import tomllib

from ctxgauge.engines.graph._paths import dirname, join, norm


class RustResolution:
    """Mixin of `Resolver`: crates from Cargo.toml, `crate::`/`self::`/`super::` paths, `mod x;`."""

    paths: frozenset[str]

    def _rust_init(self) -> None:
        self._crates: dict[str, str] = {}  # crate name (with `_`) -> source directory
        self._crate_roots: set[str] = set()  # files that are crate roots
        self._crate_dirs: list[str] = []
        self._crate_of: dict[str, str | None] = {}  # file -> its crate's source directory
        self._renames: dict[str, str] = {}  # dependency alias (with `_`) -> package name
        self._packages_rs: dict[str, str] = {}  # package name as in Cargo.toml -> source directory

    def _rust_finish(self) -> None:
        for alias in sorted(self._renames):
            if self._renames[alias] in self._packages_rs:
                self._crates.setdefault(alias, self._packages_rs[self._renames[alias]])
        for p in self.paths:  # crates without a Cargo.toml in the corpus (fixtures, vendored sources)
            if posixpath.basename(p) in ("lib.rs", "main.rs") and posixpath.basename(dirname(p)) == "src":
                self._crate_roots.add(p)
        # Longest first, so a file belongs to the innermost crate.
        self._crate_dirs = sorted({dirname(p) for p in self._crate_roots}, key=lambda d: (-len(d), d))

    def _cargo(self, path: str, text: str) -> None:
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return
        cdir = dirname(path)
        # Renamed dependencies (`arrow = { package = "polars-arrow" }`), in any dependency table of a
        # crate or of its workspace: code then says `arrow::`, which must find polars-arrow's sources.
        tables = [data, data.get("workspace") if isinstance(data.get("workspace"), dict) else {}]
        for table in tables:
            for key in ("dependencies", "dev-dependencies", "build-dependencies"):
                deps = table.get(key)
                for alias, spec in (deps.items() if isinstance(deps, dict) else ()):
                    if isinstance(spec, dict) and isinstance(spec.get("package"), str):
                        self._renames.setdefault(alias.replace("-", "_"), spec["package"])
        package, lib = data.get("package"), data.get("lib")
        lib_path = lib.get("path") if isinstance(lib, dict) and isinstance(lib.get("path"), str) else None
        root = norm(join(cdir, lib_path)) if lib_path else None
        if root is None or root not in self.paths:
            root = next((r for r in (join(cdir, "src/lib.rs"), join(cdir, "src/main.rs")) if r in self.paths), None)
        if root is None:
            return
        self._crate_roots.add(root)
        if isinstance(package, dict) and isinstance(package.get("name"), str):
            name = (lib.get("name") if isinstance(lib, dict) and isinstance(lib.get("name"), str)
                    else package["name"]).replace("-", "_")
            self._crates.setdefault(name, dirname(root))
            self._packages_rs.setdefault(package["name"], dirname(root))

    def _rust_src_dir(self, path: str) -> str | None:
        """The source directory of the crate whose tree holds `path`, or None for a file outside every
        crate's source tree (tests/x.rs, build.rs: each is a crate root of its own). Memoised: every
        import of a file asks."""
        if path not in self._crate_of:
            self._crate_of[path] = next((d for d in self._crate_dirs if not d or path.startswith(d + "/")), None)
        return self._crate_of[path]

    def _rust_mod_dir(self, path: str) -> str:
        """Where the child modules of the module in file `path` live."""
        base = posixpath.basename(path)
        if base == "mod.rs" or path in self._crate_roots or base in ("lib.rs", "main.rs") \
                or self._rust_src_dir(path) is None:
            return dirname(path)  # crate roots, mod.rs, and files outside any src tree (tests/x.rs, build.rs)
        return path[:-3]

    def _rust_module_file(self, d: str) -> str | None:
        """The file of the module whose children live in directory `d`."""
        for cand in (d + ".rs", join(d, "mod.rs"), join(d, "lib.rs"), join(d, "main.rs")):
            if cand in self.paths:
                return cand
        return None

    def _rust_walk(self, start: str, segs: list[str]) -> str | None:
        for k in range(len(segs), 0, -1):
            base = join(start, *segs[:k])
            for cand in (base + ".rs", base + "/mod.rs"):
                if cand in self.paths:
                    return cand
        return None

    def _rust(self, importer: str, spec: str) -> list[str]:
        segs = [s for s in spec.split("::") if s]
        if not segs:
            return []
        src_dir = self._rust_src_dir(importer)
        crate_dir = dirname(importer) if src_dir is None else src_dir
        head = segs[0]
        # (start directory, file named when no module segment matches: `crate::Item` is an item of lib.rs,
        # `self::Item` one of this file). Bare paths have none: `std::io` must not fall back to anything.
        starts: list[tuple[str, str | None]] = []
        if head in ("self", "super"):
            d, own = self._rust_mod_dir(importer), importer
            while segs and segs[0] in ("self", "super"):
                if segs.pop(0) == "super":
                    d = dirname(d)
                    own = self._rust_module_file(d)
            starts.append((d, own))
        elif head == "crate":
            segs.pop(0)
            starts.append((crate_dir, self._rust_module_file(crate_dir)))
        elif head in self._crates:
            segs.pop(0)
            cdir = self._crates[head]
            starts.append((cdir, self._rust_module_file(cdir)))
        else:  # 2018 uniform paths: a child module of this one, else (2015 style) of the crate root
            starts += [(self._rust_mod_dir(importer), None), (crate_dir, None)]
        for d, fallback in starts:
            found = self._rust_walk(d, segs) or fallback
            if found is not None:
                return [found]
        return []
