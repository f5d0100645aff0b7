"""Postings segments: per-term lists of (row, term frequency per column), as arrays.

A segment holds the keyword index of a set of chunk rows in compressed sparse rows by
term: ``offsets[t]:offsets[t+1]`` slices ``rows`` (the segment's local row numbers) and ``tf``
(frequency in title, heading and body, a byte a posting: :mod:`chaja.stores.tf_codes`) for term
``t``. Per local row it keeps the store's rowid, the row's length in tokens over all three
columns, and a language code. Terms are ordered by a 64-bit hash of their UTF-8 bytes
(BLAKE2b), so a term is found by binary search in a memory-mapped array with no dictionary to
build when a store opens; the term's bytes are kept beside it and compared, so a hash
collision cannot match.

Built (:func:`build`, :func:`build_paged`), merged (:func:`merge`), saved and loaded here;
the segment itself and its tokens are :mod:`chaja.stores.postings_segment`.

A segment is saved as one array file (:mod:`chaja.stores.array_file`), its rows two bytes a
posting (:mod:`chaja.stores.row_codes`); :func:`load` maps it.
"""
from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from chaja.stores import array_file, derived_terms, postings_helper, postings_in_order
# the segment and its tokens, used here and named through this module by its callers
from chaja.stores.postings_segment import (  # noqa: F401
    SLOT_MEMO, Segment, _assemble, _hash_order, _segment, fts_tokens, term_hash)
from chaja.stores.row_codes import CodedRows
from chaja.stores.tf_codes import CodedTf

MAGIC = b"CHJKW\x00\x03\x00"
#: the layout before the rows were coded (:mod:`chaja.stores.row_codes`): read, never written
MAGIC_PLAIN_ROWS = b"CHJKW\x00\x02\x00"
def build(rows: Iterable[tuple[int, str, str, str, str]]) -> Segment:
    """A segment from ``(rowid, lang, title, heading, body)`` rows, the texts as stored in ``chunk_terms``.

    Terms are numbered by their place in hash order, and every token gets a key
    ``(term·R + row)·3 + column``; one sort of the keys with their counts gives each
    (term, row) posting and its frequency per column, already in the segment's order. A row
    whose terms are still to be derived is derived here (:func:`chaja.stores.derived_terms.completed`)."""
    rows = sorted(derived_terms.completed(list(rows)), key=lambda r: r[0])
    n_rows = len(rows)
    lang_names: dict[str, int] = {}
    # a term's number is its place in first-seen order, given by C-level dict calls (a
    # missing term is numbered len(vocab) as it is inserted), not a Python call per token
    vocab: defaultdict[str, int] = defaultdict()
    vocab.default_factory = vocab.__len__
    number = vocab.__getitem__
    numbered = array("q")
    spans = np.zeros(3 * n_rows, np.int64)      # tokens per (row, column)
    langs = np.zeros(n_rows, np.int64)
    for local, (_, lang, *texts) in enumerate(rows):
        langs[local] = lang_names.setdefault(lang or "", len(lang_names))
        for col, text in enumerate(texts):
            found = fts_tokens(text or "")
            spans[3 * local + col] = len(found)
            numbered.extend(map(number, found))
    terms = list(vocab)
    ids = np.frombuffer(numbered, dtype=np.int64) if numbered else np.zeros(0, np.int64)
    hashes, order, rank = _hash_order(terms)
    cell = np.repeat(np.arange(3 * n_rows, dtype=np.int64), spans)          # row·3 + column per token
    keys, counts = np.unique(rank[ids] * (3 * n_rows) + cell, return_counts=True) \
        if ids.size else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    pair = keys // 3                                                          # term·R + row
    new = np.concatenate([[True], pair[1:] != pair[:-1]]) if pair.size else np.zeros(0, bool)
    first, which = np.flatnonzero(new), np.cumsum(new) - 1
    tf = np.zeros((first.size, 3), np.int64)
    tf[which, keys % 3] = counts
    unique_pair = pair[first]
    per_term = np.bincount(unique_pair // max(n_rows, 1), minlength=len(terms)) if unique_pair.size \
        else np.zeros(len(terms), np.int64)
    return _segment([terms[i] for i in order], hashes[order], per_term, unique_pair % max(n_rows, 1),
                    np.minimum(tf, 65535), np.asarray([r[0] for r in rows], np.int64),
                    spans.reshape(-1, 3).sum(axis=1), langs, list(lang_names))


#: a page of at least this many rows is built half here and half by a helper process
HELPER_MIN_ROWS = 10_000


def build_paged(next_rows: Callable[[int], list[tuple[int, str, str, str, str]]], helper: bool = True) -> Segment:
    """One segment from rows read a page at a time (memory: the postings plus one page's
    tokens, not every token at once): ``next_rows(last)`` gives the page of rows after rowid
    ``last`` in rowid order (empty at the end); each page is built, the parts merged. With
    ``helper``, a page of :data:`HELPER_MIN_ROWS` rows or more is built half by a helper
    process while this one builds the other half (:mod:`chaja.stores.postings_helper`): the
    same segment, in about half the time on two cores, each process holding half a page."""
    parts: list[Segment] = []
    aide: postings_helper.Helper | None = None
    tried = not helper
    try:
        for page in _pages(next_rows):
            if not tried and len(page) >= HELPER_MIN_ROWS:
                aide, tried = postings_helper.start(), True
            half = len(page) // 2
            if aide is not None and aide.submit(page[:half]):
                mine = build(page[half:])
                theirs = aide.result()
                parts += [theirs if theirs is not None else build(page[:half]), mine]
            else:
                parts.append(build(page))
    finally:
        if aide is not None:
            aide.close()
    if len(parts) <= 1:
        return parts[0] if parts else build([])
    return merge([(p, np.ones(p.n_rows, dtype=bool)) for p in parts])


def _pages(next_rows: Callable[[int], list[tuple[int, str, str, str, str]]]) -> Iterator[list]:
    last = -(2 ** 63)
    while rows := next_rows(last):
        yield rows
        last = rows[-1][0]


def _gather(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The slices ``buffer[starts[i]:starts[i] + lengths[i]]`` one after another."""
    if not lengths.size or not lengths.sum():
        return buffer[:0].copy()
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return buffer[np.repeat(starts, lengths) + within]


def merge(parts: list[tuple[Segment, np.ndarray]]) -> Segment:
    """One segment of the live rows of several: ``parts`` pairs a segment with its alive mask.
    Rowids must not repeat across live rows. Every term of every part is kept (a term
    whose rows all died keeps an empty list). A single part with every row alive is
    returned as it is.

    Terms are matched by hash (each part's hashes ascend): the merged terms are the union
    of the parts' hashes, and each posting's place is one sort of ``term·R + row``. Terms
    that share a hash must have the same bytes; if two ever differ (a 64-bit collision),
    the merge goes term by term instead."""
    parts = [(seg, np.asarray(alive, dtype=bool)) for seg, alive in parts]
    if len(parts) == 1 and parts[0][1].all():
        return parts[0][0]
    if not parts:
        return build([])
    part_hashes = [np.asarray(seg.hashes) for seg, _ in parts]
    terms = _merged_terms(parts, part_hashes)
    if terms is None:
        return _merge_by_term(parts)
    hashes, rank, term_lengths, term_bytes = terms
    term_offsets = np.concatenate([[0], np.cumsum(term_lengths)]).astype(np.int64)
    order = postings_in_order.rowid_order(parts)
    if order is not None:           # rows that follow one another: each posting placed, nothing sorted
        names: dict[str, int] = {}
        maps = [np.fromiter((names.setdefault(n, len(names)) for n in seg.lang_names), dtype=np.int64,
                            count=len(seg.lang_names)) for seg, _ in parts]
        offsets, rows, tf, rowids, lengths, langs = postings_in_order.merged_postings(parts, order, rank,
                                                                                     hashes.size, maps)
        return Segment(hashes=hashes.astype(np.uint64), term_bytes=term_bytes.astype(np.uint8),
                       term_offsets=term_offsets, offsets=offsets, rows=rows, tf=tf, rowids=rowids,
                       lengths=lengths, langs=langs, lang_names=list(names))
    (rowids, lengths, langs), (post_term, post_row, post_tf), lang_names = _live_postings(parts, part_hashes, rank)
    all_rowids = np.concatenate(rowids).astype(np.int64)
    order = np.argsort(all_rowids, kind="stable")
    relabel = np.empty_like(order)
    relabel[order] = np.arange(order.size)
    rows_ = relabel[np.concatenate(post_row).astype(np.int64)] if order.size else np.zeros(0, np.int64)
    terms_ = np.concatenate(post_term).astype(np.int64)
    by = np.argsort(terms_ * max(order.size, 1) + rows_, kind="stable")
    counts = np.bincount(terms_, minlength=hashes.size)
    return Segment(
        hashes=hashes.astype(np.uint64), term_bytes=term_bytes.astype(np.uint8),
        term_offsets=term_offsets, offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        rows=rows_[by].astype(np.int32), tf=CodedTf.encode(np.concatenate(post_tf).reshape(-1, 3)[by]),
        rowids=all_rowids[order], lengths=np.concatenate(lengths)[order].astype(np.int32),
        langs=np.concatenate(langs)[order].astype(np.uint8), lang_names=lang_names,
    )


def _merged_terms(parts: list[tuple[Segment, np.ndarray]], part_hashes: list[np.ndarray]):
    """The terms of a :func:`merge`: (their hashes, ascending; each part's terms' places
    among them, one part after another; each merged term's length in bytes; their bytes),
    each merged term's bytes taken from its first holder. None when two terms that share
    a hash differ."""
    hashes, first = np.unique(np.concatenate(part_hashes), return_index=True)
    # each merged term's bytes, from its first holder; every holder must agree
    byte_base = np.cumsum([0] + [np.asarray(seg.term_bytes).size for seg, _ in parts])[:-1]
    all_bytes = np.concatenate([np.asarray(seg.term_bytes) for seg, _ in parts])
    starts = np.concatenate([np.asarray(seg.term_offsets)[:-1] + base for (seg, _), base in zip(parts, byte_base)])
    lens = np.concatenate([np.diff(np.asarray(seg.term_offsets)) for seg, _ in parts])
    rank = np.searchsorted(hashes, np.concatenate(part_hashes))
    rep_start, rep_len = starts[first], lens[first]
    if not np.array_equal(lens, rep_len[rank]) or not np.array_equal(
            _gather(all_bytes, starts, lens), _gather(all_bytes, rep_start[rank], lens)):
        return None
    return hashes, rank, rep_len, _gather(all_bytes, rep_start, rep_len)


def _live_postings(parts: list[tuple[Segment, np.ndarray]], part_hashes: list[np.ndarray], rank: np.ndarray):
    """The live rows of each part, numbered one part after another: ((rowids, lengths,
    languages), (merged term, row, tf) of their postings, the merged language names),
    each a list of one array per part."""
    lang_names: dict[str, int] = {}
    rowids, lengths, langs, post_term, post_row, post_tf = [], [], [], [], [], []
    base, term_base = 0, 0
    for (seg, alive), h in zip(parts, part_hashes):
        live = np.flatnonzero(alive)
        new_local = np.full(seg.n_rows, -1, np.int64)
        new_local[live] = np.arange(live.size) + base
        lmap = np.fromiter((lang_names.setdefault(n, len(lang_names)) for n in seg.lang_names),
                           dtype=np.int64, count=len(seg.lang_names))
        term_of = np.repeat(rank[term_base:term_base + h.size], np.diff(np.asarray(seg.offsets)))
        local = new_local[np.asarray(seg.rows)]
        keep = local >= 0
        post_term.append(term_of[keep])
        post_row.append(local[keep])
        post_tf.append(np.asarray(seg.tf)[keep])
        rowids.append(np.asarray(seg.rowids)[live])
        lengths.append(np.asarray(seg.lengths)[live])
        langs.append(lmap[np.asarray(seg.langs)[live]] if lmap.size else np.asarray(seg.langs)[live])
        base += live.size
        term_base += h.size
    return (rowids, lengths, langs), (post_term, post_row, post_tf), list(lang_names)


def _merge_by_term(parts: list[tuple[Segment, np.ndarray]]) -> Segment:
    """:func:`merge` by decoded terms (the way for parts whose hashes collide)."""
    vocab: dict[str, int] = {}
    lang_names: dict[str, int] = {}
    pt, pr, ptf, rowids, lengths, langs = [], [], [], [], [], []
    base = 0
    for seg, alive in parts:
        live = np.flatnonzero(alive)
        new_local = np.full(seg.n_rows, -1, np.int64)
        new_local[live] = np.arange(live.size) + base
        terms = seg.terms()
        remap = np.fromiter((vocab.setdefault(t, len(vocab)) for t in terms), dtype=np.int64, count=len(terms))
        lmap = np.fromiter((lang_names.setdefault(n, len(lang_names)) for n in seg.lang_names),
                           dtype=np.int64, count=len(seg.lang_names))
        per_term = np.diff(seg.offsets)
        term_of = np.repeat(remap, per_term)
        local = new_local[np.asarray(seg.rows)]
        keep = local >= 0
        pt.append(term_of[keep])
        pr.append(local[keep])
        ptf.append(np.asarray(seg.tf)[keep])
        rowids.append(np.asarray(seg.rowids)[live])
        lengths.append(np.asarray(seg.lengths)[live])
        langs.append(lmap[np.asarray(seg.langs)[live]] if lmap.size else np.asarray(seg.langs)[live])
        base += live.size
    cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
    all_rowids = cat(rowids, np.int64)
    order = np.argsort(all_rowids, kind="stable")
    relabel = np.empty_like(order)
    relabel[order] = np.arange(order.size)
    post_row = relabel[cat(pr, np.int64)] if order.size else cat(pr, np.int64)
    tf = np.concatenate(ptf).reshape(-1, 3) if ptf else np.zeros((0, 3), np.uint16)
    return _assemble(list(vocab), cat(pt, np.int64), post_row, tf, all_rowids[order],
                     cat(lengths, np.int64)[order], cat(langs, np.int64)[order], list(lang_names))


_ARRAYS = ("hashes", "term_bytes", "term_offsets", "offsets", "rowids", "lengths", "langs")
#: the file's arrays of the coded frequencies (chaja.stores.tf_codes) and rows (chaja.stores.row_codes)
_TF_ARRAYS = {"tf_codes": "codes", "tf_spill_at": "spill_at", "tf_spill": "spill"}
_ROW_ARRAYS = {"row_low": "low", "row_run_start": "run_start", "row_run_high": "run_high"}


def save(seg: Segment, path: Path, header: dict) -> None:
    """Write ``seg`` to ``path`` atomically (:mod:`chaja.stores.array_file`), its rows coded."""
    arrays = {name: getattr(seg, name) for name in _ARRAYS}
    arrays.update({name: getattr(seg.tf, attr) for name, attr in _TF_ARRAYS.items()})
    rows = seg.rows if isinstance(seg.rows, CodedRows) else CodedRows.encode(seg.rows)
    arrays.update({name: getattr(rows, attr) for name, attr in _ROW_ARRAYS.items()})
    array_file.save(path, MAGIC, arrays, {"lang_names": seg.lang_names, **header})


def load(path: Path) -> Segment:
    """Map a saved segment (read-only; one written before the rows were coded too);
    ``ValueError`` if the file is not one."""
    try:
        arrays, meta = array_file.load(path, MAGIC)
        row_arrays: tuple = tuple(_ROW_ARRAYS)
    except ValueError:
        arrays, meta = array_file.load(path, MAGIC_PLAIN_ROWS)
        row_arrays = ("rows",)
    if set(arrays) != set(_ARRAYS) | set(_TF_ARRAYS) | set(row_arrays):
        raise ValueError(f"{path} is not a complete keyword segment")
    tf = CodedTf(*(arrays.pop(name) for name in _TF_ARRAYS))      # (before the rest is unpacked)
    rows = CodedRows(*(arrays.pop(name) for name in _ROW_ARRAYS)) if len(row_arrays) > 1 else arrays.pop("rows")
    return Segment(tf=tf, rows=rows, lang_names=meta.pop("lang_names", []), header=meta, **arrays)
