"""``chaja search``: hybrid search of a store, each result with why it ranked where it
did, as text or JSON (or, with ``--hub``, the search of a running hub)."""
from __future__ import annotations

import argparse
import json
import sys

from chaja.cli.common import add_common_options, load_config, open_existing
from chaja.cli.output import terminal_safe
from chaja.filters import Filters
from chaja.search.result_json import SEARCH_SCHEMA, result_json, why_line  # noqa: F401 - part of the CLI's API
from chaja.search.searcher import check_query, check_top_k
from chaja.snippets import marked, snippet


def add_search_command(sub) -> None:
    p = sub.add_parser("search", help="search a store")
    p.add_argument("query")
    add_common_options(p, hub=True)
    p.add_argument("-k", type=int, default=None, help="chunks to fuse and group (default: search.top_k)")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE",
                   help="keep results to chunks whose lang, source, doc_type (comma = any of), date_from, "
                        "date_to or doc_id_prefix match (repeatable)")
    p.add_argument("--min-score", type=float, default=None, metavar="P",
                   help="drop results whose probability of being relevant is below P, 0-1 "
                        "(search.min_probability; calibrated fusion)")
    p.add_argument("--json", action="store_true", help=f"machine-readable output (schema {SEARCH_SCHEMA})")
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    if args.hub:
        from chaja.cli.hub import search_on_hub
        return search_on_hub(args)
    cfg = load_config(args)
    if args.min_score is not None:
        if not 0.0 <= args.min_score <= 1.0:
            raise ValueError(f"--min-score is a probability from 0 to 1, not {args.min_score:g}")
        cfg = cfg.override([f"search.min_probability={args.min_score}"])
    check_query(args.query)               # before the model loads
    check_top_k(args.k)
    filters = Filters.parse(args.filter or [])
    with open_existing(args.store, cfg) as idx:
        res = idx.search(args.query, top_k=args.k, filters=filters)
    if args.json:
        json.dump(result_json(res, args.k or cfg.search.top_k), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    print_results(res)
    return 0


def print_results(res) -> None:
    """A search result as text: the query's terms and lists, then each document with its
    best passage and why it ranked."""
    terms = f"{' '.join(res.terms[:20])}{' …' if len(res.terms) > 20 else ''}" if res.terms else "(none)"
    if res.abstained:                   # no list was fused: say why, not which lists
        print(f"query: {res.query}   terms: {terms}")
    else:
        gate = ("lists fused: " + ", ".join(res.lists)) if res.lists else "no list fused"
        if not res.keyword_used:
            gate += "; keyword list gated off"
        print(f"query: {res.query}   terms: {terms}   ({gate})")
    if res.reranker:
        print(f"reranked by {res.reranker}; selected prefix: {res.selected} of {len(res.documents)}")
    if res.parts:
        print("also searched as two parts: " + " | ".join(res.parts) + "   (documents fused by reciprocal rank)")
    if res.abstained:
        print(f"nothing relevant: {res.reason}" if res.reason else "nothing relevant")
    elif not res.documents:
        print("no results")
    for d in res.documents:
        b = d.best
        cite = f", {b.chunk.location.label}" if b.chunk.location else ""
        print()
        print(terminal_safe(f"{d.rank:>2}. {d.title}   [{d.doc_id}{cite}]"))
        if b.chunk.heading_path:
            print(f"    § {b.chunk.heading}")
        text = snippet(b.chunk.text, res.terms)
        print(f"    {marked(text, res.terms) if sys.stdout.isatty() else text}")
        print(f"    why: {why_line(d, res.keyword_used)}")
        if res.selected is not None and d.rank == res.selected and d.rank < len(res.documents):
            print(f"\n    ── selected prefix ends here ({res.selected} of {len(res.documents)}: "
                  f"rerank.threshold, min_k, max_k) ──")
