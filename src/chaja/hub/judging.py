"""The judging page at ``/judge`` and the small API behind it, over the judging folder
``chaja serve --judging DIR`` names (``hub.judging``; the layout and the grade files:
:mod:`chaja.eval.judge_dir`):

    GET  /v1/judging                                     the pools (pairs, questions, judges) and reports
    GET  /v1/judging/pools/{pool}/judges/{judge}         the pool's pairs and this judge's grades only
    PUT  /v1/judging/pools/{pool}/judges/{judge}/{pair}  {"grade": 0-3 or "abstain"}
    GET  /v1/judging/pools/{pool}/adjudication/{name}    the disputed pairs, blind, and the agreement
    PUT  /v1/judging/pools/{pool}/adjudication/{name}/{pair}
    GET  /v1/judging/reports/{name}                      an eval report (HTML, sandboxed)

Reads need a read key and grades a write key, where keys are set. A judge sees the
pairs and their own grades, never another judge's; the adjudicator sees which pairs
are disputed and how far the judges agree overall, never who gave which grade. Each
pair comes with the spans of its passage that share a term with its question
(``marks``, UTF-16 offsets as a browser counts them), and a view says where to resume
(``at``: the first ungraded pair after the one graded last). The API is the page's, so
it stays out of the OpenAPI document, as the pages do.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import FileResponse, HTMLResponse

from chaja.analysis import bigram_terms
from chaja.eval.judge_dir import JudgingFolder, Unknown, judge_name
from chaja.function_words import EN_STOPWORDS, KO_STOPWORDS, is_hangul
from chaja.hub.dependencies import CurrentHub, read, write
from chaja.hub.models import GradeIn
from chaja.hub.web import page
from chaja.snippets import highlights

router = APIRouter(include_in_schema=False)
SHOWN = ("pair_id", "question_id", "question", "doc_id", "title", "heading", "passage")   # not found_by: judging is blind


def _folder(hub: CurrentHub) -> JudgingFolder:
    where = hub.config.hub.judging
    if not where:
        raise HTTPException(404, "this hub has no judging folder: start it with chaja serve --judging DIR")
    try:
        return JudgingFolder(where)
    except FileNotFoundError as exc:
        raise HTTPException(404, f"{exc}: the folder chaja serve --judging named is gone") from None


Folder = Annotated[JudgingFolder, Depends(_folder)]


def _utf16(text: str, spans: list[list[int]]) -> list[list[int]]:
    """``spans`` of ``text`` in UTF-16 code units, as JavaScript indexes strings."""
    if all(ord(c) < 0x10000 for c in text):
        return spans
    at = [0]
    for c in text:
        at.append(at[-1] + (2 if ord(c) >= 0x10000 else 1))
    return [[at[s], at[e]] for s, e in spans]


def marks(question: str, passage: str) -> list[list[int]]:
    """Spans of ``passage`` that hold one of the question's content terms (words, Hangul bigrams)."""
    terms = [t for t in dict.fromkeys(bigram_terms(question))
             if t not in EN_STOPWORDS and t not in KO_STOPWORDS and (len(t) > 1 or is_hangul(t))]
    return _utf16(passage, highlights(passage, terms))


def resume_at(items: list[dict], rows: list[dict]) -> int:
    """The first ungraded pair after the one graded last (``rows`` in grading order),
    wrapping around; that last one when every pair is graded; 0 before any grade."""
    index = {it["pair_id"]: i for i, it in enumerate(items)}
    graded = {r["pair_id"] for r in rows if r["pair_id"] in index}
    last = next((index[r["pair_id"]] for r in reversed(rows) if r["pair_id"] in index), None)
    if last is None:
        return 0
    n = len(items)
    return next(((last + s) % n for s in range(1, n + 1) if items[(last + s) % n]["pair_id"] not in graded), last)


def _view(folder: JudgingFolder, pool: str, name: str, items: list[dict], role: str) -> dict:
    rows = folder.rows(pool, name, role)
    ids = {it["pair_id"] for it in items}
    grades = {pid: g for pid, g in folder.grades(pool, name, role).items() if pid in ids}
    shown = [{**{k: it.get(k, "") for k in SHOWN}, "marks": marks(it.get("question", ""), it.get("passage", ""))}
             for it in items]
    return {"pool": pool, "name": name, "role": role, "total": len(items), "graded": len(grades),
            "at": resume_at(items, rows), "items": shown, "grades": grades}


def _pool(folder: JudgingFolder, pool: str) -> list[dict]:
    try:
        return folder.pool(pool)
    except Unknown as exc:
        raise HTTPException(404, str(exc)) from None


def _adjudicator(folder: JudgingFolder, pool: str, name: str) -> str:
    name = judge_name(name)
    if name in folder.judges(pool):
        raise HTTPException(400, f"{name!r} graded pool {pool!r} as a judge; adjudication is blind, by someone "
                                 "who did not grade the pool")
    return name


@router.get("/judge")
def judging_page() -> HTMLResponse:
    return HTMLResponse(page("judge.html"), headers={"Cache-Control": "no-cache"})


@router.get("/v1/judging", dependencies=[read])
def listing(folder: Folder) -> dict:
    return {"pools": folder.pools(), "reports": folder.reports()}


@router.get("/v1/judging/pools/{pool}/judges/{judge}", dependencies=[read])
def judge_view(pool: str, judge: str, folder: Folder) -> dict:
    items = _pool(folder, pool)
    return _view(folder, pool, judge_name(judge), items, "judge")


@router.put("/v1/judging/pools/{pool}/judges/{judge}/{pair_id}", dependencies=[write])
def judge_grade(pool: str, judge: str, pair_id: str, body: GradeIn, folder: Folder) -> dict:
    total = len(_pool(folder, pool))
    grades = folder.save(pool, judge, pair_id, body.grade)
    return {"pair_id": pair_id, "grade": grades[pair_id], "graded": len(grades), "total": total}


@router.get("/v1/judging/pools/{pool}/adjudication/{name}", dependencies=[read])
def adjudication_view(pool: str, name: str, folder: Folder) -> dict:
    items = _pool(folder, pool)
    name = _adjudicator(folder, pool, name)
    summary, disputed = folder.dispute(pool)
    wanted = set(disputed)
    return {**_view(folder, pool, name, [it for it in items if it["pair_id"] in wanted], "adjudicator"),
            "summary": summary}


@router.put("/v1/judging/pools/{pool}/adjudication/{name}/{pair_id}", dependencies=[write])
def adjudication_grade(pool: str, name: str, pair_id: str, body: GradeIn, folder: Folder) -> dict:
    if pair_id not in {it["pair_id"] for it in _pool(folder, pool)}:
        raise HTTPException(400, f"pool {pool!r} holds no pair {pair_id!r}")
    name = _adjudicator(folder, pool, name)
    disputed = set(folder.dispute(pool)[1])
    if pair_id not in disputed:
        raise HTTPException(400, f"pair {pair_id!r} is not in dispute in pool {pool!r}; the adjudicator grades "
                                 "only pairs the judges disagree on")
    grades = folder.save(pool, name, pair_id, body.grade, role="adjudicator")
    return {"pair_id": pair_id, "grade": grades[pair_id], "graded": len(disputed & set(grades)),
            "total": len(disputed)}


@router.get("/v1/judging/reports/{name:path}", dependencies=[read])
def report(name: str, folder: Folder) -> FileResponse:
    """A report as it is, sandboxed: its scripts run, but in an origin of their own, away
    from the hub's pages and the key they hold."""
    try:
        path: Path = folder.report(name)
    except Unknown as exc:
        raise HTTPException(404, str(exc)) from None
    return FileResponse(path, media_type="text/html", headers={
        "Content-Security-Policy": "sandbox allow-scripts", "Cache-Control": "no-cache"})
