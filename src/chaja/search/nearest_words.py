"""Each lexicon word's nearest word in every other language, found once when the lexicon is built.

A search carries its query's content words into another language by nearest neighbour
among that language's lexicon words (:mod:`chaja.search.lexicon`):

    t(w, L) = argmax_{u ∈ W_L} a(w)·a(u)        (ties: the lowest row, the more frequent word)

Scanning W_L at query time reads the whole matrix for every word (30,000 words of 512
floats: about 1 ms a word on two cores), and most query words are words of the store,
already in the lexicon of their own language. For those the answer does not depend on
the query, so it is computed here for every word of every language, with its cosine, and
a search looks it up; only a word the store has not seen is scanned for.

Rebuilt after a change to the store, the table is updated rather than recomputed when a
previous one is given: a word keeps its nearest word while that word is still in the
other language's lexicon, compared against the words new there (every word's vector is
the same as before, :func:`chaja.search.lexicon.build`); the words whose nearest word
left, and words new in the lexicon, are scanned in full.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from chaja.search import word_codes

#: source words scored against the whole target matrix at once (BLOCK × words floats)
BLOCK = 256
#: principal directions a :class:`BoundedScan` reads for every row (of 512)
SCAN_DIM = 128
#: rows a :class:`BoundedScan` scores in full at once, in the order of their bounds
SCORE_BLOCK = 256
#: slack on the bound for float32 rounding (scores are cosines, at most 1)
SCAN_SLACK = 1e-4

#: (target rows, cosines) of the words of one language, row-aligned with its word list
Table = tuple[np.ndarray, np.ndarray]


def nearest(src: np.ndarray, dst: np.ndarray) -> Table:
    """For each row of ``src``, the row of ``dst`` with the highest inner product (the
    first among equals) and that product; blocks of :data:`BLOCK` rows at a time."""
    return _blocks(src, dst, back=False)[0]


def nearest_both(a: np.ndarray, b: np.ndarray) -> tuple[Table, Table]:
    """(:func:`nearest` of ``a`` in ``b``, :func:`nearest` of ``b`` in ``a``) from one pass over
    the products ``a @ b.T``: the best column of each row, and the best row of each column
    (the first among equals, as blocks come in row order and a later block must do better)."""
    return _blocks(a, b, back=True)


def _blocks(a: np.ndarray, b: np.ndarray, back: bool) -> tuple[Table, Table]:
    """The pass over ``a @ b.T`` of :func:`nearest_both`; the rows of ``b`` only with ``back``."""
    a_rows = np.zeros(len(a), dtype=np.int32)
    a_cos = np.full(len(a), -np.inf, dtype=np.float32)
    b_rows = np.zeros(len(b), dtype=np.int32)
    b_cos = np.full(len(b), -np.inf, dtype=np.float32)
    if len(a) and len(b):
        b_t = np.ascontiguousarray(b.T)
        for at in range(0, len(a), BLOCK):
            scores = a[at:at + BLOCK] @ b_t
            best = scores.argmax(axis=1)
            a_rows[at:at + BLOCK] = best
            a_cos[at:at + BLOCK] = scores[np.arange(len(best)), best]
            if back:
                # a column's best row is looked for only where this block beats the blocks before
                # (a maximum down the columns is a sixth of an argmax's time, and after the first
                # blocks few columns improve)
                top = scores.max(axis=0)
                better = np.flatnonzero(top > b_cos)
                if better.size:
                    b_rows[better] = scores[:, better].argmax(axis=0) + at
                    b_cos[better] = top[better]
    return (a_rows, a_cos), (b_rows, b_cos)


def updated(src_words: list[str], src: np.ndarray, dst_words: list[str], dst: np.ndarray,
            before: tuple[list[str], list[str], Table] | None) -> Table:
    """:func:`nearest` of ``src`` in ``dst``, from ``before`` = (source words, target words,
    table) of the previous build where there is one: a source word it holds whose nearest
    word is still a target word keeps it, unless a target word new since scores higher
    (or the same at a lower row); the others are scanned in full."""
    if before is None:
        return nearest(src, dst)
    old_src, old_dst, (old_rows, _) = before
    dst_row = {w: i for i, w in enumerate(dst_words)}
    old_src_row = {w: i for i, w in enumerate(old_src)}
    kept = np.full(len(src_words), -1, dtype=np.int64)
    for i, w in enumerate(src_words):
        j = old_src_row.get(w)
        if j is not None:
            kept[i] = dst_row.get(old_dst[int(old_rows[j])], -1)
    carried = np.flatnonzero(kept >= 0)
    rows = np.zeros(len(src_words), dtype=np.int32)
    cos = np.full(len(src_words), -np.inf, dtype=np.float32)
    if carried.size:
        rows[carried] = kept[carried]
        cos[carried] = np.einsum("ij,ij->i", src[carried], dst[kept[carried]])
        before_set = set(old_dst)
        new = np.array([i for i, w in enumerate(dst_words) if w not in before_set], dtype=np.int64)
        if new.size:
            new_rows, new_cos = nearest(src[carried], dst[new])
            challenger = new[new_rows]
            wins = (new_cos > cos[carried]) | ((new_cos == cos[carried]) & (challenger < rows[carried]))
            rows[carried[wins]] = challenger[wins]
            cos[carried[wins]] = new_cos[wins]
    scan = np.flatnonzero(kept < 0)
    if scan.size:
        rows[scan], cos[scan] = nearest(src[scan], dst)
    return rows, cos


def tables(words: Mapping[str, list[str]], vectors: Mapping[str, np.ndarray],
           previous=None) -> dict[tuple[str, str], Table]:
    """(source language, target language) → :data:`Table`, for every ordered pair of
    languages with words; ``previous``: the lexicon this one replaces (its tables reused)."""
    out = {}
    langs = sorted(lang for lang, ws in words.items() if ws)
    old = getattr(previous, "nearest", {}) if previous is not None else {}
    for i, a in enumerate(langs):
        for b in langs[i + 1:]:
            if (a, b) not in old and (b, a) not in old:     # nothing to update: both ways in one pass
                out[a, b], out[b, a] = nearest_both(vectors[a], vectors[b])
                continue
            for src, dst in ((a, b), (b, a)):
                before = (previous.words[src], previous.words[dst], old[src, dst]) if (src, dst) in old else None
                out[src, dst] = updated(words[src], vectors[src], words[dst], vectors[dst], before)
    return out


class BoundedScan:
    """The nearest row of a matrix to a query, exactly, reading :data:`SCAN_DIM` numbers of
    most rows rather than all of them: the scan of a word the lexicon does not hold.

    With ``P`` the matrix's top principal directions (orthonormal columns, from the
    eigenvectors of ``MᵀM``) and ``x_⊥`` the part of ``x`` outside them, Cauchy–Schwarz gives

        q·v = (Pᵀq)·(Pᵀv) + q_⊥·v_⊥ ≤ (Pᵀq)·(Pᵀv) + |q_⊥| |v_⊥|,   |x_⊥|² = |x|² − |Pᵀx|²,

    so a row can be the answer only if that bound reaches the larger of the threshold and
    the exact score of the row the projection ranks first; only those rows (a few hundred
    of 30,000 on the aligned encoder's word vectors, whose energy lies mostly in the top
    directions) are scored in full, in the order of their bounds until the bound left
    cannot reach the best score found. The projections are kept as int8 codes ``c`` with a
    scale ``s`` a row (a quarter of float32's bytes: 14.4 → 3.9 MB for 29,567 English words),
    and the bound uses ``(Pᵀq)·(s c) + |Pᵀq| |Pᵀv − s c|`` for ``(Pᵀq)·(Pᵀv)``. The answer
    is the full scan's: the best score, the first among equals."""

    def __init__(self, mat: np.ndarray, dim: int = SCAN_DIM):
        self.mat = mat
        gram = mat.gram() if hasattr(mat, "gram") else (mat.T @ mat).astype(np.float64)
        _, vecs = np.linalg.eigh(gram)
        self.basis = np.ascontiguousarray(vecs[:, ::-1][:, :dim], dtype=np.float32)
        self.projected, self.error, self.rest = _projected(mat, self.basis)

    def nearest(self, q: np.ndarray, threshold: float) -> Table:
        """For each row of ``q``: the row of the matrix with the highest inner product and that
        product, or (-1, -inf) where no row reaches ``threshold``."""
        qp = q @ self.basis
        rest, qp_norm = _rest(q, qp), np.linalg.norm(qp, axis=1)
        rows = np.full(len(q), -1, dtype=np.int32)
        cos = np.full(len(q), -np.inf, dtype=np.float32)
        for i in range(len(q)):       # one matrix-vector product each: a few rows at once are a slow GEMM
            approx = self.projected @ qp[i]
            low = float(self.mat[int(approx.argmax())] @ q[i])
            bound = approx + (rest[i] * self.rest + qp_norm[i] * self.error)
            cand = np.flatnonzero(bound >= max(low, threshold) - SCAN_SLACK)
            if cand.size:
                rows[i], cos[i] = self._best(cand, bound[cand], q[i])
        return rows, cos

    def _best(self, cand: np.ndarray, bound: np.ndarray, q: np.ndarray) -> tuple[int, float]:
        """The best of rows ``cand`` for ``q`` (the first among equals), scored in full
        :data:`SCORE_BLOCK` at a time in the order of their ``bound``, until the bound left
        cannot reach the best score found: no row not scored can equal it."""
        order = np.argsort(-bound, kind="stable")
        best_row, best = -1, -np.inf
        for at in range(0, len(order), SCORE_BLOCK):
            if at and bound[order[at]] < best - SCAN_SLACK:
                break
            some = cand[order[at:at + SCORE_BLOCK]]
            scores = self.mat[some] @ q
            top = float(scores.max())
            row = int(some[scores == top].min())
            if top > best or (top == best and row < best_row):
                best_row, best = row, top
        return best_row, best


def _projected(mat: np.ndarray, basis: np.ndarray) -> tuple[word_codes.WordRows, np.ndarray, np.ndarray]:
    """(``Pᵀv`` of each row as int8 codes with a scale a row, the length ``|Pᵀv − s·c|`` of each
    row's rounding, ``|v_⊥|`` of each row), a block of rows at a time."""
    n, dim = len(mat), basis.shape[1]
    codes, scales = np.empty((n, dim), np.int8), np.empty(n, np.float32)
    error, rest = np.empty(n, np.float32), np.empty(n, np.float32)
    for at in range(0, n, word_codes.BLOCK):
        block = np.asarray(mat[at:at + word_codes.BLOCK], np.float32)     # (codes give float rows)
        p = block @ basis
        c, s = word_codes.scaled_codes(p)
        codes[at:at + len(p)], scales[at:at + len(p)] = c, s
        error[at:at + len(p)] = np.linalg.norm(p - c.astype(np.float32) * s[:, None], axis=1)
        rest[at:at + len(p)] = _rest(block, p)
    return word_codes.WordRows(codes, scales), error, rest


def _rest(x: np.ndarray, projected: np.ndarray) -> np.ndarray:
    """|x_⊥| of each row: the length of ``x`` outside the basis ``projected`` is in."""
    squared = np.einsum("ij,ij->i", x, x)
    return np.sqrt(np.maximum(squared - np.einsum("ij,ij->i", projected, projected), 0.0))
