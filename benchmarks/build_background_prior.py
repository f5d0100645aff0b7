"""Build the background priors chaja ships (``src/chaja/search/priors/<encoder>.npz``,
:mod:`chaja.search.background_prior`) from the background statistics public stores
recorded at index time.

    python benchmarks/build_background_prior.py [--stores runs/quality/react.chaja,...]

The default stores are the React and Vue documentation stores that ``bench_quality.py``
builds from the public data sets (English and Korean pages, prose and code). KorQuAD and
SciFact are left out, so the curve of quality against store size drawn from them
(``bench_store_size.py``) measures the prior on text it was not taken from. Each store
counts the same (its statistics pooled as ``WEIGHT`` vectors), so no one store's size
decides. A field is pooled over the stores that hold it, per encoder (``chunk`` and
``heading`` from the main encoder, ``aligned`` and ``aligned_heading`` from the aligned
one).
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from chaja.search import background
from chaja.search.background_prior import encoder_key, pooled, prior_path, save

REPO = Path(__file__).resolve().parents[1]
DEFAULT = ",".join(str(REPO / "runs" / "quality" / f"{n}.chaja") for n in ("react", "vue"))
WEIGHT = 1000
ENCODER_OF = {"chunk": "encoder", "heading": "encoder", "aligned": "aligned_encoder", "aligned_heading": "aligned_encoder"}


def store_meta(path: Path) -> dict[str, str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT key, value FROM meta"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stores", default=DEFAULT, help="comma-separated SQLite stores (default: %(default)s)")
    args = ap.parse_args()
    parts: dict[str, dict[str, list[dict]]] = {}       # encoder → field → statistics
    for name in args.stores.split(","):
        path = Path(name)
        if not path.is_file():
            print(f"skipped {path}: not found (build it with benchmarks/bench_quality.py)", file=sys.stderr)
            continue
        meta = store_meta(path)
        for field, s in background.decode(meta.get(background.META_KEY)).items():
            encoder = meta.get(ENCODER_OF.get(field, ""))
            if encoder:
                parts.setdefault(encoder_key(encoder), {}).setdefault(field, []).append({**s, "n": WEIGHT})
                print(f"{path.name}: {field} ({s['n']} vectors, {encoder})")
    if not parts:
        print("no store with background statistics", file=sys.stderr)
        return 2
    for key, fields in parts.items():
        out = prior_path(key)
        save(out, {field: pooled(p) for field, p in fields.items()})
        print(f"wrote {out.relative_to(REPO)}: " + ", ".join(f"{f} from {len(p)} stores" for f, p in sorted(fields.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
