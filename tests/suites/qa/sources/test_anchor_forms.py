"""Every anchor form a published Corograph battery's gold uses resolves as Corograph reads it: a path by its
trailing directories only (`auth/authenticator.go:87` for `server/auth/authenticator.go`,
`MemoEditor/services/memoService.ts:120` for a file under `web/src/components/`), and a bare `:47` after a file
named without any directory (`LATEST.sql; sqlite :47`). A path that cannot be resolved is a warning, never
a refusal; a resolved file that lacks the line still fails. `battery validate .` finds repo.json two levels
up as the absolute path does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qa_helpers import published  # type: ignore[import-not-found]
from ctxgauge.corpus import open_corpus
from ctxgauge.suites.qa import load_battery
from ctxgauge.suites.qa.sources._anchors import anchor_summary, check_anchors


def _lines(n: int, word: str) -> str:
    return "".join(f"{word} {i}\n" for i in range(1, n + 1))


CODE = {
    "server/auth/authenticator.go": _lines(90, "auth"),
    "web/src/components/MemoEditor/services/memoService.ts": _lines(130, "memo"),
    "store/migration/sqlite/prod/LATEST.sql": _lines(50, "sqlite"),
    "store/migration/mysql/prod/LATEST.sql": _lines(30, "mysql"),
    "store/migration/postgres/prod/LATEST.sql": _lines(60, "pg"),
    "server/router/api/v1/user_service.go": _lines(20, "user"),
    "plugin/a/util.go": "a\n", "plugin/b/util.go": "b\n",
}


def battery(tmp_path: Path, repo_builder, answer: str) -> tuple[Path, Path, str]:
    """(battery directory, git repository, commit): Corograph's <folder>/batteries/<name>/ with repo.json."""
    rb = repo_builder("code")
    commit = rb.commit("the code", CODE)
    folder = tmp_path / "pub" / "acme-memos"
    bdir = folder / "batteries" / "forms-hard"
    bdir.mkdir(parents=True)
    (folder / "repo.json").write_text(json.dumps({"commit_sha": commit, "repo_key": "memos",
                                                  "source_url": "https://example.org/acme/memos"}))
    (bdir / "questions.json").write_text(json.dumps([
        {"qid": "h01", "position": 1, "prompt": "Where is a user deleted?", "output_structure": "path:line",
         "difficulty": 4, "categories": ["cascade"]}]))
    (bdir / "gold.json").write_text(json.dumps([
        {"qid": "h01", "gold_rev": 1, "answer_gold": answer, "answer_gold_variants": None, "facet_guide": ""}]))
    (bdir / "exemplars.json").write_text(json.dumps([
        {"qid": "h01", "kind": "correct", "answer": "the authenticator", "why": "names it"}]))
    return bdir, rb.path, commit


PUBLISHED_FORMS = ("The token is checked in auth/authenticator.go:87 (:88-90); the editor calls "
                   "MemoEditor/services/memoService.ts:120, the schema is LATEST.sql; sqlite :47, mysql :12; "
                   "the service server/router/api/v1/user_service.go:3 and util.go:1")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
           "CTXGAUGE_CACHE": "off"}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_each_published_anchor_form_resolves(tmp_path, repo_builder):
    bdir, repo, commit = battery(tmp_path, repo_builder, PUBLISHED_FORMS)
    checks = check_anchors(load_battery(bdir), open_corpus(repo, commit))
    got = {c.anchor.text: (c.status, c.resolved) for c in checks}
    assert got == {
        "auth/authenticator.go:87": ("ok", "server/auth/authenticator.go"),
        ":88-90": ("ok", "server/auth/authenticator.go"),
        "MemoEditor/services/memoService.ts:120": ("ok", "web/src/components/MemoEditor/services/memoService.ts"),
        ":47": ("ok", "store/migration/sqlite/prod/LATEST.sql"),  # the file named last, in the sqlite folder
        ":12": ("ok", "store/migration/mysql/prod/LATEST.sql"),
        "server/router/api/v1/user_service.go:3": ("ok", "server/router/api/v1/user_service.go"),
        "util.go:1": ("ambiguous", None),  # two files fit and nothing before picks one: reported, not failed
    }
    summary = anchor_summary(checks)
    assert summary["problems"] == summary["warnings"] == [] and summary["ambiguous"] == 1


def test_trailing_components_several_files_fit_is_ambiguous_not_failed(tmp_path, repo_builder):
    bdir, repo, commit = battery(tmp_path, repo_builder, "see prod/LATEST.sql:5")
    [check] = check_anchors(load_battery(bdir), open_corpus(repo, commit))
    assert check.status == "ambiguous" and "3 files end with prod/LATEST.sql" in check.detail


def test_validate_passes_the_published_forms(tmp_path, repo_builder):
    bdir, repo, _ = battery(tmp_path, repo_builder, PUBLISHED_FORMS)
    r = cli("battery", "validate", str(bdir), "--repo", str(repo))
    assert r.returncode == 0, r.stderr
    assert "anchors: 6 of 7 path:line anchors found at the commit, 1 ambiguous" in r.stdout


@pytest.mark.parametrize("answer", ["auth/authenticator.go:87 and gone/away.go:3",
                                    "auth/authenticator.go:87 and nowhere.go:1",
                                    "at (:4), then auth/authenticator.go:87"])
def test_an_anchor_whose_file_is_not_found_is_a_warning_not_a_refusal(tmp_path, repo_builder, answer):
    bdir, repo, _ = battery(tmp_path, repo_builder, answer)
    r = cli("battery", "validate", str(bdir), "--repo", str(repo))
    assert r.returncode == 0, r.stderr
    assert "1 of 2 path:line anchors found at the commit, 1 whose file was not found (warnings)" in r.stdout
    assert "warning: gold h01 (answer_gold): anchor" in r.stderr
    data = json.loads(cli("battery", "validate", str(bdir), "--repo", str(repo), "--json").stdout)
    assert data["anchors"]["problems"] == [] and len(data["anchors"]["warnings"]) == 1


@pytest.mark.parametrize("answer, message", [
    ("auth/authenticator.go:91", "server/auth/authenticator.go has 90 lines, not line 91"),
    ("LATEST.sql; mysql :31", "store/migration/mysql/prod/LATEST.sql has 30 lines, not line 31"),
])
def test_a_resolved_file_without_the_line_still_fails(tmp_path, repo_builder, answer, message):
    bdir, repo, _ = battery(tmp_path, repo_builder, answer)
    r = cli("battery", "validate", str(bdir), "--repo", str(repo))
    assert r.returncode == 2 and r.stdout == "" and message in r.stderr, r.stderr


def test_validate_dot_finds_repo_json_two_levels_up(tmp_path, repo_builder):
    bdir, repo, _ = battery(tmp_path, repo_builder, "auth/authenticator.go:87")
    absolute = json.loads(cli("battery", "validate", str(bdir), "--repo", str(repo), "--json").stdout)
    for cwd, given in ((bdir, "."), (bdir.parent, "forms-hard"), (bdir.parent.parent, "."),
                       (bdir / "..", "./forms-hard")):
        r = cli("battery", "validate", given, "--repo", str(repo), "--json", cwd=cwd)
        assert r.returncode == 0, (given, r.stderr)
        data = json.loads(r.stdout)
        assert (data["battery"], data["hash"], data["layout"], data["commit"]) == \
            (absolute["battery"], absolute["hash"], "corograph", absolute["commit"]), given


def test_validate_dot_on_the_published_battery(tmp_path):
    folder = published()
    copy = tmp_path / "usememos-memos"
    shutil.copytree(folder, copy)
    r = cli("battery", "validate", ".", "--json", cwd=copy / "batteries" / "memos-hard")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["battery"], data["layout"], data["questions"]) == ("memos-hard", "corograph", 20)
