"""The one identity service: normalised source, the modules an engine computes with, and the scheme.

The hashes of fixed sample sources are pinned here as literals: they are what makes an id the same under
every supported Python (the text is cut by source position, never rebuilt from `ast.dump`, whose output
differs between 3.11, 3.12 and 3.13), so a change to them is a change of identity scheme.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import ctxgauge.cache._identity as service
from ctxgauge.cache import (IDENTITY_SCHEME, code_identity, computing_modules, normalized_source, source_hash,
                            stage_identity)
from ctxgauge.fingerprints import Verdict, compare, make_fingerprint

SAMPLE = '''"""A sample module: its docstring is prose."""

import os  # a comment


def fee(days: int) -> int:
    """Days times ten.

    More prose, \u00e9 and \u2713.
    """
    text = "# not a comment"  # a comment
    return days * 10


class Ledger:
    \'\'\'One line.\'\'\'

    rate = 1  # \u00e9

    async def total(self):
        "A plain-string docstring."
        return [x for x in range(3)]
'''
SAMPLE_CUT = ('import os\ndef fee(days: int) -> int:\n    text = "# not a comment"\n    return days * 10\n'
              'class Ledger:\n    rate = 1\n    async def total(self):\n        return [x for x in range(3)]\n')
SAMPLE_HASH = "450c4069310dc9f3caed38581fb8488a07df66c1d3206eb4657f10ed4958b7db"

# A docstring after non-ASCII text on its line (ast counts columns in UTF-8 bytes, the cut in characters), an
# attribute's docstring and a bare string in a block (statements that do nothing), a string that is a value.
EDGES = '''def f():
    """Only a docstring."""

x = {"k": """not a docstring"""}  # \u00e9
def g(a="\u00e9\u2713"): """doc"""; return a
RATE = 2
"""The attribute's docstring."""
if RATE:
    "a bare string in a block"
    pass
'''
EDGES_CUT = 'def f():\nx = {"k": """not a docstring"""}\ndef g(a="\u00e9\u2713"): ; return a\nRATE = 2\nif RATE:\n    pass\n'
EDGES_HASH = "412e75de79e3dcef6b34993e1a374ae2f02c77879c171084185a50544d4f9eb3"


def test_pinned_sample_sources():
    assert normalized_source(SAMPLE) == SAMPLE_CUT
    assert source_hash(SAMPLE) == SAMPLE_HASH == hashlib.sha256(SAMPLE_CUT.encode()).hexdigest()
    assert normalized_source(EDGES) == EDGES_CUT
    assert source_hash(EDGES) == EDGES_HASH


def test_prose_edits_keep_the_hash_and_code_edits_change_it():
    prose = (SAMPLE.replace("its docstring is prose.", "reworded,\n\nover three lines.")
             .replace("# a comment", "# another comment, longer").replace("'''One line.'''", '"""Two\n    lines."""')
             .replace("    return days * 10\n", "    return days * 10\n\n\n"))
    assert prose != SAMPLE and source_hash(prose) == SAMPLE_HASH
    # a docstring removed altogether leaves the same text as a reworded one
    assert source_hash(SAMPLE.replace('        "A plain-string docstring."\n', "")) == SAMPLE_HASH
    for edit in (("days * 10", "days * 11"), ('"# not a comment"', '"# not a comment!"'), ("rate = 1", "rate = 2")):
        assert source_hash(SAMPLE.replace(*edit)) != SAMPLE_HASH, edit


def test_source_that_does_not_parse_is_hashed_as_text():
    assert normalized_source("def (:\n   \n  x = 1   \n") == "def (:\n  x = 1\n"


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_modules_are_found_from_the_source_in_a_fresh_interpreter(tmp_path):
    # A plugin-like package outside ctxgauge: imports inside functions and relative imports are followed,
    # a module named by a computed string is not, and nothing is imported to find them.
    _package(tmp_path, "idpkg", {
        "__init__.py": "from .engine import E\n",
        "engine.py": """
            import importlib
            from ctxgauge.engines._base import Engine

            class E(Engine):
                kind = "e"

                def build(self, corpus, out_dir):
                    from idpkg.sub import parse
                    from . import helpers
                    return importlib.import_module("idpkg." + "dynamic")
            """,
        "helpers.py": "X = 1\n",
        "sub/__init__.py": "",
        "sub/parse.py": "from ..helpers import X\n",
        "dynamic.py": "Y = 2\n",
        "unused.py": "Z = 3\n",
    })
    code = ("import json, sys; from ctxgauge.cache import computing_modules; "
            "mods = computing_modules('idpkg.engine'); "
            "print(json.dumps([mods, sorted(m for m in sys.modules if m.startswith('idpkg'))]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": f"{tmp_path}:{Path(service.__file__).parents[2]}"})
    mods, imported = __import__("json").loads(out.stdout)
    own = [m for m in mods if m.startswith("idpkg")]
    # (idpkg's and idpkg.sub's __init__s only re-export: run on the way, they compute nothing)
    assert own == ["idpkg.engine", "idpkg.helpers", "idpkg.sub.parse"]
    # ctxgauge's own modules it computes with are in, those outside the boundary are not
    assert "ctxgauge.engines._base" in mods and "ctxgauge.corpus" in mods
    assert not [m for m in mods if m == "ctxgauge" or m.startswith(("ctxgauge.cache", "ctxgauge.errors"))]
    assert imported == []  # found from the files: nothing of the package was imported to find them


def test_the_boundary_leaves_out_what_never_decides_a_result():
    mods = computing_modules("ctxgauge.engines.graph._engine")
    assert "ctxgauge.engines.graph._resolve_rust" in mods  # imported only inside a function
    assert "ctxgauge.engines.graph._parse" in mods and "ctxgauge.git._repo" in mods
    for outside in ("ctxgauge", "ctxgauge.cache", "ctxgauge.cache._identity", "ctxgauge.errors", "ctxgauge._killpoints"):
        assert outside not in mods
    assert "ctxgauge.fingerprints" not in computing_modules("ctxgauge.engines.hybrid")


def test_code_identity_carries_the_scheme_and_config():
    a = code_identity(["ctxgauge.engines.grep"], {"x": 1})
    assert a == code_identity(["ctxgauge.engines.grep"], {"x": 1}) != code_identity(["ctxgauge.engines.grep"], {"x": 2})
    assert IDENTITY_SCHEME == 3
    stage = stage_identity(["ctxgauge.engines._text.terms"], {"x": 1})
    assert stage["scheme"] == IDENTITY_SCHEME
    assert "ctxgauge.engines._text.tokens" in stage["modules"]  # what terms computes with, not declared


def test_compare_names_an_identity_scheme_change():
    def fp(system_id: str, scheme: int | None):
        extra = {} if scheme is None else {"identity_scheme": scheme}
        return make_fingerprint("bm25", {"id": system_id, "source": "content-hash"}, "repo", "c" * 64, 10,
                                "a" * 64, {"q": ["x.py"]}, extra=extra)

    old, new = fp("sha256:" + "1" * 64, None), fp("sha256:" + "2" * 64, 2)
    result = compare(old, new)
    assert result.verdict is Verdict.NOT_COMPARABLE and int(result.exit_code) == 4
    assert "identity schemes differ: 1 vs 2" in result.blockers[0]
    # same scheme, different ids: a code change, and the reason does not blame the scheme
    other = compare(fp("sha256:" + "1" * 64, 2), new)
    assert other.verdict is Verdict.NOT_COMPARABLE and "scheme" not in " ".join(other.reasons)


_PROBE = ("import json; from ctxgauge.cache import code_hashes, code_identity; "
          "print(json.dumps([code_identity(['rxpkg.engine']), sorted(code_hashes('rxpkg.engine'))]))")


def _identity_of(root: Path) -> tuple[str, list[str]]:
    """The identity of `rxpkg.engine` and the modules it covers, in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True,
                         env={**__import__("os").environ,
                              "PYTHONPATH": f"{root}:{Path(service.__file__).parents[2]}"})
    ident, mods = __import__("json").loads(out.stdout)
    return ident, mods


def test_a_re_export_package_counts_only_for_the_names_taken_from_it(tmp_path):
    # tools/__init__ re-exports three modules, as metrics/__init__ does; the engine takes one name from it
    # and imports another module of it directly (which runs the __init__, and so imports _stats too).
    _package(tmp_path, "rxpkg", {
        "__init__.py": '"""Re-exports."""\nfrom rxpkg.engine import E\n\n__all__ = ["E"]\n',
        "engine.py": """
            from typing import TYPE_CHECKING

            from rxpkg.tools import helper
            from rxpkg.tools._b import other
            from rxpkg import coded
            from rxpkg.star import s_name

            if TYPE_CHECKING:
                from rxpkg import typing_only
            else:
                from rxpkg import runtime_only

            class E:
                pass
            """,
        "tools/__init__.py": ("from rxpkg.tools._a import helper\nfrom rxpkg.tools._b import other\n"
                              "from rxpkg.tools._stats import mean\n__all__ = ['helper', 'mean', 'other']\n"),
        "tools/_a.py": "def helper():\n    return 1\n\ndef helper2():\n    return 2\n",
        "tools/_b.py": "other = 2\n",
        "tools/_stats.py": "def mean(xs):\n    return sum(xs) / len(xs)\n",
        "coded/__init__.py": "from rxpkg.coded._x import X\nY = X + 1\n",  # code of its own: counts in full
        "coded/_x.py": "X = 1\n",
        "star/__init__.py": "from rxpkg.star._s import *\n",  # which names it binds is not in the source
        "star/_s.py": "s_name = 1\n",
        "typing_only.py": "T = 1\n",
        "runtime_only.py": "R = 1\n",
    })
    base, mods = _identity_of(tmp_path)
    assert mods == ["rxpkg.coded", "rxpkg.coded._x", "rxpkg.engine", "rxpkg.runtime_only", "rxpkg.star",
                    "rxpkg.star._s", "rxpkg.tools", "rxpkg.tools._a", "rxpkg.tools._b"]

    def edited(rel: str, edit) -> str:
        path = tmp_path / "rxpkg" / rel
        before = path.read_text()
        path.write_text(edit(before))
        try:
            return _identity_of(tmp_path)[0]
        finally:
            path.write_text(before)

    def append(line: str):
        return lambda text: text + line

    # outside what the engine computes with: a module only the package's __init__ imports, another re-export
    # added to that __init__, the package the engine's module sits in, an import read only by type checkers
    assert edited("tools/_stats.py", lambda t: t.replace("len(xs)", "max(len(xs), 1)")) == base
    assert edited("tools/__init__.py", append("from rxpkg.tools._stats import mean as average\n")) == base
    assert edited("__init__.py", append("from rxpkg.tools._stats import mean\n")) == base
    assert edited("typing_only.py", append("T = 2\n")) == base
    # inside: the module a name is bound from, a module imported directly, a name re-pointed by the __init__,
    # a package with code of its own and what it imports, what a star import reaches, a run-time import
    for rel, edit in [("tools/_a.py", append("Z = 1\n")), ("tools/_b.py", append("Z = 1\n")),
                      ("tools/__init__.py", lambda t: t.replace("import helper\n", "import helper2 as helper\n")),
                      ("coded/__init__.py", append("Z = 1\n")), ("coded/_x.py", append("Z = 1\n")),
                      ("star/_s.py", append("Z = 1\n")), ("runtime_only.py", append("R = 2\n"))]:
        assert edited(rel, edit) != base, rel


def test_no_engine_hashes_the_paired_statistics_or_the_packages_it_only_passes_through():
    for root in ("ctxgauge.engines.grep", "ctxgauge.engines.bm25._engine", "ctxgauge.engines.graph._engine",
                 "ctxgauge.engines.history._engine", "ctxgauge.engines.fusion._engine",
                 "ctxgauge.engines.minilm._engine", "ctxgauge.engines.hybrid"):
        mods = computing_modules(root)
        assert not [m for m in mods if m.startswith(("ctxgauge.metrics.", "ctxgauge.engines.mcp", "ctxgauge.git._hunks"))
                    and m != "ctxgauge.metrics._lines"], root
        assert "ctxgauge.engines" not in mods and "ctxgauge.metrics" not in mods, root
        assert "ctxgauge.engines._spans_rank" in mods and "ctxgauge.engines._text.tokens" in mods, root
    assert "ctxgauge.syntax._grammars" in computing_modules("ctxgauge.engines.graph._engine")


def test_a_closure_given_back_as_roots_is_the_same_closure():
    # An engine's identity hashes code_modules() (a closure) as roots; fusion and hybrid hash a union of them.
    for root in ("ctxgauge.engines.bm25._engine", "ctxgauge.engines.graph._engine", "ctxgauge.engines.grep"):
        mods = computing_modules(root)
        assert "ctxgauge.git" in mods and "ctxgauge.git._hunks" not in mods  # git re-exports; corpus takes names
        assert computing_modules(*mods) == mods
        assert code_identity(mods) == code_identity([root])
    # a re-export package named alone counts in full
    assert "ctxgauge.git._hunks" in computing_modules("ctxgauge.git")


def test_cached_work_is_keyed_by_what_its_stage_computes_with():
    # bm25's per-blob terms and graph's parses: the keys of cached work, once moved by any metric or statistic
    terms = stage_identity(["ctxgauge.engines._text.terms", "ctxgauge.engines._text.tokens"])["modules"]
    parse = stage_identity(["ctxgauge.engines.graph._parse", "ctxgauge.engines.graph._definitions"])["modules"]
    assert "ctxgauge.engines._text.tokens" in terms and "ctxgauge.syntax._grammars" in parse
    for modules in (terms, parse):
        assert not [m for m in modules if m.startswith(("ctxgauge.metrics", "ctxgauge.engines.mcp"))]
        assert "ctxgauge.engines" not in modules and "ctxgauge.engines._registry" not in modules
