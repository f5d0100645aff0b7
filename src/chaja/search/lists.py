"""The candidate lists of a search, each by name, from the query's context.

:func:`gather` asks the store for the vector lists in one call (the SQLite store walks
its graphs side by side) and runs the keyword lists (the query's terms, and its words
in translation) in the calling thread meanwhile; a long question does not walk the
section-name lists (:func:`unwalked`). After the keyword gate,
:func:`candidate_lists` names every list the settings call for, in this order (the
order fusion sums in):

    vector, heading, keyword (when the gate keeps it), aligned, aligned_heading,
    translated:<lang>, keyword:<lang> (cross_language_keyword),
    vector:<lang> (cross_language_vector), title (title_path)

Each entry of :data:`LISTS` is a small function ``(searcher, context, gathered) →
{name: hits}``; a new list is one more function and one more entry.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chaja.documents import Hit
from chaja.search.context import QueryContext
from chaja.search.query import content_words
from chaja.search.stage_costs import timed

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher


@dataclass
class Gathered:
    """The lists a search reads before the gate, and what the gate made of them."""
    keyword: list[Hit]
    vector: list[Hit]
    vectors: dict[str, list[Hit]]                 # heading, aligned, aligned_heading (as asked)
    translated: dict[str, tuple[list[Hit], list[list[str]]]]   # translated:<lang> → (hits, term groups)
    title: list[Hit] = field(default_factory=list)
    coverage: float = 0.0                          # the gate's measure
    keyword_used: bool = False                     # the gate kept the keyword list
    scored_only: tuple[str, ...] = ()              # section-name lists not walked, whose fields fusion still scores


#: the lists of section names, of each encoder (:func:`unwalked`)
SECTION_LISTS = ("heading", "aligned_heading")


def unwalked(s: Searcher, ctx: QueryContext, requests: Mapping[str, object]) -> tuple[str, ...]:
    """The section-name lists of ``requests`` this query does not walk: in a hybrid search
    with calibrated fusion, those of a query of more than ``search.heading_list_words``
    content words (all of them at 0). A section name is a few words; a longer question is
    matched against passages and keywords, and calibrated fusion still scores every
    candidate in the section-name fields, so these lists only add candidates. Not walking
    them for any question changed the React and Vue natural dev splits (2-20 content words
    a question) by -0.001 each, and cost the React heading questions (1-5 words for nine
    in ten) -0.004 beyond noise, all of it from questions of 1-7 words (docs/scale.md)."""
    cfg = s.cfg
    limit = cfg.heading_list_words
    if cfg.mode != "hybrid" or cfg.fusion != "calibrated" or (limit and len(content_words(ctx.text)) <= limit):
        return ()
    return tuple(name for name in SECTION_LISTS if name in requests)


def gather(s: Searcher, ctx: QueryContext) -> Gathered:
    """The keyword, vector and translated lists, and the gate's verdict on the keyword list
    (:mod:`chaja.search.gate`: kept when the gate is off, there is no vector list, or one
    of the top keyword results holds ``gate_share`` of the query's terms)."""
    cfg = s.cfg
    side: dict = {}

    def keyword_lists() -> None:      # while the store walks its graphs
        side["keyword"] = timed("lists: keyword", s.keyword_list, ctx.terms, ctx.n, where=ctx.where) \
            if cfg.mode != "vector" else []
        side["translated"] = timed("lists: translated", s.translated_lists, ctx.carried, ctx.n, ctx.where)
    requests = s.vector_requests(ctx.qv, ctx.qa)
    skipped = unwalked(s, ctx, requests)
    found = timed("lists: vector (keyword beside)", s.vector_lists,
                  {name: r for name, r in requests.items() if name not in skipped}, ctx.n, ctx.where,
                  meanwhile=keyword_lists)
    if "vector" in found:
        vector = found.pop("vector")
    else:           # language centering merges per-language lists (or no vectors at all)
        vector = s.vector_list(ctx.text, ctx.n, ctx.qv, ctx.where) if ctx.use_vectors else []
    keyword = side["keyword"]
    coverage = s.coverage(ctx.terms, keyword, ctx.terms_of)
    used = bool(keyword) and (not cfg.gate or not vector or coverage >= cfg.gate_share)
    got = Gathered(keyword=keyword, vector=vector, vectors=found, translated=side["translated"],
                   coverage=coverage, keyword_used=used, scored_only=skipped)
    if cfg.title_path or cfg.title_slot:
        got.title = s.keyword_list(ctx.terms, ctx.n, field="title", where=ctx.where)
    return got


def _vector(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    return {"vector": got.vector}                 # always named, even empty


def _heading(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    heading = got.vectors.get("heading", [])
    return {"heading": heading} if heading else {}


def _keyword(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    return {"keyword": got.keyword} if got.keyword_used else {}


def _aligned(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    return {name: got.vectors[name] for name in ("aligned", "aligned_heading") if got.vectors.get(name)}


def _translated(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    return {name: hits for name, (hits, _) in got.translated.items()}


def _cross_language_keyword(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    return s.cross_language_lists(ctx.qlang, ctx.terms, ctx.n, ctx.where) if s.cfg.cross_language_keyword else {}


def _cross_language_vector(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    if not (s.cfg.cross_language_vector and ctx.qv is not None):
        return {}
    return s.cross_language_vectors(ctx.qv, ctx.qlang, ctx.n, ctx.where)


def _title(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    return {"title": got.title} if s.cfg.title_path else {}


#: every candidate list, by name, in the order fusion reads them
LISTS: dict[str, Callable[[Searcher, QueryContext, Gathered], dict[str, list[Hit]]]] = {
    "vector": _vector, "heading": _heading, "keyword": _keyword, "aligned": _aligned,
    "translated": _translated, "cross_language_keyword": _cross_language_keyword,
    "cross_language_vector": _cross_language_vector, "title": _title,
}


def candidate_lists(s: Searcher, ctx: QueryContext, got: Gathered) -> dict[str, list[Hit]]:
    """Every list the settings call for, by name (:data:`LISTS`)."""
    lists: dict[str, list[Hit]] = {}
    for build in LISTS.values():
        lists.update(build(s, ctx, got))
    return lists
