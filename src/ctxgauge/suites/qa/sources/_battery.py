"""Question batteries in Corograph's layout: JSON files about one pinned commit.

Corograph publishes a repository folder holding `repo.json` and `batteries/<name>/`:

    repo.json        source_url, commit_sha, repo_key, public_folder, commit_date   (the repository)
    batteries/<name>/
      questions.json   [{qid, position, prompt, output_structure, difficulty 1-5, categories}]
      gold.json        [{qid, gold_rev, answer_gold, answer_gold_variants, scoring_rubric?, honesty_trap?,
                         facet_guide, evidence?: [{path, quote}]}]   several revisions per qid: the newest wins
      exemplars.json   [{qid, kind correct|incorrect|partial, answer, why, adjudicated_by?, adjudicated_at?}]
      policies.json    optional: [{policy_key, rule}] (or `id` for the key): battery-wide rules the judge reads
      amendments.json  optional: [{qid?, ...}] owner rulings after publication, read, checked and hashed
      battery.json     optional (ctxgauge's): name, title, repository, commit, rev; it wins over repo.json,
                       and a commit that disagrees with repo.json's is refused

ctxgauge's bundled batteries keep everything in one directory with a battery.json whose `repository` is
`{"sample": NAME}` or `{"path": DIR}`; a Corograph battery's is `{"url": source_url}`, and its code comes
from `--repo PATH` (a local clone; ctxgauge never clones). Each file may be a bare list or an object
holding the list under its own name. `evidence` is ctxgauge's addition (a file and a line it must contain);
`path:line` anchors in the gold text are checked by `_anchors`. Every problem is one line naming file and
record.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ctxgauge._io import canonical_json, read_data
from ctxgauge.errors import UserError

FILES = ("battery.json", "questions.json", "gold.json", "policies.json", "exemplars.json")
"""Files whose content makes the battery's hash (ctxgauge's layout; absent optional ones are left out)."""
REQUIRED = ("questions.json", "gold.json", "exemplars.json")
OPTIONAL = ("battery.json", "policies.json", "amendments.json")
REPO_FILE = "repo.json"
"""Corograph's repository file, beside `batteries/`."""
EXEMPLAR_KINDS = ("correct", "incorrect", "partial")


@dataclass(frozen=True)
class Question:
    """One question as every arm is asked it."""

    qid: str
    position: int
    prompt: str
    output_structure: str = ""
    difficulty: int | None = None
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Gold:
    """The answer key of one question at its newest revision."""

    qid: str
    gold_rev: int
    answer_gold: str
    answer_gold_variants: tuple[str, ...] = ()
    scoring_rubric: str | None = None
    honesty_trap: str | None = None
    facet_guide: str = ""
    evidence: tuple[dict, ...] = ()

    @property
    def evidence_files(self) -> tuple[str, ...]:
        """Corpus paths the gold cites, in order, each once."""
        return tuple(dict.fromkeys(e["path"] for e in self.evidence))


@dataclass(frozen=True)
class Exemplar:
    """A graded anchor answer the judge is calibrated against."""

    qid: str
    kind: str
    answer: str
    why: str


@dataclass
class Battery:
    """A loaded battery: questions in position order, the newest gold per question, policies, exemplars."""

    name: str
    path: Path
    title: str
    repository: dict
    commit: str
    rev: str | None
    questions: list[Question]
    gold: dict[str, Gold]
    policies: list[dict]
    """Each `{id, rule}` (Corograph's `policy_key` is read as `id`; the record keeps its other fields)."""
    exemplars: dict[str, list[Exemplar]] = field(default_factory=dict)
    digest: str = ""
    amendments: list[dict] = field(default_factory=list)
    """Owner rulings published after the battery (amendments.json), as written."""
    layout: str = "ctxgauge"
    """ctxgauge (battery.json in the directory) or corograph (repo.json two levels up)."""
    files: tuple[str, ...] = ()
    """The battery's files that were read (and hashed)."""

    def identity(self) -> dict:
        """What a run record says about the battery it asked."""
        return {"name": self.name, "hash": self.digest, "questions": len(self.questions),
                "repository": self.repository, "commit": self.commit, "rev": self.rev}


def bundled_batteries() -> list[str]:
    """Names of the batteries shipped inside ctxgauge (`ctxgauge/data/batteries/<name>`)."""
    root = resources.files("ctxgauge") / "data" / "batteries"
    try:
        return sorted(p.name for p in root.iterdir() if (p / "battery.json").is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _is_battery(p: Path) -> bool:
    # lexists: a battery.json that is a FIFO or a link is this battery's, and the reader refuses it
    return os.path.lexists(p / "battery.json") or os.path.lexists(p / "questions.json")


def resolve_battery_dir(name_or_path: str | Path) -> Path:
    """A battery directory from a path (a battery, or a Corograph repository folder holding exactly one
    battery under `batteries/`), or from the name of a bundled battery."""
    p = Path(name_or_path)
    if _is_battery(p):
        return p
    if (p / REPO_FILE).is_file() and (p / "batteries").is_dir():
        found = sorted(b for b in (p / "batteries").iterdir() if b.is_dir() and _is_battery(b))
        if len(found) == 1:
            return found[0]
        names = ", ".join(b.name for b in found) or "none"
        raise UserError(f"{p}: a Corograph repository folder with {len(found)} batteries ({names}); "
                        f"name one: {p / 'batteries' / (found[0].name if found else 'NAME')}")
    # A bare name is a bundled battery even when a directory of that name (say, a checkout of the
    # repository the battery is about) sits in the working directory.
    bundled = Path(str(resources.files("ctxgauge") / "data" / "batteries" / str(name_or_path)))
    if "/" not in str(name_or_path) and (bundled / "battery.json").is_file():
        return bundled
    if p.is_dir():
        return p  # a directory that is not a battery: load_battery names the missing file
    known = ", ".join(bundled_batteries()) or "none"
    raise UserError(f"{name_or_path}: no such battery directory (bundled batteries: {known})")


def _read(dirpath: Path, fname: str, key: str | None) -> Any:
    path = dirpath / fname
    if not os.path.lexists(path):
        raise UserError(f"{path}: missing (a battery needs {', '.join(REQUIRED)})")
    data = read_data(path, "battery file", fmt="json")
    if key is not None and isinstance(data, dict):
        if key not in data:
            raise UserError(f"{path}: expected a list, or an object with a {key!r} list")
        data = data[key]
    if key is not None and not isinstance(data, list):
        raise UserError(f"{path}: expected a list, or an object with a {key!r} list")
    return data


def _need(rec: Any, where: str, name: str, kind: type | tuple[type, ...], *, optional: bool = False) -> Any:
    if not isinstance(rec, dict):
        raise UserError(f"{where}: not an object")
    if name not in rec or rec[name] is None:
        if optional:
            return None
        raise UserError(f"{where}: missing {name!r}")
    value = rec[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise UserError(f"{where}: {name!r} must be {names}")
    if isinstance(value, str) and not value.strip() and not optional:
        raise UserError(f"{where}: {name!r} is empty")
    return value


def load_battery(name_or_path: str | Path) -> Battery:
    """Load and check a battery (no model is called). Any problem is a one-line UserError."""
    d = resolve_battery_dir(name_or_path)
    meta, repo_meta, layout = _meta(d)
    where = str(d / "battery.json") if meta else str(_up(d) / REPO_FILE)
    name = _need(meta, where, "name", str) if "name" in meta else _up(d, 0).name
    repository = _need(meta, where, "repository", dict) if "repository" in meta else (
        {k: v for k, v in (("url", repo_meta.get("source_url")), ("key", repo_meta.get("repo_key"))) if v})
    if not ({"sample", "path", "url"} & set(repository)):
        raise UserError(f"{where}: repository needs 'sample' (a bundled sample's name), 'path' or 'url'"
                        + ("" if meta else f" (or add a battery.json to {d})"))
    if "commit" in meta or not repo_meta:
        commit = _need(meta, where, "commit", str)
    else:
        commit = _need(repo_meta, where, "commit_sha", str)
    if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
        raise UserError(f"{where}: commit must be a full 40-hex-digit commit id, got {commit!r}")
    if repo_meta and repo_meta.get("commit_sha") not in (None, commit):
        raise UserError(f"{where}: commit {commit[:12]} disagrees with {_up(d) / REPO_FILE}'s commit_sha "
                        f"{str(repo_meta['commit_sha'])[:12]}; the gold is true at one commit only")

    questions, seen_pos = [], set()
    for i, rec in enumerate(_read(d, "questions.json", "questions")):
        w = f"{d / 'questions.json'}: record {i}"
        qid = _need(rec, w, "qid", str)
        w = f"{w} ({qid})"
        pos = _need(rec, w, "position", int)
        difficulty = _need(rec, w, "difficulty", int, optional=True)
        if difficulty is not None and not 1 <= difficulty <= 5:
            raise UserError(f"{w}: difficulty must be 1 (easy) to 5 (extremely hard), got {difficulty}")
        cats = _need(rec, w, "categories", list, optional=True) or []
        if any(not isinstance(c, str) for c in cats):
            raise UserError(f"{w}: categories must be a list of strings")
        if any(q.qid == qid for q in questions):
            raise UserError(f"{w}: qid {qid!r} appears twice")
        if pos in seen_pos:
            raise UserError(f"{w}: position {pos} appears twice")
        seen_pos.add(pos)
        questions.append(Question(qid, pos, _need(rec, w, "prompt", str),
                                  _need(rec, w, "output_structure", str, optional=True) or "", difficulty, tuple(cats)))
    if not questions:
        raise UserError(f"{d / 'questions.json'}: no questions")
    questions.sort(key=lambda q: q.position)
    qids = {q.qid for q in questions}

    gold: dict[str, Gold] = {}
    for i, rec in enumerate(_read(d, "gold.json", "gold")):
        w = f"{d / 'gold.json'}: record {i}"
        qid = _need(rec, w, "qid", str)
        w = f"{w} ({qid})"
        if qid not in qids:
            raise UserError(f"{w}: no question has qid {qid!r}")
        rev = _need(rec, w, "gold_rev", int)
        variants = _need(rec, w, "answer_gold_variants", list, optional=True) or []
        if any(not isinstance(v, str) or not v.strip() for v in variants):
            raise UserError(f"{w}: answer_gold_variants must be non-empty strings")
        evidence = _need(rec, w, "evidence", list, optional=True) or []
        for e in evidence:
            if not isinstance(e, dict) or not isinstance(e.get("path"), str) or not isinstance(e.get("quote", ""), str):
                raise UserError(f"{w}: each evidence item needs a 'path' (and optionally a 'quote' string)")
        g = Gold(qid, rev, _need(rec, w, "answer_gold", str), tuple(variants),
                 _need(rec, w, "scoring_rubric", str, optional=True), _need(rec, w, "honesty_trap", str, optional=True),
                 _need(rec, w, "facet_guide", str, optional=True) or "", tuple(evidence))
        if qid in gold and gold[qid].gold_rev == rev:
            raise UserError(f"{w}: gold_rev {rev} appears twice for {qid!r}")
        if qid not in gold or rev > gold[qid].gold_rev:
            gold[qid] = g
    missing = [q.qid for q in questions if q.qid not in gold]
    if missing:
        raise UserError(f"{d / 'gold.json'}: no gold for {', '.join(missing)}")

    policies = []
    raw_policies = _read(d, "policies.json", "policies") if (d / "policies.json").is_file() else []
    for i, rec in enumerate(raw_policies):
        w = f"{d / 'policies.json'}: record {i}"
        if not isinstance(rec, dict):
            raise UserError(f"{w}: each policy is an object with a 'policy_key' and a 'rule'")
        key = "id" if "id" in rec else "policy_key"
        if not ({"id", "policy_key"} & set(rec)):
            raise UserError(f"{w}: missing 'policy_key' (or 'id'): the name the judge cites the rule by")
        policies.append({**rec, "id": _need(rec, w, key, str), "rule": _need(rec, w, "rule", str)})

    amendments = _read(d, "amendments.json", "amendments") if (d / "amendments.json").is_file() else []
    for i, rec in enumerate(amendments):
        w = f"{d / 'amendments.json'}: record {i}"
        qid = _need(rec, w, "qid", str, optional=True)
        if qid is not None and qid not in qids:
            raise UserError(f"{w} ({qid}): no question has qid {qid!r}")

    exemplars: dict[str, list[Exemplar]] = {}
    for i, rec in enumerate(_read(d, "exemplars.json", "exemplars")):
        w = f"{d / 'exemplars.json'}: record {i}"
        qid = _need(rec, w, "qid", str)
        if qid not in qids:
            raise UserError(f"{w} ({qid}): no question has qid {qid!r}")
        kind = _need(rec, w, "kind", str)
        if kind not in EXEMPLAR_KINDS:
            raise UserError(f"{w} ({qid}): kind must be one of {', '.join(EXEMPLAR_KINDS)}, got {kind!r}")
        exemplars.setdefault(qid, []).append(
            Exemplar(qid, kind, _need(rec, w, "answer", str), _need(rec, w, "why", str)))

    # The hash covers every file read: ctxgauge's five keep the hash they always had; a Corograph battery
    # adds repo.json (its commit) and, when present, amendments.json (rulings change what passes).
    read = [f for f in (*FILES, "amendments.json") if (d / f).is_file()]
    digest_src = {f: _read(d, f, None) for f in read}
    if repo_meta:
        digest_src[REPO_FILE] = repo_meta
    digest = hashlib.sha256(canonical_json(digest_src).encode()).hexdigest()[:12]
    return Battery(name=name, path=d, title=str(meta.get("title") or name), repository=repository, commit=commit,
                   rev=meta.get("rev"), questions=questions, gold=gold, policies=policies, exemplars=exemplars,
                   digest=digest, amendments=amendments, layout=layout,
                   files=tuple(read + ([f"../../{REPO_FILE}"] if repo_meta else [])))


def _up(d: Path, levels: int = 2) -> Path:
    """`d`'s ancestor `levels` up, by its absolute path: `Path(".").parent` is `.` itself, so `battery validate .`
    inside a battery looked for repo.json in the battery and never found Corograph's two levels up."""
    full = Path(os.path.abspath(d))
    for _ in range(levels):
        full = full.parent
    return full


def _meta(d: Path) -> tuple[dict, dict, str]:
    """(battery.json or {}, Corograph's repo.json or {}, layout) of a battery directory."""
    meta = _read(d, "battery.json", None) if os.path.lexists(d / "battery.json") else {}
    if not isinstance(meta, dict):
        raise UserError(f"{d / 'battery.json'}: expected an object")
    repo_file = _up(d) / REPO_FILE
    in_batteries = _up(d, 1).name == "batteries"
    repo_meta = _read(_up(d), REPO_FILE, None) if in_batteries and os.path.lexists(repo_file) else {}
    if not isinstance(repo_meta, dict):
        raise UserError(f"{repo_file}: expected an object")
    if not meta and not repo_meta:
        raise UserError(f"{d}: no battery.json, and no {REPO_FILE} two levels up (Corograph's "
                        f"<repository>/batteries/<name>/ layout): add a battery.json naming repository and commit")
    return meta, repo_meta, "corograph" if repo_meta else "ctxgauge"


def check_evidence(battery: Battery, corpus) -> list[str]:
    """Problems with the gold's evidence against the pinned corpus: a cited file it lacks, or a quote
    its file does not contain. Empty when every gold fact is checkable at the commit."""
    problems = []
    for q in battery.questions:
        for e in battery.gold[q.qid].evidence:
            if e["path"] not in corpus:
                problems.append(f"gold {q.qid}: evidence file {e['path']!r} is not in the corpus at {battery.commit[:10]}")
            elif e.get("quote") and e["quote"] not in corpus.text(e["path"]):
                problems.append(f"gold {q.qid}: {e['path']} at {battery.commit[:10]} does not contain {e['quote']!r}")
    return problems
