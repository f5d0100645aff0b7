"""The corpus and queries that bench_peers.py gives every system alike.

Chunks come from chaja stores of the public sets (KorQuAD, SciFact and the React docs,
built by ``bench_quality.py``): their analysed terms, their text and their four vectors.
A corpus of ``size`` chunks cycles through that pool; the first pass keeps each chunk as
it is, later passes make a variant (the body terms rotated and every eleventh one
dropped, each vector moved by seeded Gaussian noise of norm 0.3 and renormalised, about
0.96 cosine to the original), so term statistics and neighbourhoods stay realistic at any
size. The same ``size`` always gives the same corpus.

Queries are the first KorQuAD questions and SciFact claims (equal shares), each with its
analysed terms and its e5 and aligned query vectors, encoded once and cached.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from chaja.stores.text_packing import TextPacking

FIELDS = ("vector", "heading_vector", "aligned_vector", "aligned_heading_vector")
NOISE = 0.3


def read_pool(sources: list[Path]) -> list[dict]:
    pool = []
    for src in sources:
        db = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
        dims = {k: int(v) for k, v in db.execute("SELECT key, value FROM meta WHERE key IN ('dim', 'aligned_dim')")}
        # the analysed terms: chunk_terms since schema 7, an FTS5 table before
        terms = "chunk_terms" if db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'chunk_terms'").fetchone() \
            else "chunks_fts"
        unpack = TextPacking(db).unpack      # text and body terms may be zstd frames (text_packing)
        for row in db.execute(
                "SELECT c.id, c.title, c.heading, c.text, c.lang, c.vector, c.heading_vector, c.aligned_vector,"
                f" c.aligned_heading_vector, f.title, f.heading, f.body FROM chunks c"
                f" JOIN {terms} f ON f.rowid = c.rowid ORDER BY c.rowid"):
            item = {"id": f"{src.stem}:{row[0]}", "title": row[1], "heading": json.loads(row[2]), "text": unpack(row[3]),
                    "lang": row[4] or "", "terms": (row[9], row[10], unpack(row[11], "terms"))}
            for name, blob in zip(FIELDS, row[5:9]):
                # an empty blob: the vector is in the field's file (read below); a store of one
                # language holds no aligned vectors (and no aligned_dim)
                dim = dims.get("aligned_dim" if name.startswith("aligned") else "dim")
                item[name] = None if blob is None else np.frombuffer(blob, np.float32).reshape(dim) if blob else ""
            pool.append(item)
        db.close()
        _vectors_from_files(src, [p for p in pool if p["id"].startswith(f"{src.stem}:")])
    return pool


def _vectors_from_files(src: Path, items: list[dict]) -> None:
    """Fill the vectors the store keeps in its files (as float32, whatever form it keeps)."""
    from chaja.stores.sqlite import VECTOR_FIELDS, SqliteStore

    wanted = {name for item in items for name in FIELDS if isinstance(item[name], str)}
    if not wanted:
        return
    column_field = {column: field for field, column in VECTOR_FIELDS.items()}
    with SqliteStore(src) as store:
        for name in wanted:
            mat, ids, _ = store._vectors(column_field[name])
            row = {cid: i for i, cid in enumerate(ids)}
            for item in items:
                if isinstance(item[name], str):
                    item[name] = np.asarray(mat[row[item["id"].split(":", 1)[1]]], dtype=np.float32)


def _vary_terms(terms: str, v: int) -> str:
    words = terms.split()
    if v == 0 or len(words) < 3:
        return terms
    r = (v * 104729) % len(words)
    words = words[r:] + words[:r]
    return " ".join(w for i, w in enumerate(words) if (i + v) % 11)


def _vary_vector(vec: np.ndarray | None, rng: np.random.Generator) -> np.ndarray | None:
    if vec is None:
        return None
    noise = rng.standard_normal(vec.shape[0]).astype(np.float32)
    out = vec + NOISE * noise / np.linalg.norm(noise)
    return out / np.linalg.norm(out)


def chunk_at(pool: list[dict], i: int) -> dict:
    """Chunk ``i`` of any corpus made from ``pool`` (deterministic)."""
    base = pool[i % len(pool)]
    v = i // len(pool)
    if v == 0:
        return {**base, "key": i}
    rng = np.random.default_rng(i)
    title, heading, body = base["terms"]
    return {**base, "key": i, "id": f"{base['id']}~{v}", "terms": (title, heading, _vary_terms(body, v)),
            "text": f"{base['text']} ({v})",
            **{name: _vary_vector(base[name], rng) for name in FIELDS}}


def document_of(c: dict):
    """Chunk ``c`` of the corpus as chaja stores it: a one-chunk document (id ``c<key>``) and
    its record, with the chunk's analysed terms and its four vectors."""
    from chaja.documents import Chunk, ChunkRecord, Document, Section

    cid = f"c{c['key']}"
    chunk = Chunk(id=cid, doc_id=cid, ordinal=0, title=c["title"], heading_path=tuple(c["heading"]),
                  text=c["text"], lang=c["lang"])
    doc = Document(id=cid, title=c["title"], sections=[Section(tuple(c["heading"]), c["text"])], lang=c["lang"])
    title, heading, body = c["terms"]
    return doc, [ChunkRecord(chunk, title.split(), heading.split(), body.split(), c["vector"],
                             c["heading_vector"], c["aligned_vector"], c["aligned_heading_vector"])]


def read_queries(data: Path, n: int) -> list[dict]:
    """``n`` real questions: half KorQuAD questions, half SciFact claims."""
    from chaja.eval.beir import load_beir
    from chaja.eval.squad import load_squad

    ko = [q.text for q in load_squad(data / "korquad-v1-dev" / "KorQuAD_v1.0_dev.json").questions][: n // 2]
    en = [q.text for q in load_beir(data / "scifact").questions][: n - n // 2]
    return [{"text": t} for pair in zip(ko, en) for t in pair] + [{"text": t} for t in ko[len(en):] + en[len(ko):]]


def encoded_queries(data: Path, n: int, cache: Path) -> list[dict]:
    """Queries with their terms and both query vectors, cached in ``cache`` (JSON)."""
    if cache.exists():
        queries = json.loads(cache.read_text())
        if len(queries) == n:
            return queries
    import chaja
    from chaja.analysis import bigram_terms
    from chaja.encoders import get_encoder
    from chaja.encoders.aligned import get_aligned_encoder
    from chaja.search.query import query_terms

    cfg = chaja.Config()
    enc = get_encoder(cfg.encoder)
    aligned = get_aligned_encoder(cfg.encoder.aligned, cfg.encoder.threads)
    queries = read_queries(data, n)
    texts = [q["text"] for q in queries]
    qv = enc.encode_queries(texts)
    av = aligned.encode_queries(texts)
    for q, v, a in zip(queries, qv, av):
        q["terms"] = query_terms(bigram_terms, q["text"])
        q["vector"], q["aligned_vector"] = v.tolist(), a.tolist()
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(queries, ensure_ascii=False))
    return queries
