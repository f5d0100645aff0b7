import pytest

from chaja.eval.lint import content_words, headings_from, lint_questions
from chaja.eval.questions import Question


def test_content_words():
    assert content_words("How do I add state to a component?") == ["add", "stat", "component"]
    assert content_words("Adding state to a component") == ["add", "stat", "component"]
    assert content_words("점진적인 도입 전략이 뭐야?") == ["점진", "도입", "전략"]
    assert content_words("useState로 state를 추가하는 방법") == ["usestat", "stat", "추가", "방법"]
    assert content_words("dispatch로 action을 호출해도 화면이 업데이트되지 않습니다.") == \
        ["dispatch", "action", "호출", "화면", "업데이트"]
    assert content_words("추가 정의 속도") == ["추가", "정의", "속도"]      # one-syllable endings kept


def test_lint_flags_three_shared_content_words():
    headings = ["Adding state to a component", "점진적인 도입 전략", "Updating objects in state"]
    qs = [
        Question("en1", "How do I add state to a component?", gold=["x"]),
        Question("ko1", "점진적인 도입 전략은 무엇인가요", gold=["x"]),
        Question("ok1", "Why does my counter keep its value between renders?", gold=["x"]),
        Question("ok2", "리액트 18을 조금씩 적용하려면?", gold=["x"]),
        Question("ok3", "update an object", gold=["x"]),        # two words only
    ]
    hits = lint_questions(qs, headings)
    assert {(h.question_id, h.heading) for h in hits} == {
        ("en1", "Adding state to a component"), ("ko1", "점진적인 도입 전략")}
    assert next(h for h in hits if h.question_id == "en1").shared == ("add", "stat", "component")


def test_heading_sources(tmp_path):
    (tmp_path / "h.txt").write_text("One heading\n\n Two heading \n", encoding="utf-8")
    assert headings_from(tmp_path / "h.txt") == ["One heading", "Two heading"]
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("## First {/*f*/}\n```\n## code\n```\n", encoding="utf-8")
    (docs / "sub" / "b.mdx").write_text("### Second\n", encoding="utf-8")
    assert headings_from(docs) == ["First", "Second"]
    with pytest.raises(FileNotFoundError):
        headings_from(tmp_path / "missing.txt")


def test_store_headings_flag_their_own_questions(react_dir):
    stored = headings_from(react_dir)
    both = headings_from(react_dir, both_languages=True)
    assert 1500 < len(stored) < len(both)
    qs = [Question(f"h{i}", h, gold=["x"]) for i, h in enumerate(stored[:300])]
    long_enough = {q.id for q in qs if len(content_words(q.text)) >= 3}
    assert long_enough and {h.question_id for h in lint_questions(qs, stored)} == long_enough


def test_a_chaja_store_gives_its_titles_and_headings(corpus_index, tmp_path):
    got = headings_from(corpus_index.store.path)
    assert "Espresso machine manual" in got and "Descaling" in got and "타이어 공기압" in got
    q = Question(id="q", text="espresso machine manual descaling steps", gold=["x"])
    assert [h.heading for h in lint_questions([q], got)] == ["Espresso machine manual"]
    other = tmp_path / "other.sqlite"
    import sqlite3
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ValueError, match="not a chaja store"):
        headings_from(other)
