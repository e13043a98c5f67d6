"""Deep JSON an engine meets: a command engine's answer nested 100,000 levels is a breach of the contract (an
EngineError of one line), not a RecursionError (exit 70); a repository's package.json nested as deep is, to the
graph engine, no package (as a malformed one is)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.errors import EngineError


def test_an_answer_nested_too_deeply_is_an_engine_error(tmp_path: Path) -> None:
    program = tmp_path / "deep.py"
    program.write_text("import sys\nfor line in sys.stdin:\n"
                       "    sys.stdout.write('{\"ok\": true, \"x\": ' + '[' * 100000 + ']' * 100000 + '}\\n')\n"
                       "    sys.stdout.flush()\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("alpha\n")
    engine = get_engine(f"command(cmd={json.dumps(f'{sys.executable} {program}')},timeout=5)")
    try:
        with pytest.raises(EngineError) as info:
            engine.build(Corpus.from_directory(tmp_path / "c"), tmp_path / "out")
    finally:
        engine.close()
    assert "nested more than 100 levels deep" in str(info.value) and "\n" not in str(info.value)


def test_a_package_json_nested_too_deeply_is_no_package(tmp_path: Path) -> None:
    # The inspected repository's package.json is read by the graph engine: nested 100,000 deep it is not JSON
    # the engine can use (as a malformed one), never a failed build.
    root = tmp_path / "c"
    root.mkdir()
    (root / "package.json").write_text('{"name": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (root / "index.js").write_text('import x from "./a";\n')
    (root / "a.js").write_text("export default 1;\n")
    engine = get_engine("graph")
    engine.build(Corpus.from_directory(root), tmp_path / "out")
    assert [h.path for h in engine.query(tmp_path / "out", "index", 5)][:1] == ["index.js"]
