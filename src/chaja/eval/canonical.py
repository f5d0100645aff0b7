"""The canonical question set (production evaluation): section headings of the gold document
and their translations, built from the bilingual React documentation.

Inputs in the react-docs folder: ``store.tsv`` (doc_id, lang: which language of
each page the evaluation store holds), ``heading_pairs.tsv`` (doc_id, level,
anchor, en_heading, ko_heading: aligned English/Korean headings) and the pages
``<lang>/<doc_id>.md``.

For every heading pair of a page stored in language S (the other language O):

* same language, kind ``"S-S"`` (``en-en``, ``ko-ko``): the page's own heading in S;
* cross language, kind ``"O-S"`` (``ko-en``: the Korean heading of a page stored
  in English; ``en-ko``: the English heading of a page stored in Korean).

Kinds read question language → document language. A question is skipped when

* its heading is not unique across the store within the question's language:
  the store's 203 pages, each read in the question's language, are searched for
  headings (any level) with the same key (:func:`chaja.eval.headings.heading_key`);
  a key found on more than one page cannot name one gold document
  ("Parameters" ×98, "매개변수", ...). Text left untranslated crosses languages
  ("Parameters" as a heading of a Korean page collides with English pages), so
  the other language's headings are searched too: the key must belong to the
  gold page alone, whichever reading of the store it turns up in;
* (cross kinds) its text equals the stored heading, i.e. the heading was not
  translated (``useState(initialState)`` in both languages): such a question is
  a same-language question in disguise (kept with ``keep_untranslated``).

A heading repeated within one page yields one question. Question ids are
``<kind>:<doc_id>#<anchor>``.
"""
from __future__ import annotations

import csv
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from chaja.eval.headings import file_headings, heading_key, plain_heading
from chaja.eval.questions import Question

LANGS = ("en", "ko")
KINDS = ("en-en", "ko-ko", "ko-en", "en-ko")


@dataclass
class CanonicalReport:
    counts: Counter = field(default_factory=Counter)            # kept questions per kind
    not_unique: Counter = field(default_factory=Counter)        # skipped: heading on several pages
    untranslated: Counter = field(default_factory=Counter)      # skipped: cross text == stored text
    repeated: Counter = field(default_factory=Counter)          # skipped: same heading again on the page
    pairs: int = 0
    pages: Counter = field(default_factory=Counter)             # store pages per language

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def lines(self) -> list[str]:
        out = [f"store: {sum(self.pages.values())} pages "
               f"({', '.join(f'{n} {lang}' for lang, n in sorted(self.pages.items()))}); "
               f"{self.pairs} heading pairs"]
        out.append(f"{'kind':<8}{'kept':>7}{'not unique':>12}{'untranslated':>14}{'repeated':>10}")
        for kind in KINDS:
            out.append(f"{kind:<8}{self.counts[kind]:>7}{self.not_unique[kind]:>12}"
                       f"{self.untranslated[kind]:>14}{self.repeated[kind]:>10}")
        out.append(f"{'total':<8}{self.total:>7}")
        return out


def resolve_react_dir(path: str | Path) -> Path:
    """Accept the react-docs folder itself or a data folder that contains it."""
    path = Path(path)
    if (path / "store.tsv").is_file():
        return path
    if (path / "react-docs" / "store.tsv").is_file():
        return path / "react-docs"
    raise FileNotFoundError(f"{path}: no store.tsv here or in {path / 'react-docs'}")


def _tsv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def read_store(react_dir: str | Path) -> dict[str, str]:
    """doc_id → language stored, in file order."""
    react_dir = resolve_react_dir(react_dir)
    store = {}
    for lineno, row in enumerate(_tsv(react_dir / "store.tsv"), 2):
        if row.get("lang") not in LANGS or not row.get("doc_id"):
            raise ValueError(f"{react_dir / 'store.tsv'}:{lineno}: expected doc_id and lang en|ko")
        store[row["doc_id"]] = row["lang"]
    return store


def react_store_paths(data: str | Path) -> list[Path]:
    """The store's pages as files ``<react-docs>/<lang>/<doc_id>.md``, in store order.

    Indexed one file at a time, each page's document id is its file stem, which
    is the ``doc_id`` the canonical questions use as gold.
    """
    react_dir = resolve_react_dir(data)
    paths = [react_dir / lang / f"{doc}.md" for doc, lang in read_store(react_dir).items()]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} store pages missing, e.g. {missing[0]}")
    return paths


def _heading_index(react_dir: Path, store: dict[str, str], lang: str) -> dict[str, set[str]]:
    """heading key → pages whose ``lang`` version has a heading with that key."""
    index: dict[str, set[str]] = defaultdict(set)
    for doc in store:
        path = react_dir / lang / f"{doc}.md"
        if path.is_file():
            for h in file_headings(path):
                index[heading_key(h.text)].add(doc)
    return index


def build_canonical(data: str | Path, keep_untranslated: bool = False) -> tuple[list[Question], CanonicalReport]:
    react_dir = resolve_react_dir(data)
    store = read_store(react_dir)
    pairs = _tsv(react_dir / "heading_pairs.tsv")
    report = CanonicalReport(pairs=len(pairs), pages=Counter(store.values()))
    index = {lang: _heading_index(react_dir, store, lang) for lang in LANGS}
    # heading_pairs headings count too, should a page file lack one of them
    for row in pairs:
        for lang in LANGS:
            index[lang][heading_key(plain_heading(row[f"{lang}_heading"]))].add(row["doc_id"])

    questions: list[Question] = []
    seen: set[tuple[str, str, str]] = set()
    for lineno, row in enumerate(pairs, 2):
        doc = row["doc_id"]
        if doc not in store:
            raise ValueError(f"{react_dir / 'heading_pairs.tsv'}:{lineno}: {doc!r} is not in store.tsv")
        stored = store[doc]
        other = "ko" if stored == "en" else "en"
        stored_key = heading_key(plain_heading(row[f"{stored}_heading"]))
        for qlang in (stored, other):
            kind = f"{qlang}-{stored}"
            text = plain_heading(row[f"{qlang}_heading"])
            key = heading_key(text)
            if not key:
                continue
            if qlang != stored and key == stored_key and not keep_untranslated:
                report.untranslated[kind] += 1
                continue
            if index[qlang][key] | index[stored if qlang == other else other][key] != {doc}:
                report.not_unique[kind] += 1
                continue
            if (kind, doc, key) in seen:
                report.repeated[kind] += 1
                continue
            seen.add((kind, doc, key))
            questions.append(Question(
                id=f"{kind}:{doc}#{row['anchor']}", text=text, lang=qlang, kind=kind, gold=[doc],
            ))
            report.counts[kind] += 1
    order = {k: i for i, k in enumerate(KINDS)}
    questions.sort(key=lambda q: order[q.kind])
    return questions, report
