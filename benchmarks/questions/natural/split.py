"""Freeze the dev/test splits of the natural-question sets (React and Vue).

    python benchmarks/questions/natural/split.py

Writes both sets: ``react-natural-{dev,test}.jsonl`` from the React page files and
``vue-natural-{dev,test}.jsonl`` from the Vue page files. Within each set and kind,
questions are ordered by sha256("chaja-natural-split:" + id) and the first half
(rounded up) is dev, the rest test. The rule depends on the ids alone, so adding a
kind or a file never moves a question between splits. Tune on the ``*-natural-dev``
files; report the ``*-natural-test`` files.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = {
    "react": ["react-en-pages.jsonl", "react-ko-pages.jsonl"],
    "vue": ["vue-en-pages.jsonl", "vue-ko-pages.jsonl"],
}


def key(qid: str) -> str:
    return hashlib.sha256(f"chaja-natural-split:{qid}".encode()).hexdigest()


def split_set(name: str, sources: list[str]) -> None:
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for source in sources:
        path = HERE / source
        if not path.is_file():
            raise SystemExit(f"{path} is missing")
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("//"):
                q = json.loads(line)
                by_kind[q["kind"]].append(q)
    splits: dict[str, list[dict]] = {"dev": [], "test": []}
    for kind in sorted(by_kind):
        qs = sorted(by_kind[kind], key=lambda q: key(q["id"]))
        half = (len(qs) + 1) // 2
        splits["dev"] += sorted(qs[:half], key=lambda q: q["id"])
        splits["test"] += sorted(qs[half:], key=lambda q: q["id"])
    for split, qs in splits.items():
        out = HERE / f"{name}-natural-{split}.jsonl"
        out.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
        counts = defaultdict(int)
        for q in qs:
            counts[q["kind"]] += 1
        print(f"{out.name}: {len(qs)} questions, " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))


def main() -> None:
    for name, sources in SETS.items():
        split_set(name, sources)


if __name__ == "__main__":
    main()
