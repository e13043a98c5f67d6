"""One call deeper: the files defining what the functions a request names call.

An issue names the function the user called (`autodoc_process_docstring`, `Session.request()`, a frame's
`in rewrite_asserts`); the fix is as often in a function that one calls. The fusion's `define` component
finds the file defining a named function; this module finds, one level deeper, the files defining its
callees.

`calls(grammar, data)` reads one source file with tree-sitter: each definition (function, method, class;
named as the graph's definitions are, `Class.method` for a method of a top-level class) with the names it
calls, in source order without repeats. A call's name is its callee's last identifier (`self.run(...)`,
`a.b.run(...)` and `run(...)` all call `run`); a nested function's calls count for the definition around
it; a Python class also "calls" its base classes, and a named class its constructor's callees.
Module-level calls count for nobody.

`callee_files(names, calls, definitions)` maps the named functions to their callees' files: each callee
defined in n files (1 <= n <= `MAX_FILES`) gives each 1/n, summed per named function and scaled so every
named function's best file gets 1, then summed over the named functions. A name defined in more than
`MAX_FILES` places (`get`, `__init__`) says nothing, as a callee and as a named function alike.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ctxgauge.engines._text.path_kinds import path_kind

MAX_FILES = 5
"""A named function, or a callee, defined in more files than this is too common to point anywhere."""

_NOWHERE = frozenset(("test", "docs", "generated"))
"""Path kinds a named definition or a callee is not looked for in (a user's test, an example, vendored code)."""
_CLASS, _FUNC = "class", "func"
_QUERIES: dict[str, str] = {
    "python": """
        (class_definition) @class
        (function_definition) @func
        (call function: (identifier) @callee)
        (call function: (attribute attribute: (identifier) @callee))
        (class_definition superclasses: (argument_list (identifier) @callee))
        (class_definition superclasses: (argument_list (attribute attribute: (identifier) @callee)))
    """,
    "javascript": """
        (class_declaration) @class
        (function_declaration) @func
        (generator_function_declaration) @func
        (method_definition) @func
        (variable_declarator value: [(arrow_function) (function_expression)]) @func
        (call_expression function: (identifier) @callee)
        (call_expression function: (member_expression property: (property_identifier) @callee))
        (new_expression constructor: (identifier) @callee)
    """,
    "go": """
        (function_declaration) @func
        (method_declaration) @func
        (call_expression function: (identifier) @callee)
        (call_expression function: (selector_expression field: (field_identifier) @callee))
    """,
    "java": """
        (class_declaration) @class
        (method_declaration) @func
        (method_invocation name: (identifier) @callee)
        (object_creation_expression type: (type_identifier) @callee)
    """,
    "rust": """
        (function_item) @func
        (call_expression function: (identifier) @callee)
        (call_expression function: (scoped_identifier name: (identifier) @callee))
        (call_expression function: (field_expression field: (field_identifier) @callee))
    """,
}
_QUERIES["typescript"] = _QUERIES["javascript"].replace("(class_declaration) @class",
                                                        "(class_declaration) @class (abstract_class_declaration) @class")
_QUERIES["tsx"] = _QUERIES["typescript"]


class CallReader:
    """Reads `calls` from source files, holding one tree-sitter parser and query per grammar (created on
    first use; not thread-safe: each engine object owns its own)."""

    def __init__(self) -> None:
        self._by_grammar: dict[str, tuple[Any, Any]] = {}

    def _parser(self, grammar: str) -> tuple[Any, Any]:
        if grammar not in self._by_grammar:
            from ctxgauge.engines.graph._parse import parser_and_query

            self._by_grammar[grammar] = parser_and_query(grammar, _QUERIES[grammar])
        return self._by_grammar[grammar]

    def calls(self, grammar: str, data: bytes) -> dict[str, list[str]]:
        """Definition name -> the names it calls, both in source order without repeats (module docstring);
        definitions calling nothing are left out."""
        if grammar not in _QUERIES:
            return {}
        parser, _ = self._parser(grammar)
        return self.calls_in(grammar, parser.parse(data).root_node)

    def calls_in(self, grammar: str, root: Any) -> dict[str, list[str]]:
        """`calls` of a file already parsed with `grammar` (its tree's root node)."""
        import tree_sitter

        if grammar not in _QUERIES:
            return {}
        _, query = self._parser(grammar)
        caps = tree_sitter.QueryCursor(query).captures(root)
        defs = sorted((n.start_byte, -n.end_byte, kind, n) for kind in (_CLASS, _FUNC) for n in caps.get(kind, ()))
        callees = sorted((n.start_byte, n.text.decode("utf-8", "replace")) for n in caps.get("callee", ()))
        out: dict[str, dict[str, None]] = {}
        stack: list[tuple[int, str, str]] = []  # (end byte, kind, key) of the definitions open here
        events = [(start, 0, i) for i, (start, *_rest) in enumerate(defs)] + \
                 [(start, 1, i) for i, (start, _) in enumerate(callees)]
        # A definition opens before a call starting at the same byte (a decorated call never does).
        for start, what, i in sorted(events):
            while stack and stack[-1][0] <= start:
                stack.pop()
            if what == 0:
                _, neg_end, kind, node = defs[i]
                name_node = node.child_by_field_name("name")
                name = name_node.text.decode("utf-8", "replace") if name_node is not None else ""
                if not stack:
                    key = name
                elif stack[-1][1] == _CLASS and len(stack) == 1:
                    key = f"{stack[-1][2]}.{name}" if name else stack[-1][2]
                else:
                    key = stack[-1][2]  # a nested function's calls are its outer definition's
                stack.append((-neg_end, kind, key))
            elif stack and stack[-1][2]:
                name = callees[i][1]
                if name != stack[-1][2].rsplit(".", 1)[-1]:  # recursion names itself, nothing deeper
                    out.setdefault(stack[-1][2], {})[name] = None
        return {k: list(v) for k, v in out.items()}


class CallCache:
    """Each file's definitions and their callees, read once per (grammar, blob) for the engine object's
    life (a replay or a run of cases reads a blob once however many revisions hold it)."""

    def __init__(self) -> None:
        self._reader: CallReader | None = None
        self._by_blob: dict[tuple[str, str], dict[str, list[str]]] = {}

    def take_tree(self, grammar: str, blob: str, root: Any) -> None:
        """Read a blob's calls from a tree parsed elsewhere (the graph sub-engine's parse of the same bytes
        with the same grammar), so `read` need not parse it again."""
        if grammar in _QUERIES and (grammar, blob) not in self._by_blob:
            self._reader = self._reader or CallReader()
            self._by_blob[(grammar, blob)] = self._reader.calls_in(grammar, root)

    def read(self, corpus: Any, definitions: Mapping[str, Sequence[str]]) -> dict[str, dict[str, list[str]]]:
        """path -> definition -> callees, for every file of `corpus` with a grammar, keeping only callees
        `definitions` (lowercased name -> files) holds in 1..`MAX_FILES` files (a builtin, a library's
        function or a name defined everywhere leads nowhere), and only definitions with a callee left."""
        from ctxgauge.engines.graph._parse import grammar_of

        code = [(f, grammar_of(f.path)) for f in corpus.files]
        code = [(f, g) for f, g in code if g in _QUERIES]
        todo = {f.path: g for f, g in code if (g, f.blob) not in self._by_blob}
        if todo:
            self._reader = self._reader or CallReader()
            for f, data in corpus.iter_bytes([f for f, _ in code if f.path in todo]):
                g = todo[f.path]
                self._by_blob[(g, f.blob)] = self._reader.calls(g, data)
        out: dict[str, dict[str, list[str]]] = {}
        for f, g in code:
            kept = {}
            for d, callees in self._by_blob[(g, f.blob)].items():
                useful = [c for c in callees if 0 < len(definitions.get(c.lower(), ())) <= MAX_FILES]
                if useful:
                    kept[d] = useful
            if kept:
                out[f.path] = kept
        return out


def calls_by_name(calls: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, list[tuple[str, str]]]:
    """Lowercased definition name (its last dotted segment, and a class's own name) -> (path, definition)
    pairs, sorted: the index a request's names are looked up in."""
    table: dict[str, set[tuple[str, str]]] = {}
    for path, defs in calls.items():
        for d in defs:
            table.setdefault(d.rsplit(".", 1)[-1].lower(), set()).add((path, d))
            if d.endswith(".__init__"):  # a class named in a request: what constructing it calls
                cls = d[: -len(".__init__")]
                table.setdefault(cls.rsplit(".", 1)[-1].lower(), set()).add((path, cls))
    return {k: sorted(v) for k, v in table.items()}


def callee_files(names: Iterable[str], calls: Mapping[str, Mapping[str, Sequence[str]]],
                 by_name: Mapping[str, Sequence[tuple[str, str]]],
                 definitions: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """path -> how strongly it defines what the named functions call (module docstring). `names` are
    lowercased identifiers; `calls` path -> definition -> callees; `by_name` is `calls_by_name(calls)`;
    `definitions` lowercased name -> files defining it (the fusion's definitions table)."""
    out: dict[str, float] = {}
    for name in dict.fromkeys(names):
        named = by_name.get(name, ())
        if not named or len({p for p, _ in named}) > MAX_FILES:
            continue
        score: dict[str, float] = {}
        for path, d in named:
            if path_kind(path) in _NOWHERE:
                continue
            defs = calls[path]
            callees = list(defs.get(d, ()))
            if "." not in d and f"{d}.__init__" in defs:  # a named class: what constructing it calls
                callees += defs[f"{d}.__init__"]
            for callee in dict.fromkeys(callees):
                files = definitions.get(callee.lower(), ())
                if 0 < len(files) <= MAX_FILES:
                    for f in files:
                        if path_kind(f) not in _NOWHERE:
                            score[f] = score.get(f, 0.0) + 1.0 / len(files)
        top = max(score.values(), default=0.0)
        for f, s in sorted(score.items()):
            out[f] = out.get(f, 0.0) + s / top
    return out
