"""Function words of Korean and English: what carries no topic in a question.

Shared by the question-set lint (:mod:`chaja.eval.lint`, the production
evaluation's "no three consecutive content words" rule) and the query analysis
of search (:mod:`chaja.search.query`), so both agree on what a content word is.

* ``EN_STOPWORDS``: articles, pronouns, auxiliaries, prepositions, conjunctions,
  question words.
* ``KO_STOPWORDS``: Korean function words (것, 수, 등, 및, 어떻게, 무엇 ...).
* ``KO_PARTICLES``: 조사 (은/는, 이/가, 을/를, 에서, 으로 ...), longest first.
* ``KO_ENDINGS``: light verb endings (하기, 하는, 합니다, 되는 ...), longest first.

A Korean word's stem (:func:`korean_stem`): a light verb ending comes off, or
else one particle and then an ending; a one-syllable suffix comes off only when
two syllables remain (추가, 정의, 속도 stay whole).
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator

EN_STOPWORDS = frozenset("""
a an the this that these those there here it its it's i me my mine we us our ours you your yours he him
his she her hers they them their theirs what which who whom whose when where why how whether
is am are was were be been being do does did doing done have has had having can could
should would will shall may might must ought of to in on at by for from with without into onto
upon about above below over under between among through during before after again further
and or but nor so yet if then than because as while until also just only very too not no
any all some each every both either neither other another such own same more most few less
up down out off s t don't doesn't isn't aren't can't won't via vs etc e g i.e eg ie
""".split())

KO_STOPWORDS = frozenset("""
것 수 등 및 때 이 그 저 이런 그런 저런 이것 그것 저것 여기 거기 무엇 뭐 뭔가 무슨 어떤 어떻게 왜 언제 어디
어느 누가 누구 좀 더 또 또는 그리고 그러나 하지만 그래서 즉 혹은 같은 위해 위한 대해 대한 통해 통한 있나요
있어요 있다 있는 없는 없다 하나요 해요 합니다 인가요 일까요 하면 하기 하는 되나요 돼요 나요 가요 까요 요
않습니다 않나요 않아요 않는 않고 않음 않게 안 못 뭐야 뭔가요 무엇인가요 방법은 알려줘 알려주세요
""".split())

# Longest first, so 에서는 is tried before 에서 and 는.
KO_PARTICLES = tuple(sorted(set("""
은 는 이 가 을 를 의 에 에서 에게 께 한테 으로 로 와 과 도 만 까지 부터 보다 처럼 같이 이나 나 이랑 랑
하고 에는 에서는 으로는 로는 과의 와의 에서의 으로의 로의 에도 에서도 으로도 로도 이란 란 이라는 라는 이며
며 이고 고 이든 든 마다 조차 밖에 뿐 께서 에게서 한테서 이라도 라도 만의 만을
""".split()), key=len, reverse=True))

KO_ENDINGS = tuple(sorted(set("""
하기 하는 하다 한다 합니다 하나요 할까요 하려면 하면 해야 해서 하고 할 한 해요 했나요 했다 하지 하여
되는 되다 된다 됩니다 되나요 될까요 되면 되어 돼서 된 될 되지 시키기 시키는 적인 적으로
해도 하더라도 했을 하세요 하자 하게 되게 되도록 하도록
""".split()), key=len, reverse=True))


_RUN = re.compile(r"[^\W_]+")
_SCRIPT = re.compile(r"[\uac00-\ud7a3]+|[^\uac00-\ud7a3]+")


def word_runs(text: str) -> list[str]:
    """The NFKC, case-folded runs of letters and digits of ``text``, in order."""
    return _RUN.findall(unicodedata.normalize("NFKC", text).casefold())


def run_pieces(run: str) -> Iterator[tuple[bool, str]]:
    """One run (:func:`word_runs`) split where Hangul meets another script: (glued, piece),
    ``glued`` when the piece follows another in the run (``state를`` → (False, "state"),
    (True, "를"))."""
    for i, piece in enumerate(_SCRIPT.findall(run)):
        yield i > 0, piece


def word_pieces(text: str) -> Iterator[tuple[bool, str]]:
    """:func:`run_pieces` of every run of ``text``, in order."""
    for run in word_runs(text):
        yield from run_pieces(run)


def is_hangul(word: str) -> bool:
    return "\uac00" <= word[0] <= "\ud7a3"


@functools.lru_cache(maxsize=None)
def _by_length(suffixes: tuple[str, ...]) -> tuple[tuple[int, frozenset[str]], ...]:
    """The suffixes grouped by length, longest first (a word ends in at most one of each length)."""
    return tuple((n, frozenset(s for s in suffixes if len(s) == n))
                 for n in sorted({len(s) for s in suffixes}, reverse=True))


def strip_suffix(word: str, suffixes: tuple[str, ...]) -> str:
    """``word`` without the longest of ``suffixes`` it ends in, where something is left
    (two syllables or more after a one-syllable suffix); else ``word``. One set lookup per
    suffix length, not one comparison per suffix."""
    size = len(word)
    for n, group in _by_length(suffixes):
        if size - n >= (2 if n == 1 else 1) and word[-n:] in group:
            return word[:-n]
    return word


def korean_stem(word: str) -> str:
    stem = strip_suffix(word, KO_ENDINGS)
    if stem != word:
        return stem
    return strip_suffix(strip_suffix(word, KO_PARTICLES), KO_ENDINGS)
