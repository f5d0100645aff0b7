"""Posting rows in two bytes each (chaja.stores.row_codes), and keyword files that keep them,
saved, mapped, merged and scored as the plain rows were."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores import array_file, postings
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.row_codes import CodedRows, DecodedMemo

W = {"title_weight": 2.0, "heading_weight": 1.5}


def term_rows(n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(rows, term offsets): terms one after another, each its rows ascending, from one row
    to a third of them, so runs of one high part start and end inside terms and between them."""
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([rng.integers(1, 4, 300), rng.integers(50, 5_000, 40), [n_rows // 3, 1]])
    rng.shuffle(sizes)
    parts = [np.sort(rng.choice(n_rows, size=int(s), replace=False)) for s in sizes]
    return np.concatenate(parts).astype(np.int32), np.concatenate([[0], np.cumsum(sizes)])


def test_codes_decode_to_the_rows_for_every_term_and_any_slice():
    rows, offsets = term_rows(300_000)
    coded = CodedRows.encode(rows)
    assert coded.low.dtype == np.uint16 and coded.run_start[0] == 0
    assert 5 < coded.run_start.size < rows.size // 100      # runs are few: most postings share a high part
    assert np.array_equal(np.asarray(coded), rows) and len(coded) == rows.size == coded.shape[0]
    for a, b in zip(offsets[:-1], offsets[1:]):
        got = coded[int(a):int(b)]
        assert got.dtype == np.int32 and np.array_equal(got, rows[a:b])
    rng = np.random.default_rng(1)
    for _ in range(200):
        a, b = sorted(rng.integers(0, rows.size + 1, 2))
        assert np.array_equal(coded[int(a):int(b)], rows[a:b])
    assert coded[:0].size == 0 and coded[10:5].size == 0
    at = np.array([0, 7, rows.size - 1])
    assert np.array_equal(coded[at], rows[at]) and np.array_equal(coded.decoded(), rows)


def test_small_and_empty_row_sets_and_rows_out_of_range():
    assert np.asarray(CodedRows.encode(np.zeros(0, np.int32))).size == 0
    one = CodedRows.encode(np.array([3, 1, 70_000, 2]))          # terms' rows: 3 | 1 | 70,000 | 2
    assert np.asarray(one).tolist() == [3, 1, 70_000, 2] and one.run_start.tolist() == [0, 2, 3]
    assert one[2:3].tolist() == [70_000] and one[1:4].tolist() == [1, 70_000, 2]
    with pytest.raises(ValueError):
        CodedRows.encode(np.array([-1]))
    with pytest.raises(ValueError):
        CodedRows.encode(np.array([2 ** 31]))


def wide_segment(n_rows: int = 70_000) -> postings.Segment:
    """A segment past one high part: every row holds 'common', every 7th 'seven', a few 'rare'."""
    rows = [(i * 3, "ko" if i % 2 else "en", "", "", "common seven" if i % 7 == 0 else "common")
            for i in range(n_rows)]
    rows[-5] = ((n_rows - 5) * 3, "en", "rare", "", "common rare rare")
    rows[12] = (36, "en", "", "", "common rare")
    return postings.build(rows)


def test_a_saved_segment_keeps_coded_rows_and_scores_as_built(tmp_path):
    built = wide_segment()
    postings.save(built, tmp_path / "k", {"seq": 1})
    loaded = postings.load(tmp_path / "k")
    assert isinstance(loaded.rows, CodedRows) and not isinstance(built.rows, CodedRows)
    for term in ("common", "seven", "rare", "absent"):
        (r1, t1), (r2, t2) = built.postings(term), loaded.postings(term)
        assert np.array_equal(r1, r2) and np.array_equal(np.asarray(t1), np.asarray(t2))
    assert np.asarray(loaded.rowids)[loaded.postings("rare")[0]].tolist() == [36, (70_000 - 5) * 3]
    for query in (["rare"], ["seven", "rare"], ["common", "seven"]):
        want = SegmentedBM25.of(built).search(query, 15, **W)
        assert SegmentedBM25.of(loaded).search(query, 15, **W) == want and want
    alive = np.ones(loaded.n_rows, bool)
    alive[::5] = False
    extra = postings.build([(10 ** 6, "en", "", "", "rare seven")])
    merged = postings.merge([(loaded, alive), (extra, np.ones(1, bool))])
    plain = postings.merge([(built, alive), (extra, np.ones(1, bool))])
    for term in ("common", "seven", "rare"):
        assert np.array_equal(merged.postings(term)[0], plain.postings(term)[0])
    postings.save(loaded, tmp_path / "again", {})             # saved as it was mapped
    assert np.array_equal(np.asarray(postings.load(tmp_path / "again").rows), np.asarray(built.rows))


def test_a_file_of_plain_rows_still_maps_and_is_written_coded(tmp_path):
    built = wide_segment(1_000)
    postings.save(built, tmp_path / "new", {})
    arrays, meta = array_file.load(tmp_path / "new", postings.MAGIC)
    arrays["rows"] = np.asarray(built.rows).astype(np.int32)
    for name in ("row_low", "row_run_start", "row_run_high"):
        del arrays[name]
    array_file.save(tmp_path / "old", postings.MAGIC_PLAIN_ROWS, arrays, meta)
    old = postings.load(tmp_path / "old")
    assert not isinstance(old.rows, CodedRows)
    query = ["rare", "seven"]
    assert SegmentedBM25.of(old).search(query, 10, **W) == SegmentedBM25.of(built).search(query, 10, **W)
    postings.save(old, tmp_path / "rewritten", {})
    assert isinstance(postings.load(tmp_path / "rewritten").rows, CodedRows)
    with pytest.raises(ValueError):
        array_file.save(tmp_path / "half", postings.MAGIC, {k: v for k, v in arrays.items() if k != "rows"}, meta)
        postings.load(tmp_path / "half")


def test_decoded_rows_are_kept_read_only_up_to_their_limit():
    rows, offsets = term_rows(100_000, seed=4)
    coded = CodedRows.encode(rows)
    sizes = np.diff(offsets)
    big = int(np.argmax(sizes))
    small = [t for t in range(len(sizes)) if 0 < sizes[t] < 10][:3]
    memo = DecodedMemo(int(sizes[big]) + 1)
    first = memo.get(big, int(offsets[big]), int(offsets[big + 1]), coded)
    assert np.array_equal(first, rows[offsets[big]:offsets[big + 1]]) and not first.flags.writeable
    assert memo.get(big, int(offsets[big]), int(offsets[big + 1]), coded) is first      # decoded once
    for t in small:
        memo.get(t, int(offsets[t]), int(offsets[t + 1]), coded)
    assert memo.size <= memo.limit and big not in memo.rows                 # past the limit: forgotten at once
    none = DecodedMemo(0)
    again = none.get(big, int(offsets[big]), int(offsets[big + 1]), coded)
    assert np.array_equal(again, first) and none.size == 0 and not none.rows


def test_a_mapped_segment_decodes_a_terms_rows_once(tmp_path):
    postings.save(wide_segment(), tmp_path / "k", {})
    loaded = postings.load(tmp_path / "k")
    rows, _ = loaded.postings("common")
    assert loaded.postings("common")[0] is rows and not rows.flags.writeable
