"""Engine plugins: a tiny package (tests/plugin_pkg) installed into a temporary directory, never the venv.

The checks run in a subprocess whose PYTHONPATH holds that directory, so the entry points are found the way
an installed plugin's would be, and this test process (and every other test) never sees them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN_SRC = Path(__file__).parents[1] / "plugin_pkg"

CHECK = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines import Engine, describe_engines, engine_names, get_engine
    from ctxgauge.errors import UserError

    root = Path(sys.argv[1])
    engine = get_engine("demo_plugin(min_length=3)")
    engine.build(Corpus.from_directory(root / "corpus"), root / "out")
    hits = engine.query(root / "out", "parser for the lexer", 5)
    try:
        get_engine("broken_plugin")
        broken = None
    except UserError as exc:
        broken = str(exc)
    infos = {i.name: i.to_dict() for i in describe_engines()}
    print(json.dumps({
        "subclass": isinstance(engine, Engine),
        "name": engine.name,
        "identity": engine.identity(),
        "hits": [h.to_dict() for h in hits],
        "names": engine_names(),
        "demo": infos.get("demo_plugin"),
        "broken_info": infos.get("broken_plugin"),
        "broken": broken,
    }))
""")


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin installed with pip into a temporary target (offline, no build isolation)."""
    tmp = tmp_path_factory.mktemp("plugin")
    src = tmp / "src"
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources it builds.
    shutil.copytree(PLUGIN_SRC, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--no-cache-dir", "--target", str(site), str(src)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        if any(word in "\n".join(tail) for word in ("setuptools", "wheel", "BackendUnavailable")):
            pytest.skip("cannot build the plugin offline (setuptools or wheel missing): " + " | ".join(tail))
        pytest.fail("pip could not install tests/plugin_pkg:\n" + (proc.stderr or proc.stdout))
    return site


@pytest.fixture(scope="module")
def report(plugin_site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("plugin-run")
    for rel in ("src/parser.py", "src/lexer.py", "src/lexer_tables.py", "README.md"):
        (root / "corpus" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "corpus" / rel).write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(plugin_site), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", CHECK, str(root)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_plugin_builds_and_queries(report: dict) -> None:
    assert report["subclass"] is True
    assert report["name"] == "demo_plugin(min_length=3)"
    # "parser", "the", "lexer" are >= 3 letters; each path scores the words it contains, ties by path.
    assert report["hits"] == [
        {"path": "src/lexer.py", "score": 1.0},
        {"path": "src/lexer_tables.py", "score": 1.0},
        {"path": "src/parser.py", "score": 1.0},
    ]
    assert report["identity"]["source"] == "content-hash"


def test_plugin_is_listed_as_a_plugin(report: dict) -> None:
    assert {"demo_plugin", "broken_plugin"} <= set(report["names"])
    demo = report["demo"]
    assert demo["origin"] == "plugin" and demo["available"] is True
    assert demo["identity"]["id"].startswith("sha256:")


def test_broken_plugin_is_a_user_error_naming_it(report: dict) -> None:
    message = report["broken"]
    assert message is not None, "get_engine('broken_plugin') did not raise UserError"
    assert "broken_plugin" in message and "nonexistent_dependency" in message
    assert "Traceback" not in message and "\n" not in message
    info = report["broken_info"]
    assert info["origin"] == "plugin" and info["available"] is False and "broken_plugin" in info["reason"]


def test_the_venv_is_untouched() -> None:
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="ctxgauge.engines")}
    assert not {"demo_plugin", "broken_plugin"} & names
