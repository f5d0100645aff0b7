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
