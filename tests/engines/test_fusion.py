"""fusion: the weighted sum of its components, the request rules, byte-identical builds and updates."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.corpora import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines import _request as rq
from ctxgauge.git import Repo


def _repo(builder):
    b = builder("fusion")
    b.commit("initial import", {
        "package.json": '{"name": "app", "dependencies": {"shell-quote": "^1.7.0", "express": "^4.0.0"}}\n',
        "package-lock.json": '{"packages": {"node_modules/shell-quote": {"version": "1.7.0"}}}\n',
        ".nvmrc": "18\n",
        "src/controllers/quoteTemplates.js": "function quoteTemplates() { return 'shell quote quote quote'; }\n",
        "src/server.js": "const express = require('express');\nfunction startServer() {}\n",
        "src/db/pool.py": "class ConnectionPool:\n    def acquire(self):\n        pass\n",
    })
    b.commit("server: log the port", {"src/server.js": "const express = require('express');\nfunction startServer(port) {}\n"})
    b.commit("pool: release connections", {"src/db/pool.py": "class ConnectionPool:\n    def release(self):\n        pass\n"})
    return b


@pytest.fixture
def built(repo_builder, tmp_path: Path):
    b = _repo(repo_builder)
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    eng = get_engine("fusion")
    eng.build(corpus, tmp_path / "f")
    return eng, tmp_path / "f", corpus


def test_query_is_the_weighted_sum_of_components(built) -> None:
    eng, out, _ = built
    text = "pool leaks connections"  # short: the plain weights
    comp = eng.components(out, text)
    expected: dict[str, float] = {}
    for name, scores in comp.items():
        for f, s in scores.items():
            expected[f] = expected.get(f, 0.0) + float(eng.params[name]) * s
    factor = {"test": eng.params["tests"], "generated": eng.params["generated"], "docs": eng.params["docs"]}
    expected = {f: s * factor.get(rq.path_kind(f), 1.0) for f, s in expected.items()}
    hits = eng.query(out, text, 10)
    assert [h.path for h in hits][0] == "src/db/pool.py"
    assert {h.path: h.score for h in hits} == pytest.approx({f: s for f, s in expected.items() if s > 0})


def test_dependency_request_ranks_manifest_and_lockfile_first(built) -> None:
    eng, out, _ = built
    top = [h.path for h in eng.query(out, "bump shell-quote from 1.7.0 to 1.7.3", 5)]
    assert top[:2] == ["package.json", "package-lock.json"]
    # the package's own words ("shell", "quote") did not pull in the quote-templates controller
    assert "src/controllers/quoteTemplates.js" not in top[:2]
    # and without a dependency word the controller is found by its words as usual
    assert eng.query(out, "quote templates are wrong", 1)[0].path == "src/controllers/quoteTemplates.js"


def test_runtime_request_finds_the_pin_file(built) -> None:
    eng, out, _ = built
    assert eng.query(out, "require node 20", 3)[0].path == ".nvmrc"


def test_mentions_in_a_stack_trace(built) -> None:
    eng, out, _ = built
    trace = ('Traceback (most recent call last):\n  File "/usr/lib/python3/site-packages/src/db/pool.py", line 3\n'
             "AttributeError: 'ConnectionPool' object has no attribute 'release_all'")
    assert eng.query(out, trace, 1)[0].path == "src/db/pool.py"


def test_path_kinds() -> None:
    assert [rq.path_kind(p) for p in ("tests/test_a.py", "pkg/a_test.go", "src/x.spec.ts", "dist/axios.min.js",
                                      "CHANGELOG.md", "yarn.lock", "docs/guide.md", "src/a.py")] == [
        "test", "test", "test", "generated", "generated", "generated", "docs", None]


def test_mention_parsing() -> None:
    index = rq.PathIndex(["sympy/core/basic.py", "sympy/physics/units/__init__.py", "a/utils.py", "b/utils.py",
                          "c/utils.py", "d/utils.py"])
    assert rq.mentioned_files("see sympy.physics.units.meter", index) == {"sympy/physics/units/__init__.py": 0.5}
    assert rq.mentioned_files("in /opt/x/sympy/core/basic.py:12", index) == {"sympy/core/basic.py": 1.0}
    assert rq.mentioned_files("utils.py is broken", index) == {}  # four files share the bare name
    assert rq.mentioned_identifiers("call `col_insert` on Matrix.col_insert() or lambdify(x)") == [
        "col_insert", "matrix", "lambdify"]
    assert rq.defining_files(["get"], {"get": [f"f{i}.py" for i in range(9)]}) == {}


def test_declared_packages_across_manifest_formats() -> None:
    assert {"shell-quote", "@types/node"} <= rq.declared_packages(
        "package.json", '{"dependencies": {"shell-quote": "^1", "@types/node": "20"}}')
    assert {"serde", "tokio"} <= rq.declared_packages("Cargo.toml", 'serde = "1"\ntokio = { version = "1" }\n')
    assert {"requests", "urllib3"} <= rq.declared_packages("requirements.txt", "requests>=2.0\nurllib3==1.26\n")
    assert "yaml" in rq.declared_packages("go.mod", "module x\nrequire (\n\tgopkg.in/yaml v3.0.1\n)\n") or \
        "gopkg.in/yaml" in rq.declared_packages("go.mod", "module x\nrequire (\n\tgopkg.in/yaml v3.0.1\n)\n")


def test_update_equals_rebuild_and_builds_are_identical(repo_builder, tmp_path: Path) -> None:
    b = _repo(repo_builder)
    repo = Repo(b.path)
    old, new = Corpus.from_git(repo, "HEAD~1"), Corpus.from_git(repo, "HEAD")
    eng = get_engine("fusion")
    eng.build(old, tmp_path / "u")
    eng.update(tmp_path / "u", new, old.changes_to(new))
    get_engine("fusion").build(new, tmp_path / "a")
    get_engine("fusion").build(new, tmp_path / "b")

    def tree(d: str) -> dict[str, bytes]:
        root = tmp_path / d
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    assert tree("u") == tree("a") == tree("b")
    q = "pool releases connections"
    assert get_engine("fusion").query(tmp_path / "a", q, 10) == eng.query(tmp_path / "u", q, 10)


def test_identity_follows_sub_engines_and_weights() -> None:
    a, b = get_engine("fusion"), get_engine("fusion(vote=0.9)")
    assert a.identity()["id"] != b.identity()["id"]
    assert a.identity() == get_engine("fusion").identity()
    off = "vote=0,prior=0,cochange=0,long_vote=0,long_prior=0,long_cochange=0"
    assert "history" not in get_engine(f"fusion({off})").subs
