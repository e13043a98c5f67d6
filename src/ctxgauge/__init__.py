"""ctxgauge: measure AI context engines.

Is it right (replay, cases), is it the same every time (determinism), does it help a model answer (qa).
"""

__version__ = "0.1.0"
