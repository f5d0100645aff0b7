"""One term's postings as one string of bytes, for a keyword index kept in database rows
(:mod:`chaja.stores.postgres.stored_postings`), which a reader fetches term by term.

Each posting carries everything BM25 needs of its row, so a reader scores it with no
per-row array of its own (FTS5's ``bm25()``, :mod:`chaja.stores.bm25_segments`)::

    header   8 bytes: version (1), flags (bit 0: lengths in 4 bytes), count P, as u8 u8 u16·0 u32
             4 bytes: spilled postings m (u32)
    offset   u32 [P]    row − the part's lowest row, ascending
    spill_at u32 [m]    places of the postings whose frequencies are spilled (chaja.stores.tf_codes)
    length   u16 [P]    the row's tokens over all columns (u32 [P] with flag 0x1)
    spill    u16 [m, 3] their title, heading and body frequencies
    code     u8  [P]    title, heading and body frequencies in one byte (:class:`~chaja.stores.tf_codes.CodedTf`)
    lang     u8  [P]    the row's language, an index into the part's language names

Eight bytes a posting (ten where a row holds 65,536 tokens or more), every array aligned
to its width.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from chaja.stores.postings_segment import Segment
from chaja.stores.tf_codes import CodedTf

VERSION = 1
WIDE_LENGTHS = 0x1
_HEADER = struct.Struct("<BBHII")


@dataclass(frozen=True)
class TermPostings:
    """One term's postings in one part: rows ascending (the store's row ids), their
    frequencies, their rows' lengths in tokens and language codes."""
    rows: np.ndarray        # int64 [P]
    tf: CodedTf             # [P, 3]
    lengths: np.ndarray     # uint16 or uint32 [P]
    langs: np.ndarray       # uint8 [P]


def encode(offsets: np.ndarray, tf: CodedTf, lengths: np.ndarray, langs: np.ndarray) -> bytes:
    """The bytes of one term's postings (``offsets``: rows less the part's lowest, ascending)."""
    count = int(offsets.size)
    spill_at, spill = tf.spills()
    wide = bool(lengths.size) and int(lengths.max()) > 0xFFFF
    return b"".join((
        _HEADER.pack(VERSION, WIDE_LENGTHS if wide else 0, 0, count, int(spill_at.size)),
        np.asarray(offsets, "<u4").tobytes(), np.asarray(spill_at, "<u4").tobytes(),
        np.asarray(lengths, "<u4" if wide else "<u2").tobytes(), np.asarray(spill, "<u2").tobytes(),
        np.asarray(tf.codes, np.uint8).tobytes(), np.asarray(langs, np.uint8).tobytes(),
    ))


def decode(blob: bytes | memoryview, low: int) -> TermPostings:
    """The postings :func:`encode` wrote, rows put back as ``low`` + offset."""
    version, flags, _, count, spills = _HEADER.unpack_from(blob, 0)
    if version != VERSION:
        raise ValueError(f"postings of version {version}: this chaja reads version {VERSION}")
    at = _HEADER.size
    offsets = np.frombuffer(blob, "<u4", count, at)
    at += 4 * count
    spill_at = np.frombuffer(blob, "<u4", spills, at).astype(np.int64)
    at += 4 * spills
    width = 4 if flags & WIDE_LENGTHS else 2
    lengths = np.frombuffer(blob, "<u4" if width == 4 else "<u2", count, at)
    at += width * count
    spill = np.frombuffer(blob, "<u2", 3 * spills, at).reshape(-1, 3)
    at += 6 * spills
    codes = np.frombuffer(blob, np.uint8, count, at)
    langs = np.frombuffer(blob, np.uint8, count, at + count)
    if at + 2 * count != len(blob):
        raise ValueError("postings of the wrong length")
    return TermPostings(offsets.astype(np.int64) + int(low), CodedTf(codes, spill_at, spill), lengths, langs)


def of_segment(seg: Segment, low: int) -> Iterator[tuple[str, bytes]]:
    """(term, bytes) of every term of ``seg`` that holds a posting, rows less ``low`` (at most
    the segment's lowest row id; rows must stay within 2³² of it)."""
    rows = np.asarray(seg.rows, np.int64)
    rowids = np.asarray(seg.rowids, np.int64)
    if rowids.size and (int(rowids[0]) < low or int(rowids[-1]) - low >= 2 ** 32):
        raise ValueError("a part's rows must lie within 2**32 of its lowest row")
    offsets = (rowids[rows] - low).astype(np.uint32)
    lengths = np.asarray(seg.lengths)[rows]
    langs = np.asarray(seg.langs)[rows]
    starts = np.asarray(seg.offsets, np.int64)
    for t, term in enumerate(seg.terms()):
        lo, hi = int(starts[t]), int(starts[t + 1])
        if hi > lo:
            yield term, encode(offsets[lo:hi], seg.tf[lo:hi], lengths[lo:hi], langs[lo:hi])
