"""history: files ranked by what the repository's own past says about a request.

`_engine` is the engine; `_model` is the history component itself (co-change votes and priors, read only
through the git corpus's own view of its past).
"""

from ctxgauge.engines.history._engine import HistoryEngine

__all__ = ["HistoryEngine"]
