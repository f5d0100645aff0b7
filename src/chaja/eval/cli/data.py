"""Question sets and documents for the harness: ``chaja eval build-canonical`` (the
canonical heading questions), ``lint`` (questions that give a heading away) and
``load`` (a public benchmark as documents and questions)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_build_canonical_command(sub) -> None:
    p = sub.add_parser("build-canonical", help="canonical heading questions from the react-docs data")
    p.add_argument("--data", help="react-docs folder or the data folder holding it (default: ../shared/data)")
    p.add_argument("--out", required=True, help="question file to write")
    p.add_argument("--paths", help="also write the store's page paths, one a line (to index)")
    p.add_argument("--keep-untranslated", action="store_true",
                   help="keep cross-language questions whose heading is the same in both languages")
    p.set_defaults(func=cmd_build_canonical)


def add_lint_command(sub) -> None:
    p = sub.add_parser("lint", help="flag questions sharing three consecutive content words with a heading")
    p.add_argument("questions")
    p.add_argument("--store-headings", action="append", required=True, metavar="SRC",
                   help="react-docs folder, folder of .md files, .md file, or text file of headings (repeatable)")
    p.add_argument("--both-languages", action="store_true",
                   help="for a react-docs folder: headings of both languages of every stored page")
    p.set_defaults(func=cmd_lint)


def add_load_command(sub) -> None:
    p = sub.add_parser("load", help="convert a public benchmark to documents + questions (JSON Lines)")
    lsub = p.add_subparsers(dest="format", metavar="FORMAT", required=True)
    b = lsub.add_parser("beir", help="BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    b.add_argument("dir")
    b.add_argument("--split", default="test")
    s = lsub.add_parser("squad", help="SQuAD-format JSON (KorQuAD)")
    s.add_argument("file")
    for q in (b, s):
        q.add_argument("--docs", required=True, help="documents JSONL to write")
        q.add_argument("--questions", required=True, help="questions JSONL to write")
        q.add_argument("--name", help="source / kind name (default: the data set's folder name)")
        q.set_defaults(func=cmd_load)


def cmd_build_canonical(args: argparse.Namespace) -> int:
    from chaja.eval.canonical import build_canonical, react_store_paths
    from chaja.eval.datadir import data_dir
    from chaja.eval.questions import write_questions

    data = Path(args.data) if args.data else data_dir()
    questions, rep = build_canonical(data, keep_untranslated=args.keep_untranslated)
    n = write_questions(args.out, questions)
    print("\n".join(rep.lines()))
    print(f"wrote {n} questions to {args.out}")
    if args.paths:
        paths = react_store_paths(data)
        Path(args.paths).write_text("".join(f"{p}\n" for p in paths), encoding="utf-8")
        print(f"wrote {len(paths)} page paths to {args.paths}")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from chaja.eval.lint import headings_from, lint_questions
    from chaja.eval.questions import read_questions

    headings: list[str] = []
    for src in args.store_headings:
        headings.extend(headings_from(src, both_languages=args.both_languages))
    questions = read_questions(args.questions)
    hits = lint_questions(questions, headings)
    for h in hits:
        print(f"{h.question_id}\t{h.question}\tshares '{' '.join(h.shared)}' with heading: {h.heading}")
    flagged = len({h.question_id for h in hits})
    print(f"{flagged} of {len(questions)} questions share three consecutive content words "
          f"with one of {len(set(headings))} headings", file=sys.stderr)
    return 1 if flagged else 0


def cmd_load(args: argparse.Namespace) -> int:
    from chaja.eval.export import write_documents
    from chaja.eval.questions import write_questions

    if args.format == "beir":
        from chaja.eval.beir import load_beir
        data = load_beir(args.dir, split=args.split, name=args.name)
        note = f"{data.judgments} positive judgments; {data.unanswerable} queries without one skipped"
    else:
        from chaja.eval.squad import load_squad
        data = load_squad(args.file, name=args.name)
        note = (f"{data.articles} articles, {data.paragraph_entries} paragraph entries, "
                f"{data.merged} repeats merged")
    nd = write_documents(args.docs, data.documents)
    nq = write_questions(args.questions, data.questions)
    print(f"{nd} documents → {args.docs}; {nq} questions → {args.questions} ({note})")
    return 0
