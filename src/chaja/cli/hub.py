"""The hub side of the command line: ``chaja serve`` (a store over HTTP), and ``index``,
``search``, ``stats`` and ``delete`` against a running hub (``--hub URL``) through
:class:`chaja.Client`, doing what they do on a store file with the work done by the hub.
The key comes from ``--api-key`` or ``$CHAJA_API_KEY``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chaja.cli.common import add_common_options, load_config
from chaja.cli.output import delete_each, print_stats, report_loading
from chaja.client import Client
from chaja.filters import Filters
from chaja.loaders import LoadReport, load_paths


def add_serve_command(sub) -> None:
    p = sub.add_parser("serve", help="serve a store over HTTP (the hub; needs the server extra)")
    add_common_options(p)
    p.add_argument("--host", default=None, help="address to listen on (default: hub.host, 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default: hub.port, 8750; 0 = any free port)")
    p.add_argument("--quiet", action="store_true", help="no access log")
    p.add_argument("--judging", metavar="DIR", help="a folder of judging pools (chaja judge pool) to grade in the "
                                                   "browser at /judge; grades are saved beside them "
                                                   "(default: hub.judging)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from chaja.hub import require_server_extra

    require_server_extra()
    from chaja.hub.serve import ListenError, serve

    config = load_config(args)
    if args.judging:
        config.hub.judging = args.judging
    if config.hub.judging:
        if not Path(config.hub.judging).is_dir():
            print(f"error: no judging folder at {config.hub.judging} (chaja judge pool --out DIR/pool.jsonl "
                  "makes one)", file=sys.stderr)
            return 2
        config.hub.judging = str(Path(config.hub.judging).resolve())
    try:
        serve(args.store, config, host=args.host, port=args.port, quiet=args.quiet)
    except ListenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def hub_client(args: argparse.Namespace) -> Client:
    return Client(args.hub, api_key=args.api_key)


def index_on_hub(args: argparse.Namespace, language: str) -> int:
    """``chaja index --hub``: the files are read here and their documents sent to the hub."""
    report = LoadReport()
    docs = list(load_paths(args.paths, report, language=language))
    report_loading(report)
    if report.files == 0:
        print("error: nothing indexed: no file under the paths could be read", file=sys.stderr)
        return 1
    hub = hub_client(args)
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


def search_on_hub(args: argparse.Namespace) -> int:
    filters = Filters.parse(args.filter or [])
    got = hub_client(args).search(args.query, args.k, filters=filters.to_dict(), explain=not args.json)
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


def stats_on_hub(args: argparse.Namespace) -> int:
    print_stats(hub_client(args).stats(), args.json)
    return 0


def delete_on_hub(args: argparse.Namespace) -> int:
    return delete_each(hub_client(args).delete, args.doc_ids)
