"""_calls: each definition's callees read with tree-sitter, and the files defining what a named function calls."""

from __future__ import annotations

import pytest

from ctxgauge.engines.fusion._calls import MAX_FILES, CallReader, callee_files, calls_by_name

SOURCE = b'''
import os

def top(x):
    helper(x)
    os.path.join(x)
    def inner():
        nested_call()
    return top(x)

class Box(Base, mod.Mixin):
    size = compute_size()

    def __init__(self):
        self.setup()

    @property
    def open(self):
        return Lid(self).lift()

module_level()
'''


def test_python_definitions_and_their_callees() -> None:
    calls = CallReader().calls("python", SOURCE)
    # a nested function's calls are its outer definition's; recursion is no callee; module calls count for nobody
    assert calls == {"top": ["helper", "join", "nested_call"], "Box": ["Base", "Mixin", "compute_size"],
                     "Box.__init__": ["setup"], "Box.open": ["Lid", "lift"]}


@pytest.mark.parametrize("grammar, source, expected", [
    ("javascript", b"function a() { b(); x.c(); new D(); }\nclass K { m() { e(); } }\n",
     {"a": ["b", "c", "D"], "K.m": ["e"]}),
    ("typescript", b"export function a(): void { b(); }\nconst f = () => g();\n", {"a": ["b"], "f": ["g"]}),
    ("go", b"package p\nfunc A() { B(); x.C() }\nfunc (s *S) M() { D() }\n", {"A": ["B", "C"], "M": ["D"]}),
    ("rust", b"fn a() { b(); m::c(); s.d(); }\n", {"a": ["b", "c", "d"]}),
    ("java", b"class K { void m() { n(); new T(); } }\n", {"K.m": ["n", "T"]}),
])
def test_other_languages(grammar: str, source: bytes, expected: dict) -> None:
    assert CallReader().calls(grammar, source) == expected


def test_callee_files_go_one_call_deeper() -> None:
    calls = {"pkg/api.py": {"request": ["send", "merge"], "Session.__init__": ["configure"]},
             "pkg/adapters.py": {"send": ["decode"]}}
    definitions = {"request": ["pkg/api.py"], "send": ["pkg/adapters.py"], "merge": ["pkg/a.py", "pkg/b.py"],
                   "configure": ["pkg/config.py"], "decode": ["pkg/codec.py"],
                   "session": ["pkg/api.py"]}
    by_name = calls_by_name(calls)
    # request calls send (1 file) and merge (2 files: 1/2 each); scaled so the best file gets 1
    assert callee_files(["request"], calls, by_name, definitions) == pytest.approx(
        {"pkg/adapters.py": 1.0, "pkg/a.py": 0.5, "pkg/b.py": 0.5})
    # one level only: send's callee is not reached from request
    assert "pkg/codec.py" not in callee_files(["request"], calls, by_name, definitions)
    # a named class: what constructing it calls
    assert callee_files(["session"], calls, by_name, definitions) == {"pkg/config.py": 1.0}
    # a callee defined in too many files says nothing
    crowded = {**definitions, "send": [f"pkg/m{i}.py" for i in range(MAX_FILES + 1)]}
    assert callee_files(["request"], calls, by_name, crowded) == pytest.approx({"pkg/a.py": 1.0, "pkg/b.py": 1.0})


def test_tests_and_docs_are_neither_named_nor_reached() -> None:
    calls = {"tests/test_api.py": {"request": ["send"]}, "pkg/api.py": {"request": ["send", "check"]}}
    definitions = {"request": ["pkg/api.py", "tests/test_api.py"], "send": ["pkg/adapters.py"],
                   "check": ["tests/test_check.py"]}
    # the test file's `request` calls nothing counted; the callee `check` lives in a test only
    assert callee_files(["request"], calls, calls_by_name(calls), definitions) == {"pkg/adapters.py": 1.0}


def test_fusion_finds_the_callee_of_a_named_function(repo_builder, tmp_path) -> None:
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines import get_engine
    from ctxgauge.git import Repo

    b = repo_builder("calls")
    b.commit("initial import", {
        "pkg/__init__.py": "",
        "pkg/api.py": "from pkg.wire import encode_frame\n\ndef publish(message):\n    return encode_frame(message)\n",
        "pkg/wire.py": "def encode_frame(payload):\n    return bytes(payload)\n",
        "pkg/topics.py": "def topic_names():\n    '''message topics published by the broker'''\n    return []\n",
        "pkg/retry.py": "def backoff(message):\n    '''retry a message that failed to publish'''\n    return message\n",
    })
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    text = ("When I call `publish()` with a message holding unicode text the message that arrives is garbled; "
            "the topics and the retries of the broker look fine, every message I publish to any topic of the "
            "broker arrives garbled whatever the retry settings or the topic, so something in how a message "
            "is published must be wrong.")
    comp_names = {}
    for spec in ("fusion", "fusion(long_call=0)"):
        eng = get_engine(spec)
        eng.build(corpus, tmp_path / spec)
        comp_names[spec] = eng.components(tmp_path / spec, text)["call"]
        ranked = [h.path for h in eng.query(tmp_path / spec, text, 5)]
        comp_names[spec, "rank"] = ranked.index("pkg/wire.py") if "pkg/wire.py" in ranked else 99
    assert comp_names["fusion"] == {"pkg/wire.py": 1.0}
    assert comp_names["fusion(long_call=0)"] == {}
    assert comp_names["fusion", "rank"] < comp_names["fusion(long_call=0)", "rank"]


def test_fusion_reads_callees_from_graphs_parse_not_a_second_one(repo_builder, tmp_path, monkeypatch) -> None:
    """Each source file is parsed once per build (issue 35's cost benchmark: the call reader parsed every file
    graph had just parsed); the callees are the ones a parse of their own gives."""
    from ctxgauge.cache import using
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines import get_engine
    from ctxgauge.git import Repo

    b = repo_builder("once")
    b.commit("import", {"pkg/api.py": "from pkg.wire import encode\n\ndef publish(m):\n    return encode(m)\n",
                        "pkg/wire.py": "def encode(p):\n    return bytes(p)\n",
                        "web/app.js": "function start() { listen(); }\nfunction listen() {}\n"})
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    own_parses = []
    real = CallReader.calls
    monkeypatch.setattr(CallReader, "calls", lambda self, g, data: own_parses.append(g) or real(self, g, data))
    eng = get_engine("fusion")
    with using(None):  # no work cache: graph parses every file itself
        eng.build(corpus, tmp_path / "idx")
    assert own_parses == []
    grammar = {"py": "python", "js": "javascript"}
    for f, data in corpus.iter_bytes(corpus.files):
        g = grammar[f.path.rsplit(".", 1)[1]]
        assert eng._calls._by_blob[(g, f.blob)] == CallReader().calls(g, data), f.path
