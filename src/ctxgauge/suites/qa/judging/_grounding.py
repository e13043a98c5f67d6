"""Grounded judging: which questions a rubric judge grades against ground truth, and from what.

    ground_truth_chunk   grounds its question, no flag needed (dokimi's field)
    ground_truth         grounds its question when there is no chunk (a reference answer)
    expected_topics      grounds its question only under --grounded-from-topics, and only when the
                         topics' mean length is at least 40 characters

The 40-character rule keeps keyword lists out: tagged keyword topics measure 14-19 characters on
average, curated statements 78-195, so a list of keywords is never mistaken for a statement of fact a
judge could grade against. A grounded question is scored on a different scale (it adds a
factual-grounding dimension), so a run records which questions were grounded and from what
(`Grounding.to_dict`), and grounded and ungrounded scores are never averaged together.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ctxgauge.suites.qa.sources._questions import QuestionSet, SetRecord

TOPICS_MIN_MEAN_CHARS = 40
"""Mean characters per expected topic below which topics are keywords, not ground truth."""
SOURCES = ("ground_truth_chunk", "ground_truth", "expected_topics")


@dataclass(frozen=True)
class Grounding:
    """Whether one question is graded against ground truth, the text, and why."""

    qid: str
    text: str | None
    """The ground truth the judge sees, or None (ungrounded)."""
    source: str | None
    """ground_truth_chunk, ground_truth, expected_topics, or None."""
    detail: str = ""
    """Why a question with expected topics was not grounded from them."""

    @property
    def grounded(self) -> bool:
        return self.text is not None

    def to_dict(self) -> dict:
        return {"grounded": self.grounded, "source": self.source, "detail": self.detail}


def topics_mean_chars(topics: tuple[str, ...]) -> float | None:
    return statistics.fmean(len(t) for t in topics) if topics else None


def grounding_for(record: SetRecord, *, from_topics: bool = False) -> Grounding:
    """The grounding of one question under dokimi's rules (see the module docstring)."""
    if record.ground_truth_chunk:
        return Grounding(record.qid, record.ground_truth_chunk, "ground_truth_chunk")
    if record.ground_truth:
        return Grounding(record.qid, record.ground_truth, "ground_truth")
    mean = topics_mean_chars(record.expected_topics)
    if mean is None:
        return Grounding(record.qid, None, None)
    if not from_topics:
        return Grounding(record.qid, None, None, "expected_topics are used as ground truth only with "
                                                 "--grounded-from-topics")
    if mean < TOPICS_MIN_MEAN_CHARS:
        return Grounding(record.qid, None, None, f"expected_topics average {mean:.1f} characters, under "
                                                 f"{TOPICS_MIN_MEAN_CHARS}: keywords, not ground truth")
    return Grounding(record.qid, "\n".join(f"- {t}" for t in record.expected_topics), "expected_topics")


def plan_grounding(qset: QuestionSet, *, from_topics: bool = False) -> dict[str, Grounding]:
    """Every question's grounding, by id, in the set's order."""
    return {q.qid: grounding_for(qset.records[q.qid], from_topics=from_topics) for q in qset.questions}


def grounding_record(groundings: dict[str, Grounding], *, from_topics: bool) -> dict:
    """What a run records: the flag, the grounded question ids, and each question's grounding."""
    return {"from_topics": from_topics, "topics_min_mean_chars": TOPICS_MIN_MEAN_CHARS,
            "grounded": [qid for qid, g in groundings.items() if g.grounded],
            "questions": {qid: g.to_dict() for qid, g in groundings.items()}}
