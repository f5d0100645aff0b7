"""Lint for hand-written question sets (production evaluation): a question must share no
three consecutive content words with any heading in the store.

Content words, the same way for questions and headings:

1. NFKC-normalise and case-fold; split into runs of letters/digits (``_`` and
   punctuation split, so ``useState(initialState)`` → ``usestate``, ``initialstate``).
2. Split a run where Latin/digits meet Hangul (``state를`` → ``state`` + ``를``);
   a Hangul piece glued to a code word is kept only if it is not a particle.
3. A Korean word loses a light verb ending (하기/하는/하려면/합니다/되는/된 ...);
   failing that, one trailing particle (조사: 은/는/이/가/을/를/의/에/에서/으로/
   와/과/도/만/까지/부터 ..., longest first) and then an ending. A one-syllable
   suffix comes off only if two syllables remain, so 추가, 정의 and 속도 stay whole.
4. English words get light suffix folding, no dictionary: plural ``ies`` → ``y``
   and ``s`` (not ``ss``/``us``/``is``); ``ing``/``ed`` when three letters remain,
   undoubling a doubled final consonant when three letters stay (running → run, adding → add); a final ``e`` of words of five letters
   or more. So "Adding", "add" and "adds" meet; "updating"/"update" meet too.
5. Drop English stopwords (articles, pronouns, auxiliaries, prepositions,
   conjunctions, question words; checked before folding) and Korean function
   words (것, 수, 등, 및, 어떻게, 무엇, 않습니다 ...), and words that were
   nothing but a particle or ending.

Two texts "share three consecutive content words" when their content-word
sequences have a common trigram.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from chaja.eval.headings import file_headings

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


def _is_hangul(word: str) -> bool:
    return "\uac00" <= word[0] <= "\ud7a3"


def _strip_suffix(word: str, suffixes: tuple[str, ...]) -> str:
    for suf in suffixes:
        if word.endswith(suf) and word != suf:
            rest = word[: -len(suf)]
            if len(rest) >= (2 if len(suf) == 1 else 1):
                return rest
    return word


def _korean_word(word: str) -> str:
    stem = _strip_suffix(word, KO_ENDINGS)
    if stem != word:
        return stem
    return _strip_suffix(_strip_suffix(word, KO_PARTICLES), KO_ENDINGS)


def _english_word(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suf in ("ing", "ed"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            word = word[: -len(suf)]
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz" and word[-1].isalpha():
                word = word[:-1]
            break
    if len(word) >= 5 and word.endswith("e"):
        word = word[:-1]
    return word


def content_words(text: str) -> list[str]:
    words: list[str] = []
    for run in _RUN.findall(unicodedata.normalize("NFKC", text).casefold()):
        pieces = _SCRIPT.findall(run)
        for i, piece in enumerate(pieces):
            if _is_hangul(piece):
                if i > 0 and (piece in KO_PARTICLES or piece in KO_ENDINGS):
                    continue  # particle glued to a code word: state를
                piece = _korean_word(piece)
                if piece in KO_STOPWORDS or piece in KO_PARTICLES or piece in KO_ENDINGS:
                    continue
            elif piece in EN_STOPWORDS:
                continue
            else:
                piece = _english_word(piece)
            words.append(piece)
    return words


def trigrams(words: list[str]) -> set[tuple[str, str, str]]:
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}  # type: ignore[misc]


@dataclass(frozen=True)
class LintHit:
    question_id: str
    question: str
    heading: str
    shared: tuple[str, str, str]


class HeadingIndex:
    """Content-word trigrams of a set of headings, for fast lookup."""

    def __init__(self, headings: Iterable[str]):
        self.by_trigram: dict[tuple[str, str, str], list[str]] = {}
        self.count = 0
        for h in dict.fromkeys(headings):
            self.count += 1
            for t in trigrams(content_words(h)):
                self.by_trigram.setdefault(t, []).append(h)

    def matches(self, text: str) -> list[tuple[tuple[str, str, str], str]]:
        words = content_words(text)
        out = []
        for i in range(len(words) - 2):
            t = tuple(words[i:i + 3])
            for h in self.by_trigram.get(t, ()):  # type: ignore[arg-type]
                out.append((t, h))
        return out


def lint_questions(questions, headings: Iterable[str]) -> list[LintHit]:
    """Every (question, heading) pair sharing a content-word trigram; first shared trigram shown."""
    index = HeadingIndex(headings)
    hits = []
    for q in questions:
        seen = set()
        for tri, heading in index.matches(q.text):
            if heading not in seen:
                seen.add(heading)
                hits.append(LintHit(q.id, q.text, heading, tri))
    return hits


def headings_from(source: str | Path, both_languages: bool = False) -> list[str]:
    """Headings of a store, from one source:

    * a react-docs folder (has ``store.tsv``): the stored pages' headings in the
      stored language (or in both languages with ``both_languages``);
    * any other folder: headings of every ``.md``/``.mdx`` file under it;
    * a ``.md``/``.mdx`` file: its headings;
    * any other file: one heading per line.
    """
    path = Path(source)
    if path.is_dir() and (path / "store.tsv").is_file():
        from chaja.eval.canonical import read_store
        out = []
        for doc, lang in read_store(path).items():
            for lg in (("en", "ko") if both_languages else (lang,)):
                f = path / lg / f"{doc}.md"
                if f.is_file():
                    out.extend(h.text for h in file_headings(f))
        return out
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".md", ".mdx"))
        return [h.text for f in files for h in file_headings(f)]
    if path.suffix.lower() in (".md", ".mdx"):
        return [h.text for h in file_headings(path)]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
