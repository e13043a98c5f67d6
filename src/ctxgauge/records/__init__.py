"""Run records: the bottom of everything that reads runs.

The typed record (`RunRecord`, `Subject`, `Unit`, in `_model`), writing it (`RunDir`, `_run`), reading and
migrating it (`read_run`, `read_units`, `_migrate`: readers refuse a newer schema and migrate an older
one), discovering run directories (`discover_runs`, `_discover`), the results store over them (`_store`)
and the secret scanner exports use (`_secrets`). Nothing here knows a suite by name, and nothing here
imports the report or the export:

    cli ─▶ export ─▶ report ─▶ records        suites ─▶ records
"""

from ctxgauge.records._discover import (
    EXPORT_KIND,
    EXPORT_MANIFEST,
    EXPORT_RUNS,
    RunRef,
    discover_runs,
    find_run_dirs,
    is_export_dir,
    load_runs,
)
from ctxgauge.records._lock import LOCK_FILE, RunLock, check_not_written, is_empty_dir, lock_dir
from ctxgauge.records._migrate import corpus_label, migrate, migrate_unit
from ctxgauge.records._model import (
    FINISHED,
    RUN_KIND,
    SCHEMA_VERSION,
    STATUSES,
    UNIT_STATUSES,
    RunRecord,
    Subject,
    Unit,
    figures_headline,
)
from ctxgauge.records._shape import (
    ANY, BOOL, INT, NUMBER, STRING, ListOf, MapOf, Obj, Opt, Shape, check_sections,
)
from ctxgauge.records._provenance import machine, provenance, utc_now
from ctxgauge.records._outcome import (
    EXIT_NOTHING_MEASURED, EXIT_UNFINISHED, Outcome, measured_something, outcome, outcome_of, tally,
)
from ctxgauge.records._run import (
    RUN_FILE,
    UNITS_FILE,
    VOLATILE_UNIT_FIELDS,
    RunDir,
    comparable_unit,
    default_run_dir,
    file_sha256,
    hash_files,
    read_run,
    spec_differences,
    read_units,
    unknown,
    verify_files,
)
from ctxgauge.records._secrets import Finding, SecretFound, SecretScanner
from ctxgauge.records._store import STORE_FILE, ResultsStore, SyncStats

__all__ = [
    "ANY", "BOOL", "INT", "NUMBER", "STRING", "ListOf", "MapOf", "Obj", "Opt", "Shape", "check_sections",
    "LOCK_FILE", "RunLock", "check_not_written", "is_empty_dir", "lock_dir",
    "EXIT_NOTHING_MEASURED", "EXIT_UNFINISHED", "Outcome", "measured_something", "outcome", "outcome_of", "tally",
    "EXPORT_KIND", "EXPORT_MANIFEST", "EXPORT_RUNS", "FINISHED", "RUN_FILE", "RUN_KIND", "SCHEMA_VERSION", "STATUSES", "STORE_FILE",
    "UNITS_FILE", "UNIT_STATUSES", "VOLATILE_UNIT_FIELDS", "comparable_unit", "Finding", "ResultsStore", "RunDir", "RunRecord", "RunRef", "SecretFound",
    "SecretScanner", "Subject", "SyncStats", "Unit", "default_run_dir", "discover_runs", "figures_headline", "corpus_label", "file_sha256",
    "find_run_dirs", "hash_files", "is_export_dir", "load_runs", "machine", "migrate", "migrate_unit",
    "provenance", "read_run", "read_units", "spec_differences", "unknown", "utc_now", "verify_files",
]
