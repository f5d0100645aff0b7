"""One term's postings as bytes (chaja.stores.posting_blobs): every field back as written,
spilled frequencies and long rows included, and bytes of another layout refused."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores import posting_blobs, postings
from chaja.stores.tf_codes import CodedTf


def test_postings_come_back_as_written_with_spilled_frequencies_and_long_rows():
    rows = np.array([3, 9, 10, 70_000], np.int64)
    tf = np.array([[0, 0, 1], [5, 0, 2], [0, 3, 300], [1, 1, 1]])
    for lengths in (np.array([4, 10, 400, 65_535]), np.array([4, 10, 400, 70_000])):
        blob = posting_blobs.encode(rows - 2, CodedTf.encode(tf), lengths, np.array([0, 1, 1, 0]))
        got = posting_blobs.decode(blob, 2)
        assert got.rows.tolist() == rows.tolist()
        assert got.tf.decoded().tolist() == tf.tolist()
        assert got.lengths.tolist() == lengths.tolist() and got.langs.tolist() == [0, 1, 1, 0]
        assert len(blob) == 12 + 4 * 4 + 4 * 2 + 6 * 2 + 2 * 4 + (4 if lengths.max() > 65_535 else 2) * 4


def test_a_segment_gives_each_term_with_its_rows_frequencies_lengths_and_languages():
    seg = postings.build([(5, "ko", "보증 기간", "", "보증 보증 모터"), (8, "en", "", "warranty", "motor motor")])
    got = {term: posting_blobs.decode(blob, 5) for term, blob in posting_blobs.of_segment(seg, 5)}
    assert set(got) == {"보증", "기간", "모터", "warranty", "motor"}
    assert got["보증"].rows.tolist() == [5] and got["보증"].tf.decoded().tolist() == [[1, 0, 2]]
    assert got["motor"].rows.tolist() == [8] and got["motor"].lengths.tolist() == [3]
    assert [seg.lang_names[i] for i in got["warranty"].langs] == ["en"]


def test_bytes_of_another_version_or_length_are_refused():
    blob = posting_blobs.encode(np.array([0]), CodedTf.encode(np.array([[0, 0, 1]])), np.array([3]), np.array([0]))
    with pytest.raises(ValueError, match="version 9"):
        posting_blobs.decode(bytes([9]) + blob[1:], 0)
    with pytest.raises(ValueError, match="wrong length"):
        posting_blobs.decode(blob + b"\0", 0)
    with pytest.raises(ValueError, match="within 2\\*\\*32"):
        list(posting_blobs.of_segment(postings.build([(5, "en", "", "", "a")]), 6))
