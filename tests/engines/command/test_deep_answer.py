"""Deep JSON from a command engine: an answer nested 100,000 levels is a breach of the contract (an
EngineError of one line), not a RecursionError (exit 70)."""

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
