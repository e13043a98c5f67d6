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
