"""``chaja questions check``: is a question set whole, and which retrieval path does it favour?

For each question file (read with the harness's own parser, so a malformed line or a
repeated id is reported with its line number, and the file counts as broken):

* **gold missing**: gold or judged documents the documents do not hold (a page that
  was re-collected under another id, or removed);
* **duplicate questions** (the same text after NFKC, case folding,
  and dropping punctuation and spaces) and **near-duplicates**: two questions about
  the same gold document whose character-bigram sets have a Jaccard similarity of at
  least :data:`NEAR` (compared within a gold document, so the check stays linear in
  practice);
* **lint**: with ``--headings``, questions sharing three consecutive content words
  with a heading (:mod:`chaja.eval.lint`);
* **lexical overlap**: the share of a question's content terms (the analyser's terms
  without particles, endings and stop words, as the keyword list and gate count
  them) found in its gold document. A set with high overlap favours the keyword
  list; natural and cross-language sets sit low. Reported per question, and as the
  mean by kind.

The exit status is 1 when any file cannot be read, or has missing gold documents,
duplicate questions or lint failures (near-duplicates are reported, not failed).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

NEAR = 0.6


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def _bigrams(key: str) -> set[str]:
    return {key[i:i + 2] for i in range(len(key) - 1)} or {key}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def documents_from(source: str | Path) -> dict[str, str]:
    """document id → its text (title, headings and body) from a chaja SQLite store, a
    react-docs folder (ids are file stems, as the React stores index them) or any files
    and folders chaja indexes (ids as ``chaja index`` gives them)."""
    from chaja.eval.lint import _is_sqlite

    path = Path(source)
    if path.is_file() and _is_sqlite(path):
        from chaja.stores.sqlite import SqliteStore

        store = SqliteStore(path)
        try:
            out: dict[str, list[str]] = defaultdict(list)
            for chunk in _all_chunks(store):
                out[chunk.doc_id].append(f"{chunk.title}\n{' '.join(chunk.heading_path)}\n{chunk.text}")
            return {k: "\n".join(v) for k, v in out.items()}
        finally:
            store.close()
    if path.is_dir() and ((path / "store.tsv").is_file() or (path / "react-docs" / "store.tsv").is_file()):
        from chaja.eval.canonical import react_store_paths

        return {p.stem: p.read_text(encoding="utf-8") for p in react_store_paths(path)}
    from chaja.loaders import LoadReport, load_paths

    report = LoadReport()
    docs = {d.id: "\n".join([d.title, *(f"{' '.join(s.heading_path)}\n{s.text}" for s in d.sections)])
            for d in load_paths([path], report)}
    if report.files == 0:
        raise FileNotFoundError(f"{path}: no documents found")
    return docs


def _all_chunks(store):
    after = None
    while True:
        page = store.documents(after=after, limit=500)
        if not page:
            return
        for info in page:
            yield from store.chunks(info.chunk_ids).values()
        after = page[-1].id


def check_questions(questions, docs: dict[str, str] | None, headings: list[str] | None = None) -> dict:
    """Everything :mod:`this module <chaja.eval.question_check>` reports, for one set."""
    from chaja.analysis import get_analyzer
    from chaja.search.query import query_terms

    analyzer = get_analyzer("bigram")
    out: dict = {"questions": len(questions), "gold_missing": [], "duplicates": [],
                 "near_duplicates": [], "lint": [], "overlap": {}, "overlap_by_kind": {}}
    by_key: dict[str, str] = {}
    by_gold: dict[str, list] = defaultdict(list)
    doc_terms: dict[str, set[str]] = {}
    for q in questions:
        key = _key(q.text)
        golds = list(dict.fromkeys(q.useful()))
        if key in by_key:
            out["duplicates"].append([by_key[key], q.id])
        else:
            by_key[key] = q.id
            grams = _bigrams(key)
            near = dict.fromkeys(other for g in golds for other, other_grams in by_gold[g]
                                 if jaccard(other_grams, grams) >= NEAR)
            out["near_duplicates"] += [[other, q.id] for other in near]
            for g in golds:
                by_gold[g].append((q.id, grams))
        if docs is not None:
            named = list(dict.fromkeys([*(q.gold or []), *(q.judgments or {})]))
            out["gold_missing"] += [[q.id, d] for d in named if d not in docs]
            present = [d for d in golds if d in docs]
            if present:
                terms = query_terms(analyzer, q.text)
                held = set()
                for d in present:
                    if d not in doc_terms:
                        doc_terms[d] = set(analyzer(docs[d]))
                    held |= {t for t in terms if t in doc_terms[d]}
                out["overlap"][q.id] = len(held) / len(terms) if terms else 0.0
    if headings is not None:
        from chaja.eval.lint import lint_questions

        out["lint"] = [[h.question_id, h.heading, " ".join(h.shared)] for h in lint_questions(questions, headings)]
    kinds: dict[str, list[float]] = defaultdict(list)
    for q in questions:
        if q.id in out["overlap"]:
            kinds[q.kind or "-"].append(out["overlap"][q.id])
    out["overlap_by_kind"] = {k: {"questions": len(v), "mean": sum(v) / len(v)} for k, v in sorted(kinds.items())}
    out["broken"] = bool(out["gold_missing"] or out["duplicates"] or out["lint"])
    return out


def add_questions_commands(subparsers) -> None:
    qs = subparsers.add_parser("questions", help="keep question sets whole")
    sub = qs.add_subparsers(dest="questions_command", required=True)
    p = sub.add_parser("check", help="missing gold documents, duplicates, lint, lexical overlap with the gold "
                                     "(exit status 1 on a broken set)")
    p.add_argument("files", nargs="+", help="question files (JSON Lines)")
    p.add_argument("--docs", metavar="SRC", help="the documents the gold ids name: a chaja SQLite store, a "
                                                 "react-docs folder, or files and folders chaja indexes")
    p.add_argument("--headings", action="append", metavar="SRC",
                   help="lint against these headings (as chaja eval lint --store-headings; repeatable)")
    p.add_argument("--both-languages", action="store_true",
                   help="with a react-docs folder as --headings: both languages of every page")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    from chaja.eval.lint import headings_from
    from chaja.eval.questions import QuestionFileError, read_questions

    docs = documents_from(args.docs) if args.docs else None
    heads = None
    if args.headings:
        heads = [h for src in args.headings for h in headings_from(src, both_languages=args.both_languages)]
    reports = {}
    for f in args.files:
        try:
            reports[f] = check_questions(read_questions(f), docs, heads)
        except (QuestionFileError, OSError) as exc:
            reports[f] = {"questions": 0, "unreadable": str(exc), "broken": True}
    if args.json:
        json.dump(reports, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        for f, r in reports.items():
            if "unreadable" in r:
                print(f"{f}: BROKEN — {r['unreadable']}")
                continue
            print(f"{f}: {r['questions']} questions — " + ("BROKEN" if r["broken"] else "whole"))
            for label, key in (("gold not in the documents", "gold_missing"), ("duplicate questions", "duplicates"),
                               ("near-duplicates", "near_duplicates"), ("lint (shares 3 content words with a "
                                                                       "heading)", "lint")):
                if r[key]:
                    shown = "; ".join(" / ".join(map(str, x)) for x in r[key][:5])
                    print(f"  {label}: {len(r[key])}: {shown}" + (" …" if len(r[key]) > 5 else ""))
            if r["overlap_by_kind"]:
                print("  content terms found in the gold document (mean by kind): "
                      + ", ".join(f"{k} {v['mean']:.2f} ({v['questions']})" for k, v in r["overlap_by_kind"].items()))
            if docs is None:
                print("  (no --docs: gold documents and overlap not checked)")
    return 1 if any(r["broken"] for r in reports.values()) else 0
