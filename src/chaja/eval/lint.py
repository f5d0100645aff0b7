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

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from chaja.eval.headings import file_headings
from chaja.function_words import (EN_STOPWORDS, KO_ENDINGS, KO_PARTICLES, KO_STOPWORDS,
                                  is_hangul as _is_hangul, korean_stem as _korean_word, word_pieces)



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
    for glued, piece in word_pieces(text):
        if _is_hangul(piece):
            if glued and (piece in KO_PARTICLES or piece in KO_ENDINGS):
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


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def _store_headings(path: Path) -> list[str]:
    import json
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            titles = [t for (t,) in db.execute("SELECT title FROM documents")]
            paths = [h for (h,) in db.execute("SELECT DISTINCT heading FROM chunks")]
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path} is an SQLite file but not a chaja store ({exc})") from None
    heads = {h for p in paths for h in json.loads(p) if h.strip()}
    return sorted(set(titles) | heads)


def headings_from(source: str | Path, both_languages: bool = False) -> list[str]:
    """Headings of a store, from one source:

    * a react-docs folder (has ``store.tsv``): the stored pages' headings in the
      stored language (or in both languages with ``both_languages``);
    * any other folder: headings of every ``.md``/``.mdx`` file under it;
    * a ``.md``/``.mdx`` file: its headings;
    * a chaja SQLite store: every document title and every heading in its chunks'
      heading paths (the store holds each page in the language it was indexed in);
    * any other file: one heading per line.
    """
    path = Path(source)
    if path.is_file() and _is_sqlite(path):
        return _store_headings(path)
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
