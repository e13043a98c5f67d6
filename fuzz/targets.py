"""What `make fuzz` feeds ctxgauge, and the one property every input must keep.

A target is a hypothesis strategy of inputs (plain data: bytes, strings, lists, so an input can be saved to a
file and replayed) and a `check(case, tmp)` that hands one input to ctxgauge. The property, for every target:
the input loads, or ctxgauge raises its own user error (`errors.UserError`, of which `_io.InputError` is one)
whose message is one line. Any other exception, a message over two lines, a write outside the place ctxgauge
was given, or a call that does not return within `HANG_SECONDS` is a failure.

Targets:
- `corpus-git`: a git repository whose objects are written byte by byte (zlib loose objects), so a tree may hold
  what `git mktree` refuses: names with `/`, duplicates, unsorted entries, `..`, `.git`, control characters and
  bytes that are not UTF-8; modes such as symlinks, submodules (gitlinks), wrong types and odd octals; blobs
  that are missing, binary, empty, non-UTF-8 or just over the size bound; commits with malformed author lines,
  missing parents and hostile subjects. Read with `Corpus.from_git`, every file read back, the history walked
  and the corpus materialised (nothing may land outside its folder).
- `corpus-dir`: a directory with the same names where the file system allows them, symbolic links (to files
  outside, to directories, dangling, loops), named pipes, sparse files over the bound, `.git` files and folders.
  Read with `Corpus.from_directory`, read back and materialised.
- `fingerprint` and `fingerprint-compare`: fingerprint files made by mutating real ones (ours and
  ContextBenchmark's, from the checkout's test data) field by field, and raw bytes; read and compared.
- `loaders`: every other parser of outside input (case files, SWE-bench instances, queries, TREC runs and
  qrels, rankings, determinism queries, question sets, rate tables, run.json, units.jsonl, battery files),
  each fed mutations of a valid seed document and raw bytes.
- `report`: a recorded run (the checkout's fixture runs of every suite) with run.json and unit lines mutated,
  read and drawn as `ctxgauge report` draws it (terminal, Markdown, HTML).
- `repo-layout` and `output-target` (fuzz/layouts.py): a repository rearranged by the F2/F3 family (links,
  gitfiles, commondir, borrowed stores, FIFOs, includes, path-valued keys) read as query and replay read it;
  `report --md/--html` and `export --out` at targets that are links, folders, FIFOs or files ctxgauge did not
  write.
- `terminal-text` and `markdown-text` (fuzz/text.py): any text through the console every command prints
  through, and through the Markdown report's data escaping rendered by markdown-it-py with HTML enabled.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import shutil
import stat
import subprocess
import zlib
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

from ctxgauge.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
HANG_SECONDS = 30
MAX_BYTES = 4096  # the corpus size bound the corpus targets use, so "just over the bound" stays cheap


class Breach(AssertionError):
    """The property broke in a way that is not an exception of ctxgauge's own (a two-line message, a write
    outside the given place)."""


def user_error_or_ok(fn: Callable[[], Any]) -> Any:
    """Call `fn`; a UserError must be one line. Every other exception propagates: that is the failure."""
    try:
        return fn()
    except UserError as exc:
        text = str(exc)
        if "\n" in text or "\r" in text:
            raise Breach(f"a user error over more than one line: {text[:300]!r}") from exc
        return None


# -- saving and replaying inputs ----------------------------------------------------------------------------------

def encode(value: Any) -> Any:
    """An input as JSON: bytes become {"b64": ...}, tuples lists."""
    if isinstance(value, bytes):
        return {"b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    return value


def decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"b64"}:
        return base64.b64decode(value["b64"])
    if isinstance(value, dict) and set(value) == {"dict"}:
        return {decode(k): decode(v) for k, v in value["dict"]}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


# -- shared pieces of hostile input -------------------------------------------------------------------------------

HOSTILE_NAMES = [b"..", b".", b".git", b".GIT", b".Git", b"", b"a/b", b"back\\slash", b"new\nline", b"tab\tname",
                 b"\xff\xfe", b"caf\xc3\xa9.py", b"[bold]x.py", b"a[/b]", b"\x1e.py", b"\x7f", b" ", b"-rf",
                 b"x" * 255, b"x.py", b"README.md", b"src", b"\xed\xa0\x80"]
names = st.one_of(st.sampled_from(HOSTILE_NAMES),
                  st.binary(min_size=1, max_size=10).map(lambda b: b.replace(b"\0", b"_")))
HOSTILE_TEXT = [b"", b"\0", b"x\0y", b"\xff\xfe\xfd", b"caf\xc3\xa9", b"\xed\xa0\x80", b"def f():\n    return 1\n",
                b"[bold]a[/b]\n", b"\r\n\r\n", b"\x1e\x1f"]
contents = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.binary(max_size=64),
    # At, just under and just over the size bound; and binary past the 8,000-byte sniff window.
    st.sampled_from([MAX_BYTES - 1, MAX_BYTES, MAX_BYTES + 1]).map(lambda n: b"a" * n),
    st.just(b"a" * 8001 + b"\0"),
)
hostile_values = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), st.floats(),
    st.text(max_size=20), st.sampled_from(["", "..", "../../x", "/etc/passwd", "a[/b]", "\ud800", "x" * 5000,
                                           "NaN", "-1", "0", "1e309", "recall@0", "@", "q1\tq2", "\n"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


# -- corpus-git ---------------------------------------------------------------------------------------------------

def _tree_entries(depth: int) -> st.SearchStrategy:
    blob = st.tuples(st.just("blob"), names, st.sampled_from(["100644", "100755", "100664", "644", "100000"]),
                     contents)
    link = st.tuples(st.just("link"), names, st.just("120000"),
                     st.sampled_from([b"/etc/passwd", b"../../outside", b"dangling", b".", b"x.py", b"\xff"]))
    gitlink = st.tuples(st.just("gitlink"), names, st.just("160000"), st.binary(min_size=20, max_size=20))
    missing = st.tuples(st.just("missing"), names, st.sampled_from(["100644", "40000"]),
                        st.binary(min_size=20, max_size=20))
    wrong = st.tuples(st.just("wrong-type"), names, st.sampled_from(["40000", "160000", "120000"]), contents)
    leaf = st.one_of(blob, blob, blob, link, gitlink, missing, wrong)
    if depth <= 0:
        return st.lists(leaf, max_size=6)
    sub = st.tuples(st.just("tree"), names, st.sampled_from(["40000", "040000", "100644"]), _tree_entries(depth - 1))
    return st.lists(st.one_of(leaf, leaf, sub), max_size=6)


AUTHOR = st.sampled_from([b"A U Thor <a@example.org> 1700000000 +0000", b"A <a@b> notanumber +0000",
                          b"A <a@b>", b"", b"A\x1eB <a@b> 1 +0000", b"A <a@b> 99999999999999999999 +0000",
                          b"A <a@b> -5 +0000", b"[bold] <x> 1 +9999", b"\xff <\xfe> 1 +0000"])
commit_messages = st.one_of(st.sampled_from([b"fix: a thing (#12)\n", b"", b"\x1e\x1e\n", b"[bold]a[/b]\n",
                                             b"\xff\xfe\n", b"subject\n\nbody\0with nul\n", b"Bump version 1.2\n"]),
                            st.binary(max_size=40))
corpus_git_cases = st.fixed_dictionaries({
    "tree": _tree_entries(2),
    "author": AUTHOR,
    "message": commit_messages,
    "parent": st.sampled_from(["none", "valid", "missing"]),
    "parent_tree": _tree_entries(1),
})


def _write_object(git_dir: Path, kind: bytes, body: bytes) -> bytes:
    raw = kind + b" %d\0" % len(body) + body
    oid = sha1(raw).digest()
    hexid = oid.hex()
    path = git_dir / "objects" / hexid[:2] / hexid[2:]
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(zlib.compress(raw))
    return oid


def _write_tree(git_dir: Path, entries: list) -> bytes:
    body = b""
    for kind, name, mode, payload in entries:
        if kind == "blob":
            oid = _write_object(git_dir, b"blob", payload)
        elif kind == "link":
            oid = _write_object(git_dir, b"blob", payload)
        elif kind in ("gitlink", "missing"):
            oid = payload
        elif kind == "wrong-type":
            oid = _write_object(git_dir, b"blob", payload)
        else:
            oid = _write_tree(git_dir, payload)
        body += mode.encode() + b" " + name.replace(b"\0", b"_") + b"\0" + oid
    return _write_object(git_dir, b"tree", body)


def _empty_repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    return repo


def check_corpus_git(case: dict, tmp: Path) -> None:
    from ctxgauge.corpus import Corpus
    from ctxgauge.git import Repo

    repo = _empty_repo(tmp)
    git_dir = repo / ".git"
    tree = _write_tree(git_dir, case["tree"])
    parents = b""
    if case["parent"] == "valid":
        base = _write_tree(git_dir, case.get("parent_tree", []))
        first = _write_object(git_dir, b"commit", b"tree " + base.hex().encode() + b"\nauthor A <a@b> 1 +0000\n"
                              b"committer A <a@b> 1 +0000\n\nfirst\n")
        parents = b"parent " + first.hex().encode() + b"\n"
    elif case["parent"] == "missing":
        parents = b"parent " + sha1(b"nothing").hexdigest().encode() + b"\n"
    commit = _write_object(git_dir, b"commit", b"tree " + tree.hex().encode() + b"\n" + parents + b"author "
                           + case["author"] + b"\ncommitter " + case["author"] + b"\n\n" + case["message"])
    (git_dir / "refs" / "heads" / "main").write_text(commit.hex() + "\n")

    def read() -> None:
        from ctxgauge.suites._requests import recent_requests
        from ctxgauge.suites.replay._cases import label
        from ctxgauge.suites.replay._select import select_from_log

        with Repo(repo) as r:
            corpus = Corpus.from_git(r, "HEAD", max_bytes=MAX_BYTES)
            _use(corpus, tmp)
            log = r.log("HEAD")
            corpus.history.commits()
            if case["parent"] == "valid":
                # What replay does with a commit: the diff against its parent, selection, labels on the
                # parent's corpus; and determinism's default queries (recent subjects).
                r.changes(log[0].parents[0], log[0].sha)
                old = Corpus.from_git(r, log[0].parents[0], max_bytes=MAX_BYTES)
                old.changes_to(corpus)
                for picked in select_from_log(log, commits=None, max_files=20).eligible:
                    label(picked, old)
            recent_requests(corpus, 5)

    user_error_or_ok(read)


def _use(corpus: Any, tmp: Path) -> None:
    """Everything an engine and a record do with a corpus: summary, hash, each file read and decoded, the
    corpus written out as a directory; nothing may appear outside that directory."""
    corpus.summary()
    corpus.content_hash()
    for f, data in corpus.iter_bytes():
        assert corpus.text(f.path) == data.decode("utf-8", "replace")
        json.dumps(f.path)  # a record must be able to hold the path
        f.path.encode("utf-8")
    before = sorted(p.name for p in tmp.iterdir())
    out = tmp / "materialised" / "corpus"
    try:
        corpus.materialize(out)
    finally:
        after = sorted(p.name for p in tmp.iterdir())
        if set(after) - set(before) - {"materialised"}:
            raise Breach(f"materialize wrote outside its folder: {sorted(set(after) - set(before))}")
        if (tmp / "materialised").exists() and set(os.listdir(tmp / "materialised")) - {"corpus"}:
            raise Breach(f"materialize wrote beside its folder: {os.listdir(tmp / 'materialised')}")
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) if out.exists() else []
    if written != sorted(corpus.paths):
        raise Breach(f"materialize wrote {written[:5]}..., the corpus holds {sorted(corpus.paths)[:5]}...")


# -- corpus-dir ---------------------------------------------------------------------------------------------------

def _dir_entries(depth: int) -> st.SearchStrategy:
    file = st.tuples(st.just("file"), names, contents)
    link = st.tuples(st.just("link"), names, st.sampled_from([b"/etc/passwd", b"../../outside", b"dangling", b".",
                                                              b"..", b"self", b"/proc/self/fd/0", b"/dev/zero"]))
    fifo = st.tuples(st.just("fifo"), names, st.just(b""))
    sparse = st.tuples(st.just("sparse"), names, st.sampled_from([MAX_BYTES + 1, 3 << 30]))
    gitfile = st.tuples(st.just("file"), st.just(b".git"), st.sampled_from([b"gitdir: /etc\n", b"\xff"]))
    leaf = st.one_of(file, file, file, link, fifo, sparse, gitfile)
    if depth <= 0:
        return st.lists(leaf, max_size=6)
    sub = st.tuples(st.just("dir"), names, _dir_entries(depth - 1))
    return st.lists(st.one_of(leaf, leaf, sub), max_size=6)


corpus_dir_cases = _dir_entries(2)


def _make_dir(root: bytes, entries: list) -> None:
    for kind, name, payload in entries:
        path = os.path.join(root, name.replace(b"/", b"_").replace(b"\0", b"_") or b"_")
        if os.path.lexists(path) or os.path.basename(path) in (b".", b".."):
            continue
        try:
            if kind == "file":
                with open(path, "wb") as fh:
                    fh.write(payload)
            elif kind == "link":
                os.symlink(path if payload == b"self" else payload, path)
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "sparse":
                with open(path, "wb") as fh:
                    fh.truncate(payload)
            else:
                os.mkdir(path)
                _make_dir(path, payload)
        except OSError:
            continue  # a name this file system refuses (too long, ...): not an input


def check_corpus_dir(case: list, tmp: Path) -> None:
    from ctxgauge.corpus import Corpus

    root = tmp / "src"
    root.mkdir()
    _make_dir(os.fsencode(root), case)

    def read() -> None:
        _use(Corpus.from_directory(root, max_bytes=MAX_BYTES), tmp)

    user_error_or_ok(read)


# -- JSON documents by mutation of a valid seed -------------------------------------------------------------------

# A mutation is (node, action, value): replace, delete or wrap in a list the node chosen by index among the
# document's nodes (or copy it under a hostile key). Plain tuples, so a failing input saves as JSON.
mutations = st.lists(st.tuples(st.integers(min_value=0, max_value=10_000),
                               st.sampled_from(["replace", "replace", "delete", "wrap", "dup-key"]), hostile_values),
                     min_size=1, max_size=4)


def _nodes(doc: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _nodes(v, path + (i,))
    return out


def mutate(doc: Any, muts: list) -> Any:
    doc = copy.deepcopy(doc)
    for node, action, value in muts:
        value = copy.deepcopy(value)
        nodes = _nodes(doc)
        path = nodes[node % len(nodes)]
        if not path:
            doc = value if action == "replace" else [doc] if action == "wrap" else doc
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if action == "replace":
            parent[last] = value
        elif action == "delete":
            del parent[last]
        elif action == "wrap":
            parent[last] = [parent[last]]
        elif isinstance(parent, dict) and isinstance(value, str):
            parent[value] = parent[last]
    return doc


def _json_bytes(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _seed(rel: str) -> Any:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def _seed_lines(rel: str) -> list:
    return [json.loads(line) for line in (ROOT / rel).read_text(encoding="utf-8").splitlines() if line.strip()]


# -- fingerprints -------------------------------------------------------------------------------------------------

FINGERPRINT_SEEDS = ["tests/fingerprints/data/contextbenchmark-v1.bm25.fingerprint.json",
                     "tests/records/fixtures/v1/determinism/fingerprints/bm25.fingerprint.json",
                     "tests/records/fixtures/v1/determinism/fingerprints/grep.fingerprint.json"]

fingerprint_docs = st.one_of(
    st.tuples(st.sampled_from(FINGERPRINT_SEEDS), mutations).map(lambda t: _json_bytes(mutate(_seed(t[0]), t[1]))),
    st.sampled_from(FINGERPRINT_SEEDS).map(lambda rel: (ROOT / rel).read_bytes()),
    st.binary(max_size=200),
)
fingerprint_cases = fingerprint_docs
fingerprint_pairs = st.tuples(fingerprint_docs, fingerprint_docs)


def check_fingerprint(case: bytes, tmp: Path) -> None:
    from ctxgauge.fingerprints import read_fingerprint

    (tmp / "fp.json").write_bytes(case)
    user_error_or_ok(lambda: read_fingerprint(tmp / "fp.json"))


def check_fingerprint_compare(case: list, tmp: Path) -> None:
    from ctxgauge.fingerprints import compare

    a, b = case
    (tmp / "a.json").write_bytes(a)
    (tmp / "b.json").write_bytes(b)

    def both() -> None:
        result = compare(tmp / "a.json", tmp / "b.json")
        int(result.exit_code)
        json.dumps(result.to_json())  # what `compare --json` prints

    user_error_or_ok(both)


# -- every other loader -------------------------------------------------------------------------------------------

def _in_file(name: str, load: Callable[[Path], Any]) -> Callable[[bytes, Path], Any]:
    def run(data: bytes, tmp: Path) -> Any:
        (tmp / name).write_bytes(data)
        return load(tmp / name)
    return run


def _run_dir(name: str) -> Callable[[bytes, Path], Any]:
    def run(data: bytes, tmp: Path) -> Any:
        from ctxgauge.records import read_run, read_units

        src = ROOT / "tests/records/fixtures/v1/replay"
        for f in ("run.json", "units.jsonl"):
            shutil.copyfile(src / f, tmp / f)
        (tmp / name).write_bytes(data)
        read_run(tmp)
        return read_units(tmp)
    return run


def _battery(name: str) -> Callable[[bytes, Path], Any]:
    def run(data: bytes, tmp: Path) -> Any:
        from ctxgauge.suites.qa.sources._battery import load_battery

        bundled = sorted((ROOT / "src/ctxgauge/data/batteries").iterdir())[0]
        shutil.copytree(bundled, tmp / "battery")
        (tmp / "battery" / name).write_bytes(data)
        return load_battery(tmp / "battery")
    return run


def _loaders() -> dict[str, tuple[Callable[[bytes, Path], Any], Callable[[], bytes] | None]]:
    """name -> (load(bytes, tmp), the valid seed document as bytes or None)."""
    from ctxgauge import trec
    from ctxgauge.providers._rates import load_rates
    from ctxgauge.suites.cases import load_cases, load_swebench, read_queries, read_rankings
    from ctxgauge.suites.determinism._config import load_queries
    from ctxgauge.suites.qa.sources._questions import load_question_set

    cases_doc = {"cases": [{"name": "fees", "query": "waive fees", "corpus": ".", "expected": ["src/fees.py"]},
                           {"name": "gap", "query": "x", "corpus": ".", "expected": ["a.py"], "known_gap": True}],
                 "pass": {"recall@5": 0.5}}
    swe = {"instance_id": "acme__lib-1", "repo": "acme/lib", "base_commit": "abc", "problem_statement": "Crash",
           "patch": "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-a\n+b\n"}
    bundled = sorted((ROOT / "src/ctxgauge/data/batteries").iterdir())[0]
    raw = lambda p: (lambda: Path(p).read_bytes())  # noqa: E731
    as_json = lambda d: (lambda: _json_bytes(d))  # noqa: E731
    return {
        "case file json": (_in_file("cases.json", load_cases), as_json(cases_doc)),
        "case file yaml": (_in_file("cases.yaml", load_cases), None),
        "swe-bench jsonl": (_in_file("swe.jsonl", load_swebench), as_json(swe)),
        "swe-bench list": (_in_file("swe.json", load_swebench), as_json([swe])),
        "queries": (_in_file("queries.tsv", read_queries), None),
        "queries jsonl": (_in_file("queries.jsonl", read_queries), as_json({"qid": "q1", "text": "fees"})),
        "rankings": (_in_file("rankings.jsonl", read_rankings),
                     as_json({"qid": "q1", "ranking": ["a.py", {"path": "b.py", "score": 1}]})),
        "trec run": (_in_file("x.run", trec.read_run), None),
        "trec qrels": (_in_file("x.qrels", trec.read_qrels), None),
        "determinism queries": (_in_file("queries.json", load_queries), as_json(["fees", "isbn"])),
        "question set": (_in_file("questions.json", load_question_set),
                         raw(ROOT / "tests/suites/qa/question_sets/v2_valid.json")),
        "rate table": (_in_file("rates.json", load_rates), None),
        "run.json": (_run_dir("run.json"), raw(ROOT / "tests/records/fixtures/v1/replay/run.json")),
        "units.jsonl": (_run_dir("units.jsonl"), None),
        **{f"battery {n}": (_battery(n), raw(bundled / n))
           for n in ("questions.json", "gold.json", "exemplars.json", "battery.json", "policies.json")
           if (bundled / n).is_file()},
    }


LOADERS = _loaders()
_UNIT_SEED = _seed_lines("tests/records/fixtures/v1/replay/units.jsonl")


def _loader_doc(name: str) -> st.SearchStrategy:
    _, seed = LOADERS[name]
    raw_docs = st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
    if name == "units.jsonl":
        lines = st.lists(st.tuples(st.integers(0, len(_UNIT_SEED) - 1), mutations), min_size=1, max_size=3).map(
            lambda picks: b"".join(_json_bytes(mutate(_UNIT_SEED[i], m)) + b"\n" for i, m in picks))
        return st.one_of(lines, raw_docs)
    if seed is None:
        return raw_docs
    mutated = mutations.map(lambda m: _json_bytes(mutate(json.loads(seed()), m)))
    return st.one_of(mutated, mutated, raw_docs)


loader_cases = st.sampled_from(sorted(LOADERS)).flatmap(lambda n: st.tuples(st.just(n), _loader_doc(n)))


RUN_FIXTURES = ("cases", "determinism", "qa", "replay", "replay-cancelled")
report_cases = st.tuples(st.sampled_from(RUN_FIXTURES), mutations, st.lists(mutations, max_size=2))


def check_report(case: list, tmp: Path) -> None:
    """A recorded run (one of the checkout's fixture runs) whose run.json and first unit lines are mutated,
    read back and drawn the three ways `ctxgauge report` draws it: a run directory is outside input too (a
    colleague's export, a published tree)."""
    import io

    from rich.console import Console

    from ctxgauge.report import build_report, load_runs, render_html, render_markdown, render_terminal

    name, run_muts, unit_muts = case
    run = tmp / "runs" / name
    shutil.copytree(ROOT / "tests/records/fixtures/v1" / name, run)
    (run / "run.json").write_bytes(_json_bytes(mutate(json.loads((run / "run.json").read_text()), run_muts)))
    lines = (run / "units.jsonl").read_text(encoding="utf-8").splitlines()
    for i, m in enumerate(unit_muts[:len(lines)]):
        lines[i] = _json_bytes(mutate(json.loads(lines[i]), m)).decode("utf-8", "surrogatepass")
    (run / "units.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")

    def draw() -> None:
        model = build_report(load_runs([tmp / "runs"]))
        render_terminal(model, Console(file=io.StringIO(), width=120), details=True)
        render_markdown(model, details=True)
        render_html(model)

    user_error_or_ok(draw)


def check_loader(case: list, tmp: Path) -> None:
    name, data = case
    load, _ = LOADERS[name]
    user_error_or_ok(lambda: load(data, tmp))


def preload() -> None:
    """Import every module the checks use, so atheris can instrument them before the first input."""
    import ctxgauge.corpus._corpus  # noqa: F401
    import ctxgauge.fingerprints  # noqa: F401
    import ctxgauge.git  # noqa: F401
    import ctxgauge.records  # noqa: F401
    import ctxgauge.report  # noqa: F401
    import ctxgauge.suites._requests  # noqa: F401
    import ctxgauge.suites.cases  # noqa: F401
    import ctxgauge.suites.replay._cases  # noqa: F401
    import ctxgauge.suites.replay._select  # noqa: F401
    import ctxgauge.suites.determinism._config  # noqa: F401
    import ctxgauge.suites.qa.sources._battery  # noqa: F401
    import ctxgauge.suites.qa.sources._questions  # noqa: F401
    import ctxgauge.trec  # noqa: F401
    import ctxgauge.providers._rates  # noqa: F401


@dataclass(frozen=True)
class Target:
    """A fuzz target: its inputs and the check of one input (in a fresh temporary directory)."""

    name: str
    cases: st.SearchStrategy
    check: Callable[[Any, Path], None]


import layouts as L  # noqa: E402  (the repository-layout and output-target targets; they use Breach from here)
import text as X  # noqa: E402  (the terminal-text and markdown-text targets; Breach from here too)

TARGETS = {t.name: t for t in [
    Target("corpus-git", corpus_git_cases, check_corpus_git),
    Target("corpus-dir", corpus_dir_cases, check_corpus_dir),
    Target("fingerprint", fingerprint_cases, check_fingerprint),
    Target("fingerprint-compare", fingerprint_pairs, check_fingerprint_compare),
    Target("loaders", loader_cases, check_loader),
    Target("report", report_cases, check_report),
    Target("repo-layout", L.layout_cases, L.check_repo_layout),
    Target("output-target", L.output_cases, L.check_output_target),
    Target("terminal-text", X.terminal_cases, X.check_terminal_text),
    Target("markdown-text", X.markdown_cases, X.check_markdown_text),
]}


def permissions_reset(tmp: Path) -> None:
    """Make everything under tmp removable again (a case may leave a directory without write permission)."""
    for dirpath, dirnames, _ in os.walk(tmp):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if not os.path.islink(p):
                os.chmod(p, stat.S_IRWXU)
