"""Vector files as float32 against int8 codes (one scale per dimension), and the lexicon
as float16 against int8 codes (one scale a row): the same store, the same questions,
paired per question, with the bytes each form takes.

    python benchmarks/bench_vector_encoding.py [--work runs/quality] [--sets react,...]

Reads the stores ``bench_quality.py`` built under ``--work`` (run it first). Each store is
copied twice under ``--work/encoding/``: one set to ``float32`` with its lexicon as
float16, one set to ``int8`` with its lexicon as int8 codes made from the stored one (as
the next statistics rebuild records it). ``chaja optimize`` rewrites each copy's vector
files in its form; vector and hybrid runs are scored on both and compared with the
harness's paired tests (overall and per language pair). Results go to
``benchmarks/results/vector-encoding.json`` and ``.md`` with the machine they ran on.
Stores under 1,000 vectors a field keep theirs in the rows (float32), so only their
lexicon differs.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

import chaja
from chaja.config import Config
from chaja.eval.noise import compare_groups, compare_runs
from chaja.eval.report import question_metrics, read_records
from chaja.eval.runner import evaluate
from chaja.search import lexicon, nearest_words, word_codes
from chaja.stores import sqlite_vectors

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_quality  # noqa: E402
from machine import describe  # noqa: E402

MODES = {"vector": ["search.mode=vector"], "hybrid": []}
STORES = {"react": "react", "react-natural-test": "react", "vue-natural-test": "vue", "mixed": "mixed",
          "scifact": "scifact", "pairs-test": "pairs"}


def lexicon_as(path: Path, form: str) -> int:
    """Record the store's lexicon in ``form`` (``float16`` or ``int8``) from the one it holds;
    its bytes."""
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (lexicon.META_KEY,)).fetchone()
        lex = lexicon.decode(row[0]) if row else None
        if lex is None:
            return 0
        if form == "int8":
            vectors = {lang: word_codes.as_kept(np.asarray(m)) for lang, m in lex.vectors.items()}
            text = lexicon.encode(lexicon.Lexicon(lex.words, vectors, nearest_words.tables(lex.words, vectors)))
        else:
            vectors = {lang: np.asarray(m).astype("float16").astype("float32") for lang, m in lex.vectors.items()}
            raw = json.loads(lexicon.encode(lexicon.Lexicon(lex.words, vectors,
                                                            nearest_words.tables(lex.words, vectors))))
            for lang, entry in raw.items():
                entry.pop("codes"), entry.pop("scales")
                entry["vectors"] = base64.b64encode(vectors[lang].astype("float16").tobytes()).decode("ascii")
            text = json.dumps(raw, ensure_ascii=False)
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (text, lexicon.META_KEY))
        db.commit()
        return len(text.encode("utf-8"))
    finally:
        db.close()


def copy_as(src: Path, dst_dir: Path, form: str) -> dict:
    """A copy of the store ``src`` in ``dst_dir`` with vectors in ``form``; its sizes."""
    dst_dir.mkdir(parents=True, exist_ok=True)
    for old in dst_dir.glob(f"{src.name}*"):
        old.unlink()
    for f in src.parent.glob(f"{src.name}*"):
        shutil.copy2(f, dst_dir / f.name)
    dst = dst_dir / src.name
    lex_bytes = lexicon_as(dst, "int8" if form == "int8" else "float16")
    subprocess.run([sys.executable, "-m", "chaja.cli", "optimize", "--store", str(dst), "--quiet", "--vectors", form],
                   check=True, capture_output=True)
    vec_bytes = sum(p.stat().st_size for p in sqlite_vectors.files_of(dst))
    total = sum(p.stat().st_size for p in dst_dir.glob(f"{src.name}*"))
    return {"vector_files_bytes": vec_bytes, "lexicon_bytes": lex_bytes, "store_bytes": total}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("CHAJA_DATA_DIR", str(REPO.parent / "shared" / "data")))
    ap.add_argument("--work", default=str(REPO / "runs" / "quality"))
    ap.add_argument("--sets", default=",".join(STORES))
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "vector-encoding.json"))
    args = ap.parse_args()
    data, work = Path(args.data), Path(args.work)
    wanted = args.sets.split(",")
    if not (data / "react-docs").is_dir():
        print(f"the public data sets are not in {data}; pass --data", file=sys.stderr)
        return 2
    missing = sorted({STORES[s] for s in wanted if not (work / f"{STORES[s]}.chaja").exists()})
    if missing:
        print(f"no {', '.join(missing)} store under {work}: run benchmarks/bench_quality.py first", file=sys.stderr)
        return 2
    sizes = {}
    for store in sorted({STORES[s] for s in wanted}):
        sizes[store] = {form: copy_as(work / f"{store}.chaja", work / "encoding" / form, form)
                        for form in ("float32", "int8")}
        print(f"{store}: " + ", ".join(f"{form} vectors {v['vector_files_bytes'] / 1e6:.1f} MB, lexicon "
                                        f"{v['lexicon_bytes'] / 1e6:.1f} MB" for form, v in sizes[store].items()),
              flush=True)
    results = {"machine": {**describe(), "chaja": chaja.__version__}, "sizes": sizes, "sets": {}}
    for name, _, questions in bench_quality.sets(data, work, wanted):
        row = {}
        for mode, overrides in MODES.items():
            runs = {}
            for form in ("float32", "int8"):
                out = work / "encoding" / name / form / mode
                with chaja.open(work / "encoding" / form / f"{STORES[name]}.chaja", Config().override(overrides)) as idx:
                    evaluate(idx, questions, out, name=f"{name}-{mode}-{form}", stream=None)
                runs[form] = out
            a, b = question_metrics(runs["float32"]), question_metrics(runs["int8"])
            overall = compare_runs(a, b, ["nDCG@10"])[0]
            _, records = read_records(runs["int8"])
            kind = {r["id"]: r.get("kind") or "" for r in records}
            kinds = compare_groups(a, b, kind, "nDCG@10") if len(set(kind.values())) > 1 else []
            row[mode] = {"float32": overall.mean_a, "int8": overall.mean_b, "diff": overall.diff, "p": overall.p,
                         "verdict": overall.verdict,
                         "by_kind": {k.metric: {"diff": k.diff, "p": k.p, "verdict": k.verdict} for k in kinds}}
            print(f"{name:20s} {mode:7s} float32 {overall.mean_a:.4f} int8 {overall.mean_b:.4f} "
                  f"({overall.diff:+.4f}, p {overall.p:.2f}, {overall.verdict})  " +
                  " ".join(f"{k.metric} {k.diff:+.3f}" for k in kinds), flush=True)
        results["sets"][name] = row
    out = Path(args.out)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(results), encoding="utf-8")
    print(f"wrote {out} and {out.with_suffix('.md').name}")
    return 0


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = ["# Vector files and lexicon: float32 / float16 against int8 codes", "",
             f"Machine: {m['cpu']}, {m['cores']} cores. nDCG@10 of the same store in each form, paired per "
             "question (bootstrap interval and randomization test of the harness).", "",
             "| store | vector files float32 → int8, MB | lexicon float16 → int8, MB | store and files beside it, MB |",
             "|---|---|---|---|"]
    for store, forms in results["sizes"].items():
        f, i = forms["float32"], forms["int8"]
        lines.append(f"| {store} | {f['vector_files_bytes'] / 1e6:.1f} → {i['vector_files_bytes'] / 1e6:.1f} | "
                     f"{f['lexicon_bytes'] / 1e6:.1f} → {i['lexicon_bytes'] / 1e6:.1f} | "
                     f"{f['store_bytes'] / 1e6:.1f} → {i['store_bytes'] / 1e6:.1f} |")
    lines += ["", "| set | mode | float32 | int8 | difference (p) | per language pair |", "|---|---|---|---|---|---|"]
    for name, row in results["sets"].items():
        for mode, r in row.items():
            kinds = ", ".join(f"{k} {v['diff']:+.3f}" for k, v in r["by_kind"].items()) or "—"
            lines.append(f"| {name} | {mode} | {r['float32']:.3f} | {r['int8']:.3f} | {r['diff']:+.4f} "
                         f"({r['p']:.2f}, {r['verdict']}) | {kinds} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
