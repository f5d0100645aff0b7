"""Query text → the terms that carry what it asks.

A question holds words that say what is asked (보증, 기간, warranty) and words that
only make it a question (무엇인가요, 설명해주세요, 어떻게 하나요; what, how, does).
Counted as terms, the second kind lets question-shaped passages match ("EOD란
무엇인가요?" for "AKI란 무엇인가요?") and makes the keyword gate drop exact
matches (a third of the terms of "when is the dividend paid?" are function
words). With ``search.query_terms = "content"`` (the default) the keyword list
and the gate see content words only:

1. NFKC and case-folding; words are runs of letters and digits, split where
   Hangul meets another script (``AKI란`` → ``aki`` + ``란``; a Hangul piece glued
   to a Latin word is dropped when it is a particle or an ending);
2. English words in :data:`~chaja.function_words.EN_STOPWORDS` and
   :data:`EN_QUESTION_WORDS` are dropped;
3. a Korean word loses its particle and ending (:func:`~chaja.function_words.korean_stem`),
   then a question ending (:data:`KO_QUESTION_ENDINGS`: 해주세요, 인가요, 나요,
   습니까, 는지 …) and a trailing light verb 하/되, each only while a stem
   remains (설명해주세요 → 설명, 걸리나요 → 걸리, 동작하는지 → 동작); it is dropped
   when the stem is a function word (:data:`KO_QUESTION_WORDS`: 무엇, 어떻게, 얼마나,
   설명, 방법 …);
4. the store's analyser runs over the words that are left (bigram: the stems'
   syllable pairs).

A query made of function words alone keeps all its terms, so it still searches.
``"all"`` restores the analyser's terms of the whole text.

The gate judges a mixed-script query per script (:func:`script_groups`): the
Hangul terms and the other terms are two queries, and the keyword list stays
when either is held to the gate's share by one keyword result, so "warranty 보증
기간" keeps an English page that matches "warranty".
"""
from __future__ import annotations

import functools

from chaja.analysis import Analyzer, bigram_terms, kiwi_terms
from chaja.function_words import (EN_STOPWORDS, KO_ENDINGS, KO_PARTICLES, KO_STOPWORDS, is_hangul,
                                  korean_stem, run_pieces, strip_suffix, word_runs)

QUERY_TERMS = ("content", "all")

EN_QUESTION_WORDS = frozenset("please explain tell know want need anyone help".split())

# Whole Korean words (after stemming) that say "this is a question", not what about.
KO_QUESTION_WORDS = KO_STOPWORDS | frozenset("""
무엇 무엇인가 무엇인지 무엇입니까 무엇이 뭐 뭐가 뭐죠 뭐예요 뭔지 뭘 무슨 어떤 어떻게 어떡 어떻 어떠 왜 언제
어디 어디서 어느 누구 누가 얼마나 얼마 몇 방법 설명 알려 알려줘 알고 궁금 궁금해 싶어 싶습 싶은데 싶어요
경우 대해 대해서 관련 관한 관해 관해서 정말 혹시 그냥 있 없 하 되 해 돼 했 됐 할 될 한 된 것 거 게 건 걸
좀 더 또 잘 안 않 못 그 이 저 제 내 네 요 죠 데 했는 됐는 하는지
""".split())

KO_QUESTION_ENDINGS = tuple(sorted(set("""
해주세요 해줘요 해주십시오 해줘 주세요 줘요 주십시오 인가요 일까요 할까요 될까요 을까요 를까요 나요 가요 까요
습니까 입니까 합니까 됩니까 니까 세요 어요 아요 여요 예요 에요 이에요 입니다 습니다 는지 은지 을지 는가 은가
려면 으려면 려고 으려고 는데 은데 죠 지요 고요 네요 군요 는다 다 요
""".split()), key=len, reverse=True))


#: the syllables a light verb (하다, 되다) takes as it conjugates: 하/한/할/함/합/해/했, 되/된/될/됨/됩/돼/됐
LIGHT_VERB = frozenset("하한할함합해했되된될됨됩돼됐")
#: syllables that only follow a light verb as endings (더니, 는데, 어요, 지만, 습니다, 봤는데 …)
VERB_TAIL = frozenset("더니는데어요지만고던을으나다가면서도야죠네습까려게여라든봤보봐두놓줘주세시었겠음기자잖거구군며")
#: light verb syllables that end a word as a conjugation only rarely a noun ends in (등록했, 실행됐)
BARE_LIGHT_VERB = frozenset("했됐")


def is_light_verb(piece: str) -> bool:
    """A conjugated light verb standing alone, as after a code word (return했더니, mount돼요)."""
    return piece[0] in LIGHT_VERB and all(ch in VERB_TAIL for ch in piece[1:])


def strip_light_verb(word: str) -> str:
    """A Korean word without a conjugated light verb after a stem of two syllables or more:
    등록했더니 → 등록, 실행되는데 → 실행, 방해되는 → 방해, 설정했 → 설정. The verb syllable
    must be followed only by ending syllables (:data:`VERB_TAIL`), or end the word as 했/됐,
    so nouns stay whole (피해자, 자연재해, 무제한, 역할)."""
    for i in range(2, len(word)):
        if word[i] in LIGHT_VERB:
            tail = word[i + 1:]
            if (tail and all(ch in VERB_TAIL for ch in tail)) or (not tail and word[i] in BARE_LIGHT_VERB):
                return word[:i]
    return word


@functools.lru_cache(maxsize=1 << 16)
def korean_content_stem(word: str) -> str:
    """A Korean word without particle, ending, question ending and light verb ('' if nothing
    is left). Kept for the words last seen: a store's text repeats its words."""
    stem = korean_stem(word)
    stem = strip_suffix(strip_light_verb(stem), ("들",))    # 옵션들 → 옵션: the plural is not the topic
    for _ in range(2):
        before = stem
        stem = strip_suffix(stem, KO_QUESTION_ENDINGS)
        stem = strip_suffix(stem, ("하", "되"))
        stem = korean_stem(stem) if stem != before else stem
        if stem == before:
            break
    return "" if stem in KO_QUESTION_WORDS else stem


def content_words(text: str) -> list[str]:
    """The words of a query that say what it asks, in order (may be empty). A search asks
    for them twice (its terms, and the words it translates), so the last texts' are kept."""
    return list(_content_words(text))


@functools.lru_cache(maxsize=256)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(w for run in word_runs(text) for w in run_content_words(run))


def run_content_words(run: str) -> tuple[str, ...]:
    """The content words of one run of letters and digits (:func:`word_runs`): a word's
    pieces depend on its run alone, so a text's content words are its runs' in order, and
    a count over many texts can take each distinct run once (:func:`chaja.search.lexicon.count_words`)."""
    words: list[str] = []
    for glued, piece in run_pieces(run):
        if is_hangul(piece):
            if piece in KO_PARTICLES or (glued and (piece in KO_ENDINGS or piece in KO_QUESTION_ENDINGS
                                                    or is_light_verb(piece))):
                continue            # a particle or ending after a code word: AKI란, state를, <script>에, return했더니
            piece = korean_content_stem(piece)
        elif piece in EN_STOPWORDS or piece in EN_QUESTION_WORDS:
            piece = ""
        if piece:
            words.append(piece)
    return tuple(words)


def _is_function_term(term: str) -> bool:
    return term in EN_STOPWORDS or term in EN_QUESTION_WORDS or term in KO_QUESTION_WORDS


def query_terms(analyzer: Analyzer, text: str, mode: str = "content") -> list[str]:
    """Distinct terms of a query, first seen first: its content terms (``mode="content"``),
    or every term the analyser gives (``"all"``); content falls back to all when empty."""
    if mode not in QUERY_TERMS:
        raise ValueError(f"search.query_terms must be one of {', '.join(QUERY_TERMS)}, not {mode!r}")
    every = list(dict.fromkeys(analyzer(text)))
    if mode == "all":
        return every
    if analyzer is bigram_terms:
        terms = [t for w in content_words(text) for t in analyzer(w)]
    elif analyzer is kiwi_terms:
        terms = [t for t in every if not _is_function_term(t)]
    else:
        keep = set(content_words(text))
        terms = [t for t in every if t in keep or (not is_hangul(t) and not _is_function_term(t))]
    terms = list(dict.fromkeys(terms))
    return terms or every


def script_groups(terms: list[str]) -> list[list[str]]:
    """The terms split by script, Hangul and other, each non-empty group once."""
    hangul = [t for t in terms if is_hangul(t)]
    other = [t for t in terms if not is_hangul(t)]
    return [g for g in (hangul, other) if g]
