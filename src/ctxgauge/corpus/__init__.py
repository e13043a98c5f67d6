"""Corpus: the files an engine indexes, read from a directory or from a git tree at any revision.

`_corpus` is the corpus itself (`Corpus`, `Change`, `History`, `open_corpus`); which files a corpus lists,
and why not the rest, is `_listing`'s; where their bytes come from is `_readers`'s.
"""

from ctxgauge.corpus._corpus import (BINARY_SNIFF_BYTES, DEFAULT_MAX_BYTES, HOLD_LIMIT, SKIP_REASONS, Change, Corpus,
                                     CorpusFile, History, is_binary, is_git_source, open_corpus, path_key,
                                     count_uncommitted, in_subtree, repo_name, source_line)

__all__ = ["BINARY_SNIFF_BYTES", "Change", "Corpus", "CorpusFile", "DEFAULT_MAX_BYTES", "HOLD_LIMIT", "History",
           "SKIP_REASONS", "count_uncommitted", "in_subtree", "is_binary", "is_git_source", "open_corpus", "path_key", "repo_name", "source_line"]
