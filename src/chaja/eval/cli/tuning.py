"""What-ifs from a run's records, with no search: ``chaja eval replay`` (a reranked run
under other ``[rerank]`` settings), ``calibrate`` (fit the reranker's score mapping) and
``abstention`` (the threshold below which to answer nothing)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_replay_command(sub) -> None:
    p = sub.add_parser("replay", help="a reranked run under other [rerank] settings, from its records (no model)")
    p.add_argument("dir")
    p.add_argument("--out", required=True, help="folder for the replayed run")
    p.add_argument("--name", help="run name (default: the folder name)")
    p.add_argument("--set", action="append", metavar="rerank.KEY=VALUE", default=[],
                   help="depth (0 = no reranker), scale, shift, threshold, min_k, max_k (default: the run's own)")
    p.set_defaults(func=cmd_replay)


def add_calibrate_command(sub) -> None:
    p = sub.add_parser("calibrate", help="fit rerank.scale and rerank.shift on a reranked development run "
                                         "(--fused: search.relevance_scale and relevance_shift on a hybrid run)")
    p.add_argument("dir")
    p.add_argument("--fused", action="store_true",
                   help="fit the probability of being relevant from the fused scores of a hybrid run")
    p.add_argument("--check", metavar="DIR", help="also report the fitted mapping's losses on this (held-out) run")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)


def add_abstention_command(sub) -> None:
    p = sub.add_parser("abstention", help="abstention threshold from a run's signals (unanswerable questions)",
                       description="Replays abstain ⇔ top_cosine < τ ∧ keyword_coverage < c on a run's records; "
                                   "prints the curve and the chosen τ, writes DIR/abstention.json and .svg.")
    p.add_argument("dir")
    p.add_argument("--coverage", metavar="C[,C...]",
                   help="keyword coverage bound(s) c (default: the run's search.abstain_coverage)")
    p.add_argument("--rule", choices=("youden", "keep"), default="youden",
                   help="youden: max rejected + kept share − 1; keep: largest τ keeping --keep of R@10")
    p.add_argument("--keep", type=float, default=0.95, help="share of answerable R@10 to keep (rule keep)")
    p.add_argument("--step", type=float, default=0.01, help="τ step of the printed table")
    p.set_defaults(func=cmd_abstention)


def cmd_replay(args: argparse.Namespace) -> int:
    from chaja.config import Config
    from chaja.eval.replay import replay
    from chaja.eval.report import print_summary, read_records

    meta, _ = read_records(args.dir)
    cfg = Config()
    for key, value in ((meta.get("config") or {}).get("rerank") or {}).items():
        cfg.set(f"rerank.{key}", value)
    for a in args.set:
        key, eq, value = a.partition("=")
        if not eq or not key.strip().startswith("rerank."):
            raise ValueError(f"--set expects rerank.KEY=VALUE, got {a!r}")
        cfg.set(key.strip(), value.strip())
    summary = replay(args.dir, args.out, cfg.rerank, name=args.name)
    print(print_summary(summary))
    print(f"\nwrote {Path(args.out) / 'records.jsonl'}, run.trec, summary.json", file=sys.stderr)
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from chaja.eval.report import read_records

    meta, _ = read_records(args.dir)
    if args.fused:
        return _calibrate_fused(args, (meta.get("config") or {}).get("search") or {})
    from chaja.eval.calibrate import examples, fit, losses

    rerank = (meta.get("config") or {}).get("rerank") or {}
    result = fit(args.dir, rerank.get("scale", 1.0), rerank.get("shift", 0.0))
    if args.check:
        scores, labels = examples(args.check)
        result["check"] = {"run": args.check, "examples": len(scores), "useful": sum(labels),
                           "before": losses(scores, labels, rerank.get("scale", 1.0), rerank.get("shift", 0.0)),
                           "after": losses(scores, labels, result["scale"], result["shift"])}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['examples']} reranked documents, {result['useful']} useful")
    print(f"fitted mapping: p = 1 / (1 + exp(-({result['scale']:.6g} * score + {result['shift']:.6g})))")
    _print_losses(args, result)
    print(f"\nuse it: --set rerank.scale={result['scale']:.6g} --set rerank.shift={result['shift']:.6g}")
    return 0


def _calibrate_fused(args: argparse.Namespace, search: dict) -> int:
    from chaja.eval.calibrate import fit_fused, fused_examples, fused_losses

    if search.get("mode", "hybrid") != "hybrid" or search.get("fusion", "calibrated") != "calibrated":
        raise ValueError(f"{args.dir}: --fused needs a hybrid run with calibrated fusion")
    was = (search.get("relevance_scale", 0.0), search.get("relevance_gap", 0.0), search.get("relevance_shift", 0.0))
    result = fit_fused(args.dir, *was)
    if args.check:
        x, y = fused_examples(args.check)
        result["check"] = {"run": args.check, "examples": int(y.size), "useful": int(y.sum()),
                           "before": fused_losses(x, y, *was),
                           "after": fused_losses(x, y, result["scale"], result["gap"], result["shift"])}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['examples']} documents, {result['useful']} useful")
    print(f"fitted mapping: p = 1 / (1 + exp(-({result['scale']:.4g} * s + {result['gap']:.4g} * (s - best s) "
          f"+ {result['shift']:.4g})))")
    _print_losses(args, result)
    print(f"\nuse it: --set search.relevance_scale={result['scale']:.4g} --set search.relevance_gap={result['gap']:.4g} "
          f"--set search.relevance_shift={result['shift']:.4g}")
    return 0


def _print_losses(args: argparse.Namespace, result: dict) -> None:
    for label, part in (("this run", result),) + ((("check run", result["check"]),) if args.check else ()):
        b, a = part["before"], part["after"]
        print(f"  {label}: log loss {b['log_loss']:.4f} -> {a['log_loss']:.4f}, "
              f"Brier {b['brier']:.4f} -> {a['brier']:.4f}")


def cmd_abstention(args: argparse.Namespace) -> int:
    from chaja.eval.abstention import ABSTENTION_JSON, ABSTENTION_SVG, abstention_report, format_report

    coverages = None
    if args.coverage:
        try:
            coverages = [float(c) for c in args.coverage.split(",") if c.strip()]
        except ValueError:
            raise ValueError(f"--coverage expects numbers, got {args.coverage!r}") from None
    result = abstention_report(args.dir, coverages, rule=args.rule, keep=args.keep)
    print(format_report(result, step=args.step))
    print(f"\nwrote {Path(args.dir) / ABSTENTION_JSON} and {ABSTENTION_SVG}", file=sys.stderr)
    return 0
