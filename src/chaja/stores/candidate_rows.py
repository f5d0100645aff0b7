"""One search's candidates looked up once in a store's vector matrices.

Calibrated fusion scores every candidate in every vector field for the query, then once
more for the evidence the other languages borrow (:mod:`chaja.search.feedback`): the
same candidates, two of the same fields, and the stored vectors of two of them. At a
million chunks each read looks the ids up in the chunk matrix, finds their rows in each
field's matrix and decodes those rows from the int8 codes, half of what fusion spent.
:class:`CandidateRows` does each once: the ids' rows and languages when it is made, a
field's decoded rows the first time the field is asked for, and every later question
about them from those rows. The scores are the same to the last bit: the same decoded
rows times the same query.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chaja.stores.base import StoreError

#: a field's matrix rows of the given chunk-matrix rows, and which of them are there
FieldRows = Callable[[str, np.ndarray], tuple[np.ndarray, np.ndarray]]


class CandidateRows:
    """``ids``' languages (None for an id the store does not hold) and, per field, their
    decoded vectors. ``known``: the indices in ``ids`` of the held chunks; ``rows``: their
    rows in the chunk matrix; ``matrix``: field → the field's (read-only) matrix;
    ``field_rows``: where chunk-matrix rows sit in a field's matrix."""

    def __init__(self, ids: Sequence[str], known: np.ndarray, rows: np.ndarray, langs: np.ndarray,
                 matrix: Callable[[str], np.ndarray], field_rows: FieldRows):
        self.ids = list(ids)
        self.langs = langs
        self._known, self._rows = known, rows
        self._matrix, self._field_rows = matrix, field_rows
        self._decoded: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def field(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """The indices in ``ids`` of the candidates with a ``field`` vector, and those
        vectors as float32 rows (decoded once a field)."""
        got = self._decoded.get(field)
        if got is None:
            mat = self._matrix(field)
            if mat.shape[0] == 0 or self._known.size == 0:
                got = (np.zeros(0, np.intp), np.zeros((0, mat.shape[1] if mat.ndim == 2 else 0), np.float32))
            else:
                pos, present = self._field_rows(field, self._rows)
                got = (self._known[present], np.asarray(mat[pos[present]], dtype=np.float32))
            self._decoded[field] = got
        return got

    def cosines(self, query: np.ndarray, field: str) -> np.ndarray:
        """The cosine of ``query`` with each candidate's ``field`` vector, aligned with
        ``ids`` (NaN where it has none)."""
        at, vectors = self.field(field)
        scores = np.full(len(self.ids), np.nan)
        if at.size:
            q = np.asarray(query, dtype=np.float32).ravel()
            if q.size != vectors.shape[1]:
                raise StoreError(f"query vector has dimension {q.size}, the store holds {vectors.shape[1]}")
            scores[at] = vectors @ q
        return scores

    def vectors(self, which: Sequence[int], field: str) -> list[np.ndarray]:
        """The ``field`` vectors of the candidates at indices ``which`` of ``ids`` that
        have one, in that order."""
        at, vectors = self.field(field)
        where = {int(i): n for n, i in enumerate(at.tolist())}
        return [vectors[where[i]] for i in which if i in where]
