"""Migrations: bring a record of an older schema to the current one; refuse one of a newer schema.

A migration is a pure function of the old JSON (the record, and each unit line with the version its record
had), so an old run directory is never rewritten: it is read as the current schema every time. Version 1 is
the layout of dc65eaf and before; `tests/records/fixtures/v1/` holds runs that commit's own code wrote.

Version 1 records carried no `subject` and no `headline`; both are derived here from the layout v1 suites
wrote, by the keys they used (never by the suite's name, so this module stays suite-agnostic): the dataset
is `spec.repo`, else the corpus (`results.corpus` or `spec.corpus`, as `name@rev`), else the battery's
identity (`context.source_identity.name`), else `spec.source`; the systems are `spec.engine` (and
`spec.vs`), else `spec.engines`, else `spec.arms`; the model is `spec.model`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ctxgauge.errors import UserError
from ctxgauge.records._model import SCHEMA_VERSION


def corpus_label(corpus: Mapping[str, Any]) -> str:
    """A corpus as a dataset name: `name@rev` (the revision to 10 characters), or the name alone."""
    name = str(corpus.get("name") or "-")
    rev = corpus.get("rev")
    return f"{name}@{str(rev)[:10]}" if rev else name


def _v1_subject(record: Mapping[str, Any]) -> dict[str, Any]:
    spec, results = record.get("spec") or {}, record.get("results") or {}
    context = record.get("context") or {}
    corpus = results.get("corpus") or spec.get("corpus")
    battery = (context.get("source_identity") or {}).get("name")
    if spec.get("repo"):
        dataset = str(spec["repo"])
    elif isinstance(corpus, Mapping):
        dataset = corpus_label(corpus)
    else:
        dataset = str(battery or spec.get("source") or "-")
    if "engine" in spec:
        main = spec.get("engine") or results.get("engine") or (f"external:{spec['run']}" if spec.get("run")
                                                                 else "engine")
        systems = [str(main)] + ([str(spec["vs"])] if spec.get("vs") else [])
    else:
        systems = [str(s) for s in spec.get("engines") or spec.get("arms") or []]
    return {"dataset": dataset, "systems": systems, "model": spec.get("model") or None}


def _v1_headline(record: Mapping[str, Any]) -> str:
    # The runs list's one line, as dc65eaf's store computed it, from the shape of the results.
    results, spec = record.get("results") or {}, record.get("spec") or {}
    summary = results.get("summary") or {}
    if isinstance(results.get("engines"), Mapping):
        found = results["engines"]
        order = [e for e in spec.get("engines") or [] if e in found]
        return ", ".join(f"{e} {found[e].get('label')}" for e in order + sorted(set(found) - set(order)))
    if summary and all(isinstance(v, Mapping) for v in summary.values()):
        order = [a for a in spec.get("arms") or [] if a in summary]
        parts = []
        for arm in order + sorted(set(summary) - set(order)):
            acc = summary[arm].get("accuracy")
            parts.append(f"{arm} {'-' if acc is None else f'{100 * acc:.1f}%'}")
        return ", ".join(parts)
    metrics = spec.get("metrics") or list(summary)
    return ", ".join([f"{m} {summary[m]:.3f}" for m in metrics if isinstance(summary.get(m), (int, float))][:2])


def _v1_to_v2(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    spec = dict(out.get("spec") or {})
    version = spec.pop("suite_version", 1)
    out["spec"] = spec
    out["suite_version"] = int(version)  # replay and cases wrote 1, qa "1" (in its arms), determinism none
    out["subject"] = _v1_subject(record)
    out["headline"] = _v1_headline(record) if record.get("results") else ""
    out["schema_version"] = 2
    return out


def _v1_unit(unit: dict[str, Any]) -> dict[str, Any]:
    # cases units named their request `query`; every suite says `request` from version 2.
    if "query" in unit and "request" not in unit:
        unit = dict(unit)
        query = unit.pop("query")
        if query is not None:
            unit["request"] = query
    return unit


MIGRATIONS: dict[int, Callable[[dict], dict]] = {1: _v1_to_v2}
"""Record migrations: version -> function(record) -> record of version + 1."""
UNIT_MIGRATIONS: dict[int, Callable[[dict], dict]] = {1: _v1_unit}
"""Unit-line migrations, keyed by the version of the record the line belongs to."""


def check_version(version: Any, source: str) -> int:
    """The schema version of a record, or a UserError: not a record, or written by a newer ctxgauge."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UserError(f"{source}: not a ctxgauge run record (no schema_version)")
    if version > SCHEMA_VERSION:
        raise UserError(f"{source}: written with run schema {version}, newer than this ctxgauge reads "
                        f"({SCHEMA_VERSION}); upgrade ctxgauge")
    return version


def migrate(record: Mapping[str, Any], source: str = "run.json") -> dict[str, Any]:
    """Bring a record's JSON to the current schema; refuse one written by a newer ctxgauge."""
    version = check_version(record.get("schema_version"), source)
    out = dict(record)
    while version < SCHEMA_VERSION:
        try:
            out = MIGRATIONS[version](out)
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            # An older record is untyped JSON: a section of the wrong type (`"context": [{}]`, found by
            # `make fuzz`) breaks the migration's reads, and that is the record's fault, not a bug here.
            raise UserError(f"{source}: a schema {version} record whose sections have the wrong types "
                            f"({type(exc).__name__}: {str(exc)[:80]}); it cannot be migrated") from None
        version = out["schema_version"]
    return out


def migrate_unit(unit: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring a unit line written under record schema `version` to the current schema."""
    while version < SCHEMA_VERSION:
        unit = UNIT_MIGRATIONS.get(version, lambda u: u)(unit)
        version += 1
    return unit
