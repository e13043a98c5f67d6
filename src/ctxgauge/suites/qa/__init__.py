"""The qa suite: does a context engine help a model answer questions about a codebase?

    from ctxgauge.suites.qa import QAConfig, run_qa, rescore_run, load_battery
    result = run_qa(QAConfig(source="shelfd", arms=["none", "context:bm25@5"], model="gpt-4o-mini",
                             judge="gpt-4o-mini"))
    result.results.summary["context:bm25@5"].accuracy, result.results.trust.status

Sources: batteries in Corograph's layout (`_battery`) and dokimi question sets (`_questions`). Arms
(`_arms`): none, context:ENGINE@k, tool:ENGINE, command:CMD. Protocols (`_protocols`): zero-shot,
multi-turn, whole-battery. Scoring: tier 1 and the judge (`_scoring`), or the rubric (`_rubric`), grounded
as `_grounding` decides, with the optional judge panel (`_panel`). The trust gate (`_trust`), baselines
(`_baseline`), the pipeline (`_run`: its phases `_plan`, `_answer`, `_record`) and rescoring (`_rescore`).
"""

from ctxgauge.suites.qa.arms._arms import ARM_KINDS, ArmSpec, parse_arm
from ctxgauge.suites.qa._baseline import compare_baseline, save_baseline
from ctxgauge.suites.qa.sources._battery import (
    Battery, Exemplar, Gold, Question, bundled_batteries, check_evidence, load_battery, resolve_battery_dir,
)
from ctxgauge.suites.qa.judging._grounding import Grounding, grounding_for, plan_grounding
from ctxgauge.suites.qa.judging._panel import ROLES, Panel, aggregate_panel
from ctxgauge.suites.qa.arms._protocols import PROTOCOLS, Answer
from ctxgauge.suites.qa.sources._questions import QuestionSet, SetRecord, load_question_set, question_set_hash
from ctxgauge.suites.qa._rescore import rescore_run
from ctxgauge.suites.qa.judging._rubric import GROUNDED_WEIGHTS, WEIGHTS, RubricJudge, RubricScore, aggregate, mean_aggregate
from ctxgauge.suites.qa._config import SUITE, SUITE_VERSION, QAConfig
from ctxgauge.suites.qa._plan import load_source
from ctxgauge.suites.qa._run import run_qa
from ctxgauge.suites.qa.judging._scoring import Judge, Verdict, reads_as_pass, score_answer, tier1_match
from ctxgauge.suites.qa.sources._source import open_battery_corpus
from ctxgauge.suites.qa._trust import ArmScores, trust_gate

__all__ = [
    "ARM_KINDS", "Answer", "ArmScores", "ArmSpec", "Battery", "Exemplar", "GROUNDED_WEIGHTS", "Gold",
    "Grounding", "Judge", "PROTOCOLS", "Panel", "QAConfig", "Question", "QuestionSet", "ROLES", "RubricJudge",
    "RubricScore", "SUITE", "SUITE_VERSION", "SetRecord", "Verdict", "WEIGHTS", "aggregate", "aggregate_panel",
    "bundled_batteries", "check_evidence", "compare_baseline", "grounding_for", "load_battery",
    "load_question_set", "load_source", "mean_aggregate", "open_battery_corpus", "parse_arm", "plan_grounding",
    "question_set_hash", "reads_as_pass", "rescore_run", "resolve_battery_dir", "run_qa", "save_baseline",
    "score_answer", "tier1_match", "trust_gate",
]
