"""Store upkeep on the command line: ``chaja stats``, ``check``, ``optimize``, ``delete``."""
import json
from pathlib import Path

import pytest

from chaja.cli import main


def test_stats_and_delete(store, capsys):
    assert main(["stats", "--store", str(store)]) == 0
    assert "documents: 9" in capsys.readouterr().out
    assert main(["delete", "news-rates", "missing-doc", "--store", str(store)]) == 1
    captured = capsys.readouterr()
    assert "deleted news-rates" in captured.out and "not found: missing-doc" in captured.err


def test_not_a_store_file(tmp_path, capsys):
    bad = tmp_path / "bad.chaja"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert main(["stats", "--store", str(bad)]) == 2
    assert "not a chaja store" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["search", "x"], ["stats"], ["delete", "some-id"]])
def test_reading_commands_never_create_a_store(tmp_path, capsys, command):
    missing = tmp_path / "no" / "such.chaja"
    assert main([*command, "--store", str(missing)]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists() and not missing.parent.exists()


def test_check_and_repair(store, tmp_path, capsys):
    import shutil
    import sqlite3

    copy = tmp_path / "copy.chaja"
    with sqlite3.connect(store) as a, sqlite3.connect(copy) as b:
        a.backup(b)
    assert main(["check", "--store", str(copy)]) == 0
    assert "whole:" in capsys.readouterr().out
    with sqlite3.connect(copy) as db:
        # (the store derives its chunks' terms: a keyword row left without its chunk is the damage)
        db.execute("INSERT INTO chunk_terms VALUES ((SELECT max(rowid) FROM chunks) + 7, 'a', '', 'b')")
        db.execute("UPDATE meta SET value = '{}' WHERE key = 'index.language_means'")
    assert main(["check", "--store", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "fault: keyword row" in out and "no chunk" in out and "fault: statistics" in out
    assert main(["check", "--store", str(copy), "--repair"]) == 0
    out = capsys.readouterr().out
    assert "repaired: removed keyword row" in out and "repaired: recomputed the language statistics" in out
    assert "whole:" in out
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_bulk_load_and_optimize(tmp_path, capsys, corpus):
    store = str(tmp_path / "bulk.chaja")
    assert main(["index", str(corpus), "--store", store, "--defer-graphs", "--json", "--quiet"]) == 0
    # too small for a graph; two languages, so a lexicon whose tables wait
    assert json.loads(capsys.readouterr().out)["deferred_graphs"] == ["translation tables"]
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    assert "translation tables built" in capsys.readouterr().out
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    assert "nothing to build" in capsys.readouterr().out
    assert main(["optimize", "--store", str(tmp_path / "none.chaja")]) == 2
    assert "no store at" in capsys.readouterr().err
    assert main(["index", str(corpus), "--hub", "http://127.0.0.1:9", "--defer-graphs"]) == 2
    assert "--defer-graphs is for a store" in capsys.readouterr().err


def test_optimize_moves_an_older_stores_vectors_and_says_so(tmp_path, capsys):
    """A store the previous schema wrote (every vector in its row, a copy beside it):
    ``chaja optimize`` moves its vectors into the files, says how much smaller the store
    is, and the store stays whole; a second run has nothing to move."""
    import tarfile

    fixture = Path(__file__).parent.parent / "fixtures" / "stores" / "schema5-store.tar.gz"
    with tarfile.open(fixture) as tar:
        tar.extractall(tmp_path, filter="data")
    store = str(tmp_path / "old.chaja")
    capsys.readouterr()
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "vector files written again, each vector kept once in the store's form:" in out
    from chaja.stores.sqlite import SqliteStore
    with SqliteStore(store) as s:     # (the fixture records no statistics, which `chaja check` would ask for)
        assert s.check() == [] and not s.vectors_to_move() and s._vectors("chunk")[0].shape[0] == 1229
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    assert "vector files written again" not in capsys.readouterr().out


def test_optimize_vectors_switches_the_files_form_both_ways(tmp_path, capsys):
    """``chaja optimize --vectors float32`` rewrites int8 files as float32 (larger) and
    ``--vectors int8`` back; the store stays whole and an exact vector search
    ranks the same best chunks from either form."""
    import tarfile

    import numpy as np

    from chaja.stores import sqlite_vectors
    from chaja.stores.sqlite import SqliteStore

    with tarfile.open(Path(__file__).parent.parent / "fixtures" / "stores" / "schema5-store.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    store = str(tmp_path / "old.chaja")

    def files_and_top(form: str) -> tuple[int, list[list[str]]]:
        with SqliteStore(store) as s:
            assert s.check() == [] and not s.vectors_to_move()
            mat = s._vectors("chunk")[0]
            assert sqlite_vectors.encoding_of(mat) == form
            queries = np.asarray(mat[np.arange(0, 1200, 100)])
            tops = [[h.chunk_id for h in s.vector(q, 5)] for q in queries]
        return sum(p.stat().st_size for p in tmp_path.glob("old.chaja-*.vectors")), tops

    assert main(["optimize", "--store", store, "--quiet"]) == 0          # a new store's form: int8
    small, int8_tops = files_and_top("int8")
    assert main(["optimize", "--store", store, "--quiet", "--vectors", "float32"]) == 0
    assert "vector files written again" in capsys.readouterr().out
    large, float_tops = files_and_top("float32")
    assert large > small
    assert sum(len(set(a) & set(b)) for a, b in zip(int8_tops, float_tops)) >= 0.9 * 5 * len(int8_tops)
    assert all(a[0] == b[0] for a, b in zip(int8_tops, float_tops))     # each query is a stored row
    assert main(["optimize", "--store", store, "--quiet", "--vectors", "int8"]) == 0
    assert files_and_top("int8")[0] == small


def test_check_names_a_missing_vector_file_once_and_repair_goes_on(tmp_path, capsys):
    """The chunk vectors' file deleted: ``chaja check`` says so in one line (exit 1),
    ``--repair`` removes the documents whose vectors were there and leaves the store whole,
    and a search says nothing of the lost file any more."""
    import tarfile

    with tarfile.open(Path(__file__).parent.parent / "fixtures" / "stores" / "schema5-store.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    store = str(tmp_path / "old.chaja")
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    [chunk_file] = tmp_path.glob("old.chaja-chunk.*.vectors")
    chunk_file.unlink()
    capsys.readouterr()
    assert main(["check", "--store", store]) == 1
    faults = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fault: vectors:")]
    assert len(faults) == 1 and chunk_file.name in faults[0] and "1229 chunks" in faults[0]
    assert main(["check", "--repair", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "repaired: forgot the chunk vector file" in out and "whole: 0 documents, 0 chunks" in out


def one_document(doc_id: str, texts: list[str]):
    """A document of ``texts``, one chunk each, with 4-d vectors, as a store takes it."""
    import numpy as np

    from chaja.analysis import bigram_terms
    from chaja.documents import Chunk, ChunkRecord, Document, Section

    records = [ChunkRecord(Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=doc_id, heading_path=(),
                                 text=t, lang="ko"), bigram_terms(doc_id), [], bigram_terms(t),
                           np.full(4, 0.5, np.float32)) for i, t in enumerate(texts)]
    return Document(id=doc_id, title=doc_id, sections=[Section((), t) for t in texts], lang="ko"), records


def test_stats_names_the_postgres_keyword_engine_and_its_stored_postings(pg_dsn, pg_schema, capsys):
    from chaja.stores.postgres import PostgresStore
    sep = "&" if "?" in pg_dsn else "?"
    with PostgresStore(pg_dsn, schema=pg_schema, dim=4, keyword_engine="stored") as s:
        s.put_document(*one_document("d", ["보증 기간은 2년", "수리 접수"]))
        assert s.keyword(["보증"], 5)                       # the first search writes the postings
        s.put_document(*one_document("e", ["배송 안내"]))    # not folded: no compaction ran
    assert main(["stats", "--store", f"{pg_dsn}{sep}schema={pg_schema}&keyword_engine=stored"]) == 0
    out = capsys.readouterr().out
    assert "keyword engine: stored" in out
    assert "keyword postings kept by the database: 1 part, 2 rows, 0 removed since; 1 log entry not folded yet" in out


def test_optimize_drops_the_keyword_rows_an_older_chaja_kept(tmp_path, capsys, corpus):
    """A store whose every chunk kept its terms as a row (as chaja wrote them before it
    derived them): ``chaja optimize`` drops the rows its analyser makes again, says so, and
    every search answers as before, from the postings and from a rebuilt postings file."""
    import sqlite3

    from chaja.analysis import bigram_terms
    from chaja.stores import derived_terms
    from chaja.stores.sqlite import SqliteStore

    store = str(tmp_path / "s.chaja")
    assert main(["index", str(corpus), "--store", store, "--quiet"]) == 0
    with sqlite3.connect(store) as db:                   # the rows an older chaja kept
        rows = db.execute("SELECT rowid, title, heading, text FROM chunks").fetchall()
        db.executemany("INSERT INTO chunk_terms VALUES (?,?,?,?)",
                       [(r, *derived_terms.terms(bigram_terms, t, h, x)) for r, t, h, x in rows])
        db.execute("DELETE FROM meta WHERE key = 'terms.derived'")
    queries = [bigram_terms(q) for q in ("유상증자 신주", "warranty period", "router password reset")]
    with SqliteStore(store) as s:
        before = [s.keyword(q, 10) for q in queries]
        assert s.terms_to_drop()
    capsys.readouterr()
    assert main(["check", "--store", store]) == 0
    assert "keyword rows: terms the store's analyser makes again are kept as rows" in capsys.readouterr().out
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    assert "keyword rows the store's analyser makes again dropped" in capsys.readouterr().out
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM chunk_terms").fetchone()[0] == 0
    Path(f"{store}-keywords").unlink(missing_ok=True)
    with SqliteStore(store) as s:
        assert s.check() == [] and not s.terms_to_drop() and [s.keyword(q, 10) for q in queries] == before
