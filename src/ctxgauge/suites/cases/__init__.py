"""Labelled cases: hand-written requests with expected files, pass lines, importers, external rankings."""
