"""fusion: the weighted sum of its components, the request rules, byte-identical builds and updates."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
import ctxgauge.engines._text.path_kinds as pk
import ctxgauge.engines.fusion._request as rq
from ctxgauge.engines.fusion._engine import LONG_WEIGHTS, FusionEngine, fuse, is_long
from ctxgauge.git import Repo


def _repo(builder):
    b = builder("fusion")
    b.commit("initial import", {
        "package.json": '{"name": "app", "dependencies": {"shell-quote": "^1.7.0", "express": "^4.0.0"}}\n',
        "package-lock.json": '{"packages": {"node_modules/shell-quote": {"version": "1.7.0"}, '
                             '"node_modules/minimist": {"version": "1.2.5"}}}\n',
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
    factor = {"test": eng.params["tests"], "generated": eng.params["generated"], "docs": eng.params["docs"],
              "manifest": eng.params["manifests"]}
    expected = {f: s * factor.get(pk.path_kind(f), 1.0) for f, s in expected.items()}
    hits = eng.query(out, text, 10)
    assert [h.path for h in hits][0] == "src/db/pool.py"
    assert {h.path: h.score for h in hits} == pytest.approx({f: s for f, s in expected.items() if s > 0})


def test_a_lockfile_the_rule_names_escapes_the_generated_multiplier(built) -> None:
    eng, out, _ = built
    text = "bump minimist to 1.2.8"  # a transitive package: only the lockfile holds it
    comp = eng.components(out, text)
    assert comp["rule"] == {"package-lock.json": 1.0, "package.json": rq.UNNAMED}
    total = sum(float(eng.params[n]) * comp[n].get("package-lock.json", 0.0) for n in comp)
    hits = eng.query(out, text, 3)
    assert hits[0].path == "package-lock.json"
    assert hits[0].score == pytest.approx(total)  # not times `generated`, although a lockfile is generated
    assert pk.path_kind("package-lock.json") == "generated" and eng.params["generated"] < 1


def test_a_long_request_reads_the_long_twin_of_every_weight() -> None:
    comp = {"bm25": {"src/a.py": 1.0, "tests/test_a.py": 1.0, "package.json": 0.5}, "rule": {}}
    w = {"bm25": 1.0, "long_bm25": 2.0, "tests": 0.5, "long_tests": 0.25, "manifests": 0.5, "long_manifests": 1.0}
    assert fuse(comp, w) == {"src/a.py": 1.0, "tests/test_a.py": 0.5, "package.json": 0.25}
    assert fuse(comp, w, long=True) == {"src/a.py": 2.0, "tests/test_a.py": 0.5, "package.json": 1.0}
    assert set(LONG_WEIGHTS) <= set(FusionEngine.defaults) - {"long_words"}
    assert {f"long_{n}" for n in LONG_WEIGHTS} <= set(FusionEngine.defaults)


def test_short_weights_leave_a_long_request_alone(built) -> None:
    # Subjects and issue texts are tuned apart: moving every short weight changes no long request's ranking.
    _, out, _ = built
    text = " ".join(["the connection pool leaks when a server restarts and express keeps the port"] * 4)
    assert len(text.split()) > FusionEngine.defaults["long_words"]
    other = get_engine("fusion(bm25=0.5,graph=1,vote=0.2,vote_rare=1,prior=0.5,cochange=0,mention=1,define=1,"
                       "rule=4,tests=1,generated=1,docs=0.5,ci=0.3,manifests=0.3)")
    assert other.query(out, text, 10) == get_engine("fusion").query(out, text, 10)
    assert other.query(out, "pool leaks", 10) != get_engine("fusion").query(out, "pool leaks", 10)


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
    assert [pk.path_kind(p) for p in ("tests/test_a.py", "pkg/a_test.go", "src/x.spec.ts", "dist/axios.min.js",
                                      "CHANGELOG.md", "yarn.lock", "docs/guide.md", "src/a.py",
                                      "web/package.json", "requirements-dev.txt")] == [
        "test", "test", "test", "generated", "generated", "generated", "docs", None, "manifest", "manifest"]


def test_ci_configuration_is_its_own_path_kind() -> None:
    assert [pk.path_kind(p) for p in (".github/workflows/ci.yml", ".github/ISSUE_TEMPLATE/bug.yml",
                                      ".github/dependabot.yml", ".gitlab-ci.yml", "ci/install-packages",
                                      ".github/CONTRIBUTING.md", "src/ci/runner.go", ".github/tests/a.py")] == [
        "ci", "ci", "ci", "ci", "ci", "docs", None, "test"]


def test_a_subject_asks_for_a_kind_by_word() -> None:
    assert rq.asked_kinds("ci: cache the cargo registry between workflow runs") == {"ci"}
    assert rq.asked_kinds("docs: fix a typo in the README") == {"docs"}
    assert rq.asked_kinds("add tests for the parser") == frozenset()  # the code under test comes first
    assert rq.asked_kinds("parser: handle empty input") == frozenset()


def _ci_repo(builder):
    b = builder("fusion-ci")
    workflow = "jobs:\n  build:\n    steps:\n      - name: cache the toolchain\n        uses: actions/cache@v4\n"
    b.commit("initial import", {".github/workflows/build.yml": workflow,
                                "src/toolchain.py": "def cache_toolchain(path):\n    return path\n"})
    for i in range(3):  # the workflow changes with every commit, as CI files do
        b.commit(f"tweak the build {i}", {".github/workflows/build.yml": workflow + f"# {i}\n",
                                          "src/other.py": f"x = {i}\n"})
    return b


def test_ci_files_are_pushed_down_unless_the_subject_asks_for_them(repo_builder, tmp_path: Path) -> None:
    corpus = Corpus.from_git(Repo(_ci_repo(repo_builder).path), "HEAD")
    eng = get_engine("fusion(ci=0.3)")
    eng.build(corpus, tmp_path / "f")
    plain = get_engine("fusion(ci=1)")

    def order(engine, text: str) -> list[str]:
        return [h.path for h in engine.query(tmp_path / "f", text, 10) if h.path != "src/other.py"]

    text = "cache the toolchain for the build"
    workflow, code = ".github/workflows/build.yml", "src/toolchain.py"
    assert order(plain, text)[:2] == [workflow, code]  # more of the words, and every commit's votes
    assert order(eng, text)[:2] == [code, workflow]  # ci x0.3
    assert order(eng, "ci: " + text)[:2] == [workflow, code]  # asked for by word: no multiplier
    asked = "ci: " + text
    comp = eng.components(tmp_path / "f", asked)
    assert fuse(comp, eng.params, asked={"ci"}) != fuse(comp, eng.params)
    # an issue text names CI in passing: a long request keeps every multiplier whatever its words
    assert fuse(comp, eng.params, long=True, asked={"ci"}) == fuse(comp, eng.params, long=True)


def test_rare_vote_divides_by_how_often_a_file_changed(repo_builder, tmp_path: Path) -> None:
    corpus = Corpus.from_git(Repo(_ci_repo(repo_builder).path), "HEAD")
    eng = get_engine("fusion")
    eng.build(corpus, tmp_path / "f")
    comp = eng.components(tmp_path / "f", "tweak the build")
    # every "tweak the build" commit changed both files; the workflow changed once more (the import)
    assert comp["vote"][".github/workflows/build.yml"] == pytest.approx(comp["vote"]["src/other.py"])
    assert comp["vote_rare"]["src/other.py"] == 1.0
    assert comp["vote_rare"][".github/workflows/build.yml"] < 1.0


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


def test_locked_packages_across_lockfile_formats() -> None:
    assert {"h2", "spin"} <= rq.locked_packages("Cargo.lock", '[[package]]\nname = "h2"\nversion = "0.4"\n\n'
                                                '[[package]]\nname = "spin"\n')
    assert {"installer", "requests"} <= rq.locked_packages("poetry.lock", '[[package]]\nname = "installer"\n'
                                                          '[[package]]\nname = "requests"\n')
    assert {"minimist", "@babel/core"} <= rq.locked_packages(
        "package-lock.json", '{"packages": {"node_modules/minimist": {}, "node_modules/x/node_modules/@babel/core": {}}}')
    assert {"lodash", "@types/node"} <= rq.locked_packages("yarn.lock", 'lodash@^4.17.0:\n  version "4.17.21"\n'
                                                          '"@types/node@^20":\n  version "20.1"\n')
    assert {"golang.org/x/net", "net"} <= rq.locked_packages("go.sum", "golang.org/x/net v0.17.0 h1:abc=\n")


def test_dependency_rule_without_a_declared_package() -> None:
    declared = {"package.json": frozenset({"express"}), "web/package.json": frozenset({"react"})}
    locks = ["package-lock.json", "web/package-lock.json"]
    locked = {"package-lock.json": frozenset({"express", "quote", "h2"}), "web/package-lock.json": frozenset({"react"})}

    def rule(text: str) -> dict[str, float]:
        return rq.dependency_files(rq.package_words(text), declared, locks, locked)[0]

    root = {"package-lock.json": rq.UNNAMED, "package.json": rq.UNNAMED}
    assert rule("update dependencies") == root  # no package: the shallowest lockfile and its manifest
    assert rule("fix RUSTSEC-2026-0190") == root  # an advisory id names no package here
    assert rule("security patch for CVE-2024-51999") == root
    assert rule("update h2 as cargo deny asks") == {"package-lock.json": 1.0, "package.json": rq.UNNAMED}
    assert rule("bump react to 19") == {"web/package.json": 1.0, "web/package-lock.json": 0.9}
    assert rule("fix HTTPoxy vulnerability") == {}  # a vulnerability in the code, no dependency
    assert rule("patch quote handling") == {}  # a locked plain word with a weak dependency word
    assert rule("update the quote docs") == {}  # `update` beside a plain word is no dependency request
    assert rq.dependency_files(["upgrade", "quote"], declared, locks, locked)[1] == {"quote"}
    # a folder the request names picks the lockfiles among several (not the shallowest)
    assert rule("update web deps") == {"web/package-lock.json": rq.UNNAMED, "web/package.json": rq.UNNAMED}
    # a transitive package held by two lockfiles: both, whichever sorts first
    both = {"a/uv.lock": frozenset({"click"}), "uv.lock": frozenset({"click"})}
    assert rq.dependency_files(rq.package_words("Bump `click` to v8.4.2"), {}, sorted(both), both)[0] == {
        "a/uv.lock": 1.0, "uv.lock": 1.0}


def test_a_lockfile_request_names_its_folder(repo_builder, tmp_path: Path) -> None:
    # PEP 751 lockfiles (pylock.toml, pylock.<name>.toml) are lockfiles; "lockfile" is a dependency word;
    # the folder word says which of several lockfiles; pip-tools' requirements.in is a manifest.
    b = repo_builder("fusion-lock")
    b.commit("initial import", {
        "pyproject.toml": '[project]\nname = "app"\ndependencies = ["httpx>=0.27"]\n',
        "uv.lock": 'version = 1\n[[package]]\nname = "httpx"\nversion = "0.27.0"\n',
        "tools/wasm/requirements.in": "numpy\n",
        "tools/wasm/pylock.wasm.toml": 'lock-version = "1.0"\n[[packages]]\nname = "numpy"\nversion = "2.1.0"\n',
        "src/app/lockfile_reader.py": "def read_lockfile(path):\n    return open(path).read()\n",
    })
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    eng = get_engine("fusion")
    eng.build(corpus, tmp_path / "f")
    assert pk.is_lockfile("tools/wasm/pylock.wasm.toml") and pk.is_lockfile("pylock.toml")
    assert pk.path_kind("tools/wasm/requirements.in") == "manifest"
    assert rq.locked_packages("pylock.toml", 'lock-version = "1.0"\n[[packages]]\nname = "NumPy"\n') == {"numpy"}
    top = [h.path for h in eng.query(tmp_path / "f", "update wasm lockfile", 3)]
    assert top[:2] == ["tools/wasm/pylock.wasm.toml", "tools/wasm/requirements.in"]
    assert eng.components(tmp_path / "f", "update the lockfile")["rule"] == {"uv.lock": rq.UNNAMED,
                                                                            "pyproject.toml": rq.UNNAMED}


def test_a_runtime_word_needs_a_version_or_a_word_about_versions() -> None:
    paths = [".nvmrc", "src/tree.ts"]
    assert rq.runtime_files(rq.package_words("require node 20"), paths) == {".nvmrc": 1.0}
    assert rq.runtime_files(rq.package_words("drop support for node"), paths) == {".nvmrc": 1.0}
    assert rq.runtime_files(rq.package_words("keep a memoized node's cached issues private"), paths) == {}


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


def test_a_runtime_is_no_package_and_a_lockfile_word_keeps_its_folder() -> None:
    # `python = "^3.9"` declares the interpreter, not a package: "bump dependencies for Python 3.15" is a
    # generic dependency request (the project's own lockfile), not one about core/pyproject.toml.
    declared = {"pyproject.toml": frozenset({"httpx"}), "core/pyproject.toml": frozenset({"python", "pyodide"})}
    locks = ["uv.lock", "core/uv.lock", "tools/pyodide/pylock.toml"]

    def rule(text: str) -> dict[str, float]:
        return rq.dependency_files(rq.package_words(text), declared, locks, {})[0]

    assert rule("Bump dependencies for Python 3.15 compatibility") == {"uv.lock": rq.UNNAMED,
                                                                       "pyproject.toml": rq.UNNAMED}
    # "lockfile" beside a folder's name: that folder's lockfile, though a manifest elsewhere declares the word
    got = rule("Fix Pyodide lockfile")
    assert got["tools/pyodide/pylock.toml"] == 1.0 and got["core/pyproject.toml"] == 1.0
    assert rule("bump pyodide") == {"core/pyproject.toml": 1.0, "core/uv.lock": 0.9}  # no lockfile word


PIP_LIST = """Package    Version
---------- -------
attrs      19.3.0
express    4.18.2
pluggy     0.13.1
shell-quote 1.7.0
"""


def test_an_environment_listing_is_taken_out_of_a_request() -> None:
    issue = "pool leaks connections\n\nWhen the pool is closed...\n\n"
    # pip list, pip freeze and show_versions() forms; an editable install's path column
    for listing in (PIP_LIST, "attrs==19.3.0\npluggy==0.13.1\npy==1.8.1\n",
                    "xarray: 0.16.1\npandas: 1.1.3\nnumpy: 1.19.1\n",
                    "- pytest 6.2.5\n- pluggy 1.0.0\n- app 0.1.dev3   /home/me/src/app\n"):
        cleaned = rq.without_environment(issue + listing + "end of report\n")
        assert cleaned.startswith(issue) and cleaned.endswith("end of report\n"), listing
        assert not any(ch.isdigit() for ch in cleaned.replace(issue, "")), (listing, cleaned)
    # fewer than ENVIRONMENT_LINES version lines are a clue, not a listing; code and prose stay
    two = "fails on numpy 1.19.1\nnumpy: 1.19.1\npandas: 1.1.3\n"
    assert rq.without_environment(two) == two
    code = "x = 1.5\ny = 2.25\nz = 3.0\nassert f(1.5) == 2.0\nPython 3.8 only\n"
    assert rq.without_environment(code) == code


def test_a_listing_changes_no_component_of_a_long_request(built) -> None:
    eng, out, _ = built
    issue = ("ConnectionPool never releases: after acquire() the pool keeps every connection, so a long-running "
             "server runs out of connections within minutes and each request waits for a timeout before it "
             "fails with a pool exhausted error, which the log shows for every request after the first few\n")
    assert is_long(issue, eng.params["long_words"])
    with_listing = issue + "\n" + PIP_LIST
    assert eng.components(out, with_listing) == eng.components(out, issue)
    assert [h.path for h in eng.query(out, with_listing, 5)] == [h.path for h in eng.query(out, issue, 5)]
    # two version lines are no listing: their package names stay in the request and reach the components
    clue = issue + "\nexpress 4.18.2\nshell-quote 1.7.0\n"
    assert eng.components(out, clue) != eng.components(out, issue)
