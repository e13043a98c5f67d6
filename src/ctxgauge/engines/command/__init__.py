"""command: any executable that speaks JSON lines on stdin/stdout is an engine.

`_engine` is the engine and its protocol; `_process` is one external program as a child process, knowing
nothing of the protocol.
"""

from ctxgauge.engines.command._engine import CommandEngine

__all__ = ["CommandEngine"]
