"""A plugin module that fails to import, as one whose optional dependency is missing would."""

raise ImportError("ctxgauge_plugin_demo.broken needs the library 'nonexistent_dependency'")
