"""Every example in docs/ runs: the pages are checked, not trusted.

Each page's fenced blocks run in order in one fresh directory:
- a block whose info string names a file (```yaml cases.yaml```, ```python my_engine.py```) is written there;
- a ```sh``` block runs with bash (`set -euo pipefail`), `ctxgauge` on the PATH;
- a plain ```python``` block is executed (after the files above it are written), in that directory.
A page whose example breaks fails here, naming the page and the block.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.M | re.S)
# Pages whose examples need what a default test run lacks (a model, a fetched repository) list them here.
NOT_RUN: dict[str, str] = {}


def _blocks(page: Path) -> list[tuple[str, str, str]]:
    """(language, file name or '', body) of every fenced block, in page order."""
    out = []
    for m in FENCE.finditer(page.read_text(encoding="utf-8")):
        info = m.group(1).split()
        lang, name = (info[0] if info else ""), (info[1] if len(info) > 1 else "")
        out.append((lang, name, m.group(2)))
    return out


PAGES = sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_RUN)


def test_every_page_is_checked_or_says_why_not():
    assert PAGES, "docs/ has no pages"
    assert set(NOT_RUN) <= {p.name for p in DOCS.glob("*.md")}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Ada",
           "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.org", "COLUMNS": "120"}
    monkeypatch.chdir(tmp_path)
    for i, (lang, name, body) in enumerate(_blocks(page)):
        where = f"{page.name}, block {i + 1} ({lang} {name})".strip()
        if name:
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
        elif lang == "sh":
            r = subprocess.run(["bash", "-c", "set -euo pipefail\n" + body], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, f"{where} failed:\n{r.stdout}\n{r.stderr}"
        elif lang == "python":
            script = tmp_path / f".example-{i}.py"
            script.write_text(body, encoding="utf-8")
            try:
                runpy.run_path(str(script), run_name="__main__")
            except Exception as exc:  # the page and block, then the error itself
                raise AssertionError(f"{where} raised {exc!r}") from exc


def test_readme_lists_every_page_and_nothing_points_outside_the_repository():
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    for page in DOCS.glob("*.md"):
        assert f"(docs/{page.name})" in readme, f"README does not link docs/{page.name}"
        assert "../shared" not in page.read_text(encoding="utf-8"), page.name
    assert "../shared" not in readme  # a user's clone has no ../shared
