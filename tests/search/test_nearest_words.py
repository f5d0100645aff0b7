"""Each lexicon word's nearest word in another language, built once and updated."""
import numpy as np
import pytest

from chaja.search import nearest_words


def _vectors(words: list[str], dim: int = 24, seed: int = 0) -> dict[str, np.ndarray]:
    """A unit vector per word, the same for a word whatever list it is in (as in a lexicon)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((6, dim))
    out = {}
    for w in words:
        v = centres[rng.integers(0, 6)] + 0.4 * rng.standard_normal(dim)
        out[w] = (v / np.linalg.norm(v)).astype(np.float32)
    return out


def _mat(words, table):
    return np.stack([table[w] for w in words])


def _full(src: np.ndarray, dst: np.ndarray):
    scores = src @ dst.T
    best = scores.argmax(axis=1)
    return best, scores[np.arange(len(src)), best]


def test_nearest_is_the_full_scan_in_blocks_with_the_first_of_equals(monkeypatch):
    monkeypatch.setattr(nearest_words, "BLOCK", 7)
    table = _vectors([f"s{i}" for i in range(40)] + [f"d{i}" for i in range(30)])
    src = _mat([f"s{i}" for i in range(40)], table)
    dst = _mat([f"d{i}" for i in range(30)], table)
    dst[12] = dst[4]                                       # two target words, one vector
    src[0] = dst[4]
    rows, cos = nearest_words.nearest(src, dst)
    best, top = _full(src, dst)
    np.testing.assert_array_equal(rows, best)
    np.testing.assert_allclose(cos, top, rtol=1e-6)
    assert rows[0] == 4 and rows.dtype == np.int32 and cos.dtype == np.float32
    empty_rows, empty_cos = nearest_words.nearest(src, dst[:0])
    assert empty_rows.shape == (40,) and np.isneginf(empty_cos).all()


def test_an_update_finds_what_a_fresh_build_finds():
    vocab = [f"s{i}" for i in range(60)] + [f"d{i}" for i in range(50)]
    table = _vectors(vocab, seed=3)
    old_src, old_dst = [f"s{i}" for i in range(40)], [f"d{i}" for i in range(35)]
    old = nearest_words.nearest(_mat(old_src, table), _mat(old_dst, table))
    # the next build: source words gone and new, target words gone (some of them nearest
    # words of the old table), new, and in another order
    removed = {old_dst[int(r)] for r in old[0][:5]}
    new_src = [f"s{i}" for i in range(10, 60)]
    new_dst = [w for w in reversed([f"d{i}" for i in range(50)]) if w not in removed]
    src, dst = _mat(new_src, table), _mat(new_dst, table)
    rows, cos = nearest_words.updated(new_src, src, new_dst, dst, (old_src, old_dst, old))
    best, top = _full(src, dst)
    np.testing.assert_array_equal(rows, best)
    np.testing.assert_allclose(cos, top, rtol=1e-6)
    # nothing changed: the same table without scanning
    again = nearest_words.updated(new_src, src, new_dst, dst, (new_src, new_dst, (rows, cos)))
    np.testing.assert_array_equal(again[0], rows)


def test_tables_cover_every_ordered_pair_of_languages_with_words():
    table = _vectors(["a", "b", "c", "가", "나"])
    words = {"en": ["a", "b", "c"], "ko": ["가", "나"], "ja": []}
    vectors = {lang: _mat(ws, table) if ws else np.zeros((0, 0), np.float32) for lang, ws in words.items()}
    found = nearest_words.tables(words, vectors)
    assert set(found) == {("en", "ko"), ("ko", "en")}
    assert found["en", "ko"][0].shape == (3,) and found["ko", "en"][0].shape == (2,)


def test_both_ways_in_one_pass_are_the_two_scans(monkeypatch):
    monkeypatch.setattr(nearest_words, "BLOCK", 5)
    table = _vectors([f"a{i}" for i in range(23)] + [f"b{i}" for i in range(17)], seed=5)
    a = _mat([f"a{i}" for i in range(23)], table)
    b = _mat([f"b{i}" for i in range(17)], table)
    a[13] = a[2]                                           # equal rows in different blocks
    b[0] = a[2]
    (ab_rows, ab_cos), (ba_rows, ba_cos) = nearest_words.nearest_both(a, b)
    for rows, cos, (want, top) in ((ab_rows, ab_cos, _full(a, b)), (ba_rows, ba_cos, _full(b, a))):
        np.testing.assert_array_equal(rows, want)
        np.testing.assert_allclose(cos, top, rtol=1e-6)
    assert ba_rows[0] == 2                                 # the first of the two equal rows


@pytest.mark.parametrize("score_block", [256, 3])
def test_a_bounded_scan_answers_as_the_full_scan(monkeypatch, score_block):
    """Whatever the rows scored at once (``score_block``: the scoring stops once the bounds
    left cannot reach the best), the answer is the full scan's, equal rows the first."""
    monkeypatch.setattr(nearest_words, "SCORE_BLOCK", score_block)
    rng = np.random.default_rng(11)
    mat = rng.standard_normal((500, 48)).astype(np.float32) * np.linspace(3, 0.2, 48, dtype=np.float32)
    mat = (mat / np.linalg.norm(mat, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)   # not quite unit
    mat[40] = mat[9]
    scan = nearest_words.BoundedScan(mat, dim=8)                     # most of the length outside the basis
    queries = np.vstack([mat[:50] + 0.3 * rng.standard_normal((50, 48)).astype(np.float32), mat[[9, 40]],
                         rng.standard_normal((30, 48)).astype(np.float32)])
    best, top = _full(queries, mat)
    for threshold in (-2.0, 0.5, 0.95):
        rows, cos = scan.nearest(queries, threshold)
        reach = top >= threshold
        np.testing.assert_array_equal(rows[reach], best[reach])
        np.testing.assert_allclose(cos[reach], top[reach], rtol=1e-5)
        assert (rows[~reach] == -1).all() or (cos[~reach] < threshold).all()
    assert scan.nearest(mat[[40]], 0.5)[0][0] == 9                    # equal rows: the first
    codes = scan.projected.codes
    assert codes.dtype == np.int8 and codes.shape == (500, 8)       # a quarter of float32's bytes


def test_a_bounded_scan_over_codes_never_holds_the_whole_float_matrix(monkeypatch):
    from chaja.search.word_codes import BLOCK, WordRows, row_codes
    rng = np.random.default_rng(5)
    floats = rng.standard_normal((BLOCK + 700, 32)).astype(np.float32) * np.linspace(3, 0.2, 32, dtype=np.float32)
    rows = WordRows(*row_codes(floats))
    kept = np.asarray(rows)
    want = nearest_words.BoundedScan(kept, dim=8)

    def whole(*args, **kwargs):
        raise AssertionError("the whole matrix in float32: four times the codes' bytes at once")

    monkeypatch.setattr(WordRows, "__array__", whole)
    scan = nearest_words.BoundedScan(rows, dim=8)
    np.testing.assert_allclose(scan.rest, want.rest, rtol=1e-5, atol=1e-6)
    queries = kept[:40] + 0.2 * rng.standard_normal((40, 32)).astype(np.float32)
    for got, expected in zip(scan.nearest(queries, 0.3), want.nearest(queries, 0.3)):
        np.testing.assert_array_equal(got, expected)


def test_a_bounded_scan_allows_for_the_rounding_of_its_projections():
    """Rows that lie in the scan's basis differ only in their projections, kept rounded to
    int8: the bound adds each row's rounding, and the answer stays the full scan's."""
    rng = np.random.default_rng(23)
    inside = rng.standard_normal((3000, 8)).astype(np.float32)
    mat = np.zeros((3000, 48), np.float32)
    mat[:, :8] = inside / np.linalg.norm(inside, axis=1, keepdims=True)
    scan = nearest_words.BoundedScan(mat, dim=8)
    assert float(scan.rest.max()) < 1e-3 and float(scan.error.max()) > 0
    queries = mat[:300] + 0.05 * rng.standard_normal((300, 48)).astype(np.float32)
    best, top = _full(queries, mat)
    rows, cos = scan.nearest(queries, -2.0)
    np.testing.assert_array_equal(rows, best)
