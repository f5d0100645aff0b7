"""A postings segment and the tokens it counts (:mod:`chaja.stores.postings` builds,
merges, saves and loads segments).

A segment holds the keyword index of a set of chunk rows in compressed sparse rows by
term: ``offsets[t]:offsets[t+1]`` slices ``rows`` (the segment's local row numbers) and ``tf``
(frequency in title, heading and body, a byte a posting: :mod:`chaja.stores.tf_codes`) for term
``t``. Terms are ordered by a 64-bit hash of their UTF-8 bytes (BLAKE2b), found by binary
search, their bytes compared so a hash collision cannot match.

Tokens are counted the way SQLite FTS5's ``ascii`` tokenizer counts them (split at
every ASCII character that is not a letter or digit, ASCII letters folded to lower
case, every other character kept), so a segment's frequencies and lengths equal FTS5's.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from chaja.stores.row_codes import CodedRows, DecodedMemo
from chaja.stores.tf_codes import CodedTf

_ASCII_SEPARATOR = re.compile(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")
_ASCII_UPPER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}

# anything but a space that the ascii tokenizer splits at or folds
_NOT_PLAIN = re.compile(r"[\x00-\x1f\x21-\x2f\x3a-\x40A-Z\x5b-\x60\x7b-\x7f]")


def fts_tokens(text: str) -> list[str]:
    """The tokens FTS5's ``ascii`` tokenizer makes of ``text``."""
    if not _NOT_PLAIN.search(text):     # stored terms: lower-case words joined by spaces
        return [t for t in text.split(" ") if t]
    return [t for t in _ASCII_SEPARATOR.split(text.translate(_ASCII_UPPER)) if t]


def term_hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")


#: terms whose slots a segment remembers
SLOT_MEMO = 4096
#: decoded rows a segment of coded rows keeps for the terms read lately (4 bytes each: 8 MB):
#: a search reads each query term's rows for its keyword list, then again for the terms each
#: candidate holds, and the translated list reads some of them once more
DECODED_MEMO = 2_000_000


@dataclass
class Segment:
    """The postings of some chunk rows; see the module docstring for the layout."""
    hashes: np.ndarray          # uint64 [T], ascending
    term_bytes: np.ndarray      # uint8 [sum of term lengths]
    term_offsets: np.ndarray    # int64 [T+1] into term_bytes
    offsets: np.ndarray         # int64 [T+1] into rows / tf
    rows: "np.ndarray | CodedRows"  # int32 [P] local row numbers (coded when mapped from a file)
    tf: CodedTf                 # [P, 3] title, heading, body frequencies, a byte each (chaja.stores.tf_codes)
    rowids: np.ndarray          # int64 [R] ascending
    lengths: np.ndarray         # int32 [R] tokens over all columns
    langs: np.ndarray           # uint8 [R] index into lang_names
    lang_names: list[str]
    header: dict = field(default_factory=dict)
    #: term → its slot, for the terms searched lately (a segment never changes once made)
    _slots: dict = field(default_factory=dict, repr=False, compare=False)
    #: term slot → its decoded rows (read-only), for a segment of coded rows
    _decoded: DecodedMemo = field(default_factory=lambda: DecodedMemo(DECODED_MEMO), repr=False, compare=False)
    #: (totals, hit) arrays of one per row that a search borrows and gives back cleared
    #: (:mod:`chaja.stores.bm25_sums`), so it does not fault fresh pages in every time
    scratch: list = field(default_factory=list, repr=False, compare=False)

    @property
    def n_rows(self) -> int:
        return int(self.rowids.shape[0])

    @property
    def n_terms(self) -> int:
        return int(self.hashes.shape[0])

    def term_slot(self, term: str) -> int:
        """The term's index, or -1 when the segment does not hold it (remembered for the
        last :data:`SLOT_MEMO` terms: a search asks for each query term several times)."""
        slot = self._slots.get(term)
        if slot is None:
            slot = self._find_slot(term)
            if len(self._slots) >= SLOT_MEMO:
                self._slots.clear()
            self._slots[term] = slot
        return slot

    def _find_slot(self, term: str) -> int:
        h = np.uint64(term_hash(term))
        i = int(np.searchsorted(self.hashes, h))
        raw = term.encode("utf-8")
        while i < self.n_terms and self.hashes[i] == h:
            if self.term_bytes[self.term_offsets[i]:self.term_offsets[i + 1]].tobytes() == raw:
                return i
            i += 1
        return -1

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(local rows, tf [n, 3]) of one term; empty arrays when absent."""
        t = self.term_slot(term)
        if t < 0:
            return self.rows[:0], self.tf[:0]
        lo, hi = int(self.offsets[t]), int(self.offsets[t + 1])
        if not isinstance(self.rows, CodedRows):
            return self.rows[lo:hi], self.tf[lo:hi]
        return self._decoded.get(t, lo, hi, self.rows), self.tf[lo:hi]

    def local_rows(self, rowids: np.ndarray) -> np.ndarray:
        """Local row numbers of those ``rowids`` the segment holds (others dropped)."""
        pos = np.searchsorted(self.rowids, rowids)
        pos = np.minimum(pos, max(self.n_rows - 1, 0))
        return pos[self.rowids[pos] == rowids] if self.n_rows else pos[:0]

    def terms(self) -> list[str]:
        raw, off = self.term_bytes.tobytes(), self.term_offsets
        return [raw[off[i]:off[i + 1]].decode("utf-8") for i in range(self.n_terms)]


def _segment(terms: list[str], hashes: np.ndarray, counts: np.ndarray, post_row: np.ndarray,
             post_tf: np.ndarray, rowids: np.ndarray, lengths: np.ndarray, langs: np.ndarray,
             lang_names: list[str]) -> Segment:
    """A segment from postings already in its order: ``terms`` by ascending ``hashes``,
    ``counts[t]`` postings per term, each term's postings by row."""
    encoded = [t.encode("utf-8") for t in terms]
    lens = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    return Segment(
        hashes=hashes,
        term_bytes=np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
        term_offsets=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        rows=post_row.astype(np.int32), tf=CodedTf.encode(np.asarray(post_tf).reshape(-1, 3)),
        rowids=rowids.astype(np.int64), lengths=lengths.astype(np.int32),
        langs=langs.astype(np.uint8), lang_names=list(lang_names),
    )


def _hash_order(term_list: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hashes, order, rank): the terms' hashes, the order that sorts them, each term's place in it."""
    hashes = np.fromiter(map(term_hash, term_list), dtype=np.uint64, count=len(term_list))
    order = np.argsort(hashes, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return hashes, order, rank


def _assemble(term_list: list[str], post_term: np.ndarray, post_row: np.ndarray, post_tf: np.ndarray,
              rowids: np.ndarray, lengths: np.ndarray, langs: np.ndarray, lang_names: list[str]) -> Segment:
    """A segment from flat postings in any order (term index into ``term_list``, local row, tf)."""
    hashes, order, rank = _hash_order(term_list)
    key = rank[post_term] if post_term.size else post_term
    by = np.lexsort((post_row, key)) if key.size else key.astype(np.int64)
    counts = np.bincount(key, minlength=len(term_list)) if key.size else np.zeros(len(term_list), np.int64)
    return _segment([term_list[i] for i in order], hashes[order], counts, post_row[by], post_tf[by],
                    rowids, lengths, langs, lang_names)
