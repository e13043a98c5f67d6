"""The grammars ctxgauge ships, and which one parses a path.

Grammars come from the per-language packages (tree-sitter-python, -javascript, -typescript, -go, -java,
-rust), never from a bundle that downloads grammars at run time, and load lazily on first use so importing
this module costs nothing. Moved here from `engines/graph/_parse.py` (which still exports these names) so
the metrics and the engines read files with the same grammars.
"""

from __future__ import annotations

import posixpath
from typing import Any

# Extension -> (language reported in summaries, grammar used to parse). TSX needs its own grammar: the
# TypeScript one reads `<T>x` as a cast, so JSX in a .tsx file would parse as errors.
EXTENSIONS: dict[str, tuple[str, str]] = {
    ".py": ("python", "python"),
    ".pyi": ("python", "python"),
    ".js": ("javascript", "javascript"),
    ".mjs": ("javascript", "javascript"),
    ".cjs": ("javascript", "javascript"),
    ".jsx": ("javascript", "javascript"),
    ".ts": ("typescript", "typescript"),
    ".mts": ("typescript", "typescript"),
    ".cts": ("typescript", "typescript"),
    ".tsx": ("typescript", "tsx"),
    ".go": ("go", "go"),
    ".java": ("java", "java"),
    ".rs": ("rust", "rust"),
}


def language_of(path: str) -> str | None:
    """The language a path is parsed as (`python`, `javascript`, `typescript`, `go`, `java`, `rust`), or None."""
    entry = EXTENSIONS.get(posixpath.splitext(path)[1].lower())
    return entry[0] if entry else None


def grammar_of(path: str) -> str | None:
    """The grammar a path is parsed with (as `language_of`, but `tsx` for .tsx files), or None."""
    entry = EXTENSIONS.get(posixpath.splitext(path)[1].lower())
    return entry[1] if entry else None


def load_language(grammar: str) -> Any:
    """The tree-sitter `Language` of a grammar name (`python`, `javascript`, `typescript`, `tsx`, `go`,
    `java`, `rust`); ValueError for any other."""
    # Imported here, not at module level, so importing ctxgauge never loads a grammar.
    import tree_sitter

    if grammar == "python":
        import tree_sitter_python as mod

        return tree_sitter.Language(mod.language())
    if grammar == "javascript":
        import tree_sitter_javascript as mod

        return tree_sitter.Language(mod.language())
    if grammar in ("typescript", "tsx"):
        import tree_sitter_typescript as mod

        fn = mod.language_tsx if grammar == "tsx" else mod.language_typescript
        return tree_sitter.Language(fn())
    if grammar == "go":
        import tree_sitter_go as mod

        return tree_sitter.Language(mod.language())
    if grammar == "java":
        import tree_sitter_java as mod

        return tree_sitter.Language(mod.language())
    if grammar == "rust":
        import tree_sitter_rust as mod

        return tree_sitter.Language(mod.language())
    raise ValueError(f"no grammar {grammar!r}")


def parser_and_query(grammar: str, query: str) -> tuple[Any, Any]:
    """A new tree-sitter parser for `grammar` and `query` compiled for it (a parser is not thread-safe:
    each holder keeps its own)."""
    import tree_sitter

    lang = load_language(grammar)
    return tree_sitter.Parser(lang), tree_sitter.Query(lang, query)
