"""Tree-sitter extraction for the graph engine: the imports and top-level definitions of one source file.

Grammars, and which one parses a path, are `ctxgauge.syntax`'s (the per-language packages, loaded lazily
on first use, so importing this module costs nothing); their names are importable from here as before.
Imports are found anywhere in a file with a tree-sitter query (Python imports inside functions and
`if TYPE_CHECKING:` blocks, `require()` calls and Rust `use` in function bodies all count); definitions
come from a walk over the top level only (`_definitions`).

What an import string holds, per language (the resolver reads these forms):
- Python: the qualified name the statement binds. `import a.b` -> `a.b`; `from .x import y, z` -> `.x.y`,
  `.x.z`; `from m import *` -> `m`. The resolver takes the longest prefix that is a module, so a name that
  is a class or function falls back to its module. `from __future__` is not an import of a file.
- JavaScript/TypeScript: the specifier of `import`/`export ... from`, `import x = require()`, `require()`
  and `import()` with a literal string.
- Go: the import path. Java: the imported name, `a.b.*` for a wildcard, static imports as written.
- Rust: every leaf of a `use` tree as a full path (`use crate::a::{b, c::d}` -> `crate::a::b`,
  `crate::a::c::d`; `self` leaves name their parent), `mod x;` as the path it declares (`self::x`), and
  `extern crate x;` as `x`.

Definitions are names, a method as `Type.method` (`_definitions` says which, per language).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ctxgauge.engines.graph._definitions import DEFINITION_READERS, field_text, node_text
# The grammars live in ctxgauge.syntax (shared with the block-level metrics); imported under their old names.
from ctxgauge.syntax._grammars import EXTENSIONS, grammar_of, language_of, parser_and_query  # noqa: F401
from ctxgauge.syntax._grammars import load_language as _load_language  # noqa: F401

_IMPORT_QUERIES: dict[str, str] = {
    "python": "(import_statement) @imp (import_from_statement) @imp",
    "javascript": """
        (import_statement source: (string) @src)
        (export_statement source: (string) @src)
        (call_expression function: (identifier) @fn arguments: (arguments . (string) @src) (#eq? @fn "require"))
        (call_expression function: (import) arguments: (arguments . (string) @src))
    """,
    "go": "(import_spec path: (_) @src)",
    "java": "(import_declaration) @imp",
    "rust": """
        (use_declaration argument: (_) @use)
        (mod_item name: (identifier) @mod !body)
        (extern_crate_declaration name: (identifier) @crate)
    """,
}
# TypeScript adds `import x = require("y")`, which the JavaScript grammar does not have.
_IMPORT_QUERIES["typescript"] = _IMPORT_QUERIES["javascript"] + "(import_require_clause source: (string) @src)"
_IMPORT_QUERIES["tsx"] = _IMPORT_QUERIES["typescript"]


@dataclass(frozen=True)
class Parsed:
    """What one source file contributes to the graph: raw import strings and definition names, each in
    source order without repeats."""

    imports: tuple[str, ...]
    definitions: tuple[str, ...]


class SourceParser:
    """Parses source files into `Parsed`, holding one tree-sitter parser and import query per grammar
    (created on first use; a parser is not thread-safe, so each engine object owns its own)."""

    def __init__(self) -> None:
        self._parsers: dict[str, tuple[Any, Any]] = {}

    def _parser(self, grammar: str) -> tuple[Any, Any]:
        if grammar not in self._parsers:
            self._parsers[grammar] = parser_and_query(grammar, _IMPORT_QUERIES[grammar])
        return self._parsers[grammar]

    def parse(self, grammar: str, data: bytes, on_tree: Callable[[Any], None] | None = None) -> Parsed:
        """Imports and definitions of `data` parsed with `grammar` (see the module docstring for the forms).
        `on_tree`, when given, is called with the tree's root node first, so a caller reading something else
        from the same file does not parse it again."""
        import tree_sitter

        parser, query = self._parser(grammar)
        root = parser.parse(data).root_node
        if on_tree is not None:
            on_tree(root)
        captures = tree_sitter.QueryCursor(query).captures(root)
        # Captures come grouped by name; sorting by position restores source order whatever the grouping.
        nodes = sorted(((n.start_byte, name, n) for name, ns in captures.items() for n in ns if name != "fn"),
                       key=lambda t: (t[0], t[1]))
        family = "javascript" if grammar in ("typescript", "tsx") else grammar
        imports: list[str] = []
        for _, name, node in nodes:
            imports.extend(_IMPORT_READERS[family](name, node))
        definitions = DEFINITION_READERS[family](root)
        return Parsed(_unique(imports), _unique(definitions))


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


_QUOTES = re.compile(r"""^(['"`])(.*)\1$""", re.S)


def _unquote(text: str) -> str:
    m = _QUOTES.match(text.strip())
    return m.group(2) if m else text.strip()


# -- imports ---------------------------------------------------------------------------------------------
def _python_imports(_: str, node: Any) -> list[str]:
    if node.type == "import_statement":
        out = []
        for child in node.children_by_field_name("name"):
            target = child.child_by_field_name("name") if child.type == "aliased_import" else child
            out.append(node_text(target))
        return out
    module = node_text(node.child_by_field_name("module_name")).replace(" ", "")
    names = [c.child_by_field_name("name") if c.type == "aliased_import" else c
             for c in node.children_by_field_name("name")]
    if not names:  # `from m import *`
        return [module]
    sep = "" if module.endswith(".") else "."
    return [module + sep + node_text(n) for n in names]


def _js_imports(_: str, node: Any) -> list[str]:
    text = _unquote(node_text(node))
    # A specifier with a substitution or a line break is computed at run time: not a file we can name.
    return [text] if text and "${" not in text and "\n" not in text else []


def _go_imports(_: str, node: Any) -> list[str]:
    return [_unquote(node_text(node))]


def _java_imports(_: str, node: Any) -> list[str]:
    name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    if name is None:
        return []
    text = re.sub(r"\s+", "", node_text(name))
    if any(c.type == "asterisk" for c in node.children):
        text += ".*"
    return [text]


def _rust_use_paths(node: Any, prefix: str) -> list[str]:
    """The full paths a `use` tree names, `prefix` being the path of the enclosing list."""
    def join(a: str, b: str) -> str:
        if b == "self":  # `use a::{self}` imports `a` itself
            return a
        return f"{a}::{b}" if a else b

    t = node.type
    if t in ("identifier", "crate", "self", "super", "scoped_identifier", "metavariable"):
        return [join(prefix, re.sub(r"\s+", "", node_text(node)))]
    if t == "use_as_clause":
        return _rust_use_paths(node.child_by_field_name("path"), prefix)
    if t == "use_wildcard":  # `a::*` names the module `a`
        inner = next((c for c in node.named_children), None)
        return _rust_use_paths(inner, prefix) if inner is not None else ([prefix] if prefix else [])
    if t == "scoped_use_list":
        path = node.child_by_field_name("path")
        base = join(prefix, re.sub(r"\s+", "", node_text(path))) if path is not None else prefix
        return _rust_use_paths(node.child_by_field_name("list"), base)
    if t == "use_list":
        return [p for c in node.named_children for p in _rust_use_paths(c, prefix)]
    return []


def _rust_imports(name: str, node: Any) -> list[str]:
    if name == "use":
        return _rust_use_paths(node, "")
    if name == "mod":
        return ["self::" + node_text(node)]
    return [node_text(node)]  # extern crate


_IMPORT_READERS: dict[str, Callable[[str, Any], list[str]]] = {
    "python": _python_imports,
    "javascript": _js_imports,
    "go": _go_imports,
    "java": _java_imports,
    "rust": _rust_imports,
}
