"""Merging postings segments whose rows follow one another, without sorting the postings.

A merge (:func:`chaja.stores.postings.merge`) numbers the merged terms by hash and must
put each term's postings in row order. In general that is one sort of every posting's
key ``term·R + row``: at a million chunks 87 million keys, whose int64 key, argsort and
gathered columns held about 6 GB at the peak of a bulk load. When the parts' live rows
follow one another (each part's rowids all above the previous part's, as the pages of a
build and a store's segments in the order they were written do), a term's postings in
the merge are its postings in each part, part after part, so each one's place is known
without a sort:

    place(p) = start(t) + (live postings of t in the parts before) + (p's place among t's in its part),

with ``start(t)`` the running total of the live postings of the terms before ``t``. Two
passes over the parts (the counts per term, then the placing), each part's postings
placed by one scatter: memory holds the merged arrays and one part's temporaries.
"""
from __future__ import annotations

import numpy as np

from chaja.stores.tf_codes import CodedTf, placed


def rowid_order(parts: list[tuple]) -> list[int] | None:
    """The places of the parts that hold live rows, ordered by their first live rowid,
    where each one's live rowids then all lie above the one's before; None where they
    interleave."""
    spans = []
    for i, (seg, alive) in enumerate(parts):
        live = np.flatnonzero(alive)
        if live.size:
            rowids = np.asarray(seg.rowids)
            spans.append((int(rowids[live[0]]), int(rowids[live[-1]]), i))
    spans.sort()
    if any(nxt[0] <= prev[1] for prev, nxt in zip(spans, spans[1:])):
        return None
    return [i for _, _, i in spans]


def _live_per_term(seg, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(live postings of each of the segment's terms, which of its postings are live; None: all)."""
    offsets = np.asarray(seg.offsets)
    if alive.all():
        return np.diff(offsets), None
    keep = alive[np.asarray(seg.rows)]
    held = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return held[offsets[1:]] - held[offsets[:-1]], keep


def merged_postings(parts: list[tuple], order: list[int], rank: np.ndarray, n_terms: int,
                    lang_maps: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, CodedTf, np.ndarray, np.ndarray,
                                                          np.ndarray]:
    """(offsets, rows, tf, rowids, lengths, languages) of the merge of ``parts`` taken in
    ``order`` (:func:`rowid_order`): ``rank`` holds each part's terms' places among the
    ``n_terms`` merged terms, one part after another in the parts' own order, and
    ``lang_maps`` each part's language numbers in the merge."""
    term_base = np.cumsum([0] + [int(np.asarray(seg.hashes).size) for seg, _ in parts])
    ranks = [rank[term_base[i]:term_base[i + 1]] for i in range(len(parts))]
    counts = np.zeros(n_terms, np.int64)
    for i in order:                                  # pass 1: the live postings of every merged term
        counts[ranks[i]] += _live_per_term(*parts[i])[0]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    out_rows = np.empty(int(offsets[-1]), np.int32)
    coded = []
    cursor = offsets[:-1].copy()                     # where each term's next posting goes
    rowids, lengths, langs = [], [], []
    base = 0
    for i in order:                                  # pass 2: each part's postings placed
        seg, alive = parts[i]
        per_term, keep = _live_per_term(seg, alive)
        live = np.flatnonzero(alive)
        local = np.full(seg.n_rows, -1, np.int64)
        local[live] = np.arange(live.size) + base
        rows = local[np.asarray(seg.rows)]
        if keep is not None:
            rows = rows[keep]
        term_of = np.repeat(ranks[i], per_term)
        within = np.arange(term_of.size) - np.repeat(np.cumsum(per_term) - per_term, per_term)
        place = cursor[term_of] + within
        out_rows[place] = rows
        coded.append((seg.tf, keep, place))
        cursor[ranks[i]] += per_term
        rowids.append(np.asarray(seg.rowids)[live])
        lengths.append(np.asarray(seg.lengths)[live])
        langs.append(lang_maps[i][np.asarray(seg.langs)[live]] if lang_maps[i].size else np.asarray(seg.langs)[live])
        base += live.size
    cat = (lambda xs, dtype: np.concatenate(xs).astype(dtype) if xs else np.zeros(0, dtype))
    return (offsets, out_rows, placed(coded, int(offsets[-1])), cat(rowids, np.int64), cat(lengths, np.int32),
            cat(langs, np.uint8))
