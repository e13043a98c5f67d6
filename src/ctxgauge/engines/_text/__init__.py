"""Text tools the engines share: code-aware tokens, per-blob term counts and their line deltas, sums and
stable orders over integer keys, what kind of file a path is, and locales."""
