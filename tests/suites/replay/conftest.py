"""One replay of the whole bundled sample (bm25 vs grep), shared by the tests that read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.suites.replay import ReplayConfig, ReplayResult, replay


@pytest.fixture(scope="session")
def sample_replay(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> ReplayResult:
    """Every eligible commit of the sample, bm25 measured against grep, with TREC files."""
    out = tmp_path_factory.mktemp("sample-replay")
    return replay(ReplayConfig(repo=sample_repo, engine="bm25", vs="grep", commits=None, out=out / "run",
                               trec=out / "trec"))
