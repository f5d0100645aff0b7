"""A bilingual store of two unrelated public corpora, asked in both languages.

The React docs store is where chaja's cross-language defaults were chosen; this store
checks them somewhere else. It holds the 961 Korean paragraphs of KorQuAD 1.0 dev
(Wikipedia) and 1,000 English SciFact abstracts (every abstract judged for the 100
chosen claims, then others in a fixed hash order), so the two languages share no
topic and every question has exactly one language where its answer is:

- ``ko-ko``: KorQuAD's own first question of each of 100 chosen paragraphs;
- ``en-ko``: an English question of our own about each of those paragraphs;
- ``en-en``: SciFact's own test claim for each of 100 chosen claims;
- ``ko-en``: a Korean question of our own about the abstract that supports each claim.

The texts of both corpora and their own questions are read from ``../shared/data``;
only our questions live in the repository (``questions/pairs/``), each naming its gold
document. Choices depend on ids alone: ``sha256("chaja-pairs:" + id)`` order.

    python benchmarks/pair_store.py --list korquad    # the chosen paragraphs (id, title, text)
    python benchmarks/pair_store.py --list scifact    # the chosen claims' gold abstracts
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from chaja.eval.beir import load_beir
from chaja.eval.questions import Question, read_questions
from chaja.eval.squad import load_squad

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions" / "pairs"
CHOSEN = 100
SCIFACT_DOCS = 1000


def order_key(ident: str) -> str:
    return hashlib.sha256(f"chaja-pairs:{ident}".encode()).hexdigest()


def chosen_korquad(data: Path):
    """KorQuAD's documents and, per chosen paragraph, its first question."""
    kq = load_squad(data / "korquad-v1-dev" / "KorQuAD_v1.0_dev.json")
    first: dict[str, Question] = {}
    for q in kq.questions:
        first.setdefault(q.gold[0], q)
    picked = sorted(first, key=order_key)[:CHOSEN]
    return kq.documents, [first[d] for d in sorted(picked)]


def chosen_scifact(data: Path):
    """SciFact's stored abstracts (judged ones first) and the chosen claims with one gold abstract."""
    sf = load_beir(data / "scifact")
    single = [q for q in sf.questions if len(q.gold) == 1]
    picked = sorted(single, key=lambda q: order_key(q.id))[:CHOSEN]
    judged = {d for q in sf.questions for d in q.gold}
    must = sorted(judged, key=order_key)
    rest = sorted((d.id for d in sf.documents if d.id not in judged), key=order_key)
    keep = set(must[:SCIFACT_DOCS]) | {q.gold[0] for q in picked}
    keep |= set(rest[: max(0, SCIFACT_DOCS - len(keep))])
    docs = [d for d in sf.documents if d.id in keep]
    return docs, sorted(picked, key=lambda q: q.id)


def build(data: Path):
    """(documents, questions) of the store: both corpora and the four kinds of question."""
    kq_docs, kq_qs = chosen_korquad(data)
    sf_docs, sf_qs = chosen_scifact(data)
    questions = [Question(id=f"kq-{q.id}", text=q.text, lang="ko", kind="ko-ko", gold=list(q.gold)) for q in kq_qs]
    questions += [Question(id=f"sf-{q.id}", text=q.text, lang="en", kind="en-en", gold=list(q.gold)) for q in sf_qs]
    stored = {d.id for d in kq_docs} | {d.id for d in sf_docs}
    for name in ("en-ko.jsonl", "ko-en.jsonl"):
        path = QUESTIONS / name
        for q in read_questions(path):
            missing = [g for g in q.gold or [] if g not in stored]
            if missing:
                raise ValueError(f"{path}: {q.id} names {missing[0]!r}, which the store does not hold")
            questions.append(q)
    return kq_docs + sf_docs, questions


def split(questions, which: str):
    """The frozen half of ``questions`` (``dev`` or ``test``) by the id's hash within each kind:
    settings are judged on dev; test is read once a setting is chosen."""
    out = []
    kinds = sorted({q.kind for q in questions})
    for kind in kinds:
        qs = sorted((q for q in questions if q.kind == kind), key=lambda q: order_key("split:" + q.id))
        half = (len(qs) + 1) // 2
        out += qs[:half] if which == "dev" else qs[half:]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--list", choices=["korquad", "scifact"], required=True)
    args = ap.parse_args()
    if not (args.data / "korquad-v1-dev").is_dir() or not (args.data / "scifact").is_dir():
        sys.exit(f"KorQuAD and SciFact are not under {args.data}")
    docs, qs = (chosen_korquad if args.list == "korquad" else chosen_scifact)(args.data)
    by_id = {d.id: d for d in docs}
    for q in qs:
        d = by_id[q.gold[0]]
        print(json.dumps({"doc_id": d.id, "title": d.title, "text": d.sections[0].text}, ensure_ascii=False))


if __name__ == "__main__":
    main()
