"""The vector matrices a SQLite store keeps in memory, kept level with another
connection's writes (:mod:`chaja.stores.sqlite_matrices`)."""
import numpy as np

from chaja.analysis import bigram_terms
from chaja.stores.sqlite import SqliteStore
from one_chunk import put


def exact(row_map, ids) -> bool:
    """The map gives each id its row, and no row to an id the matrix does not hold."""
    return (row_map.rows(list(ids)).tolist() == list(range(len(ids)))
            and row_map.rows(["d99#0", "d03#0" if "d03#0" not in ids else "x"]).tolist() == [-1, -1])


def test_refresh_applies_another_stores_writes_and_keeps_the_id_maps_exact(tmp_path):
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(12, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with SqliteStore(tmp_path / "s.chaja") as writer, SqliteStore(tmp_path / "s.chaja") as reader:
        for i in range(6):
            put(writer, f"d{i:02d}", f"문서{i}", "본문", vecs[i])
        assert reader.vector(vecs[0], 1)[0].chunk_id == "d00#0"      # reads and caches the matrix
        row_map = reader._row_of("chunk")
        put(writer, "d06", "문서6", "본문", vecs[6])                  # appended after every cached row
        reader.refresh()
        ids = reader._vectors("chunk")[1]
        assert reader._row_of("chunk") is row_map                    # extended, not rebuilt
        assert exact(row_map, ids)
        assert reader.vector(vecs[6], 1)[0].chunk_id == "d06#0"
        assert abs(reader.vector_scores(vecs[6], ["d06#0"])["d06#0"] - 1.0) < 1e-5
        put(writer, "d02", "문서2", "본문", vecs[7])                  # a replacement: rows move
        writer.delete_document("d03")
        reader.refresh()
        ids = reader._vectors("chunk")[1]
        assert "d03#0" not in ids and len(ids) == 6
        assert exact(reader._row_of("chunk"), ids)
        assert abs(reader.vector_scores(vecs[7], ["d02#0"])["d02#0"] - 1.0) < 1e-5
        assert [h.chunk_id for h in reader.keyword(bigram_terms("문서6"), 3)][:1] == ["d06#0"]
        # the last row deleted and a new one written in its place: SQLite may give the new
        # row the same rowid, so the map must be rebuilt, not extended
        last = reader._matrix_rowids["chunk"][-1]
        writer.delete_document("d02")                               # the row written last
        put(writer, "d08", "문서8", "본문", vecs[8])
        assert reader._db.execute("SELECT rowid FROM chunks WHERE id = 'd08#0'").fetchone()[0] == last
        reader.refresh()
        ids = reader._vectors("chunk")[1]
        assert "d02#0" not in ids and exact(reader._row_of("chunk"), ids)
        assert abs(reader.vector_scores(vecs[8], ["d08#0"])["d08#0"] - 1.0) < 1e-5


def test_rows_written_after_the_vector_file_join_it_without_a_copy(tmp_path):
    """Past the vector file's threshold a field's matrix is its mapped file; a write's new
    rows join it as a tail of codes and ids (the file's codes and id buffer stay the arrays
    read, not copies of a million rows), searched and scored as one matrix, also when read
    again after a compaction."""
    from chaja.documents import Chunk, ChunkRecord, Document, Section
    from chaja.stores import quantized, sqlite_vectors

    n = sqlite_vectors.FILE_THRESHOLD + 20
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(n + 2, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

    def item(i: int, scale: float = 1.0):
        did = f"d{i:05d}"
        c = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=(), text="본문", lang="ko")
        return (Document(id=did, title=did, sections=[Section((), "본문")], lang="ko"),
                [ChunkRecord(c, [did], [], bigram_terms("본문"), vecs[i] * scale)])
    with SqliteStore(tmp_path / "s.chaja") as writer, SqliteStore(tmp_path / "s.chaja") as reader:
        writer.put_documents([item(i) for i in range(n)])
        writer.compact(force=True, graphs=False)
        mat, ids, _ = reader._vectors("chunk")
        assert isinstance(mat, quantized.ScaledInt8) and isinstance(ids, sqlite_vectors.ChunkIds)
        held_codes, held_ids = mat.parts[0], ids._raw
        writer.put_documents([item(n, 0.5), item(n + 1, 0.5)])      # well inside the codes' range
        reader.refresh()
        mat, ids, langs = reader._vectors("chunk")
        assert len(mat.parts) == 2 and mat.parts[0] is held_codes and ids._raw is held_ids
        assert isinstance(langs, sqlite_vectors.RowLanguages) and list(langs)[-2:] == ["ko", "ko"]
        assert len(mat) == len(ids) == n + 2 and list(ids)[-2:] == [f"d{n:05d}#0", f"d{n + 1:05d}#0"]
        assert exact(reader._row_of("chunk"), ids)
        every = reader.vector(vecs[n + 1], n + 2)                  # the whole field, scored as one matrix
        assert len(every) == n + 2 and abs(dict((h.chunk_id, h.score) for h in every)[f"d{n + 1:05d}#0"] - 0.5) < 0.02
        assert abs(reader.vector_scores(vecs[n], [f"d{n:05d}#0"])[f"d{n:05d}#0"] - 0.5) < 0.02
        writer.compact(force=True, graphs=False)                  # read again after a compaction
        reader.refresh()
        mat, ids, _ = reader._vectors("chunk")
        assert len(mat) == len(ids) == n + 2 and exact(reader._row_of("chunk"), ids)
        assert np.allclose(np.asarray(mat)[-2:], vecs[n:n + 2] * 0.5, atol=0.02)
