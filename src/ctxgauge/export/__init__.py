"""`ctxgauge export`: publishing runs as a hash-chained tree with derived summaries, and `--check`.

The top of the reading side: it imports the records (`ctxgauge.records`: discovery, hashes, the secret
scanner) and the report it publishes (`ctxgauge.report`); neither imports it.

    cli ─▶ export ─▶ report ─▶ records

`_tree` writes and checks the tree (manifest, run copies, report pages); `_summaries` computes the derived
summaries (leaderboard, per-case, per-question, runs) from the suite views of `ctxgauge.report`.
"""

from ctxgauge.export._summaries import LEADERBOARD_COLUMNS, SUMMARY_FILES, summaries
from ctxgauge.export._tree import (
    EXPORT_SCHEMA,
    MANIFEST,
    CheckResult,
    ExportResult,
    IntegrityError,
    check_export,
    export_runs,
    plan_export,
)

__all__ = [
    "CheckResult", "EXPORT_SCHEMA", "ExportResult", "IntegrityError", "LEADERBOARD_COLUMNS", "MANIFEST",
    "SUMMARY_FILES", "check_export", "export_runs", "plan_export", "summaries",
]
