"""fusion: lexical, structural and historical evidence added up, the strongest built-in engine.

`_engine` is the engine; what a request names outright (`_request`), the stack-trace frames it quotes
(`_frames`), the messages it quotes (`_literals`) and the functions those call (`_calls`) are its parts.
"""

from ctxgauge.engines.fusion._engine import FusionEngine

__all__ = ["FusionEngine"]
