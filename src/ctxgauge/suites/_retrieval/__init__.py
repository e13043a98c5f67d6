"""The one retrieval pipeline of replay and cases: labelled cases in, index, query, score, compare, TREC out.

Replay's commits and a cases file are two sources of labelled cases (`LabelledCase`: an id, a request and
how to judge a ranking against a corpus, as ranx's `Qrels` or ir_measures' qrels). Everything after that
exists here once:

| stage | where | what |
| --- | --- | --- |
| engines | `_engines.open_engine` | the one way an engine is made from its spec (planning process and workers alike) |
| work | `_work.Task`, `run_task` | one engine x consecutive steps (case + where its corpus is), runnable on any worker |
| index | `_index.LiveIndex` | one index per engine moved from revision to revision by the changed files |
| query, score | `_work.run_task` | checked hits at `depth`, scored by `ctxgauge.metrics.scoring` |
| context | `_context.score_context` | the hits packed under token budgets, scored against gold files and lines |
| merge, record | `_batch.Batch`, `execute_many` | the engines' parts of a case merged, in a fixed order, whatever the executor |
| compare | `_compare.comparison` | the paired comparison of the two engines over the units holding both |
| TREC | `_trec.write_trec` | `run.trec`, `run-vs.trec`, `qrels.txt` |

A source supplies its cases, where each one's corpus is (`Where`), and how a case's engine parts become its
unit (`Batch.merge`: the unit's fields are the suite's own). Records are the same whatever the executor,
the number of workers or the slice size, whenever an engine's update equals its rebuild (the engine
contract; tested unit for unit for replay and cases).
"""

from ctxgauge.suites._retrieval._batch import Batch, auto_slice, execute_many, record_unit
from ctxgauge.suites._retrieval._compare import comparison
from ctxgauge.suites._retrieval._context import (
    ContextSpec, budget_curve, check_budgets, compared_names, context_summary, is_context, macro_names,
    micro_names, score_context, with_metrics,
)
from ctxgauge.suites._retrieval._engines import close_engines, open_engine, open_engines
from ctxgauge.suites._retrieval._index import LiveIndex
from ctxgauge.suites._retrieval._trec import write_trec
from ctxgauge.suites._retrieval._work import (
    LabelledCase, Step, Task, Where, drop_live, run_task, score_ranking, share_live, slices,
)

__all__ = [
    "Batch", "ContextSpec", "LabelledCase", "LiveIndex", "Step", "Task", "Where", "auto_slice", "budget_curve", "check_budgets", "close_engines", "comparison",
    "compared_names", "context_summary", "is_context", "macro_names", "micro_names", "score_context",
    "with_metrics",
    "drop_live", "execute_many", "open_engine", "open_engines", "record_unit", "run_task", "score_ranking", "share_live",
    "slices", "write_trec",
]
