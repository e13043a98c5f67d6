"""README's `--json` shapes are a contract: each command's printed top-level keys are the ones README lists.

The section "`--json` shapes" is parsed (each "`COMMAND`: `{...}`"; a key marked `?` may be absent) and each
command is run for real with `--json` on the bundled sample: every key it prints is documented, and every
documented key it must print is there. A command this file does not run is named in NOT_RUN with why, so
a command added to the section without a check here fails too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
INPUTS = ROOT / "tests" / "records" / "fixtures" / "v2-inputs"

NOT_RUN = {
    "qa adjudicate": "needs a judged `adjudicate` verdict (a scripted judge): tests/suites/qa checks its output",
    "demo": "runs every engine over the sample (a minute): tests/cli/test_demo_output.py runs it",
}


def _shape_keys(text: str, start: int) -> tuple[set[str], set[str], int]:
    """(required, optional) top-level keys of the `{...}` starting at text[start], and where it ends."""
    required, optional = set(), set()
    depth, i, prev = 0, start, ""
    while i < len(text):
        ch = text[i]
        if ch in "{[":
            depth += 1
            prev = ch
        elif ch in "}]":
            depth -= 1
            prev = ch
            if depth == 0:
                return required, optional, i
        elif ch == '"':
            end = text.index('"', i + 1)
            if depth == 1 and prev in "{,":
                key = text[i + 1:end]
                (optional if text[end + 1:end + 2] == "?" else required).add(key)
            i, prev = end, '"'
        elif not ch.isspace():
            prev = ch
        i += 1
    raise AssertionError(f"unbalanced shape at {start}")


def documented() -> dict[str, tuple[set[str], set[str]]]:
    """Command -> (required keys, optional keys), from README's `--json` section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### `--json` shapes"):]
    section = section[:section.index("\n## ")]
    out = {}
    for m in re.finditer(r"`([a-z][a-z -]*[a-z])`: `\{", section):
        required, optional, _ = _shape_keys(section, m.end() - 1)
        out[m.group(1)] = (required, optional)
    return out


def test_the_section_is_parsed():
    shapes = documented()
    assert {"query", "engines", "replay", "cases", "determinism", "qa run", "cache show", "cache prune",
            "replay --repos", "compare"} <= set(shapes)
    assert shapes["replay"][1] == {"comparison", "gate", "misses", "budget_curve"} and "run_dir" in shapes["replay"][0]
    assert shapes["cases"][1] == {"comparison", "misses", "budget_curve"}


def _cli(*args: str, cwd: Path, codes: tuple[int, ...] = (0, 1, 6, 7)) -> dict:
    env = {**os.environ, "COLUMNS": "120", "CTXGAUGE_CACHE_DIR": str(cwd / ".cache")}
    r = subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd, env=env,
                       timeout=120)
    assert r.returncode in codes, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def printed(tmp_path_factory, sample_repo) -> dict[str, dict]:
    """Command -> what it printed with --json, each run once on the sample."""
    work = tmp_path_factory.mktemp("json-contract")
    subprocess.run(["git", "clone", "-q", str(sample_repo), str(work / "shelfd")], check=True)
    (work / "cases.yaml").write_bytes((INPUTS / "cases.yaml").read_bytes())
    (work / "repos.txt").write_text("shelfd - 2 shelfd\n", encoding="utf-8")
    out = {
        "query": _cli("query", "shelfd", "late fee", "--engine", "grep", "-k", "3", "--json", cwd=work),
        "engines": _cli("engines", "--json", cwd=work),
        "check": _cli("check", "grep", "--json", cwd=work),
        "replay": _cli("replay", "shelfd", "--engine", "grep", "--vs", "bm25", "-k", "5", "--depth", "5",
                       "--commits", "2", "--out", "r", "--json", cwd=work),
        "replay --repos": _cli("replay", "--repos", "repos.txt", "--engine", "grep", "-k", "5", "--depth", "5",
                               "--out", "many", "--json", cwd=work),
        "cases": _cli("cases", "cases.yaml", "--engine", "grep", "--vs", "bm25", "-k", "5", "--depth", "5",
                      "--out", "c", "--json", cwd=work),
        "determinism": _cli("determinism", "shelfd", "--engine", "grep", "--query-count", "1", "--rebuilds", "2",
                            "--trials", "2", "-k", "3", "--out", "d", "--json", cwd=work),
        "qa run": _cli("qa", "run", "shelfd", "--repo", "shelfd", "--arm", "none", "--out", "q", "--json", cwd=work),
        "cache show": _cli("cache", "show", "--json", cwd=work),
        "cache prune": _cli("cache", "prune", "--json", cwd=work),
    }
    fingerprint = next((work / "d" / "fingerprints").glob("*.json"))
    # A fingerprint against itself: REFUSED (exit 5, nothing independent to compare), still the --json shape.
    out["compare"] = _cli("compare", str(fingerprint), str(fingerprint), "--json", cwd=work, codes=(0, 1, 3, 4, 5))
    return out


def test_every_documented_command_is_run_or_named(printed):
    assert set(documented()) == set(printed) | set(NOT_RUN)


@pytest.mark.parametrize("command", sorted(set(documented()) - set(NOT_RUN)))
def test_a_commands_json_keys_are_the_documented_ones(printed, command):
    required, optional = documented()[command]
    got = set(printed[command])
    assert got - required - optional == set(), f"{command}: printed but not in README's --json section"
    assert required - got == set(), f"{command}: documented but not printed"


@pytest.mark.parametrize("command, units", [("replay", "commits"), ("cases", "cases")])
def test_the_context_keys_readme_names_are_printed(printed, command, units):
    """README names, for replay and cases, the context keys of issue 37: the summary's context figures,
    each unit's gold lines and context, and the budget curve per engine."""
    out = printed[command]
    for key in ("line_coverage@5", "file_coverage@5", "line_precision@5", "file_precision@5",
                "line_coverage_tokens@4000", "file_precision_tokens@16000", "gold_lines_per_1k_tokens@1000",
                "line_coverage_auc", "line_coverage_micro@5", "line_coverage_tokens_micro@4000"):
        assert key in out["summary"], key
    assert all("gold_lines" in u and set(u["context"]) == {"pairs", "packed", "curve"}
               for u in out[units] if u["status"] == "ok")
    if not any(u.get("gold_lines") for u in out[units]):  # the sample's cases.yaml labels no lines
        assert "budget_curve" not in out
        return
    assert set(out["budget_curve"]) == {"grep", "bm25"}
    assert set(out["budget_curve"]["grep"][0]) == {"budget", "mean", "low", "high"}
