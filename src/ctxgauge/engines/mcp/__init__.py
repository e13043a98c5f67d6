"""mcp: an MCP server's search tool as an engine, through the official SDK (the `[mcp]` extra).

`_engine` is the engine (parameters, identity, the contract); `_results` reads a tool's answer (no SDK
needed); `_client` is one connection through the SDK on the engine's event-loop thread, imported only when
a connection opens, so importing this package costs no SDK import.
"""

from ctxgauge.engines.mcp._engine import INSTALL, McpEngine, sdk_installed

__all__ = ["INSTALL", "McpEngine", "sdk_installed"]
