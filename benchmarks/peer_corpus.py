"""The corpus and queries that bench_peers.py gives every system alike.

Chunks come from chaja stores of the public sets (KorQuAD, SciFact and the React docs,
built by ``bench_quality.py``): their analysed terms, their text and their four vectors.
A corpus of ``size`` chunks cycles through that pool; the first pass keeps each chunk as
it is, later passes make a variant (the words of its text rotated and every eleventh one
dropped, its body terms those of that text, each vector moved by seeded Gaussian noise of
norm 0.3 and renormalised, about 0.96 cosine to the original), so term statistics and
neighbourhoods stay realistic at any size. The same ``size`` always gives the same corpus.

Queries are the first KorQuAD questions and SciFact claims (equal shares), each with its
analysed terms and its e5 and aligned query vectors, encoded once and cached.
"""
from __future__ import annotations

import json
import sqlite3
from functools import lru_cache
from pathlib import Path

import numpy as np

from chaja.analysis import ANALYZERS, bigram_terms
from chaja.stores.text_packing import TextPacking

FIELDS = ("vector", "heading_vector", "aligned_vector", "aligned_heading_vector")
NOISE = 0.3


def read_pool(sources: list[Path]) -> list[dict]:
    pool = []
    for src in sources:
        db = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN"
                               " ('dim', 'aligned_dim', 'index.analyzer', 'terms.derived')"))
        dims = {k: int(meta[k]) for k in ("dim", "aligned_dim") if k in meta}
        # the analysed terms: chunk_terms since schema 7, an FTS5 table before; a chunk without
        # its row has terms its store's analyser makes again from its own columns (as
        # chaja.stores.derived_terms.terms does, written out: the benchmark also runs older chajas)
        terms = "chunk_terms" if db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'chunk_terms'").fetchone() \
            else "chunks_fts"
        derive = ANALYZERS[meta.get("terms.derived", "bigram")]
        bigram = meta.get("index.analyzer", "bigram") == "bigram"
        unpack = TextPacking(db).unpack      # text and body terms may be zstd frames (text_packing)
        for row in db.execute(
                "SELECT c.id, c.title, c.heading, c.text, c.lang, c.vector, c.heading_vector, c.aligned_vector,"
                f" c.aligned_heading_vector, f.title, f.heading, f.body FROM chunks c"
                f" LEFT JOIN {terms} f ON f.rowid = c.rowid ORDER BY c.rowid"):
            text, heading = unpack(row[3]), json.loads(row[2])
            kept = (row[9], row[10], unpack(row[11], "terms")) if row[9] is not None else \
                tuple(" ".join(derive(t)) for t in (row[1], " ".join(heading), text))
            item = {"id": f"{src.stem}:{row[0]}", "title": row[1], "heading": heading, "text": text,
                    "lang": row[4] or "", "terms": kept, "bigram": bigram}
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


#: each distinct word's bigram terms, made once (a text's terms are its words' in order:
#: the analyser's runs never cross a space)
_word_terms = lru_cache(maxsize=None)(bigram_terms)


def _vary_text(text: str, v: int) -> tuple[str, str]:
    """Variant ``v`` of a text: its words rotated and every eleventh dropped, with its bigram
    terms (as chaja's analyser makes them of that text)."""
    words = text.split()
    if len(words) >= 3:
        r = (v * 104729) % len(words)
        words = [w for i, w in enumerate(words[r:] + words[:r]) if (i + v) % 11]
    return " ".join(words), " ".join(t for w in words for t in _word_terms(w))


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
    title, heading, _ = base["terms"]
    text, body = _vary_text(base["text"], v)
    return {**base, "key": i, "id": f"{base['id']}~{v}", "terms": (title, heading, body), "text": text,
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
    record = ChunkRecord(chunk, title.split(), heading.split(), body.split(), c["vector"],
                         c["heading_vector"], c["aligned_vector"], c["aligned_heading_vector"])
    if c["bigram"] and hasattr(record, "terms_from"):     # (a version of chaja that derives terms)
        record.terms_from = "bigram"
    return doc, [record]


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
