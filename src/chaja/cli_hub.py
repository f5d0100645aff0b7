"""The CLI's commands against a running hub (``--hub URL``), through :class:`chaja.Client`:
``index``, ``search``, ``stats`` and ``delete`` do what they do on a store file, with
the work done by the hub. The key comes from ``--api-key`` or ``$CHAJA_API_KEY``."""
from __future__ import annotations

import argparse
import json
import sys

from chaja.client import Client
from chaja.loaders import LoadReport, load_paths
from chaja.filters import Filters


def client(args: argparse.Namespace) -> Client:
    return Client(args.hub, api_key=args.api_key)


def index(args: argparse.Namespace, language: str) -> int:
    report = LoadReport()
    docs = list(load_paths(args.paths, report, language=language))
    from chaja.cli import report_loading
    report_loading(report)
    if report.files == 0:
        print("error: nothing indexed: no file under the paths could be read", file=sys.stderr)
        return 1
    hub = client(args)
    got = hub.add_documents(docs)
    print(f"documents: {got['added']} added, {got['changed']} changed, {got['unchanged']} unchanged "
          f"(sent to {args.hub})")
    veto = report.prune_veto() or (f"{len(report.unreadable)} file(s) could not be read whole"
                                   if report.unreadable else "")
    if args.prune and veto:
        print(f"note: nothing pruned: {veto}", file=sys.stderr)
    elif args.prune:
        pruned = hub.prune([d.id for d in docs], remove_all=False)
        print(f"pruned: {pruned['removed']} documents not found under the paths")
    print(f"chunks written: {got['chunks']}")
    return 0


def search(args: argparse.Namespace) -> int:
    filters = Filters.parse(args.filter or [])
    got = client(args).search(args.query, args.k, filters=filters.to_dict(), explain=not args.json)
    if args.json:
        json.dump(got, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"query: {got['query']}   terms: {' '.join(got['terms'][:20])}   (lists fused: {', '.join(got['lists'])})")
    if not got["results"]:
        print("no results")
    for r in got["results"]:
        print(f"\n{r['rank']:>2}. {r['title']}   [{r['doc_id']}]")
        if r["heading"]:
            print(f"    § {' > '.join(r['heading'])}")
        print(f"    {r['snippet']}")
        print(f"    why: {r['why']}")
    return 0


def stats(args: argparse.Namespace) -> int:
    from chaja.cli import print_stats

    print_stats(client(args).stats(), args.json)
    return 0


def delete(args: argparse.Namespace) -> int:
    from chaja.cli import delete_each
    return delete_each(client(args).delete, args.doc_ids)
