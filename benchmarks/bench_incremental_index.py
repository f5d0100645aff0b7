"""One small document added to a large store, this checkout beside another version.

    python benchmarks/bench_incremental_index.py --base REF [--store PATH] [--runs 8]

What a team that adds a few documents a day to a large store waits for: ``chaja index``
of one small Markdown file, in a new process (start-up, reading, encoding, writing, the
statistics, the translation lexicon, compaction). Each version (this checkout's ``src``,
and ``--base``'s, a git ref checked out into a temporary worktree) gets its own copy of
``--store`` (default: the 100,000-chunk store ``bench_peers.py`` built, its encoders
recorded) and indexes the same files in the same order, one a run, the versions
alternating. The first run of each copy is reported apart (a store written before a
version's upkeep records what it keeps may pay for it then). Per version: each run's
seconds and their median, and the process's peak memory; the ratios of this checkout's
medians to the base's. Results:
``benchmarks/results/<out>.json`` and ``.md`` (``--out``, default ``incremental-index``).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import describe, line, write_results  # noqa: E402

REPO = HERE.parent
#: the documents added, one a run: short notes in either language
NOTES = [
    ("공유기 초기화", "전원 버튼을 10초 동안 누르면 공유기 설정이 처음 상태로 돌아갑니다."),
    ("Guest network", "The guest network has its own password and cannot reach the devices at home."),
    ("펌웨어 업데이트", "펌웨어는 매달 자동으로 업데이트되며 상태 표시등이 주황색으로 깜박입니다."),
    ("Parental controls", "Parental controls limit the hours a device may use the internet each day."),
    ("포트 포워딩", "포트 포워딩 규칙은 고급 설정 메뉴에서 장치마다 추가할 수 있습니다."),
    ("Mesh nodes", "A mesh node joins the network when its light turns solid white."),
    ("대역 선택", "5GHz 대역은 빠르지만 벽을 지나면 신호가 약해집니다."),
    ("Factory reset", "A factory reset erases every rule, password and schedule."),
    ("속도 측정", "속도 측정은 유선으로 연결한 컴퓨터에서 하는 것이 정확합니다."),
    ("Remote access", "Remote access needs the app and a signed-in account."),
]


def copy_store(store: Path, folder: Path) -> Path:
    """A copy of ``store`` and every file beside it named after it, in ``folder``."""
    folder.mkdir(parents=True)
    for f in store.parent.glob(store.name + "*"):
        shutil.copy2(f, folder / f.name)
    return folder / store.name


def index_one(src: Path, note: Path, store: Path) -> tuple[float, float]:
    """(seconds, the process's peak resident memory in MB) of one ``chaja index`` run."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "chaja.cli", "index", str(note), "--store", str(store),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)            # this child's own peak, not every child's
    seconds = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"chaja index failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    proc.stderr.close()
    return seconds, usage.ru_maxrss / 1024


def render(report: dict) -> str:
    v = report["versions"]
    lines = ["# One small document added to a large store", "",
             f"Machine: {line(report['machine'])}. `chaja index` of one Markdown note a run, in a new process, "
             f"into a copy of `{report['store']}` ({report['chunks']:,} chunks) per version; {report['runs']} runs, "
             f"the versions alternating; the first run of each copy apart. Base: `{report['base']}`.", "",
             "| | base | this checkout | ratio |", "|---|---|---|---|",
             f"| first run, s | {v['base']['first_s']:.2f} | {v['this']['first_s']:.2f} | "
             f"{v['this']['first_s'] / v['base']['first_s']:.2f} |",
             f"| later runs, median s | {v['base']['median_s']:.2f} | {v['this']['median_s']:.2f} | "
             f"**{v['this']['median_s'] / v['base']['median_s']:.2f}** |",
             f"| later runs, each, s | {', '.join(f'{x:.1f}' for x in v['base']['later_s'])} | "
             f"{', '.join(f'{x:.1f}' for x in v['this']['later_s'])} | |",
             f"| later runs, the process's peak memory, median MB | {v['base']['median_peak_mb']:,.0f} | "
             f"{v['this']['median_peak_mb']:,.0f} | {v['this']['median_peak_mb'] / v['base']['median_peak_mb']:.2f} |"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--store", type=Path, default=REPO / "runs" / "peers" / "100000" / "chaja" / "peers.chaja")
    ap.add_argument("--runs", type=int, default=8, help="documents added per version (at most 10; the first apart)")
    ap.add_argument("--out", default="incremental-index")
    args = ap.parse_args()
    if not args.store.exists():
        print(f"missing: {args.store} (python benchmarks/bench_peers.py --size 100000 builds it)", file=sys.stderr)
        return 2
    runs = max(2, min(args.runs, len(NOTES)))
    chunks = sqlite3.connect(f"file:{args.store}?mode=ro", uri=True).execute(
        "SELECT count(*) FROM chunks").fetchone()[0]
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout.strip()
    machine = describe()
    times: dict[str, list[float]] = {"base": [], "this": []}
    peaks: dict[str, list[float]] = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), base], cwd=REPO, check=True,
                       capture_output=True)
        try:
            srcs = {"base": tree / "src", "this": REPO / "src"}
            stores = {name: copy_store(args.store, Path(tmp) / f"store-{name}") for name in srcs}
            for r, (title, text) in enumerate(NOTES[:runs]):
                note = Path(tmp) / "notes" / f"note-{r:02d}.md"
                note.parent.mkdir(exist_ok=True)
                note.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
                for name in (("base", "this") if r % 2 == 0 else ("this", "base")):
                    seconds, peak = index_one(srcs[name], note, stores[name])
                    times[name].append(seconds)
                    peaks[name].append(peak)
                    print(f"run {r + 1} {name}: {seconds:.2f} s, {peak:,.0f} MB", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)
    report = {"machine": machine, "base": base, "store": str(args.store.relative_to(REPO))
              if args.store.is_relative_to(REPO) else args.store.name, "chunks": chunks, "runs": runs,
              "versions": {name: {"first_s": t[0], "later_s": t[1:], "median_s": statistics.median(t[1:]),
                                  "later_peak_mb": peaks[name][1:],
                                  "median_peak_mb": statistics.median(peaks[name][1:])}
                           for name, t in times.items()}}
    write_results(args.out, report, render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
