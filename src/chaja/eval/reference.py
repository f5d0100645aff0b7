"""Grades from several judges, their agreement, adjudication, and a versioned reference.

**Grade files** (:func:`read_grades`): a pool CSV with its ``grade`` column filled (a
person's), or JSON Lines ``{"pair_id", "grade"}`` (a program's). A grade is 0–3 or
``abstain`` (the judge declined); an empty cell is not graded. The judge is named by
``--judge``, a ``judge`` column, or the file's name.

**Combining** (:func:`combine`), per pair, over the judges' grades:

* every grade the same (abstentions aside) → that grade, ``by = "agreed"`` (or
  ``"single"`` when one judge graded and the others abstained);
* grades that differ → the **adjudication queue**; the adjudicator's grade, once
  given, decides (``by = "adjudicated"``), and until then the pair stays out of the
  reference (``pending``);
* every judge abstained → ``abstain``: the pair stays in the reference as an
  abstention (omitted at scoring without backfill), never replaced by a guess.

Every entry keeps its **provenance**: each judge's grade, the adjudicator's, and the
reference **version** that added it. **Expansion** (``base``): a new reference keeps
every entry of the old one as it was and adds only new pairs, at the next version, so
earlier runs can be scored under either version (:func:`judgments`) and the change in
recall and ideal DCG that new judged pairs bring is visible, as the reranker
evaluation reports both populations.
"""
from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from pathlib import Path

from chaja.eval import agreement
from chaja.eval.jsonl import read_jsonl
from chaja.eval.questions import ABSTAIN, MAX_GRADE

Grades = dict[str, dict[str, "int | str"]]      # pair id → judge → grade
_GRADE = re.compile(rf"[0-{MAX_GRADE}](\.0)?")   # "2", or "2.0" as spreadsheets write it


def parse_grade(value: object, where: str) -> int | str | None:
    """0–3, ``abstain``, or None for an empty cell."""
    text = str(value).strip().lower() if value is not None else ""
    if text == "":
        return None
    if text == ABSTAIN:
        return ABSTAIN
    if not _GRADE.fullmatch(text):
        raise ValueError(f"{where}: grade must be 0-{MAX_GRADE} or {ABSTAIN!r}, got {value!r}")
    return int(text[0])


def _given(grades: Mapping[str, int | str]) -> set[int]:
    """The distinct grades of one pair, abstentions aside."""
    return {g for g in grades.values() if g != ABSTAIN}


def read_grades(path: str | Path, judge: str | None = None) -> tuple[str, dict[str, int | str]]:
    """(judge name, pair id → grade) from a CSV or JSON Lines grade file."""
    path = Path(path)
    rows: list[tuple[int, dict]] = []
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames or not {"pair_id", "grade"} <= set(reader.fieldnames):
                raise ValueError(f"{path}: a grade file needs the columns pair_id and grade")
            rows = [(i, r) for i, r in enumerate(reader, 2)]
    else:
        rows = [(i, r) for i, r in read_jsonl(path)]
        if any(not isinstance(r, dict) for _, r in rows):
            raise ValueError(f"{path}: every line of a grade file is an object {{\"pair_id\", \"grade\"}}")
    names = {str(r["judge"]) for _, r in rows if r.get("judge")}
    if judge is None and len(names) > 1:
        raise ValueError(f"{path}: grades of several judges ({', '.join(sorted(names))}); one file a judge")
    name = judge or (names.pop() if names else path.stem)
    out: dict[str, int | str] = {}
    for i, r in rows:
        if not r.get("pair_id"):
            raise ValueError(f"{path}:{i}: no pair_id")
        grade = parse_grade(r.get("grade"), f"{path}:{i}")
        if grade is None:
            continue
        if r["pair_id"] in out and out[r["pair_id"]] != grade:
            raise ValueError(f"{path}:{i}: pair {r['pair_id']} graded twice, differently")
        out[str(r["pair_id"])] = grade
    return name, out


def collect(grade_sets: list[tuple[str, Mapping[str, int | str]]], pool_ids: set[str]) -> Grades:
    """pair id → judge → grade, refusing pairs the pool does not hold and repeated judges."""
    by_pair: Grades = {}
    seen: set[str] = set()
    for judge, grades in grade_sets:
        if judge in seen:
            raise ValueError(f"judge {judge!r} is given twice")
        seen.add(judge)
        unknown = sorted(set(grades) - pool_ids)
        if unknown:
            raise ValueError(f"judge {judge!r} graded {len(unknown)} pairs the pool does not hold ({unknown[0]}, …)")
        for pid, g in grades.items():
            by_pair.setdefault(pid, {})[judge] = g
    return by_pair


def agreement_summary(by_pair: Grades, judges: list[str]) -> dict:
    """Overall agreement (Cohen's kappa for two judges, Krippendorff's alpha for any
    number) and per-pair agreement, abstentions counted as missing grades."""
    graded = {pid: {j: g for j, g in gs.items() if g != ABSTAIN} for pid, gs in by_pair.items()}
    units = [list(gs.values()) for gs in graded.values()]
    both = [pid for pid, gs in graded.items() if len(gs) >= 2]
    out: dict = {
        "judges": judges, "pairs": len(by_pair),
        "pairs_graded_by_two_or_more": len(both),
        "abstentions": sum(1 for gs in by_pair.values() for g in gs.values() if g == ABSTAIN),
        "exact_agreement": (sum(1 for pid in both if len(set(graded[pid].values())) == 1) / len(both)) if both else None,
        "alpha_ordinal": agreement.krippendorff_alpha(units, "ordinal"),
        "alpha_nominal": agreement.krippendorff_alpha(units, "nominal"),
    }
    if len(judges) == 2:
        a, b = judges
        paired = [pid for pid in both if a in graded[pid] and b in graded[pid]]
        out["cohen_kappa"] = agreement.cohen_kappa([graded[p][a] for p in paired], [graded[p][b] for p in paired])
        out["cohen_kappa_quadratic"] = agreement.cohen_kappa([graded[p][a] for p in paired],
                                                             [graded[p][b] for p in paired], "quadratic")
    out["per_pair"] = {pid: {"grades": gs, "agree": len(_given(gs)) <= 1}
                       for pid, gs in sorted(by_pair.items())}
    return out


def disagreements(by_pair: Grades) -> list[str]:
    """Pairs whose judges gave different grades (abstentions aside): the adjudication queue."""
    return sorted(pid for pid, gs in by_pair.items() if len(_given(gs)) > 1)


def combine(pool: list[dict], by_pair: Grades, adjudicated: tuple[str, Mapping[str, int | str]] | None = None,
            base: list[dict] | None = None) -> tuple[list[dict], list[str]]:
    """(reference entries, pending pair ids): the old reference ``base`` as it was, then
    the pool's newly decided pairs at the next version."""
    entries = [dict(e) for e in (base or [])]
    known = {e["pair_id"] for e in entries}
    version = max((int(e["version"]) for e in entries), default=0) + 1
    adjudicator, decided = adjudicated if adjudicated else ("", {})
    pending = []
    for item in pool:
        pid = item["pair_id"]
        grades = by_pair.get(pid)
        if pid in known or not grades:
            continue
        given = _given(grades)
        entry = {"pair_id": pid, "question_id": item["question_id"], "doc_id": item["doc_id"],
                 "judges": dict(sorted(grades.items())), "version": version}
        if not given:
            entry.update(grade=ABSTAIN, by="abstained")
        elif len(given) == 1:
            entry.update(grade=given.pop(), by="agreed" if sum(g != ABSTAIN for g in grades.values()) > 1 else "single")
        elif pid in decided:
            entry.update(grade=decided[pid], by="adjudicated", adjudicator=adjudicator)
        else:
            pending.append(pid)
            continue
        entries.append(entry)
    return entries, pending


def write_reference(entries: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for e in entries:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")


def read_reference(path: str | Path) -> list[dict]:
    out = []
    for i, e in read_jsonl(path):
        if not isinstance(e, dict) or not {"pair_id", "question_id", "doc_id", "grade", "version"} <= set(e):
            raise ValueError(f"{path}:{i}: a reference entry needs pair_id, question_id, doc_id, grade, version")
        parse_grade(e["grade"], f"{path}:{i}")
        out.append(e)
    return out


def versions(entries: list[dict]) -> list[int]:
    return sorted({int(e["version"]) for e in entries})


def judgments(entries: list[dict], version: int | None = None) -> dict[str, dict[str, int | str]]:
    """question id → document id → grade, over the entries of ``version`` and earlier."""
    out: dict[str, dict[str, int | str]] = {}
    for e in entries:
        if version is None or int(e["version"]) <= version:
            out.setdefault(e["question_id"], {})[e["doc_id"]] = e["grade"]
    return out


def score_run(run_dir: str | Path, entries: list[dict], version: int | None = None) -> dict:
    """A run's graded metrics (answerable and all-question views, the random-order
    reference) under the reference at ``version`` (the latest when None), from the run's
    records alone; questions the reference has not judged are left out."""
    from chaja.eval import graded
    from chaja.eval.report import read_records

    version = version if version is not None else max(versions(entries), default=0)
    pools = judgments(entries, version)
    meta, records = read_records(run_dir)
    rows, used = [], []
    for rec in records:
        pool = pools.get(rec["id"])
        if not pool:
            continue
        ranked = [] if rec.get("abstained") else list(rec["ranked"])
        rows.append(graded.question_scores(ranked, pool, selected=rec.get("selected")))
        used.append(pool)
    if not rows:
        raise ValueError(f"{run_dir}: none of its questions is judged in the reference (version {version})")
    return {"name": meta.get("name") or Path(run_dir).name, "reference_version": version,
            "judged_pairs": sum(len(p) for p in used), **graded.summarize_graded(rows, used)}
