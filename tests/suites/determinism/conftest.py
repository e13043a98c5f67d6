"""Fixtures of the determinism tests: a small library repository with history, made with git itself, and
the deliberately flawed engines of flaky_engines.py registered as built-ins for one test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "Ada Tester", "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Tester", "GIT_COMMITTER_EMAIL": "ada@example.org",
}

# Twelve commits: the first writes the library, each later one edits one module with a clear subject, so
# the derived queries are real requests and REV~10 exists (Update Identity's default).
FILES = {
    "src/loans/fees.py": "def overdue_fee(days, rate):\n    \"\"\"Fee for a loan returned late.\"\"\"\n    return round(days * rate, 2)\n",
    "src/loans/renewals.py": "from src.loans.fees import overdue_fee\n\ndef renew_loan(loan):\n    return loan.extend(days=14)\n",
    "src/loans/holds.py": "def place_hold(member, book):\n    return {'member': member, 'book': book, 'queue': 1}\n",
    "src/members/accounts.py": "def open_account(name, email):\n    return {'name': name, 'email': email}\n",
    "src/members/cards.py": "def issue_library_card(member):\n    return f'CARD-{member}'\n",
    "src/catalog/search.py": "def search_titles(index, text):\n    return [t for t in index if text.lower() in t.lower()]\n",
    "src/catalog/isbn.py": "def valid_isbn(code):\n    return len(code.replace('-', '')) in (10, 13)\n",
    "src/notify/email.py": "def send_reminder(member, message):\n    return ('smtp', member, message)\n",
    "docs/guide.md": "# Guide\n\nHow the branch desk handles loans, holds and fines.\n",
    "README.md": "# shelf\n\nA tiny library system used by the determinism tests.\n",
}
EDITS = [
    ("Round overdue fees to whole cents", "src/loans/fees.py", "\n# fees are rounded half-even to cents\n"),
    ("Limit renewals to three per loan", "src/loans/renewals.py", "\nMAX_RENEWALS = 3\n"),
    ("fix(holds): keep the hold queue in request order", "src/loans/holds.py", "\n# queue kept in request order\n"),
    ("Validate member email addresses", "src/members/accounts.py", "\ndef valid_email(e):\n    return '@' in e\n"),
    ("Print library cards with a barcode", "src/members/cards.py", "\ndef barcode(card):\n    return card[::-1]\n"),
    ("Search titles by author too", "src/catalog/search.py", "\ndef search_authors(index, text):\n    return []\n"),
    ("Accept ISBN codes with spaces", "src/catalog/isbn.py", "\n# spaces are accepted like hyphens\n"),
    ("Send reminder emails before the due date", "src/notify/email.py", "\nDAYS_BEFORE_DUE = 2\n"),
    ("Document the fines policy", "docs/guide.md", "\nFines are capped at the price of the book.\n"),
    ("feat(loans): waive overdue fees for new members (#12)", "src/loans/fees.py", "\nWAIVE_FOR_NEW = True\n"),
    ("Explain renewal limits in the guide", "docs/guide.md", "\nA loan may be renewed three times.\n"),
]


def _git(repo: Path, *args: str, date: int) -> None:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"{date} +0000", "GIT_COMMITTER_DATE": f"{date} +0000"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env,
                   check=True, capture_output=True)


def build_library_repo(path: Path) -> Path:
    """The twelve-commit repository described above, at `path`."""
    path.mkdir(parents=True)
    date = 1_700_000_000
    _git(path, "init", "-q", date=date)
    for rel, text in FILES.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    _git(path, "add", "-A", date=date)
    _git(path, "commit", "-q", "-m", "Start the shelf library", date=date)
    for subject, rel, extra in EDITS:
        date += 3600
        with open(path / rel, "a") as fh:
            fh.write(extra)
        _git(path, "add", rel, date=date)
        _git(path, "commit", "-q", "-m", subject, date=date)
    return path


@pytest.fixture(scope="session")
def library_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A twelve-commit git repository (read-only for tests)."""
    return build_library_repo(tmp_path_factory.mktemp("library") / "shelf")


@pytest.fixture
def plain_library(tmp_path: Path) -> Path:
    """The same library files as a plain directory (no history)."""
    root = tmp_path / "plain-shelf"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def flaky_engines(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register the engines of flaky_engines.py as built-ins (jitter, stamp, shuffle, empty, constant, absent),
    through the real registry, as a plugin would be."""
    from ctxgauge.engines import _registry

    monkeypatch.syspath_prepend(str(HERE))
    for name, cls in (("jitter", "JitterEngine"), ("stamp", "StampEngine"), ("shuffle", "ShuffleEngine"),
                      ("empty", "EmptyEngine"), ("constant", "ConstantEngine"), ("absent", "AbsentEngine")):
        monkeypatch.setitem(_registry.BUILTINS, name, f"flaky_engines:{cls}")
    yield
    sys.modules.pop("flaky_engines", None)
