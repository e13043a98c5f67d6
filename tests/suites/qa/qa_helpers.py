"""Helpers shared by the qa tests: the loopback fake server module, the mini battery's facts, a scripted
model. Loaded once by conftest.py as the module `qa_helpers` (tests are not a package)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _load_fake_llm():
    name = "ctxgauge_tests_fake_llm"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "providers" / "fake_llm.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


fake_llm = _load_fake_llm()

ROOT = Path(__file__).resolve().parents[3]
"""The checkout (tests/suites/qa/qa_helpers.py -> parents[3]); ../shared sits beside it."""
PUBLISHED = (ROOT / "../shared/interop/corograph/usememos-memos").resolve()
MEMOS_COMMIT = "2d01420c23372d5708904ec78e03485edb44d49b"


def memos_repo() -> Path | None:
    """A local clone (or bare git directory) of usememos/memos: $CTXGAUGE_MEMOS_REPO, or the machine's mirror."""
    for cand in (os.environ.get("CTXGAUGE_MEMOS_REPO"), ROOT.parent / ".mirror/usememos+memos/repo",
                 ROOT.parent.parent / ".mirror/usememos+memos/repo"):
        if cand and Path(cand).is_dir():
            ok = subprocess.run(["git", "--git-dir", str(cand), "cat-file", "-e", f"{MEMOS_COMMIT}^{{commit}}"],
                                capture_output=True)
            if ok.returncode == 0:
                return Path(cand)
    return None


def published() -> Path:
    if not (PUBLISHED / "repo.json").is_file():
        pytest.skip("../shared/interop/corograph is absent (a user's clone has no ../shared)")
    return PUBLISHED

Reply = fake_llm.Reply

# qid -> (file, the token the right answer contains, a question about it)
FACTS = {
    f"q{i:02d}": (f"pkg/mod{i}.py", f"value{i}x", f"What does compute_{i} in the package return?")
    for i in range(1, 11)
}
ENV = {"OPENAI_API_KEY": "sk-test-never-written", "ANTHROPIC_API_KEY": "sk-ant-never-written"}


def qid_of(text: str) -> str | None:
    """Which mini-battery question a prompt is about (by its compute_N name)."""
    for q, (_, _, prompt) in FACTS.items():
        if prompt in text:
            return q
    return None


def oracle(right: set[str], *, judge_says=None):
    """A scripted model: answers the questions in `right` with their token (tier 1 passes them) and the
    rest with a wrong word; as a judge, calls `judge_says(body)` or fails with a fail-shaped reason."""
    def respond(body: dict):
        system = fake_llm.system_text(body)
        user = fake_llm.last_user_text(body)
        if system.startswith("You grade"):
            if judge_says is not None:
                return judge_says(body)
            return json.dumps({"verdict": "fail", "reason": "Wrong constant named.", "facets": {}})
        q = qid_of(user)
        if q is None:
            return "I do not know."
        return f"It returns {FACTS[q][1]}." if q in right else "It returns nothing useful."
    return respond


SOURCE = {
    "srv/server.go": "package srv\n\nfunc Start() {\n\tstartRunners()\n}\n\nfunc startRunners() {\n\tgo tick()\n}\n",
    "srv/runner/tick.go": "package runner\n\nconst interval = 12\n",
    "lib/a/util.go": "package a\n", "lib/b/util.go": "package b\n",
}


def corograph_folder(tmp_path: Path, repo_builder, *, gold_extra: str = "", policies=None, amendments=None,
                     battery_json=None, name: str = "mini-hard") -> tuple[Path, Path, str]:
    """(repository folder, git repository, commit) in Corograph's published layout."""
    rb = repo_builder("code")
    commit = rb.commit("the code", SOURCE)
    folder = tmp_path / "pub" / "acme-srv"
    bdir = folder / "batteries" / name
    bdir.mkdir(parents=True)
    (folder / "repo.json").write_text(json.dumps({
        "commit_date": "2026-07-28T15:29:32Z", "commit_sha": commit, "public_folder": "acme-srv",
        "repo_key": "srv", "source_url": "https://example.org/acme/srv"}))
    (bdir / "questions.json").write_text(json.dumps([
        {"qid": "h01", "position": 1, "prompt": "Where are the runners started?", "output_structure": "path:line",
         "difficulty": 4, "categories": ["nameless-entry"]},
        {"qid": "h02", "position": 2, "prompt": "What is the tick interval?", "output_structure": "value",
         "difficulty": 3, "categories": ["config"]}]))
    (bdir / "gold.json").write_text(json.dumps([
        {"qid": "h01", "gold_rev": 1, "answer_gold": "startRunners in srv/server.go:7-9, called from Start (:4)"
         + gold_extra, "answer_gold_variants": None, "facet_guide": "the interval is not it (tick.go:3)"},
        {"qid": "h02", "gold_rev": 1, "answer_gold": "interval = 12 in srv/runner/tick.go:3",
         "answer_gold_variants": ["SSE"], "facet_guide": ""}]))
    (bdir / "exemplars.json").write_text(json.dumps([
        {"qid": "h01", "kind": "correct", "answer": "startRunners, srv/server.go:7", "why": "line in range",
         "adjudicated_by": "owner", "adjudicated_at": "2026-08-05T01:54:29Z"}]))
    if policies is not None:
        (bdir / "policies.json").write_text(json.dumps(policies))
    if amendments is not None:
        (bdir / "amendments.json").write_text(json.dumps(amendments))
    if battery_json is not None:
        (bdir / "battery.json").write_text(json.dumps(battery_json))
    return folder, rb.path, commit


HARNESS = r'''
import json, os, sys
sys.stdin.read()  # the question, as every harness gets it
qid = os.environ["CTXGAUGE_QID"]
data = json.load(open(sys.argv[1]))
gold = {}
for g in data["gold"] if isinstance(data, dict) else data:  # the newest revision per question
    if g["qid"] not in gold or g["gold_rev"] > gold[g["qid"]]["gold_rev"]:
        gold[g["qid"]] = g
order = [q["qid"] for q in sorted((lambda d: d["questions"] if isinstance(d, dict) else d)(
    json.load(open(sys.argv[2]))), key=lambda q: q["position"])]
shift, flag, failing = int(sys.argv[3]), sys.argv[4], sys.argv[5].split(",")
if os.path.exists(flag) and qid in failing:
    sys.stderr.write("harness lost its model\n")
    sys.exit(3)
answer = gold[order[(order.index(qid) + shift) % len(order)]]["answer_gold"]
print(json.dumps({"answer": answer, "usage": {"tokens_input": 11, "tokens_output": 5}, "tool_calls": {"grep": 2, "search": 1},
                  "cost_usd": 0.001}))
'''


def gold_harness(tmp_path: Path, battery_dir: Path, *, shift: int = 0, fail_flag: Path | None = None,
                 failing: tuple[str, ...] = ()) -> str:
    """A command arm answering each question with the gold of the question `shift` places on (0: its own);
    it exits 3 for the `failing` questions while `fail_flag` exists."""
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    flag = fail_flag or tmp_path / "no-such-flag"
    return (f"command:{sys.executable} {script} {battery_dir / 'gold.json'} {battery_dir / 'questions.json'} "
            f"{shift} {flag} {','.join(failing) or '-'}")
