from __future__ import annotations

import pytest

from ctxgauge.engines import EngineSpec, get_engine, parse_spec
from ctxgauge.errors import UserError


@pytest.mark.parametrize("text", [
    "bm25", "bm25(b=0.75,k1=1.2)", 'command(cmd="node engine.js --flag a,b",timeout=30)',
    "hybrid(engines=\"bm25,grep\",rrf_k=60)", "x(flag=true,n=-3,none=null,off=false)",
])
def test_canonical_specs_parse_back(text):
    spec = parse_spec(text)
    assert str(spec) == text
    assert parse_spec(str(spec)) == spec


def test_params_are_sorted_and_bare_words_are_strings():
    assert str(parse_spec("bm25( k1 = 1.2 , b=0.75 )")) == "bm25(b=0.75,k1=1.2)"
    assert parse_spec("e(mode=fast)").kwargs == {"mode": "fast"}
    assert EngineSpec("bm25").with_params(k1=2.0) == parse_spec("bm25(k1=2.0)")


@pytest.mark.parametrize("bad", ["", "bm25(", "bm25(1.2)", "bm25(k1=[1])", "bm 25", "bm25(**x)"])
def test_malformed_specs_are_user_errors(bad):
    with pytest.raises(UserError):
        parse_spec(bad)


def test_engine_name_is_its_canonical_spec():
    e = get_engine("bm25(k1=1.5)")
    assert e.name == "bm25(k1=1.5)"
    assert e.params["k1"] == 1.5 and e.params["b"] == 0.75
    assert get_engine(e.name).identity() == e.identity()
    assert get_engine("bm25(k1=1.6)").identity() != e.identity()
    with pytest.raises(UserError, match="no parameter 'zz'"):
        get_engine("bm25(zz=1)")
    with pytest.raises(UserError, match="unknown engine 'nope'"):
        get_engine("nope")


# -- declared parameters: one system, one name ----------------------------------------------------------

@pytest.mark.parametrize("spec, canonical", [
    ("bm25", "bm25"),
    ("bm25(k1=1.2)", "bm25"),                      # k1's default
    ("bm25(b=0.75,k1=1.2,method=lucene)", "bm25"),  # every parameter at its default
    ("bm25(k1=1)", "bm25(k1=1.0)"),                # a number is a float: k1=1 and k1=1.0 are one engine
    ("bm25(k1=1.0)", "bm25(k1=1.0)"),
    ("bm25(path_weight=2.0)", "bm25"),             # an integral float is the integer
    ("graph(stem=true,k1=1.2,damping=0.5)", "graph"),
    # sub-engines by their canonical spec
    ('hybrid(engines="bm25(k1=1.2),minilm(test_chunks=1,max_chunks_per_file=6),graph",rrf_k=60)', "hybrid"),
    ('hybrid(engines="bm25,minilm(max_chunks_per_file=64),graph")', 'hybrid(engines="bm25,minilm,graph")'),
    ('hybrid(engines="bm25(k1=2),grep")', 'hybrid(engines="bm25(k1=2.0),grep")'),
    ('command(cmd="prog",timeout=120)', 'command(cmd="prog")'),
])
def test_specs_with_equal_identity_have_one_name(spec, canonical):
    engine = get_engine(spec)
    assert engine.name == canonical
    same = get_engine(canonical)
    assert same.name == canonical
    if spec.startswith("command"):
        return  # its identity is the program's answer, asked of a running program
    assert engine.identity() == same.identity()


def test_a_parameter_off_its_default_changes_both_name_and_identity():
    assert get_engine("bm25(k1=1.5)").identity() != get_engine("bm25").identity()
    assert get_engine("bm25(k1=1.5)").name != get_engine("bm25").name


@pytest.mark.parametrize("spec, message", [
    ("bm25(k1=abc)", "engine 'bm25': k1 must be a number, got \"abc\""),
    ("bm25(k1=-5)", "engine 'bm25': k1 is out of range: it must be a number >= 0, got -5"),
    ("bm25(b=1.5)", "b is out of range: it must be a number from 0 to 1, got 1.5"),
    ("bm25(b=true)", "b must be a number, got true"),
    ("bm25(k1=1e400)", "k1 must be a finite number"),
    ("bm25(path_weight=2.5)", "path_weight must be an integer, got 2.5"),
    ("bm25(method=okapi)", "method must be one of atire, bm25+, bm25l, lucene, robertson, got \"okapi\""),
    ("bm25(zz=1)", "engine 'bm25' has no parameter 'zz'"),
    ("graph(stem=1)", "stem must be true or false, got 1"),
    ("graph(iterations=0)", "iterations is out of range: it must be an integer >= 1, got 0"),
    ("minilm(threads=0)", "threads is out of range: it must be an integer from 1 to 1024, got 0"),
    ("hybrid(depth=0)", "depth is out of range"),
    ("hybrid(engines=3)", "engines must be a string, got 3"),
    ('command(cmd="prog",timeout=0)', "timeout is out of range: it must be a number > 0, got 0"),
])
def test_bad_parameters_are_one_line_naming_the_known_parameters_and_types(spec, message):
    with pytest.raises(UserError) as err:
        get_engine(spec)
    text = str(err.value)
    assert message in text and "\n" not in text
    engine = spec.split("(")[0]
    assert "(parameters: " in text
    if engine == "bm25":
        assert text.endswith("(parameters: b: number from 0 to 1; k1: number >= 0; max_spans: integer from 1 to "
                             "50; method: one of atire, bm25+, bm25l, lucene, robertson; path_weight: integer >= 0; "
                             "span_lines: integer from 1 to 100000; spans: boolean)")


def test_canonical_spec_checks_and_drops_defaults_without_a_build():
    from ctxgauge.engines import canonical_spec

    assert str(canonical_spec("bm25(k1=1.2,b=0.5)")) == "bm25(b=0.5)"
    with pytest.raises(UserError, match="k1 must be a number"):
        canonical_spec("bm25(k1=abc)")
    with pytest.raises(UserError, match="unknown engine 'nope'"):
        canonical_spec("nope(k=1)")


def test_every_builtin_declares_a_default_that_its_own_declaration_accepts():
    from ctxgauge.engines import BUILTINS
    from ctxgauge.engines._registry import _load_factory
    from ctxgauge.engines._spec import Param, declared

    for name in BUILTINS:
        try:
            cls = _load_factory(name)
        except UserError:
            continue  # an optional dependency missing here
        for key, param in declared(cls.defaults).items():
            assert isinstance(param, Param)
            if param.default is not None:
                assert param.check(key, param.default) == param.default, (name, key)
