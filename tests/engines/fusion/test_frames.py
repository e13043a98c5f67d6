"""_frames: stack-trace frames read from a request, mapped to corpus files, the innermost weighted most."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines.fusion._frames import DECAY, frame_files, frame_names, frame_scores, frames
from ctxgauge.engines.fusion._request import PathIndex
from ctxgauge.git import Repo

PATHS = ["src/pkg/__init__.py", "src/pkg/core.py", "src/pkg/helpers.py", "src/pkg/pathlib.py", "src/pkg/io/util.py",
         "web/app.js", "src/main.rs", "cmd/server.go", "setup.py", "tests/test_core.py"]


def test_python_frames_innermost_first_and_stdlib_dropped() -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/home/u/run.py", line 3, in <module>\n'
            '  File "/venv/lib/python3.11/site-packages/pkg/core.py", line 40, in run\n'
            '  File "/venv/lib/python3.11/site-packages/pkg/helpers.py", line 12, in helper\n'
            '  File "/usr/lib/python3.11/pathlib.py", line 1266, in open\n'
            "FileNotFoundError: x\n")
    fs = frames(text)
    assert [(f.path.rsplit("/", 1)[-1], f.function) for f in fs] == [
        ("run.py", "<module>"), ("core.py", "run"), ("helpers.py", "helper"), ("pathlib.py", "open")]
    index = PathIndex(PATHS)
    # pathlib.py is the standard library's, not the project's src/pkg/pathlib.py
    assert frame_files("/usr/lib/python3.11/pathlib.py", index) == []
    assert frame_files("C:\\Python38\\lib\\pathlib.py", index) == []
    assert frame_scores(text, index) == pytest.approx({"src/pkg/helpers.py": 1.0, "src/pkg/core.py": DECAY})
    assert frame_names(text, index) == ["run", "helper"]


def test_other_forms() -> None:
    index = PathIndex(PATHS)
    ipython = ("File ~/code/proj/src/pkg/core.py:804, in Plot.plot(self)\n"
               "File ~/code/proj/src/pkg/io/util.py:30, in fit(self, data)\n")
    assert frame_scores(ipython, index) == pytest.approx({"src/pkg/io/util.py": 1.0, "src/pkg/core.py": DECAY})
    assert frame_names(ipython, index) == ["plot", "fit"]
    old_ipython = ("~/env/lib/python3.8/site-packages/pkg/core.py in plot(self, x)\n    802 \n--> 804 y()\n"
                   "~/env/lib/python3.8/site-packages/pkg/helpers.py in helper(self)\n")
    assert frame_scores(old_ipython, index) == pytest.approx({"src/pkg/helpers.py": 1.0, "src/pkg/core.py": DECAY})
    assert frame_scores("the bug in pkg/core.py in my opinion (see below)", index) == {}
    pytest_style = "src/pkg/core.py:12: in run\n    x()\nsrc/pkg/helpers.py:7: ValueError\n"
    assert max(frame_scores(pytest_style, index).items(), key=lambda x: x[1])[0] == "src/pkg/helpers.py"
    js = "TypeError: x\n    at render (/srv/web/app.js:10:5)\n    at Object.<anonymous> (/srv/node_modules/x/y.js:1:1)\n"
    assert frame_scores(js, index) == {"web/app.js": 1.0}
    rust = "thread 'main' panicked at src/main.rs:2:5:\nboom\n"
    assert frame_scores(rust, index) == {"src/main.rs": 1.0}
    go = "goroutine 1 [running]:\nmain.serve()\n\t/home/u/proj/cmd/server.go:42 +0x1d\n"
    assert frame_scores(go, index) == {"cmd/server.go": 1.0}
    # a bare one-component frame names a root file only; a bare `core.py:3` is no frame of src/pkg/core.py
    assert frame_scores("setup.py:3: warning", index) == {"setup.py": 1.0}
    assert frame_scores("DEBUG core.py:3 connecting", index) == {}


def test_consecutive_frames_in_one_file_are_one_step_and_traces_are_apart() -> None:
    index = PathIndex(PATHS)
    text = ('Traceback (most recent call last):\n  File "src/pkg/core.py", line 1, in a\n'
            '  File "src/pkg/helpers.py", line 2, in b\n  File "src/pkg/helpers.py", line 9, in c\n'
            "ValueError\n\nAnd later:\n\nTraceback (most recent call last):\n"
            '  File "src/pkg/io/util.py", line 5, in d\nKeyError\n')
    # both traces' innermost frames weigh 1; helpers.py's two frames do not push core.py two steps out
    assert frame_scores(text, index) == pytest.approx(
        {"src/pkg/helpers.py": 1.0, "src/pkg/core.py": DECAY, "src/pkg/io/util.py": 1.0})


def test_fusion_ranks_the_innermost_project_frame_first(repo_builder, tmp_path: Path) -> None:
    b = repo_builder("frames")
    b.commit("initial import", {
        "pkg/__init__.py": "",
        "pkg/session.py": "from pkg.adapter import send\n\ndef request(url):\n    return send(url)\n",
        "pkg/adapter.py": "def send(url):\n    return decode(url)\n\ndef decode(raw):\n    return raw.decode()\n",
        "pkg/decoding.py": "def decode_chunk(raw):\n    '''decode a raw chunk'''\n    return raw\n",
    })
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    eng = get_engine("fusion")
    eng.build(corpus, tmp_path / "f")
    text = ("Calling request with bytes fails while decoding the raw chunk of a response, which decodes the "
            "raw chunk badly; the session and the decoding helper both look involved in the decoding of "
            "the raw chunk here:\n\nTraceback (most recent call last):\n"
            '  File "/usr/lib/python3/site-packages/pkg/session.py", line 4, in request\n'
            '  File "/usr/lib/python3/site-packages/pkg/adapter.py", line 5, in decode\n'
            "AttributeError: 'str' object has no attribute 'decode'\n")
    comp = eng.components(tmp_path / "f", text)
    assert comp["frame"] == pytest.approx({"pkg/adapter.py": 1.0, "pkg/session.py": DECAY})
    assert eng.query(tmp_path / "f", text, 1)[0].path == "pkg/adapter.py"
    off = get_engine("fusion(long_frame=0)")
    off.build(corpus, tmp_path / "g")
    assert off.query(tmp_path / "g", text, 1)[0].path != "pkg/adapter.py"  # the frames decided it
    assert off.identity() != eng.identity()
