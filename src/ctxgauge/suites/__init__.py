"""Suites: replay, cases, determinism, qa. Each writes its run through ctxgauge.records."""
