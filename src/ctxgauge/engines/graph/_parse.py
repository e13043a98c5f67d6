"""Tree-sitter extraction for the graph engine: the imports and top-level definitions of one source file.

Grammars come from the per-language packages (tree-sitter-python, -javascript, -typescript, -go, -java,
-rust), never from a bundle that downloads grammars at run time, and load lazily on first use so importing
this module costs nothing. Imports are found anywhere in a file with a tree-sitter query (Python imports
inside functions and `if TYPE_CHECKING:` blocks, `require()` calls and Rust `use` in function bodies all
count); definitions come from a walk over the top level only.

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

Definitions are names, a method as `Type.method`: Python functions, classes and methods of top-level
classes; JS/TS function and class declarations (with methods), top-level consts bound to functions or
classes, and every exported function, class, const, interface, type and enum; Go functions, methods and
types; Java top-level types, their methods and nested types; Rust functions, structs, enums, unions, traits
(with their methods), impl methods, type aliases, consts, statics and `macro_rules!`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any, Callable

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


def language_of(path: str) -> str | None:
    """The language a path is parsed as (`python`, `javascript`, `typescript`, `go`, `java`, `rust`), or None."""
    entry = EXTENSIONS.get(posixpath.splitext(path)[1].lower())
    return entry[0] if entry else None


def grammar_of(path: str) -> str | None:
    """The grammar a path is parsed with (as `language_of`, but `tsx` for .tsx files), or None."""
    entry = EXTENSIONS.get(posixpath.splitext(path)[1].lower())
    return entry[1] if entry else None


@dataclass(frozen=True)
class Parsed:
    """What one source file contributes to the graph: raw import strings and definition names, each in
    source order without repeats."""

    imports: tuple[str, ...]
    definitions: tuple[str, ...]


def _load_language(grammar: str) -> Any:
    # Imported here, not at module level, so `import ctxgauge.engines.graph` never loads a grammar.
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

    lang = _load_language(grammar)
    return tree_sitter.Parser(lang), tree_sitter.Query(lang, query)


class SourceParser:
    """Parses source files into `Parsed`, holding one tree-sitter parser and import query per grammar
    (created on first use; a parser is not thread-safe, so each engine object owns its own)."""

    def __init__(self) -> None:
        self._parsers: dict[str, tuple[Any, Any]] = {}

    def _parser(self, grammar: str) -> tuple[Any, Any]:
        if grammar not in self._parsers:
            self._parsers[grammar] = parser_and_query(grammar, _IMPORT_QUERIES[grammar])
        return self._parsers[grammar]

    def parse(self, grammar: str, data: bytes) -> Parsed:
        """Imports and definitions of `data` parsed with `grammar` (see the module docstring for the forms)."""
        import tree_sitter

        parser, query = self._parser(grammar)
        root = parser.parse(data).root_node
        captures = tree_sitter.QueryCursor(query).captures(root)
        # Captures come grouped by name; sorting by position restores source order whatever the grouping.
        nodes = sorted(((n.start_byte, name, n) for name, ns in captures.items() for n in ns if name != "fn"),
                       key=lambda t: (t[0], t[1]))
        family = "javascript" if grammar in ("typescript", "tsx") else grammar
        imports: list[str] = []
        for _, name, node in nodes:
            imports.extend(_IMPORT_READERS[family](name, node))
        definitions = _DEFINITION_READERS[family](root)
        return Parsed(_unique(imports), _unique(definitions))


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _name(node: Any, field: str = "name") -> str:
    return _text(node.child_by_field_name(field))


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
            out.append(_text(target))
        return out
    module = _text(node.child_by_field_name("module_name")).replace(" ", "")
    names = [c.child_by_field_name("name") if c.type == "aliased_import" else c
             for c in node.children_by_field_name("name")]
    if not names:  # `from m import *`
        return [module]
    sep = "" if module.endswith(".") else "."
    return [module + sep + _text(n) for n in names]


def _js_imports(_: str, node: Any) -> list[str]:
    text = _unquote(_text(node))
    # A specifier with a substitution or a line break is computed at run time: not a file we can name.
    return [text] if text and "${" not in text and "\n" not in text else []


def _go_imports(_: str, node: Any) -> list[str]:
    return [_unquote(_text(node))]


def _java_imports(_: str, node: Any) -> list[str]:
    name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    if name is None:
        return []
    text = re.sub(r"\s+", "", _text(name))
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
        return [join(prefix, re.sub(r"\s+", "", _text(node)))]
    if t == "use_as_clause":
        return _rust_use_paths(node.child_by_field_name("path"), prefix)
    if t == "use_wildcard":  # `a::*` names the module `a`
        inner = next((c for c in node.named_children), None)
        return _rust_use_paths(inner, prefix) if inner is not None else ([prefix] if prefix else [])
    if t == "scoped_use_list":
        path = node.child_by_field_name("path")
        base = join(prefix, re.sub(r"\s+", "", _text(path))) if path is not None else prefix
        return _rust_use_paths(node.child_by_field_name("list"), base)
    if t == "use_list":
        return [p for c in node.named_children for p in _rust_use_paths(c, prefix)]
    return []


def _rust_imports(name: str, node: Any) -> list[str]:
    if name == "use":
        return _rust_use_paths(node, "")
    if name == "mod":
        return ["self::" + _text(node)]
    return [_text(node)]  # extern crate


_IMPORT_READERS: dict[str, Callable[[str, Any], list[str]]] = {
    "python": _python_imports,
    "javascript": _js_imports,
    "go": _go_imports,
    "java": _java_imports,
    "rust": _rust_imports,
}


# -- definitions -----------------------------------------------------------------------------------------
def _python_definitions(root: Any) -> list[str]:
    def unwrap(n: Any) -> Any:
        return n.child_by_field_name("definition") if n.type == "decorated_definition" else n

    out: list[str] = []
    for node in map(unwrap, root.named_children):
        if node is None or node.type not in ("function_definition", "class_definition"):
            continue
        name = _name(node)
        out.append(name)
        if node.type == "class_definition":
            body = node.child_by_field_name("body")
            for member in map(unwrap, body.named_children if body is not None else []):
                if member is not None and member.type == "function_definition":
                    out.append(f"{name}.{_name(member)}")
    return out


_JS_CLASSES = ("class_declaration", "abstract_class_declaration")
_JS_FUNCTIONS = ("function_declaration", "generator_function_declaration", "function_signature")
_JS_TYPES = ("interface_declaration", "type_alias_declaration", "enum_declaration")
_JS_CALLABLE_VALUES = ("arrow_function", "function_expression", "function", "generator_function", "class")


def _js_declaration(node: Any, exported: bool) -> list[str]:
    t = node.type
    if t in _JS_FUNCTIONS or t in _JS_TYPES:
        return [_name(node)]
    if t in _JS_CLASSES:
        name = _name(node)
        body = node.child_by_field_name("body")
        methods = [m for m in (body.named_children if body is not None else [])
                   if m.type in ("method_definition", "abstract_method_signature")]
        return [name] + [f"{name}.{_name(m)}" for m in methods if _name(m)]
    if t in ("lexical_declaration", "variable_declaration"):
        out = []
        for decl in node.named_children:
            if decl.type != "variable_declarator":
                continue
            target, value = decl.child_by_field_name("name"), decl.child_by_field_name("value")
            # Unexported consts count only when they hold a function or class (CommonJS modules export
            # those through `module.exports`); destructuring patterns name nothing new.
            if target is not None and target.type == "identifier" and (
                exported or (value is not None and value.type in _JS_CALLABLE_VALUES)):
                out.append(_text(target))
        return out
    if t == "ambient_declaration":  # `declare function f(): void` in .d.ts files
        return [n for c in node.named_children for n in _js_declaration(c, exported)]
    return []


def _js_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type == "export_statement":
            decl = node.child_by_field_name("declaration")
            if decl is not None:
                out.extend(_js_declaration(decl, True))
        else:
            out.extend(_js_declaration(node, False))
    return out


def _go_receiver_type(node: Any) -> str:
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        node = node.child_by_field_name("type") or next(iter(node.named_children), None)
    return _text(node)


def _go_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type == "function_declaration":
            out.append(_name(node))
        elif node.type == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            param = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None) \
                if receiver is not None else None
            owner = _go_receiver_type(param.child_by_field_name("type")) if param is not None else ""
            out.append(f"{owner}.{_name(node)}" if owner else _name(node))
        elif node.type == "type_declaration":
            out.extend(_name(spec) for spec in node.named_children if spec.type in ("type_spec", "type_alias"))
    return out


_JAVA_TYPES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
               "annotation_type_declaration")


def _java_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type not in _JAVA_TYPES:
            continue
        name = _name(node)
        out.append(name)
        body = node.child_by_field_name("body")
        members = list(body.named_children) if body is not None else []
        # Enum methods sit one level down, inside enum_body_declarations.
        members += [m for b in members if b.type == "enum_body_declarations" for m in b.named_children]
        for member in members:
            if member.type == "method_declaration" or member.type in _JAVA_TYPES:
                out.append(f"{name}.{_name(member)}")
    return out


_RUST_ITEMS = ("function_item", "struct_item", "enum_item", "union_item", "type_item", "const_item",
               "static_item", "macro_definition", "function_signature_item")


def _rust_type_name(node: Any) -> str:
    while node is not None and node.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        node = node.child_by_field_name("name") if node.type == "scoped_type_identifier" \
            else node.child_by_field_name("type")
    return _text(node)


def _rust_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type in _RUST_ITEMS:
            out.append(_name(node))
        elif node.type in ("trait_item", "impl_item"):
            owner = _name(node) if node.type == "trait_item" else _rust_type_name(node.child_by_field_name("type"))
            if node.type == "trait_item":
                out.append(owner)
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else []:
                if member.type in ("function_item", "function_signature_item"):
                    out.append(f"{owner}.{_name(member)}" if owner else _name(member))
    return out


_DEFINITION_READERS: dict[str, Callable[[Any], list[str]]] = {
    "python": _python_definitions,
    "javascript": _js_definitions,
    "go": _go_definitions,
    "java": _java_definitions,
    "rust": _rust_definitions,
}
