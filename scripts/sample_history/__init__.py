"""The history of the shelfd sample repository, as data.

``make_sample.py`` replays ``HISTORY`` step by step. A step is a commit (a
subject, an author and file edits), a branch switch, a merge or a tag; the
types live in ``steps.py``. File edits are small on purpose: most commits
replace one snippet with another, so each diff looks like a developer's change
rather than a rewrite.

shelfd itself is fiction written for this fixture: a lending service for a
community library with a Python backend (``shelfd/``) and a TypeScript web
client (``web/``). The code is meant to be plausible and self-consistent (real
imports, functions that call each other, tests that pass at every commit),
because ctxgauge's engines build import graphs and lexical indexes over it.

The history is split into phases only to keep each module a readable size;
they run in order.
"""

from .phase1_core import PHASE_1
from .phase2_api import PHASE_2
from .phase3_web import PHASE_3
from .phase4_features import PHASE_4
from .phase5_holds import PHASE_5
from .phase6_polish import PHASE_6
from .steps import Step

HISTORY: list[Step] = [*PHASE_1, *PHASE_2, *PHASE_3, *PHASE_4, *PHASE_5, *PHASE_6]
