"""Import resolution: for each language a small corpus in a plain directory, and the files each import names.

Every case builds the graph engine over the directory and reads the resolved imports back from graph.json,
so what is tested is what the engine stores.
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxgauge.corpus import Corpus
from ctxgauge.engines.graph import GraphEngine


def build(tmp_path: Path, files: dict[str, str]) -> tuple[dict[str, list[str]], dict]:
    """path -> resolved imports (for parsed files) and the build summary of a corpus made of `files`."""
    root = tmp_path / "corpus"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    out = tmp_path / "out"
    summary = GraphEngine().build(Corpus.from_directory(root), out)
    data = json.loads((out / "graph.json").read_text())
    return {f["path"]: f["resolved"] for f in data["files"] if f["language"]}, summary


def test_python_relative_absolute_and_src_layout(tmp_path):
    resolved, summary = build(tmp_path, {
        "src/shelfd/__init__.py": "",
        "src/shelfd/models.py": "class Book: pass\n",
        "src/shelfd/fees.py": "from .models import Book\nfrom . import rounding\n",
        "src/shelfd/rounding.py": "import decimal\n",
        "src/shelfd/storage/__init__.py": "from .disk import Disk\n",
        "src/shelfd/storage/disk.py": "from ..models import Book\nfrom .. import fees\nclass Disk: pass\n",
        "src/shelfd/cli.py": "import shelfd.storage\nfrom shelfd import models\nfrom shelfd.storage.disk import Disk\n"
                             "import requests\n",
        "tests/test_fees.py": "from shelfd.fees import compute\nimport helpers\n",
        "tests/helpers.py": "",
        "tools/gen.py": "import helpers\nimport types\n",
        "tools/types.py": "",
    })
    assert resolved["src/shelfd/fees.py"] == ["src/shelfd/models.py", "src/shelfd/rounding.py"]
    assert resolved["src/shelfd/storage/__init__.py"] == ["src/shelfd/storage/disk.py"]
    assert resolved["src/shelfd/storage/disk.py"] == ["src/shelfd/fees.py", "src/shelfd/models.py"]
    # `import shelfd.storage` -> the package's __init__; `from shelfd import models` -> the module.
    assert resolved["src/shelfd/cli.py"] == ["src/shelfd/models.py", "src/shelfd/storage/__init__.py",
                                             "src/shelfd/storage/disk.py"]
    # A module beside a script is importable by its stem from there, and only from there.
    assert resolved["tests/test_fees.py"] == ["src/shelfd/fees.py", "tests/helpers.py"]
    assert resolved["tools/gen.py"] == ["tools/types.py"]
    py = summary["languages"]["python"]
    # decimal, requests and tools/gen.py's `import helpers` name nothing in the corpus.
    assert (py["imports"], py["resolved"]) == (14, 11)
    assert py["share"] == round(11 / 14, 4)


def test_python_namespace_package_from_the_root(tmp_path):
    resolved, _ = build(tmp_path, {
        "app/core/engine.py": "from app.core import util\nfrom app.core.util import helper\n",
        "app/core/util.py": "def helper(): pass\n",
    })
    assert resolved["app/core/engine.py"] == ["app/core/util.py"]


def test_javascript_and_typescript_specifiers(tmp_path):
    resolved, summary = build(tmp_path, {
        "package.json": '{"name": "root", "imports": {"#utils/*": "./web/src/utils/*.ts"}}',
        "web/src/main.ts": "import { a } from './lib/a'\nimport b from './lib/b.js'\nimport c from './components'\n"
                           "import d from '../data/config.json'\nimport e from '@/lib/a'\nimport f from '#utils/str'\n"
                           "import React from 'react'\nimport { x } from './missing'\n",
        "web/src/lib/a.ts": "export const a = 1\n",
        "web/src/lib/b.ts": "export default 2\n",
        "web/src/components/index.tsx": "export default () => null\n",
        "web/src/utils/str.ts": "export const s = ''\n",
        "web/data/config.json": "{}\n",
        "web/legacy/old.js": "const a = require('../src/lib/a')\nmodule.exports = require('./util.cjs')\n",
        "web/legacy/util.cjs": "module.exports = {}\n",
        "web/legacy/page.jsx": "import Old from './old'\nexport default function Page() {}\n",
    })
    assert resolved["web/src/main.ts"] == ["web/data/config.json", "web/src/components/index.tsx",
                                          "web/src/lib/a.ts", "web/src/lib/b.ts", "web/src/utils/str.ts"]
    assert resolved["web/legacy/old.js"] == ["web/legacy/util.cjs", "web/src/lib/a.ts"]
    assert resolved["web/legacy/page.jsx"] == ["web/legacy/old.js"]
    ts = summary["languages"]["typescript"]
    assert (ts["imports"], ts["resolved"]) == (8, 6)  # react and ./missing are unresolved


def test_workspace_packages_by_name(tmp_path):
    resolved, _ = build(tmp_path, {
        "packages/core/package.json": '{"name": "@acme/core", "main": "dist/index.js"}',
        "packages/core/src/index.ts": "export const core = 1\n",
        "packages/core/src/util/fmt.ts": "export const fmt = 1\n",
        "packages/kit/package.json": '{"name": "kit", "exports": {".": {"import": "./src/kit.ts"}, "./extra": "./src/extra.ts"}}',
        "packages/kit/src/kit.ts": "export const kit = 1\n",
        "packages/kit/src/extra.ts": "export const extra = 1\n",
        "apps/web/main.ts": "import { core } from '@acme/core'\nimport { fmt } from '@acme/core/util/fmt'\n"
                            "import { kit } from 'kit'\nimport { extra } from 'kit/extra'\n",
    })
    assert resolved["apps/web/main.ts"] == ["packages/core/src/index.ts", "packages/core/src/util/fmt.ts",
                                           "packages/kit/src/extra.ts", "packages/kit/src/kit.ts"]


def test_go_packages_through_go_mod(tmp_path):
    resolved, summary = build(tmp_path, {
        "go.mod": "module example.com/shelf\n\ngo 1.22\n",
        "main.go": 'package main\nimport (\n  "fmt"\n  "example.com/shelf/storage"\n  "example.com/shelf/internal/fees"\n'
                   '  "github.com/other/lib"\n)\nfunc main() {}\n',
        "storage/disk.go": "package storage\nfunc Save() {}\n",
        "storage/mem.go": "package storage\nfunc Keep() {}\n",
        "storage/disk_test.go": "package storage\n",
        "internal/fees/fees.go": 'package fees\nimport "example.com/shelf/storage"\n',
        "tools/go.mod": "module example.com/shelf/tools\n",
        "tools/gen/gen.go": 'package gen\nimport "example.com/shelf/tools/lint"\n',
        "tools/lint/lint.go": "package lint\n",
    })
    # A package import names every non-test file of its directory.
    assert resolved["main.go"] == ["internal/fees/fees.go", "storage/disk.go", "storage/mem.go"]
    assert resolved["internal/fees/fees.go"] == ["storage/disk.go", "storage/mem.go"]
    assert resolved["tools/gen/gen.go"] == ["tools/lint/lint.go"]  # the nested module wins: longest path
    go = summary["languages"]["go"]
    assert (go["imports"], go["resolved"]) == (6, 4)


def test_java_by_package_and_class(tmp_path):
    resolved, _ = build(tmp_path, {
        "src/main/java/org/shelf/App.java": "package org.shelf;\nimport org.shelf.model.Book;\nimport org.shelf.util.*;\n"
                                           "import static org.shelf.util.Strings.trim;\nimport java.util.List;\n"
                                           "import org.shelf.model.Book.Edition;\npublic class App {}\n",
        "src/main/java/org/shelf/model/Book.java": "package org.shelf.model;\npublic class Book {}\n",
        "src/main/java/org/shelf/util/Strings.java": "package org.shelf.util;\npublic class Strings {}\n",
        "src/main/java/org/shelf/util/Dates.java": "package org.shelf.util;\npublic class Dates {}\n",
    })
    assert resolved["src/main/java/org/shelf/App.java"] == [
        "src/main/java/org/shelf/model/Book.java", "src/main/java/org/shelf/util/Dates.java",
        "src/main/java/org/shelf/util/Strings.java"]


def test_rust_modules_crates_and_renames(tmp_path):
    resolved, summary = build(tmp_path, {
        "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n[workspace.dependencies]\n'
                      'store = { package = "shelf-store", path = "crates/shelf-store" }\n',
        "crates/shelf/Cargo.toml": '[package]\nname = "shelf"\n',
        "crates/shelf/src/lib.rs": "pub mod loans;\nmod fees;\npub struct Library;\n",
        "crates/shelf/src/loans.rs": "mod renew;\nuse crate::fees::Fee;\nuse crate::Library;\nuse super::fees;\n"
                                     "use std::io;\n",
        "crates/shelf/src/loans/renew.rs": "use super::super::fees::{self, Fee};\nuse self::inner::X;\n",
        "crates/shelf/src/fees/mod.rs": "pub mod rounding;\npub struct Fee;\n",
        "crates/shelf/src/fees/rounding.rs": "use shelf_store::Disk;\nuse store::mem::Mem;\n",
        "crates/shelf-store/Cargo.toml": '[package]\nname = "shelf-store"\n',
        "crates/shelf-store/src/lib.rs": "pub mod mem;\npub struct Disk;\n",
        "crates/shelf-store/src/mem.rs": "pub struct Mem;\n",
        "crates/shelf/tests/it.rs": "mod common;\nuse shelf::loans;\n",
        "crates/shelf/tests/common/mod.rs": "",
    })
    assert resolved["crates/shelf/src/lib.rs"] == ["crates/shelf/src/fees/mod.rs", "crates/shelf/src/loans.rs"]
    assert resolved["crates/shelf/src/loans.rs"] == ["crates/shelf/src/fees/mod.rs", "crates/shelf/src/lib.rs",
                                                     "crates/shelf/src/loans/renew.rs"]
    assert resolved["crates/shelf/src/loans/renew.rs"] == ["crates/shelf/src/fees/mod.rs"]
    assert resolved["crates/shelf/src/fees/mod.rs"] == ["crates/shelf/src/fees/rounding.rs"]
    # By crate name, and by the name a renamed workspace dependency is used under.
    assert resolved["crates/shelf/src/fees/rounding.rs"] == ["crates/shelf-store/src/lib.rs",
                                                           "crates/shelf-store/src/mem.rs"]
    assert resolved["crates/shelf/tests/it.rs"] == ["crates/shelf/src/loans.rs", "crates/shelf/tests/common/mod.rs"]
    rust = summary["languages"]["rust"]
    # Only std::io is unresolved: `self::inner::X` names no module file, so it is an item (an inline
    # module) of renew.rs itself: resolved, but without an edge.
    assert rust["imports"] - rust["resolved"] == 1


def test_rust_without_cargo_manifest(tmp_path):
    resolved, _ = build(tmp_path, {
        "src/main.rs": "mod cli;\nuse crate::cli::args::Args;\n",
        "src/cli/mod.rs": "pub mod args;\n",
        "src/cli/args.rs": "pub struct Args;\n",
    })
    assert resolved["src/main.rs"] == ["src/cli/args.rs", "src/cli/mod.rs"]
    assert resolved["src/cli/mod.rs"] == ["src/cli/args.rs"]
