import json

import pytest

from chaja.eval.questions import ABSTAIN, QuestionFileError, parse_questions, read_questions, write_questions


def lines(*objs):
    return [o if isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in objs]


def test_single_and_graded_round_trip(tmp_path):
    qs = parse_questions(lines(
        {"id": "a", "text": "상태 추가하기", "kind": "ko-en", "gold": ["doc1", "doc1", "doc2"]},
        "",
        "// comment",
        {"id": 7, "text": "what is state", "judgments": {"d1": 3, "d2": 0, "d3": ABSTAIN}, "selected": 5},
    ))
    assert [q.id for q in qs] == ["a", "7"]
    assert qs[0].lang == "ko" and qs[1].lang == "en"      # detected from the text
    assert qs[0].gold == ["doc1", "doc2"]                 # repeats dropped, order kept
    assert qs[1].judgments == {"d1": 3, "d2": 0, "d3": ABSTAIN}
    assert qs[1].useful() == ["d1"] and qs[1].extra == {"selected": 5}
    path = tmp_path / "q.jsonl"
    write_questions(path, qs)
    again = read_questions(path)
    assert [q.to_dict() for q in again] == [q.to_dict() for q in qs]


@pytest.mark.parametrize("bad, reason", [
    ('{"id": "x", "text": "t", "gold": ["d"]', "not valid JSON"),
    ('["id", "x"]', "expected a JSON object"),
    ('{"text": "t", "gold": ["d"]}', "'id'"),
    ('{"id": "x", "text": "  ", "gold": ["d"]}', "'text'"),
    ('{"id": "x", "text": "t"}', "exactly one of"),
    ('{"id": "x", "text": "t", "gold": ["d"], "judgments": {"d": 1}}', "exactly one of"),
    ('{"id": "x", "text": "t", "gold": "d"}', "not a string"),
    ('{"id": "x", "text": "t", "gold": []}', "non-empty list"),
    ('{"id": "x", "text": "t", "judgments": {"d": 4}}', "between 0 and 3"),
    ('{"id": "x", "text": "t", "judgments": {"d": -1}}', "between 0 and 3"),
    ('{"id": "x", "text": "t", "judgments": {"d": 2.5}}', "integer 0-3"),
    ('{"id": "x", "text": "t", "judgments": {"d": true}}', "integer 0-3"),
    ('{"id": "x", "text": "t", "judgments": {"d": null}}', "integer 0-3"),
    ('{"id": "x", "text": "t", "judgments": {"d": "skip"}}', "integer 0-3"),
    ('{"id": "x", "text": "t", "lang": 3, "gold": ["d"]}', "'lang'"),
])
def test_malformed_line_names_file_and_line(bad, reason):
    good = '{"id": "ok", "text": "fine", "gold": ["d"]}'
    with pytest.raises(QuestionFileError) as exc:
        parse_questions([good, "", bad], "set.jsonl")
    assert str(exc.value).startswith("set.jsonl:3: ")
    assert reason in str(exc.value)


def test_duplicate_id_points_at_first_line():
    with pytest.raises(QuestionFileError, match=r"q.jsonl:2: duplicate id 'a' \(first on line 1\)"):
        parse_questions(lines({"id": "a", "text": "x", "gold": ["d"]}, {"id": "a", "text": "y", "gold": ["e"]}),
                        "q.jsonl")
