"""Quoted messages: string literal fragments of code files, and the fusion component that finds them."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.corpus import Corpus
import ctxgauge.engines.fusion._literals as lit
import ctxgauge.engines.fusion._request as rq
from ctxgauge.engines import get_engine
from ctxgauge.git import Repo


def test_fragments_are_cut_at_placeholders_and_need_two_words() -> None:
    src = ('logger.warning(__("no number is assigned for %s: %s"), figtype, labelid)\n'
           "raise ValueError(f'Malformed option description {desc!r}, should look like \"opt\"')\n"
           'MSGS = {"W0612": ("Unused variable %r", "unused-variable", "Used when ...")}\n'
           'name = "utf-8"; mode = "importlib"\n')
    got = lit.fragments("pkg/std.py", src)
    assert {"no number is assigned for", "malformed option description", "unused-variable"} <= got
    assert "utf-8" not in got and "importlib" not in got  # one word: in too many requests by chance
    # two plain words in few letters are any prose's: "unused variable" (15), "not found", "instead of"
    assert "unused variable" not in got
    assert lit.fragments("a.py", 'e("not found"); w("instead of %s"); s("unconditional skip")') == {
        "unconditional skip"}
    # backticks are Markdown in a Python docstring, a string in JavaScript
    assert lit.fragments("a.py", "`some.name` here") == frozenset()
    assert lit.fragments("a.js", "throw new Error(`cannot read property ${key} of an undefined value`)") == {
        "cannot read property", "of an undefined value"}


def test_a_quoted_message_points_at_the_file_holding_it() -> None:
    index = lit.LiteralIndex({
        "sphinx/domains/std.py": lit.fragments("std.py", "warn('no number is assigned for %s: %s')"),
        "sphinx/util/nodes.py": lit.fragments("nodes.py", "x = 'assigned number'"),
        "tests/test_std.py": lit.fragments("t.py", "assert 'no number is assigned for' in out"),
    })
    issue = "Since 3.3 the build prints\n\n    WARNING: No number is   assigned for table:\n\nwhy?"
    assert index.match(issue) == {"sphinx/domains/std.py": 0.5, "tests/test_std.py": 0.5}
    # whole words only: "ano number is assigned formally" holds the letters, not the words
    assert index.match("ano number is assigned formally") == {}


def test_a_fragment_in_too_many_files_says_nothing() -> None:
    by_path = {f"m{i}.py": frozenset({"invalid value"}) for i in range(lit.MAX_FILES + 1)}
    assert lit.LiteralIndex(by_path).match("raises invalid value here") == {}
    by_path.pop("m0.py")
    assert lit.LiteralIndex(by_path).match("raises invalid value here") == {
        f"m{i}.py": 1 / lit.MAX_FILES for i in range(1, lit.MAX_FILES + 1)}


def test_title_is_the_first_non_blank_line() -> None:
    assert rq.title("\n  Generate man page section directories \n**Current** ...") == (
        "Generate man page section directories")
    assert rq.title("") == ""


def _issue(message: str) -> str:
    filler = " ".join(f"word{i}" for i in range(50))  # long: the issue-text weights
    return f"Strange message in the output\n\nI get `{message}` on my code. {filler}"


def test_fusion_finds_the_file_whose_literal_an_issue_quotes(repo_builder, tmp_path: Path) -> None:
    b = repo_builder("literals")
    b.commit("initial import", {
        "lint/checkers/variables.py": 'MSG = ("Unused variable %r", "unused-variable")\ndef check(node):\n    pass\n',
        "lint/checkers/imports.py": 'MSG = ("Unused import %s", "unused-import")\n# unused variable checks live elsewhere\n',
        "lint/runner.py": "def run(checkers):\n    for c in checkers:\n        c.check(None)\n",
        "docs/messages.md": "unused-variable: a variable is unused. unused variable unused variable\n",
    })
    b.commit("runner: order checkers", {"lint/runner.py": "def run(checkers):\n    for c in sorted(checkers):\n        c.check(None)\n"})
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    eng = get_engine("fusion(long_literal=4)")
    eng.build(corpus, tmp_path / "f")
    text = _issue("unused-variable")
    comp = eng.components(tmp_path / "f", text)
    assert comp["literal"] == {"lint/checkers/variables.py": 1.0}
    assert eng.query(tmp_path / "f", text, 1)[0].path == "lint/checkers/variables.py"
    # Without the literal component the prose file that says the words most often wins.
    off = get_engine("fusion(long_literal=0)")
    off.build(corpus, tmp_path / "g")
    assert not off.components(tmp_path / "g", text)["literal"]
    assert off.query(tmp_path / "g", text, 1)[0].path == "docs/messages.md"
    # and the literals are read incrementally: an update equals a rebuild, byte for byte
    b.commit("imports: message id renamed", {
        "lint/checkers/imports.py": 'MSG = ("Unused import %s", "unused-variable")\n'})
    later = Corpus.from_git(Repo(b.path), "HEAD")
    eng.update(tmp_path / "f", later, corpus.changes_to(later))
    get_engine("fusion(long_literal=4)").build(later, tmp_path / "h")
    assert (tmp_path / "f" / "fusion.json").read_bytes() == (tmp_path / "h" / "fusion.json").read_bytes()
    assert eng.components(tmp_path / "f", text)["literal"] == {
        "lint/checkers/imports.py": 1.0, "lint/checkers/variables.py": 1.0}
