"""Run records: the run directory layout every suite writes, and its readers.

See `_run.py` for the layout. Readers refuse a newer schema and migrate an older one.
"""

from ctxgauge.records._provenance import provenance, utc_now
from ctxgauge.records._run import (
    RUN_FILE,
    SCHEMA_VERSION,
    STATUSES,
    UNIT_STATUSES,
    UNITS_FILE,
    RunDir,
    default_run_dir,
    file_sha256,
    hash_files,
    migrate,
    read_run,
    read_units,
)

from ctxgauge.records._export import (
    CheckResult,
    ExportResult,
    IntegrityError,
    check_export,
    export_runs,
    plan_export,
    verify_files,
)
from ctxgauge.records._secrets import Finding, SecretFound, SecretScanner
from ctxgauge.records._store import STORE_FILE, ResultsStore, SyncStats

__all__ = [
    "RUN_FILE", "SCHEMA_VERSION", "STATUSES", "UNITS_FILE", "UNIT_STATUSES", "RunDir", "default_run_dir",
    "file_sha256", "hash_files", "migrate", "provenance", "read_run", "read_units", "utc_now",
    "CheckResult", "ExportResult", "Finding", "IntegrityError", "ResultsStore", "STORE_FILE", "SecretFound",
    "SecretScanner", "SyncStats", "check_export", "export_runs", "plan_export", "verify_files",
]
