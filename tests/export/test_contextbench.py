"""ContextBench predictions from a finished cases run, pinned by hand, and (opt-in) ContextBench's own evaluator
on the same inputs against ctxgauge's span metrics.

The scenario: one real repository (a.py 10 lines, b.py 4, c.py 6), three instances, and a command engine
that answers each request with fixed hits:

| instance | gold lines | the engine's context (top 10) |
| --- | --- | --- |
| acme__shop-1 | a.py 2-6, b.py 1 | a.py 4-8, c.py 1-2, b.py whole (1-4) |
| acme__shop-2 | c.py 3-4, a.py 9-10 | c.py whole (1-6), b.py 2 |
| acme__shop-3 | a.py 1 | nothing |

By hand: shop-1 covers a.py 4-6 and b.py 1 (4 of 6 gold lines, 4 of 11 context lines; files 2 of 2 gold, 2
of 3 returned); shop-2 covers c.py 3-4 (2 of 4 gold lines, 2 of 7 context lines; files 1 of 2, 1 of 2);
shop-3 covers nothing (0 of 1; an empty context).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.metrics.spans import Gold, aggregate, context_figures, span_context

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import RepoBuilder  # noqa: E402

ENGINE = '''
import json, sys
ANSWERS = {
    "alpha": [{"path": "a.py", "score": 3.0, "spans": [{"start": 4, "end": 8}]},
              {"path": "c.py", "score": 2.0, "spans": [{"start": 1, "end": 2}]},
              {"path": "b.py", "score": 1.0}],
    "beta": [{"path": "c.py", "score": 2.0}, {"path": "b.py", "score": 1.0, "spans": [{"start": 2, "end": 2}]}],
    "gamma": [],
}
for line in sys.stdin:
    r = json.loads(line)
    if r["op"] == "build":
        out = {"ok": True}
    elif r["op"] == "identity":
        out = {"ok": True, "identity": {"id": "fixed-answers-1", "source": "declared"}}
    elif r["op"] == "query":
        out = {"ok": True, "hits": ANSWERS[r["text"]]}
    else:
        out = {"ok": False, "error": "unsupported"}
    print(json.dumps(out), flush=True)
'''

GOLD = {"acme__shop-1": ("alpha", [("a.py", 2, 6), ("b.py", 1, 1)]),
        "acme__shop-2": ("beta", [("c.py", 3, 4), ("a.py", 9, 10)]),
        "acme__shop-3": ("gamma", [("a.py", 1, 1)])}


def ctxgauge(*args):
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """Built and run once for the module (the tests only read it, or write files of their own names)."""
    tmp_path = tmp_path_factory.mktemp("cb")
    shop = RepoBuilder(tmp_path / "repos" / "acme__shop")
    lines = lambda p, n: "".join(f"{p}{i} = {i}\n" for i in range(1, n + 1))  # noqa: E731
    commit = shop.commit("base", {"a.py": lines("a", 10), "b.py": lines("b", 4), "c.py": lines("c", 6)})
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({
        # What ContextBench's own evaluator reads from a JSON lines gold file: `inst_id` (not instance_id),
        # `repo_url` (here the clone), `commit` (not base_commit) and `gold_ctx` (gold_context is the parquet's).
        "inst_id": iid, "repo": "acme/shop", "problem_statement": query, "repo_url": str(shop.path), "commit": commit,
        "gold_ctx": [{"file": f, "start_line": s, "end_line": e} for f, s, e in spans],
    }) + "\n" for iid, (query, spans) in GOLD.items()))
    (tmp_path / "engine.py").write_text(ENGINE)
    run = tmp_path / "run"
    r = ctxgauge("cases", str(gold), "--repos", str(tmp_path / "repos"), "--engine",
                 f"command(cmd='{sys.executable} {tmp_path / 'engine.py'}')", "--out", str(run))
    assert r.returncode in (0, 1), r.stderr
    return tmp_path, gold, run, shop.path


def step(files, spans):
    spans = {p: [{"start": s, "end": e}] for p, s, e in spans}
    return {"pred_steps": [{"files": files, "spans": spans}], "pred_files": files, "pred_spans": spans}


EXPECTED = [
    {"instance_id": "acme__shop-1",
     "traj_data": step(["a.py", "c.py", "b.py"], [("a.py", 4, 8), ("c.py", 1, 2), ("b.py", 1, 4)])},
    {"instance_id": "acme__shop-2", "traj_data": step(["c.py", "b.py"], [("c.py", 1, 6), ("b.py", 2, 2)])},
    {"instance_id": "acme__shop-3", "traj_data": step([], [])},
]


def test_predictions_are_contextbench_records_written_by_hand(scenario):
    tmp, _, run, _ = scenario
    out = tmp / "pred.jsonl"
    r = ctxgauge("runs", "contextbench", str(run), "-o", str(out), "--repos", str(tmp / "repos"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"out": str(out), "predictions": 3, "k": 10, "left_out": {}}
    assert [json.loads(x) for x in out.read_text().splitlines()] == EXPECTED
    # The whole-file span is counted at the unit's revision: the clone itself works as --repos too.
    again = tmp / "pred.json"
    assert ctxgauge("runs", "contextbench", str(run), "-o", str(again), "--repos", str(tmp / "repos" / "acme__shop")
                    ).returncode == 0
    assert json.loads(again.read_text()) == EXPECTED
    # -k 1: the top file only.
    top = tmp / "top.jsonl"
    assert ctxgauge("runs", "contextbench", str(run), "-o", str(top), "-k", "1", "--repos", str(tmp / "repos")
                    ).returncode == 0
    assert json.loads(top.read_text().splitlines()[1]) == {"instance_id": "acme__shop-2",
                                                           "traj_data": step(["c.py"], [("c.py", 1, 6)])}


@pytest.mark.parametrize("args, message", [
    ([], "b.py is handed over whole; writing it as a line span needs its line count: give --repos"),
    (["--repos", "{tmp}/nowhere"], "no clone of corpus 'acme__shop' there"),
])
def test_a_whole_file_needs_the_clone(scenario, args, message):
    tmp, _, run, _ = scenario
    r = ctxgauge("runs", "contextbench", str(run), "-o", str(tmp / "p.jsonl"), *[a.format(tmp=tmp) for a in args])
    assert r.returncode == 2 and message in r.stderr and r.stderr.strip().count("\n") == 0
    assert not (tmp / "p.jsonl").exists()


def test_the_output_rule_holds(scenario):
    tmp, _, run, _ = scenario
    repos = ["--repos", str(tmp / "repos")]
    for name, message in (("output.jsonl", "as an agent's trajectory"), ("p.txt", "name a .jsonl file")):
        r = ctxgauge("runs", "contextbench", str(run), "-o", str(tmp / name), *repos)
        assert r.returncode == 2 and message in r.stderr
    (tmp / "mine.jsonl").write_text("keep\n")
    r = ctxgauge("runs", "contextbench", str(run), "-o", str(tmp / "mine.jsonl"), *repos)
    assert r.returncode == 2 and "--force" in r.stderr and (tmp / "mine.jsonl").read_text() == "keep\n"
    assert ctxgauge("runs", "contextbench", str(run), "-o", str(tmp / "mine.jsonl"), "--force", *repos).returncode == 0
    r = ctxgauge("runs", "contextbench", str(run), "-o", str(run / "units.jsonl"), "--force", *repos)
    assert r.returncode == 2 and "is an input of this command" in r.stderr


def _ctxgauge_figures(clone: Path, predictions: list[dict]) -> tuple[dict, dict]:
    """ctxgauge's span metrics (`metrics.spans`, @10) on the predictions' contexts: per unit and micro."""
    class Hit:
        def __init__(self, path, spans):
            self.path, self.spans = path, spans

    names = ["file_coverage@10", "file_precision@10", "line_coverage@10", "line_precision@10"]
    per_unit, pairs = {}, {n: [] for n in names}
    for rec in predictions:
        _, spans = GOLD[rec["instance_id"]]
        gold = Gold.of({f for f, _, _ in spans}, {f: [(s, e) for g, s, e in spans if g == f] for f, _, _ in spans})
        td = rec["traj_data"]
        hits = [Hit(p, tuple((x["start"], x["end"]) for x in td["pred_spans"].get(p, ()))) for p in td["pred_files"]]
        figs = context_figures(names, span_context(hits, lambda p: (clone / p).read_bytes()), gold)
        per_unit[rec["instance_id"]] = {n: (v[0] / v[1] if v[1] else 0.0) for n, v in figs.items()}
        for n in names:
            pairs[n].append(figs[n])
    micro = {n: aggregate(n.replace("@", "_micro@"), pairs[n]) for n in names}
    return per_unit, micro


def test_ctxgauge_figures_by_hand(scenario):
    _, _, _, clone = scenario
    per_unit, micro = _ctxgauge_figures(clone, EXPECTED)
    assert per_unit["acme__shop-1"] == pytest.approx({"file_coverage@10": 1.0, "file_precision@10": 2 / 3,
                                                      "line_coverage@10": 4 / 6, "line_precision@10": 4 / 11})
    assert per_unit["acme__shop-2"] == pytest.approx({"file_coverage@10": 0.5, "file_precision@10": 0.5,
                                                      "line_coverage@10": 2 / 4, "line_precision@10": 2 / 7})
    assert per_unit["acme__shop-3"] == {"file_coverage@10": 0.0, "file_precision@10": 0.0,
                                        "line_coverage@10": 0.0, "line_precision@10": 0.0}
    assert micro == pytest.approx({"file_coverage@10": 3 / 5, "file_precision@10": 3 / 5,
                                   "line_coverage@10": 6 / 11, "line_precision@10": 6 / 18})


# ---- opt-in: ContextBench's own evaluator on the same inputs -------------------------------------------------

def _evaluator_python(tmp: Path, src: Path) -> Path:
    """A virtual environment with ContextBench's requirements (it pins an older tree-sitter): the one
    CTXGAUGE_CONTEXTBENCH_VENV names, else a new one made with `python -m venv` and pip."""
    given = os.environ.get("CTXGAUGE_CONTEXTBENCH_VENV")
    venv = Path(given) if given else tmp / "cb-venv"
    if not given:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(src / "requirements.txt")],
                       check=True)
    return venv / "bin" / "python"


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CTXGAUGE_CONTEXTBENCH_SRC"),
                    reason="set CTXGAUGE_CONTEXTBENCH_SRC to a ContextBench source tree")
def test_contextbench_evaluator_agrees_where_the_definitions_do(scenario):
    tmp, gold, run, clone = scenario
    src = Path(os.environ["CTXGAUGE_CONTEXTBENCH_SRC"]).resolve()
    pred = tmp / "cb-pred.jsonl"
    assert ctxgauge("runs", "contextbench", str(run), "-o", str(pred), "--repos", str(tmp / "repos")).returncode == 0
    python = _evaluator_python(tmp, src)
    out = tmp / "cb-results.jsonl"
    r = subprocess.run([str(python), "-m", "contextbench.evaluate", "--gold", str(gold), "--pred", str(pred),
                        "--cache", str(tmp / "cb-cache"), "--out", str(out)], cwd=src, capture_output=True, text=True,
                       env={**os.environ, "CONTEXTBENCH_TMP_ROOT": str(tmp / "cb-tmp"), "PYTHONPATH": str(src)})
    assert r.returncode == 0, r.stderr[-3000:]
    theirs = {d["instance_id"]: d for d in map(json.loads, out.read_text().splitlines())}
    per_unit, _ = _ctxgauge_figures(clone, EXPECTED)
    level = {"file": "file", "line": "line"}
    for iid in ("acme__shop-1", "acme__shop-2"):
        final = theirs[iid]["final"]
        for ours_level, their_level in level.items():
            assert final[their_level]["coverage"] == pytest.approx(per_unit[iid][f"{ours_level}_coverage@10"])
            assert final[their_level]["precision"] == pytest.approx(per_unit[iid][f"{ours_level}_precision@10"])
    # Departure: their span level weighs bytes (a10 = 10 is longer than a1 = 1), ctxgauge's line level lines.
    assert theirs["acme__shop-2"]["final"]["span"]["coverage"] == pytest.approx(14 / 30)
    assert per_unit["acme__shop-2"]["line_coverage@10"] == 0.5
    # Departure: no definition in the gold spans scores symbol coverage and precision 1.0 there (ctxgauge has
    # no block level yet; an empty gold level is undefined here, never 1.0).
    assert theirs["acme__shop-1"]["final"]["symbol"] == {"coverage": 1.0, "precision": 1.0, "intersection": 0,
                                                         "gold_size": 0, "pred_size": 0}
    # Departure: an empty context is an error there (left out of every figure), a unit scoring 0 here.
    assert theirs["acme__shop-3"] == {"instance_id": "acme__shop-3", "error": "no_context_extracted"}
    # Their headline is the ratio of sums over the instances they scored: ctxgauge's _micro family over
    # the same two units.
    _, micro_two = _ctxgauge_figures(clone, EXPECTED[:2])
    summary = r.stderr[r.stderr.index("EVALUATION:"):]
    assert "EVALUATION: 2/3 instances" in summary
    assert f"file     Coverage={micro_two['file_coverage@10']:.3f} Precision={micro_two['file_precision@10']:.3f}" in summary
    assert f"line     Coverage={micro_two['line_coverage@10']:.3f} Precision={micro_two['line_precision@10']:.3f}" in summary
