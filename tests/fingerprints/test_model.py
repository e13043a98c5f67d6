"""The fingerprint model's vocabularies: written once, read by every module that needs them."""

from __future__ import annotations

import ast
from pathlib import Path

import ctxgauge
from ctxgauge.fingerprints import IDENTITY_SOURCES

SRC = Path(ctxgauge.__file__).resolve().parent


def test_identity_sources_are_strongest_first():
    assert IDENTITY_SOURCES == ("content-hash", "git-sha", "declared")


def test_identity_sources_are_written_out_in_one_module():
    # A second hand-written copy drifts: the contract checker, the command engine and hybrid's weakest-source
    # rule must accept and order exactly what the fingerprint format defines.
    copies = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if len(values & set(IDENTITY_SOURCES)) >= 2:
                    copies.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert len(copies) == 1 and copies[0].startswith("fingerprints/_model.py:"), copies


def test_the_engines_use_the_fingerprint_vocabulary():
    import ctxgauge.engines.command._engine as command
    from ctxgauge.engines import _contract, hybrid

    assert _contract.IDENTITY_SOURCES is command.IDENTITY_SOURCES is hybrid.IDENTITY_SOURCES is IDENTITY_SOURCES
