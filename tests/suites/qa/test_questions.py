"""dokimi question sets: v2 and v1 as written, every legacy shape read with its note, bad records named
before any model call, and question_set_hash as its formula."""

from __future__ import annotations

import hashlib
import json

import pytest

from ctxgauge.errors import UserError
from ctxgauge.suites.qa import load_question_set, question_set_hash


def write(tmp_path, data, name="questions.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def test_v2_as_written(tmp_path):
    qs = load_question_set(write(tmp_path, {"version": 2, "questions": [
        {"id": "a", "question": "Where is the router?", "metadata": {"difficulty": 2, "categories": ["nav"]},
         "ground_truth": "shelfd/routing.py"},
        {"id": "b", "question": "What is the fee?"}]}))
    assert qs.format == "questions.v2" and qs.notes == []
    assert [(q.qid, q.prompt) for q in qs.questions] == [("a", "Where is the router?"), ("b", "What is the fee?")]
    assert qs.questions[0].difficulty == 2 and qs.questions[0].categories == ("nav",)
    assert qs.ground_truth == {"a": "shelfd/routing.py"}


def test_v1_text_field_is_no_normalisation(tmp_path):
    qs = load_question_set(write(tmp_path, {"version": "questions.v1", "questions": [{"id": "x", "text": "Why?"}]}))
    assert qs.format == "questions.v1" and qs.questions[0].prompt == "Why?" and qs.notes == []


LEGACY = [
    ("bare list", [{"id": "a", "question": "Q?"}], "bare list of records read as {questions: [...]}"),
    ("question_text", {"questions": [{"id": "a", "question_text": "Q?"}]}, "`question_text` read as `question`"),
    ("text in v2", {"questions": [{"id": "a", "text": "Q?"}]}, "`text` read as `question`"),
    ("question_id", {"questions": [{"question_id": "a", "question": "Q?"}]}, "`question_id` read as `id`"),
    ("missing ids", {"questions": [{"question": "Q?"}, {"question": "R?"}]},
     "2 record(s) without an id numbered by position (q001, q002, ...)"),
    ("metadata list", {"questions": [{"id": "a", "question": "Q?", "metadata": ["x", "y"]}]},
     "metadata given as a list kept as {tags: [...]}"),
    ("bare strings", {"questions": ["Q?", "R?"]}, "bare string records read as the question text"),
    ("expected_answer", {"questions": [{"id": "a", "question": "Q?", "expected_answer": "A"}]},
     "`expected_answer` read as `ground_truth`"),
]


@pytest.mark.parametrize("name,data,note", LEGACY, ids=[x[0] for x in LEGACY])
def test_legacy_shapes_are_read_and_noted_once(tmp_path, name, data, note):
    qs = load_question_set(write(tmp_path, data))
    assert note in qs.notes and len(qs.notes) == len(set(qs.notes))
    assert all(q.prompt in ("Q?", "R?") for q in qs.questions)


def test_missing_ids_are_numbered_by_position(tmp_path):
    qs = load_question_set(write(tmp_path, [{"question": "Q?"}, {"id": "keep", "question": "R?"}, "S?"]))
    assert [q.qid for q in qs.questions] == ["q001", "keep", "q003"]
    assert qs.metadata["q001"] == {} and qs.identity()["normalised"] == qs.notes


def test_each_note_appears_once(tmp_path):
    qs = load_question_set(write(tmp_path, [{"question_text": "A?"}, {"question_text": "B?"}]))
    assert qs.notes.count("`question_text` read as `question`") == 1


BAD = [
    ([{"id": "a"}], "record 0: no question text; give it a \"question\" field"),
    ([{"id": "a", "question": "  "}], "record 0: no question text"),
    ([{"id": "a", "question": "Q?"}, 7], "record 1: a question record must be an object"),
    ([{"id": "a", "question": "Q?"}, {"id": "a", "question": "R?"}], "record 1: id 'a' appears twice"),
    ([{"id": "a", "question": "Q?", "metadata": 3}], "record 0: metadata must be an object"),
    ({"items": []}, "expected {\"questions\": [...]} or a list"),
    ([], "no questions"),
]


@pytest.mark.parametrize("data,message", BAD)
def test_invalid_records_fail_naming_the_record(tmp_path, data, message):
    with pytest.raises(UserError) as err:
        load_question_set(write(tmp_path, data))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_not_json(tmp_path):
    p = tmp_path / "q.json"
    p.write_text("{nope")
    with pytest.raises(UserError, match="not valid JSON"):
        load_question_set(p)


def test_question_set_hash_formula(tmp_path):
    expected = hashlib.sha256("a:Where?\nb:Why?".encode()).hexdigest()[:12]
    assert question_set_hash([("b", "Why?"), ("a", "Where?")]) == expected
    # The same questions in another shape and order hash the same.
    v2 = load_question_set(write(tmp_path, {"questions": [{"id": "a", "question": "Where?"}, {"id": "b", "question": "Why?"}]}, "v2.json"))
    legacy = load_question_set(write(tmp_path, [{"question_id": "b", "question_text": "Why?"}, {"question_id": "a", "text": "Where?"}], "old.json"))
    assert v2.hash == legacy.hash == expected
    assert len(v2.hash) == 12
