"""dokimi question sets: v1 and v2 as written, the version decided by schema_version (never the file name),
one fixture file per legacy shape (question_sets/), every failing record named with its fix before any
model call, and question_set_hash as its formula, unchanged for sets already valid."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.suites.qa import load_question_set, question_set_hash

SETS = Path(__file__).parent.parent / "question_sets"
ROUTER = "Which module routes requests to handlers?"
FEE = "How is the late fee computed?"


def write(tmp_path, data, name="questions.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def formula(*pairs: tuple[str, str]) -> str:
    return hashlib.sha256("\n".join(sorted(f"{i}:{t}" for i, t in pairs)).encode()).hexdigest()[:12]


def test_v2_as_written():
    qs = load_question_set(SETS / "v2_valid.json")
    assert qs.format == "questions.v2" and qs.notes == [] and qs.legacy == []
    assert [q.qid for q in qs.questions] == ["router", "fee", "loans"]
    assert qs.questions[0].difficulty == 2 and qs.questions[0].categories == ("navigation",)
    assert qs.records["router"].ground_truth_chunk.startswith("def route(request):")
    assert qs.records["fee"].numeric_claims == ("the fee is 25 cents a day", "the cap is 20 dollars")
    assert qs.records["loans"].expected_topics == ("storage", "sqlite", "loans table")


def test_v1_text_field_is_no_normalisation(tmp_path):
    qs = load_question_set(write(tmp_path, {"schema_version": 1, "questions": [{"id": "x", "text": "Why?"}]}))
    assert qs.format == "questions.v1" and qs.questions[0].prompt == "Why?" and qs.notes == []


def test_schema_version_decides_over_the_file_name():
    # On dc65eaf the name decided: golden_set.json has no "v1" in it, so it was read as v2 with `text`
    # "normalised" to `question`.
    qs = load_question_set(SETS / "golden_set.json")
    assert qs.format == "questions.v1" and qs.legacy == [] and [q.prompt for q in qs.questions] == [ROUTER, FEE]


def test_a_file_named_v1_stamped_2_is_v2(tmp_path):
    qs = load_question_set(write(tmp_path, {"schema_version": "questions.v2", "questions": [{"id": "a", "question": "Q?"}]},
                                 "questions.v1.json"))
    assert qs.format == "questions.v2"


def test_unstamped_set_reads_as_the_version_it_matches(tmp_path):
    assert load_question_set(write(tmp_path, {"questions": [{"id": "a", "text": "Q?"}]}, "a.v2.json")).format == "questions.v1"
    assert load_question_set(write(tmp_path, {"questions": [{"id": "a", "question": "Q?"}]}, "b.v1.json")).format == "questions.v2"


def test_unknown_stamp_is_refused(tmp_path):
    with pytest.raises(UserError, match="schema_version 3 is neither 1 nor 2"):
        load_question_set(write(tmp_path, {"schema_version": 3, "questions": [{"id": "a", "question": "Q?"}]}))


# One fixture per legacy shape: (file, ids read, the legacy rule noted, or None when nothing is legacy).
LEGACY = [
    ("legacy_bare_list.json", ["router", "fee"], 'bare list read as {"questions": [...]}'),
    ("legacy_question_text.json", ["router", "fee"], "`question_text` read as `question`"),
    ("legacy_question_id.json", ["router", "fee"], "`question_id` read as `id`"),
    # Position numbers q0000.., `_`-prefixed where another record already has that id; 0 is an id.
    ("legacy_missing_ids.json", ["_q0000", "q0000", "q0002", "0"],
     "2 record(s) without an id numbered by position (q0000, q0001, ...)"),
    ("legacy_metadata_list.json", ["router", "fee"], '`metadata` given as a list read as {"items": [...]}'),
    ("legacy_nulls.json", ["router", "fee"], None),  # nulls in v2-typed optional keys: dropped silently
]


@pytest.mark.parametrize("name,ids,rule", LEGACY, ids=[x[0] for x in LEGACY])
def test_each_legacy_shape(name, ids, rule):
    path = SETS / name
    before = path.read_bytes()
    qs = load_question_set(path)
    assert [q.qid for q in qs.questions] == ids
    assert qs.format == "questions.v2"
    if rule is None:
        assert qs.legacy == [] and qs.notes == []
    else:
        # The set is said once to be read in legacy format: one line, naming the rule.
        assert qs.legacy == [rule] and len(qs.notes) == 1
        assert qs.notes[0].startswith(f"{name} read in legacy format (") and rule in qs.notes[0]
    assert path.read_bytes() == before  # reading never rewrites the input


def test_list_metadata_becomes_items():
    qs = load_question_set(SETS / "legacy_metadata_list.json")
    assert qs.metadata["router"] == {"items": ["navigation", "http"]}
    assert qs.metadata["fee"] == {"difficulty": 3, "categories": ["logic"]} and qs.questions[1].difficulty == 3


def test_several_rules_are_one_line(tmp_path):
    qs = load_question_set(write(tmp_path, [{"question_text": "A?"}, {"question_text": "B?", "metadata": ["x"]}]))
    assert qs.legacy == ['bare list read as {"questions": [...]}', "`question_text` read as `question`",
                         '`metadata` given as a list read as {"items": [...]}',
                         "2 record(s) without an id numbered by position (q0000, q0001, ...)"]
    assert len(qs.notes) == 1 and [q.qid for q in qs.questions] == ["q0000", "q0001"]


def test_aliases_never_override_the_real_field(tmp_path):
    qs = load_question_set(write(tmp_path, {"questions": [
        {"id": "a", "question_id": "b", "question": "Q?", "question_text": "ignored"}]}))
    assert qs.questions[0].qid == "a" and qs.questions[0].prompt == "Q?" and qs.legacy == []


def test_null_inside_a_typed_value_is_refused():
    # On dc65eaf `"topics": [null]` was accepted.
    with pytest.raises(UserError) as err:
        load_question_set(SETS / "invalid_null_in_topics.json")
    assert "record 0 (id 'router'): \"topics\" holds a null at position 0; remove it" in str(err.value)


def test_v2_record_with_text_and_question_is_refused():
    with pytest.raises(UserError) as err:
        load_question_set(SETS / "invalid_v2_text_and_question.json")
    assert "may not carry both \"question\" and \"text\"; remove \"text\"" in str(err.value)


def test_every_failing_record_is_named_with_its_fix():
    # On dc65eaf only the first bad record was named.
    with pytest.raises(UserError) as err:
        load_question_set(SETS / "invalid_many_records.json")
    msg = str(err.value)
    assert "\n" not in msg and "5 invalid records as questions.v2 (nothing was asked)" in msg
    assert "record 1 (id 'blank'): questions.v2 needs a non-empty \"question\" string" in msg
    assert ("record 2 (id 'v1ish'): questions.v2 needs a non-empty \"question\" string (it has \"text\", the "
            "questions.v1 field: rename it to \"question\" or stamp \"schema_version\": 1)") in msg
    assert "record 3: not an object; write it as {\"id\": \"q1\", \"question\": \"...\"}" in msg
    assert "record 4 (id 'ok'): record 0 has the same id; give each question its own id" in msg
    assert "record 5 (id 'meta'): \"metadata\" must be an object" in msg
    # In record order, whichever pass found the problem.
    assert [int(m) for m in re.findall(r"(?:^|; )record (\d+)", msg.split("(nothing was asked): ", 1)[1])] == [1, 2, 3, 4, 5]


def test_stamped_v1_with_question_fields_names_the_fix(tmp_path):
    with pytest.raises(UserError, match=r"questions.v1 needs a non-empty \"text\" string \(it has \"question\""):
        load_question_set(write(tmp_path, {"schema_version": 1, "questions": [{"id": "a", "question": "Q?"}]}))


BAD = [
    ({"items": []}, "expected {\"questions\": [...]} or a list"),
    ([], "no questions"),
    ([{"id": None, "question": "Q?"}], "id must be a non-empty string or an integer, got null"),
    ([{"id": "a", "question": "Q?", "expected_topics": "routing"}], "\"expected_topics\" must be a list of strings"),
    ([{"id": "a", "question": "Q?", "numeric_claims": [None]}], "\"numeric_claims\"[0] is null"),
    ([{"id": "a", "question": "Q?", "ground_truth_chunk": 3}], "\"ground_truth_chunk\" must be a string"),
]


@pytest.mark.parametrize("data,message", BAD)
def test_invalid_sets_fail_with_one_line(tmp_path, data, message):
    with pytest.raises(UserError) as err:
        load_question_set(write(tmp_path, data))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_not_json(tmp_path):
    p = tmp_path / "q.json"
    p.write_text("{nope")
    with pytest.raises(UserError, match="not valid JSON"):
        load_question_set(p)


def test_question_set_hash_formula(tmp_path):
    expected = formula(("a", "Where?"), ("b", "Why?"))
    assert question_set_hash([("b", "Why?"), ("a", "Where?")]) == expected and len(expected) == 12
    v2 = load_question_set(write(tmp_path, {"questions": [{"id": "a", "question": "Where?"}, {"id": "b", "question": "Why?"}]}, "v2.json"))
    legacy = load_question_set(write(tmp_path, [{"question_id": "b", "question_text": "Why?"}, {"question_id": "a", "question": "Where?"}], "old.json"))
    assert v2.hash == legacy.hash == expected


def test_hash_unchanged_for_sets_already_valid():
    # v1 and v2 sets hash exactly as the formula says: the reader's legacy rules never touch them.
    assert load_question_set(SETS / "golden_set.json").hash == formula(("router", ROUTER), ("fee", FEE))
    assert load_question_set(SETS / "v2_valid.json").hash == formula(
        ("router", ROUTER), ("fee", FEE), ("loans", "Where are loans stored?"))
    # The figures dc65eaf's reader printed for the same two files.
    assert load_question_set(SETS / "golden_set.json").hash == "810ab4049d19"
    assert load_question_set(SETS / "v2_valid.json").hash == "1a1a398fe523"
