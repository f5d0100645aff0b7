import pytest

from chaja.analysis import bigram_terms, kiwi_terms, whitespace_terms
from chaja.search.query import content_words, query_terms, script_groups, strip_light_verb


@pytest.mark.parametrize("text, words", [
    ("의료에서 AKI란 무엇인가요?", ["의료", "aki"]),
    ("보증 기간은 얼마나 되나요?", ["보증", "기간"]),
    ("비용 절감 방안에 대해 설명해주세요", ["비용", "절감", "방안"]),
    ("컴포넌트가 동작하는지 확인하려면 어떻게 하나요?", ["컴포넌트", "동작", "확인"]),
    ("when is the dividend paid?", ["dividend", "paid"]),
    ("how to descale", ["descale"]),
    ("warranty 보증 기간", ["warranty", "보증", "기간"]),
    ("useState로 state를 추가", ["usestate", "state", "추가"]),
    ("추가 정의 속도", ["추가", "정의", "속도"]),            # one-syllable endings stay when one syllable would be left
    ("setTimeout 안에서 onMounted를 등록했더니 실행이 안 돼요", ["settimeout", "onmounted", "등록", "실행"]),
    ("props가 업데이트되지 않는데 연결해봤는데도 렌더링되지 않아요", ["props", "업데이트", "연결", "렌더링"]),
])
def test_content_words_drop_function_words_particles_and_question_endings(text, words):
    assert content_words(text) == words


def test_query_terms_are_bigrams_of_content_words():
    assert query_terms(bigram_terms, "자기주식 소각 결정은 무엇인가요?") == ["자기", "기주", "주식", "소각", "결정"]
    # the ending's syllable pairs (인가, 가요) no longer match question-shaped passages
    assert "가요" not in query_terms(bigram_terms, "AKI란 무엇인가요?")
    assert query_terms(bigram_terms, "결정 소각 결정") == ["결정", "소각"]


def test_all_keeps_every_term_and_function_words_alone_fall_back_to_all():
    assert query_terms(bigram_terms, "what is it", "all") == ["what", "is", "it"]
    assert query_terms(bigram_terms, "what is it") == ["what", "is", "it"]
    with pytest.raises(ValueError, match="content, all"):
        query_terms(bigram_terms, "x", "some")


def test_other_analysers_drop_function_words():
    assert query_terms(whitespace_terms, "how does the router reset") == ["router", "reset"]
    terms = query_terms(kiwi_terms, "보증 기간은 무엇인가요")
    assert "보증" in terms and "무엇" not in terms


def test_script_groups_split_hangul_from_the_rest():
    assert script_groups(["warranty", "보증", "기간"]) == [["보증", "기간"], ["warranty"]]
    assert script_groups(["보증"]) == [["보증"]]
    assert script_groups([]) == []


@pytest.mark.parametrize("word, stem", [
    ("등록했더니", "등록"), ("실행되는데", "실행"), ("방해되는", "방해"), ("설정했", "설정"),
    ("사용하려", "사용"), ("호출했는데", "호출"), ("변경되었을", "변경"),
    # nouns stay whole: the verb syllable must start a conjugation after a two-syllable stem
    ("피해자", "피해자"), ("자연재해", "자연재해"), ("역할", "역할"), ("이해", "이해"), ("해야", "해야"),
])
def test_a_conjugated_light_verb_comes_off_a_korean_word(word, stem):
    assert strip_light_verb(word) == stem
