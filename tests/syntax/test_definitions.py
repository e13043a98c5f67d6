"""The one definition parser: definitions as line ranges, the innermost one of a line, the cache by content."""

from __future__ import annotations

import threading

import pytest

from ctxgauge import syntax
from ctxgauge.syntax import _definitions
from ctxgauge.syntax import DefinitionLines, blob_id, definitions, innermost, line_blocks

PY = b"""import os

@register
@other
def f(x):
    def g():
        return x
    return g

class C:
    a = 1
    def m(self):
        pass
X = 1
"""

JAVA = b"""package p;

class A {
    int x;
    void run() {
        go();
    }
    static class B {
        void b() {}
    }
}
"""

GO = b"""package p

import "fmt"

type T struct {
	n int
}

func (t *T) Show() {
	fmt.Println(t.n)
}
"""


def test_python_one_range_per_definition_decorators_included() -> None:
    # f from its first decorator (line 3) to `return g` (8); g 6-7; C 10-13; m 12-13. Line 1 and 14: none.
    assert definitions("pkg/a.py", PY) == ((3, 8), (6, 7), (10, 13), (12, 13))


def test_graph_still_sees_every_node_a_decorated_definition_twice() -> None:
    # The graph engine's reading of the same parse is unchanged: the `def` inside the decoration counts too.
    assert DefinitionLines().of("python", "x", PY) == ((3, 8), (5, 8), (6, 7), (10, 13), (12, 13))


def test_java_and_go_nested_types_and_methods() -> None:
    assert definitions("p/A.java", JAVA) == ((3, 11), (5, 7), (8, 10), (9, 9))
    assert definitions("p/t.go", GO) == ((5, 7), (9, 11))


def test_a_path_without_a_grammar_has_none() -> None:
    assert definitions("README.md", PY) == () and definitions("Makefile", b"all:\n\techo\n") == ()


def test_innermost_is_the_shortest_range_containing_the_line() -> None:
    defs = definitions("a.py", PY)
    assert [innermost(defs, n) for n in (1, 3, 5, 7, 8, 11, 12, 14)] == [
        None, (3, 8), (3, 8), (6, 7), (3, 8), (10, 13), (12, 13), None]
    by_line = line_blocks(defs)
    assert {n: by_line.get(n) for n in range(1, 15)} == {n: innermost(defs, n) for n in range(1, 15)}
    # Two ranges sharing only a line (the end of one, the start of the next): the later one, both ways.
    assert innermost(((1, 3), (3, 5)), 3) == (3, 5) and line_blocks(((1, 3), (3, 5)))[3] == (3, 5)


def test_cached_by_content_across_paths_and_threads(monkeypatch) -> None:
    calls = []
    real = DefinitionLines.parse

    def counting(self, grammar, data):
        calls.append(grammar)
        return real(self, grammar, data)

    monkeypatch.setattr(_definitions, "_cache", {})
    monkeypatch.setattr(DefinitionLines, "parse", counting)
    src = PY + b"# a variant only this test parses\n"
    first = definitions("one.py", src)
    assert definitions("two/other.py", src) is first and calls == ["python"]
    assert definitions("one.py", src + b"\n") == first and calls == ["python", "python"]  # new content, new parse

    out = {}

    def work(i: int) -> None:
        out[i] = [definitions(f"t{i}.java", JAVA + b"// %d\n" % j) for j in range(20)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(v == [definitions("p/A.java", JAVA)] * 20 for v in out.values())


def test_blob_id_is_gits() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_the_old_imports_still_work() -> None:
    from ctxgauge.engines.graph._blocks import DEFINITION_NODES
    from ctxgauge.engines.graph._blocks import DefinitionLines as Old
    from ctxgauge.engines.graph._parse import _load_language, grammar_of, language_of, parser_and_query

    assert Old is syntax.DefinitionLines and DEFINITION_NODES is syntax.DEFINITION_NODES
    assert grammar_of("a.tsx") == "tsx" and language_of("a.rs") == "rust"
    assert parser_and_query is syntax.parser_and_query and _load_language is syntax.load_language
    with pytest.raises(ValueError, match="no grammar"):
        _load_language("cobol")
