"""history: votes of subject-similar earlier commits, the prior, co-change; and that it never sees the future."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines.history._model import HistoryModel, PastCommit, extract
from ctxgauge.git import Repo



def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _history_repo(builder):
    b = builder("hist")
    b.commit("initial import", {"src/parser.py": "def parse(): pass\n", "src/render.py": "def render(): pass\n",
                                "src/cache.py": "x = 1\n", "docs/guide.md": "guide\n"})
    b.commit("parser: handle empty input", {"src/parser.py": "def parse(): return None\n"})
    b.commit("render tables with borders", {"src/render.py": "def render(): return 1\n"})
    b.commit("parser: handle unicode input", {"src/parser.py": "def parse(): return 2\n",
                                              "src/cache.py": "x = 2\n"})
    return b


def test_vote_is_the_subject_bm25_over_files_formula() -> None:
    commits = [PastCommit(("parser", "handl", "input"), ("a.py", "b.py"), 0),
               PastCommit(("render", "tabl"), ("c.py",), 1),
               PastCommit(("parser", "fix"), ("a.py",), 2)]
    model = HistoryModel(commits, neighbours=10)
    n, avg = 3, (3 + 2 + 2) / 3

    def bm25(tf: int, df: int, length: int) -> float:
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))

    s0, s2 = bm25(1, 2, 3), bm25(1, 2, 2)  # "parser" occurs in commits 0 and 2
    vote = model.vote(["parser"])
    assert vote == pytest.approx({"a.py": s0 / math.sqrt(2) + s2 / 1, "b.py": s0 / math.sqrt(2)})
    assert "c.py" not in vote


def test_hub_divides_a_files_votes_by_its_change_count() -> None:
    # a.py changes in every commit (a hub): with hub 0.5 its votes shrink by sqrt(3), b.py's (one change) stay.
    commits = [PastCommit(("parser", "fix"), ("a.py", "b.py"), 0), PastCommit(("render",), ("a.py",), 1),
               PastCommit(("cache",), ("a.py",), 2)]
    model = HistoryModel(commits)
    plain, rare = model.vote(["parser"]), model.vote(["parser"], hub=0.5)
    assert plain["a.py"] == pytest.approx(plain["b.py"])
    assert rare == pytest.approx({"a.py": plain["a.py"] / math.sqrt(3), "b.py": plain["b.py"]})


def test_prior_halves_every_half_life_counted_in_commits() -> None:
    commits = [PastCommit((), ("a.py",), 0), PastCommit((), ("a.py", "b.py"), 10)]
    prior = HistoryModel(commits, half_life=10).prior()
    assert prior == pytest.approx({"a.py": 1.0 + 0.5, "b.py": 0.5})


def test_cochange_is_the_share_of_a_seeds_commits() -> None:
    commits = [PastCommit((), ("a.py", "b.py"), 0), PastCommit((), ("a.py", "c.py"), 1),
               PastCommit((), ("a.py",), 2), PastCommit((), ("b.py", "c.py"), 3)]
    co = HistoryModel(commits).cochange({"a.py": 1.0})
    assert co == pytest.approx({"b.py": 1 / 3, "c.py": 1 / 3})


def test_extract_follows_renames_and_drops_sweeps(repo_builder) -> None:
    b = repo_builder("ren")
    b.commit("add old", {"old.py": "a = 1\n" * 20})
    b.commit("tweak old", {"old.py": "a = 1\n" * 20 + "b = 2\n"})
    b.commit("move old to new", {}, renames={"old.py": "new.py"})
    b.commit("sweep", {f"f{i}.py": "x\n" for i in range(5)})
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    past = extract(corpus.history.commits(), set(corpus.paths), max_files=3)
    subjects = [(c.terms, c.files) for c in past]
    assert (("tweak", "old"), ("new.py",)) in subjects  # the old path is today's new.py
    assert all(len(c.files) <= 3 for c in past)  # the five-file sweep says nothing


def test_history_ranks_what_similar_commits_changed(repo_builder, tmp_path: Path) -> None:
    b = _history_repo(repo_builder)
    corpus = Corpus.from_git(Repo(b.path), "HEAD")
    eng = get_engine("history")
    eng.build(corpus, tmp_path / "h")
    hits = eng.query(tmp_path / "h", "parser crashes on binary input", 10)
    assert hits[0].path == "src/parser.py"
    assert "src/render.py" not in [h.path for h in hits]


def test_cannot_see_the_future(repo_builder, tmp_path: Path) -> None:
    """A clone holding only the parent's ancestry ranks exactly as the full repository does, although the
    full one has a later commit and a side branch whose subjects name the answer."""
    b = _history_repo(repo_builder)
    parent = git(b.path, "rev-parse", "HEAD").strip()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-local", "--single-branch", str(b.path), str(clone)], check=True,
                   capture_output=True)
    # The future: a later commit on main and a side branch, both saying where the answer is.
    b.commit("render: fix the zebra overflow", {"src/render.py": "def render(): return 'zebra'\n"})
    git(b.path, "checkout", "-q", "-b", "side", parent)
    b.commit("zebra overflow lives in cache", {"src/cache.py": "zebra = 1\n"})
    git(b.path, "checkout", "-q", "main")
    request = "zebra overflow in the parser"
    rankings = []
    for path in (clone, b.path):
        corpus = Corpus.from_git(Repo(path), parent)
        for spec in ("history", "fusion(graph=0,define=0)"):
            eng = get_engine(spec)
            eng.build(corpus, tmp_path / f"{path.name}-{spec}")
            rankings.append([(h.path, h.score) for h in eng.query(tmp_path / f"{path.name}-{spec}", request, 10)])
    assert rankings[:2] == rankings[2:]
    assert rankings[0]  # it did rank something: the parser commits share "parser"
    assert (tmp_path / f"clone-history" / "history.json").read_bytes() == \
        (tmp_path / f"{b.path.name}-history" / "history.json").read_bytes()


def test_build_is_byte_identical_and_update_equals_rebuild(repo_builder, tmp_path: Path) -> None:
    b = _history_repo(repo_builder)
    repo = Repo(b.path)
    old, new = Corpus.from_git(repo, "HEAD~1"), Corpus.from_git(repo, "HEAD")
    eng = get_engine("history")
    eng.build(old, tmp_path / "u")
    eng.update(tmp_path / "u", new, old.changes_to(new))
    get_engine("history").build(new, tmp_path / "fresh")
    get_engine("history").build(new, tmp_path / "again")
    art = lambda d: (tmp_path / d / "history.json").read_bytes()  # noqa: E731
    assert art("u") == art("fresh") == art("again")
    data = json.loads(art("fresh"))
    assert data["rev"] == new.rev and "time" not in json.dumps(data)


def test_directory_corpus_has_no_history(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.py").write_text("x = 1\n")
    eng = get_engine("history")
    eng.build(Corpus.from_directory(tmp_path / "d"), tmp_path / "out")
    assert eng.query(tmp_path / "out", "anything", 5) == []


@pytest.mark.parametrize("spec", ["history", "fusion"])
def test_contract_via_check(spec: str, sample_repo: Path) -> None:
    from typer.testing import CliRunner

    from ctxgauge.cli import app

    result = CliRunner().invoke(app, ["check", spec, "--source", str(sample_repo), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 0, [c for c in report["checks"] if c["status"] != "pass"]
    assert report["passed"] is True
