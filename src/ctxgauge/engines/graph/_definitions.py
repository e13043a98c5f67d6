"""The top-level definitions of one parsed source file, per language: names, a method as `Type.method`.

Python functions, classes and methods of top-level classes; JS/TS function and class declarations (with
methods), top-level consts bound to functions or classes, and every exported function, class, const,
interface, type and enum; Go functions, methods and types; Java top-level types, their methods and nested
types; Rust functions, structs, enums, unions, traits (with their methods), impl methods, type aliases,
consts, statics and `macro_rules!`. Each reader walks the top level of a tree-sitter tree (`_parse` parses).
"""

from __future__ import annotations

from typing import Any, Callable


def node_text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def field_text(node: Any, field: str = "name") -> str:
    return node_text(node.child_by_field_name(field))


def _python_definitions(root: Any) -> list[str]:
    def unwrap(n: Any) -> Any:
        return n.child_by_field_name("definition") if n.type == "decorated_definition" else n

    out: list[str] = []
    for node in map(unwrap, root.named_children):
        if node is None or node.type not in ("function_definition", "class_definition"):
            continue
        name = field_text(node)
        out.append(name)
        if node.type == "class_definition":
            body = node.child_by_field_name("body")
            for member in map(unwrap, body.named_children if body is not None else []):
                if member is not None and member.type == "function_definition":
                    out.append(f"{name}.{field_text(member)}")
    return out


_JS_CLASSES = ("class_declaration", "abstract_class_declaration")
_JS_FUNCTIONS = ("function_declaration", "generator_function_declaration", "function_signature")
_JS_TYPES = ("interface_declaration", "type_alias_declaration", "enum_declaration")
_JS_CALLABLE_VALUES = ("arrow_function", "function_expression", "function", "generator_function", "class")


def _js_declaration(node: Any, exported: bool) -> list[str]:
    t = node.type
    if t in _JS_FUNCTIONS or t in _JS_TYPES:
        return [field_text(node)]
    if t in _JS_CLASSES:
        name = field_text(node)
        body = node.child_by_field_name("body")
        methods = [m for m in (body.named_children if body is not None else [])
                   if m.type in ("method_definition", "abstract_method_signature")]
        return [name] + [f"{name}.{field_text(m)}" for m in methods if field_text(m)]
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
                out.append(node_text(target))
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
    return node_text(node)


def _go_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type == "function_declaration":
            out.append(field_text(node))
        elif node.type == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            param = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None) \
                if receiver is not None else None
            owner = _go_receiver_type(param.child_by_field_name("type")) if param is not None else ""
            out.append(f"{owner}.{field_text(node)}" if owner else field_text(node))
        elif node.type == "type_declaration":
            out.extend(field_text(spec) for spec in node.named_children if spec.type in ("type_spec", "type_alias"))
    return out


_JAVA_TYPES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
               "annotation_type_declaration")


def _java_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type not in _JAVA_TYPES:
            continue
        name = field_text(node)
        out.append(name)
        body = node.child_by_field_name("body")
        members = list(body.named_children) if body is not None else []
        # Enum methods sit one level down, inside enum_body_declarations.
        members += [m for b in members if b.type == "enum_body_declarations" for m in b.named_children]
        for member in members:
            if member.type == "method_declaration" or member.type in _JAVA_TYPES:
                out.append(f"{name}.{field_text(member)}")
    return out


_RUST_ITEMS = ("function_item", "struct_item", "enum_item", "union_item", "type_item", "const_item",
               "static_item", "macro_definition", "function_signature_item")


def _rust_type_name(node: Any) -> str:
    while node is not None and node.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        node = node.child_by_field_name("name") if node.type == "scoped_type_identifier" \
            else node.child_by_field_name("type")
    return node_text(node)


def _rust_definitions(root: Any) -> list[str]:
    out: list[str] = []
    for node in root.named_children:
        if node.type in _RUST_ITEMS:
            out.append(field_text(node))
        elif node.type in ("trait_item", "impl_item"):
            owner = field_text(node) if node.type == "trait_item" else _rust_type_name(node.child_by_field_name("type"))
            if node.type == "trait_item":
                out.append(owner)
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else []:
                if member.type in ("function_item", "function_signature_item"):
                    out.append(f"{owner}.{field_text(member)}" if owner else field_text(member))
    return out


DEFINITION_READERS: dict[str, Callable[[Any], list[str]]] = {
    "python": _python_definitions,
    "javascript": _js_definitions,
    "go": _go_definitions,
    "java": _java_definitions,
    "rust": _rust_definitions,
}
