"""A judging folder: the pools ``chaja judge pool`` wrote, each judge's grades beside
them, the adjudicator's, and eval reports, as the hub's judging page reads and writes
them (:mod:`chaja.hub.judging`).

    DIR/<pool>.jsonl                       a pool (chaja judge pool --out)
    DIR/<pool>.grades/<judge>.csv          one judge's grades
    DIR/<pool>.adjudication/<name>.csv     the adjudicator's grades of the disputed pairs
    DIR/**/*.html                          reports (chaja eval report --html)

A grade file has the columns ``pair_id, question_id, doc_id, grade, judge, graded_at``,
one row a graded pair, the latest graded last; ``chaja judge agreement --grades`` and
``chaja judge reference --grades/--adjudication`` read it as it is
(:func:`chaja.eval.reference.read_grades`). Every write replaces the file whole
(a temporary file renamed over it), so a reader never sees half a file.

Names are checked before they become paths: a pool is one of the ``*.jsonl`` pool files
directly in DIR, a report one of the HTML files under it, and a judge's name is letters,
digits, ``_``, ``-`` and ``.`` (not first), so no name reaches outside DIR.
"""
from __future__ import annotations

import csv
import functools
import os
import re
import tempfile
import threading
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

from chaja.eval import reference as ref
from chaja.eval.jsonl import read_jsonl
from chaja.eval.judge_pool import read_pool

COLUMNS = ("pair_id", "question_id", "doc_id", "grade", "judge", "graded_at")
_NAME = re.compile(r"[^\W_][\w.-]{0,63}")
_WRITING = threading.Lock()          # one grade file written at a time (read, change, replace)


class Unknown(LookupError):
    """A pool or report the folder does not hold."""


def judge_name(name: str) -> str:
    """``name`` (NFC) when it may name a judge's file, else ValueError saying why."""
    name = unicodedata.normalize("NFC", name or "")
    if not _NAME.fullmatch(name):
        raise ValueError(f"a judge's name is 1-64 letters, digits, '_', '-' or '.', starting with a letter or "
                         f"digit (no spaces, slashes or other path characters): got {name!r}")
    return name


@functools.lru_cache(maxsize=32)
def _pool(path: str, stamp: tuple[int, int]) -> list[dict]:
    return read_pool(path)


def _is_pool(path: Path) -> bool:
    """Whether the file's first line is a pool item (a reference or grade file is not)."""
    try:
        for _, item in read_jsonl(path):
            return isinstance(item, dict) and {"pair_id", "question_id", "doc_id", "found_by"} <= set(item)
    except (ValueError, OSError, UnicodeDecodeError):
        return False
    return False


class JudgingFolder:
    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"no judging folder at {root}")

    # ---- pools -----------------------------------------------------------
    def pool_names(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.jsonl") if p.is_file() and _is_pool(p))

    def pool(self, name: str) -> list[dict]:
        """The items of pool ``name`` (read again when the file changes)."""
        if name not in self.pool_names():
            raise Unknown(f"no pool {name!r} in the judging folder (have: {', '.join(self.pool_names()) or 'none'})")
        path = self.root / f"{name}.jsonl"
        st = path.stat()
        return _pool(str(path), (st.st_mtime_ns, st.st_size))

    def pools(self) -> list[dict]:
        """Each pool with its pair and question counts, its judges and how many pairs are in dispute."""
        out = []
        for name in self.pool_names():
            try:
                items = self.pool(name)
            except ValueError as exc:          # a pool file that no longer reads: listed with why
                out.append({"name": name, "error": str(exc)})
                continue
            out.append({"name": name, "pairs": len(items), "questions": len({it["question_id"] for it in items}),
                        "judges": self.judges(name)})
        return out

    # ---- grades ----------------------------------------------------------
    def _file(self, pool: str, judge: str, role: str) -> Path:
        folder = self.root / f"{pool}.{'grades' if role == 'judge' else 'adjudication'}"
        path = folder / f"{judge_name(judge)}.csv"
        if path.resolve().parent != folder.resolve() or not folder.resolve().is_relative_to(self.root):
            raise ValueError(f"the name {judge!r} leads outside the judging folder")
        return path

    def judges(self, pool: str) -> list[str]:
        folder = self.root / f"{pool}.grades"
        return sorted(p.stem for p in folder.glob("*.csv") if _NAME.fullmatch(p.stem)) if folder.is_dir() else []

    def rows(self, pool: str, judge: str, role: str = "judge") -> list[dict]:
        """The grade rows of one judge (or adjudicator), the latest graded last."""
        path = self._file(pool, judge, role)
        if not path.is_file():
            return []
        with open(path, encoding="utf-8", newline="") as fh:
            return [r for r in csv.DictReader(fh) if r.get("pair_id") and (r.get("grade") or "").strip()]

    def grades(self, pool: str, judge: str, role: str = "judge") -> dict[str, int | str]:
        return {r["pair_id"]: ref.parse_grade(r["grade"], f"{pool}/{judge}") for r in self.rows(pool, judge, role)}

    def save(self, pool: str, judge: str, pair_id: str, grade: object, role: str = "judge") -> dict[str, int | str]:
        """Keep ``grade`` (0-3 or ``abstain``) of ``pair_id`` for ``judge``; the judge's grades after."""
        items = {it["pair_id"]: it for it in self.pool(pool)}
        if pair_id not in items:
            raise ValueError(f"pool {pool!r} holds no pair {pair_id!r}")
        value = ref.parse_grade(grade, f"pair {pair_id}")
        if value is None:
            raise ValueError(f"pair {pair_id}: a grade is 0-3 or 'abstain', not empty")
        name = judge_name(judge)
        if role == "adjudicator" and name in self.judges(pool):
            raise ValueError(f"{name!r} graded this pool as a judge; the adjudicator is someone who did not")
        item = items[pair_id]
        with _WRITING:
            rows = [r for r in self.rows(pool, name, role) if r["pair_id"] != pair_id]
            rows.append({"pair_id": pair_id, "question_id": item["question_id"], "doc_id": item["doc_id"],
                         "grade": value, "judge": name,
                         "graded_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds")})
            _replace(self._file(pool, name, role), rows)
        return self.grades(pool, name, role)

    # ---- adjudication ------------------------------------------------------
    def dispute(self, pool: str) -> tuple[dict, list[str]]:
        """(agreement summary without the per-pair grades, disputed pair ids) over the pool's judges."""
        items = self.pool(pool)
        sets = [(j, self.grades(pool, j)) for j in self.judges(pool)]
        by_pair = ref.collect(sets, {it["pair_id"] for it in items})
        summary = ref.agreement_summary(by_pair, [j for j, _ in sets])
        summary.pop("per_pair")
        return summary, ref.disagreements(by_pair)

    # ---- reports -----------------------------------------------------------
    def reports(self) -> list[str]:
        found = (p for p in self.root.rglob("*.html") if p.is_file() and p.resolve().is_relative_to(self.root))
        return sorted(p.relative_to(self.root).as_posix() for p in found)

    def report(self, name: str) -> Path:
        if name not in self.reports():
            raise Unknown(f"no report {name!r} in the judging folder")
        return self.root / name


def _replace(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as the grade file at ``path``: a temporary file beside it, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
