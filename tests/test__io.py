"""The one rule for names that become paths, and the writers that use it (corpus materialisation)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge._io import safe_file_names, safe_join, safe_relpath, unsafe_name_reason
from ctxgauge.corpus import Corpus
from ctxgauge.errors import UserError
from ctxgauge.git import Repo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import RepoBuilder, git  # noqa: E402

UNSAFE = ["", ".", "..", ".git", ".GIT", ".Git", "a\\b", "a\x00b", "a\nb", "a\rb", "a\x1fb", "a\x7fb",
          "bad\udcffbytes"]
SAFE = ["a", "a.py", "...", ".github", ".gitignore", "git", "ünïcode", "a b", "x..y", "[x]"]


@pytest.mark.parametrize("name", UNSAFE)
def test_unsafe_names_are_named(name):
    assert unsafe_name_reason(name)
    with pytest.raises(UserError, match="refused"):
        safe_relpath(f"ok/{name}/ok" if name else "ok//ok")


@pytest.mark.parametrize("name", SAFE)
def test_safe_names_pass(name):
    assert unsafe_name_reason(name) is None
    assert safe_join("/root", f"d/{name}") == Path("/root/d", name)


def test_a_slash_is_a_separator_in_paths_but_not_in_names():
    assert unsafe_name_reason("a/b")
    assert safe_relpath("a/b") == "a/b"


def test_absolute_path_is_refused():
    with pytest.raises(UserError, match="absolute"):
        safe_relpath("/etc/passwd")


def test_made_safe_names_never_collide():
    names = safe_file_names(["q1", "../../x", ".git", "a/b", "ok.v2@x"], "question id")
    assert names == {"q1": "q1", "../../x": "_._.._x", ".git": "_git", "a/b": "a_b", "ok.v2@x": "ok.v2@x"}
    assert all(unsafe_name_reason(v) is None for v in names.values())
    with pytest.raises(UserError, match=r"question ids 'a/b' and 'a_b' both become the file name 'a_b'"):
        safe_file_names(["a/b", "a_b"], "question id")
    with pytest.raises(UserError, match="both become"):
        safe_file_names(["Q1", "q1"], "case id")  # one file on a case-insensitive file system


def crafted_tree(tmp_path: Path) -> Path:
    """A repository whose tree holds entries git's own checkout refuses: `..`, `.git`, `.GIT`."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("start", {"ok.py": "fine = 1\n"})
    repo = b.path
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"planted\n",
                          capture_output=True, check=True).stdout.decode().strip()

    def mktree(entries: str) -> str:
        return subprocess.run(["git", "mktree"], cwd=repo, input=entries.encode(), capture_output=True,
                              check=True).stdout.decode().strip()

    inner = mktree(f"100644 blob {blob}\tpwned.txt\n")
    hooks = mktree(f"100644 blob {blob}\tpost-checkout\n")
    gitdir = mktree(f"040000 tree {hooks}\thooks\n")
    top = mktree(f"040000 tree {inner}\t..\n040000 tree {gitdir}\t.git\n040000 tree {gitdir}\t.GIT\n"
                 f"100644 blob {blob}\tback\\slash\n100644 blob {blob}\tok.py\n")
    commit = git(repo, "commit-tree", "-m", "crafted", top).strip()
    git(repo, "update-ref", "refs/heads/main", commit)
    return repo


def test_crafted_tree_entries_are_skipped_and_never_written(tmp_path):
    repo = crafted_tree(tmp_path)
    with Repo(repo) as r:
        corpus = Corpus.from_git(r, "HEAD")
        assert corpus.paths == ["ok.py"]
        assert corpus.skipped["unsafe-name"] == ["../pwned.txt", ".GIT/hooks/post-checkout", ".git/hooks/post-checkout",
                                                 "back\\slash"]
        assert corpus.summary()["skipped"]["unsafe-name"] == 4
        dest = tmp_path / "out" / "corpus"
        corpus.materialize(dest)
    assert sorted(p.name for p in dest.rglob("*")) == ["ok.py"]
    assert not (tmp_path / "out" / "pwned.txt").exists()


def test_materialise_checks_every_path_itself(tmp_path):
    (tmp_path / "empty").mkdir()
    corpus = Corpus.from_directory(tmp_path / "empty")
    hostile = corpus.overlay({"../escaped.txt": b"x"})
    with pytest.raises(UserError, match=r"corpus path '../escaped.txt' refused"):
        hostile.materialize(tmp_path / "dest")
    assert not (tmp_path / "escaped.txt").exists()


def test_command_engine_never_writes_outside_its_corpus(tmp_path):
    from ctxgauge.engines import get_engine

    repo = crafted_tree(tmp_path)
    engine_py = tmp_path / "engine.py"
    engine_py.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req['op'] == 'identity':\n"
        "        print(json.dumps({'ok': True, 'identity': {'id': 'x', 'source': 'declared'}}), flush=True)\n"
        "    elif req['op'] == 'build':\n"
        "        files = sorted(os.path.relpath(os.path.join(d, f), req['corpus']) for d, _, fs in os.walk(req['corpus']) for f in fs)\n"
        "        os.makedirs(req['out'], exist_ok=True)\n"
        "        open(os.path.join(req['out'], 'files.json'), 'w').write(json.dumps(files))\n"
        "        print(json.dumps({'ok': True}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'ok': True, 'hits': []}), flush=True)\n"
    )
    engine = get_engine(f"command(cmd='{sys.executable} {engine_py}')")
    with Repo(repo) as r:
        corpus = Corpus.from_git(r, "HEAD")
        out = tmp_path / "index"
        engine.build(corpus, out)
    import json

    assert json.loads((out / "files.json").read_text()) == ["ok.py"]
    assert not list(Path("/tmp").glob("pwned.txt")) and not list(tmp_path.rglob("pwned.txt"))


# -- every loader against hostile input -----------------------------------------------------------------------
# Each loader is fed the same hostile documents: it must load them or raise the tool's own UserError (one line,
# exit 2 from the shell), never another exception. The explicit list is what broke at dc65eaf; the property
# sweep below adds bounded random documents (hypothesis) in the default tier, since it takes seconds.
import json as _json  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ctxgauge import trec  # noqa: E402
from ctxgauge._io import InputError, read_data  # noqa: E402
from ctxgauge.fingerprints import read_fingerprint  # noqa: E402
from ctxgauge.providers._rates import load_rates  # noqa: E402
from ctxgauge.records import read_run, read_units  # noqa: E402
from ctxgauge.suites.cases import load_cases, load_swebench, read_queries, read_rankings  # noqa: E402
from ctxgauge.suites.determinism._config import load_queries  # noqa: E402
from ctxgauge.suites.qa.sources._battery import load_battery  # noqa: E402
from ctxgauge.suites.qa.sources._questions import load_question_set  # noqa: E402


def _in_file(name: str, fn):
    def load(tmp: Path, data: bytes):
        p = tmp / name
        p.write_bytes(data)
        return fn(p)
    return load


def _run_json(tmp: Path, data: bytes):
    (tmp / "run.json").write_bytes(data)
    return read_run(tmp)


def _units(tmp: Path, data: bytes):
    (tmp / "run.json").write_text('{"schema_version": 2}\n')
    (tmp / "units.jsonl").write_bytes(data)
    return read_units(tmp)


def _battery(fname: str):
    def load(tmp: Path, data: bytes):
        import shutil

        import ctxgauge

        bundled = sorted((Path(ctxgauge.__file__).parent / "data" / "batteries").iterdir())[0]
        if not (tmp / "battery").exists():
            shutil.copytree(bundled, tmp / "battery")
        (tmp / "battery" / fname).write_bytes(data)
        return load_battery(tmp / "battery")
    return load


LOADERS = {
    "case file yaml": _in_file("cases.yaml", load_cases),
    "case file json": _in_file("cases.json", load_cases),
    "swe-bench": _in_file("instances.jsonl", load_swebench),
    "swe-bench list": _in_file("instances.json", load_swebench),
    "queries": _in_file("queries.tsv", read_queries),
    "rankings": _in_file("rankings.jsonl", read_rankings),
    "trec run": _in_file("x.run", trec.read_run),
    "trec qrels": _in_file("x.qrels", trec.read_qrels),
    "determinism queries": _in_file("queries.json", load_queries),
    "question set": _in_file("questions.v2.json", load_question_set),
    "fingerprint": _in_file("fp.json", read_fingerprint),
    "rate table": _in_file("rates.json", load_rates),
    "run.json": _run_json,
    "units.jsonl": _units,
    "battery questions": _battery("questions.json"),
    "battery gold": _battery("gold.json"),
    "battery exemplars": _battery("exemplars.json"),
    "battery.json": _battery("battery.json"),
    "battery policies": _battery("policies.json"),
}


def test_the_battery_loader_reads_the_bundled_battery(tmp_path):
    import ctxgauge

    bundled = sorted((Path(ctxgauge.__file__).parent / "data" / "batteries").iterdir())[0]
    data = (bundled / "questions.json").read_bytes()
    assert LOADERS["battery questions"](tmp_path, data).questions

HOSTILE = {
    "invalid utf-8": b'{"cases": ["\xff\xfe"]}',
    "invalid utf-8 lines": b'{"qid": "q1", "text": "\xc3\x28"}\n',
    "deep json": b"[" * 100_000 + b"]" * 100_000,
    "deep object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "deep yaml": b"a:\n" + b"".join(b" " * i + b"- \n" for i in range(1, 300)),
    "lone surrogate": b'["\\ud800"]',
    "lone surrogate key": b'{"\\udfff": 1, "cases": []}',
    "mixed yaml keys": b"{1: a, b: c}\n",
    "yaml inf pass": b"cases:\n- {name: a, query: b, corpus: ., expected: [x.py]}\npass:\n  recall@5: .inf\n",
    "yaml nan pass": b"cases:\n- {name: a, query: b, corpus: ., expected: [x.py]}\npass:\n  recall@5: .nan\n",
    "json NaN": b'{"pass": NaN}',
    "json Infinity list": b"[Infinity]",
    "empty": b"",
    "null": b"null",
    "number": b"42",
    "text": b'"text"',
    "list": b"[1, 2]",
    "list of lists": b"[[1], [2]]",
    "object": b"{}",
    "schema 0": b'{"schema_version": 0}',
    "schema true": b'{"schema_version": true}',
    "sections wrong type": b'{"schema_version": 2, "kind": "ctxgauge.run", "suite": [], "spec": 3, "files": "x", '
                           b'"counts": [], "timing": 1, "results": "r", "subject": 5, "status": {}}',
    "scalar lines": b"1\n2\n",
    "id-less lines": b'{"status": "ok"}\n',
    "torn last line": b'{"id": "a", "status": "ok", "figures": {}}\n{"id": "b", "sta',
    "yaml alias bomb": b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       b"e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
    "yaml date": b"cases:\n- {name: 2024-01-01, query: b, corpus: ., expected: [x.py]}\n",
    "yaml binary": b"cases: !!binary aGVsbG8=\n",
    "yaml python tag": b"cases: !!python/object/apply:os.system ['touch /tmp/ctxgauge-pwned']\n",
    "trec huge score": b"q1 Q0 a.py 1 1e999 tag\n",
    "trec short line": b"q1 Q0\n",
    "questions wrong ids": b'[{"id": ["x"], "question": 3}, {"id": null}]',
    "gold wrong shapes": b'[{"id": "q1", "answer": {"x": 1}}, "str"]',
    "fingerprint shaped": b'{"contextbenchmarkFingerprint": 2, "corpus": 5, "results": []}',
    "swe-bench shaped": b'{"repo": 1, "base_commit": [], "patch": null, "problem_statement": {}}\n',
}


def _call(load, tmp: Path, data: bytes) -> None:
    try:
        load(tmp, data)
    except UserError as exc:
        assert "\n" not in str(exc), f"a user error must be one line: {exc!r}"


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
@pytest.mark.parametrize("loader", LOADERS, ids=list(LOADERS))
def test_loader_gives_a_user_error_or_data(tmp_path, loader, case):
    _call(LOADERS[loader], tmp_path, HOSTILE[case])
    assert not Path("/tmp/ctxgauge-pwned").exists()


def test_the_reader_names_each_problem(tmp_path):
    p = tmp_path / "x.json"
    for data, message in [(b"\xff", "not UTF-8 text"), (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
                          (b'["\\ud800"]', "not valid Unicode"), (b"[NaN]", "not valid JSON"),
                          (b"[1", "not valid JSON"), (b"[]", "expected an object")]:
        p.write_bytes(data)
        with pytest.raises(InputError, match=message):
            read_data(p, "thing", expect=dict)
    y = tmp_path / "x.yaml"
    for data, message in [(b"{1: a, b: c}", "the key 1 is not text"), (b"a: .inf", "non-finite"),
                          (b"a: [", "not valid YAML at line"), (b"a: !!python/name:os.system x", "not valid YAML")]:
        y.write_bytes(data)
        with pytest.raises(InputError, match=message):
            read_data(y, "thing")
    with pytest.raises(InputError, match="no such file"):
        read_data(tmp_path / "absent.json", "thing")
    with pytest.raises(InputError, match="is a directory"):
        read_data(tmp_path, "thing")


def test_own_records_keep_escaped_file_names(tmp_path):
    p = tmp_path / "run.json"
    p.write_text('{"path": "bad\\udcffname.py"}')
    assert read_data(p, "run record", surrogates=True) == {"path": "bad\udcffname.py"}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _documents():
    as_json = _json_values.map(lambda v: _json.dumps(v, allow_nan=True).encode("utf-8", "surrogatepass"))
    as_lines = st.lists(_json_values, max_size=4).map(
        lambda vs: b"".join(_json.dumps(v).encode("utf-8", "surrogatepass") + b"\n" for v in vs))
    return st.binary(max_size=200) | as_json | as_lines | st.text(max_size=200).map(
        lambda t: t.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("loader", LOADERS, ids=list(LOADERS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_documents())
def test_property_sweep_only_user_errors(tmp_path, loader, data):
    _call(LOADERS[loader], tmp_path, data)
