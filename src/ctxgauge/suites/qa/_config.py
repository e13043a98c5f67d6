"""What `ctxgauge qa run` is asked to do: the suite's name and version, and every option as `QAConfig`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ctxgauge.suites.qa.judging._scoring import SCORER_VERSION

SUITE = "qa"
SUITE_VERSION = 2
"""The suite's own version (an integer; dc65eaf and before wrote the string "1" in each arm's identity).
2: the context arm packs the engine's spans (or whole files) under `path:start-end` headers, whole lines
only, at --token-budget tokens counted by the tokenizer (1 cut whole files at 4 characters a token), and
records the packed context's tokens per answer; the spec records the tokenizer."""


@dataclass
class QAConfig:
    """Every option of `ctxgauge qa run`; the recorded spec is this minus where things live."""

    source: str
    arms: list[str]
    model: str | None = None
    judge: str | None = None
    provider: str | None = None
    base_url: str | None = None
    judge_provider: str | None = None
    judge_base_url: str | None = None
    protocol: str = "zero-shot"
    repeat: int = 1
    out: Path | None = None
    resume: bool = False
    repo: Path | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    token_budget: int = 6000
    """Context arm: tokens (the run's tokenizer, o200k_base) of the packed context in each prompt."""
    max_turns: int = 8
    max_tokens: int = 1024
    command_timeout: float = 600.0
    rates: str | None = None
    scorer: str = SCORER_VERSION
    """The scorer version (SCORERS): ctxgauge-qa-2, or ctxgauge-qa-1 for Corograph's published behaviour."""
    baseline_arm: str | None = None
    """The arm every other is compared with (paired interval, p-value, Cohen's d); default `none`."""
    grounded_from_topics: bool = False
    """Promote curated expected_topics (mean length >= 40 characters) to ground truth (see `_grounding`)."""
    panel: bool = False
    """Question sets: the judge panel (three roles, `_panel`) scores every answer beside the rubric."""
    extra: dict = field(default_factory=dict)

    def spec(self) -> dict:
        """The recorded options: no base URL, cache path or output path (where, not what), never a key."""
        d = asdict(self)
        for k in ("out", "resume", "repo", "cache_dir", "base_url", "judge_base_url", "extra", "use_cache"):
            d.pop(k)
        return d
