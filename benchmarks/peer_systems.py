"""The systems bench_peers.py compares, each behind the same four calls.

``build(chunks)`` indexes the corpus (an iterable of :func:`peer_corpus.chunk_at` dicts)
into ``folder``; ``open()`` opens what was built; ``keyword(q, k)``, ``vector(q, k)``
and ``hybrid(q, k)`` return corpus keys, best first. Every system gets the same analysed
terms (title, heading and body, as chaja stores them) and the same e5 vectors, so only
the engines differ:

* chaja: its SQLite store and its default search (``Index.search``), the query vectors
  handed over precomputed, as every peer gets them (the query words its lexicon lacks are
  encoded once by a child process, so no encoder is loaded in the serving process);
* chaja-e2e: the same store served by a process of its own that encodes each question
  with the real encoders (``e2e``), so its memory holds them and chaja's does not;
* bm25s: BM25 over the terms of all three fields as one text, exact numpy or usearch
  HNSW vectors, fused by RRF (k = 60) over the top 100 of each;
* tantivy: BM25 over the same text (keyword only);
* LanceDB: its full-text index over the same text, flat vector search, and its hybrid
  query with its RRF reranker.

The peers are benchmark extras (``pip install -e '.[bench]'``), never chaja dependencies.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

import peer_corpus
from machine import Steps

DEPTH = 100


def rrf(lists: list[list[int]], k: int, c: int = 60) -> list[int]:
    score: dict[int, float] = {}
    for lst in lists:
        for rank, key in enumerate(lst, 1):
            score[key] = score.get(key, 0.0) + 1.0 / (c + rank)
    return sorted(score, key=lambda x: (-score[x], x))[:k]


def record_vector_statistics(store) -> None:
    """The language means and background statistics, recorded as ``chaja index`` records them
    (``store_statistics.record_vector_statistics``; a version without it wrote them as text)."""
    from chaja import store_statistics
    recorded = getattr(store_statistics, "record_vector_statistics", None)
    if recorded is not None:
        recorded(store)
        return
    from chaja.language_means import META_KEY, encode_means
    from chaja.search import background
    store.set_meta(META_KEY, encode_means(store.language_means()))
    store.set_meta(background.META_KEY, background.encode(background.of_store(store)))


def fresh_folder(folder: Path) -> None:
    """An empty folder for a build (what an earlier build left there is removed)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def flat_terms(chunk: dict) -> str:
    return " ".join(t for t in chunk["terms"] if t)


class Precomputed:
    """An encoder that answers with query vectors computed beforehand (timing without encoding)."""

    def __init__(self, name: str, dim: int, table: dict[str, np.ndarray]):
        self.name, self.dim, self.table = name, dim, table

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])

    def encode_passages(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - never indexed with
        raise RuntimeError("precomputed vectors encode queries only")


class TimedEncoder:
    """An encoder that counts the seconds it spends encoding passages (``seconds``)."""

    def __init__(self, encoder):
        self.encoder, self.name, self.seconds = encoder, encoder.name, 0.0

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        import time
        t = time.perf_counter()
        try:
            return self.encoder.encode_passages(texts)
        finally:
            self.seconds += time.perf_counter() - t


_helper_peaks: list[float] = []


def helper_peak_mb() -> float:
    """The peak memory of the processes chaja's build started (its postings helper), read
    from /proc as each closes (0 where none ran): a child's ``ru_maxrss`` would carry this
    process's own peak across the exec."""
    return max(_helper_peaks, default=0.0)


def _watch_helpers() -> None:
    from chaja.stores import postings_helper

    close = postings_helper.Helper.close
    if getattr(close, "watched", False):
        return

    def watched(self) -> None:
        if self.proc is not None:
            try:
                for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        _helper_peaks.append(int(line.split()[1]) / 1024)
            except OSError:
                pass
        close(self)
    watched.watched = True
    postings_helper.Helper.close = watched


class Chaja:
    name = "chaja"

    def __init__(self, folder: Path, queries: list[dict], encoder_name: str = ""):
        self.folder, self.queries, self.encoder_name = folder, queries, encoder_name
        self.path = folder / "peers.chaja"

    def build(self, chunks) -> dict:
        import time

        from chaja.encoders.aligned import UseM3Encoder, get_aligned_encoder
        from chaja import store_statistics
        from chaja.search import lexicon
        from chaja.stores.sqlite import SqliteStore

        import chaja
        try:
            _watch_helpers()
        except ImportError:             # a version without the helper
            pass
        fresh_folder(self.folder)
        store = SqliteStore(self.path)
        cfg = chaja.Config()
        t0 = time.perf_counter()
        batch = []
        for c in chunks:
            batch.append(peer_corpus.document_of(c))
            if len(batch) == 1000:
                store.put_documents(batch)
                batch = []
        if batch:
            store.put_documents(batch)
        rows = time.perf_counter() - t0
        # the statistics first, as Index.add records them: the e5 graphs are built without
        # the language direction the means give
        record_vector_statistics(store)
        statistics = time.perf_counter() - t0 - rows
        steps = Steps(echo="chaja")            # each compaction step's seconds, and a line on stderr
        store.compact(force=True, graphs=False, progress=steps)     # a bulk load: graphs deferred
        steps.done()
        keywords = time.perf_counter() - t0 - rows - statistics
        # the translation lexicon, as Index.add records it: it encodes the store's words with
        # the aligned encoder, whose seconds are not counted as ingest; a bulk load leaves its
        # nearest-word tables to chaja optimize (a version that can)
        t1 = time.perf_counter()
        aligned = TimedEncoder(get_aligned_encoder("use-m3"))
        deferring = hasattr(store_statistics, "complete_lexicon")
        if deferring:
            store_statistics.record_lexicon(store, aligned, tables=False)
        else:
            store.set_meta(lexicon.META_KEY, lexicon.encode(lexicon.of_store(store, aligned)))
        lexicon_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        optimize = Steps(echo="chaja optimize")
        store.compact(force=True, progress=optimize)                # the graphs, as chaja optimize builds them
        if deferring:
            optimize("translation tables")
            store_statistics.complete_lexicon(store)
        optimize.done()
        graphs = time.perf_counter() - t2
        store.set_meta("encoder", self.encoder_name)
        store.set_meta("aligned_encoder", UseM3Encoder.name)
        for key in ("analyzer", "chunk_chars", "heading_vectors", "aligned_vectors"):
            store.set_meta(f"index.{key}", str(getattr(cfg.index, key)))
        store.close()
        return {"rows_s": rows, "statistics_s": statistics, "keyword_index_s": keywords, "lexicon_s": lexicon_s,
                "lexicon_encoding_s": aligned.seconds, "excluded_s": aligned.seconds, "ann_index_s": graphs,
                "compaction_steps_s": steps.seconds, "optimize_steps_s": optimize.seconds}

    def open(self) -> None:
        import chaja
        from chaja.encoders.aligned import UseM3Encoder

        self.idx = chaja.open(self.path)
        enc_name = self.idx.store.get_meta("encoder")
        self.idx._encoder = Precomputed(enc_name, 384, {q["text"]: np.asarray(q["vector"], np.float32)
                                                        for q in self.queries})
        aligned = {q["text"]: np.asarray(q["aligned_vector"], np.float32) for q in self.queries}
        self.idx._aligned = Precomputed(UseM3Encoder.name, 512, aligned)
        self.store = self.idx.store
        self.searcher = self.idx.searcher()

    def prepare(self) -> None:
        """The query words the lexicon lacks, which a search encodes with the query: encoded
        here, after the open is timed and before any search is, by a child process, so the
        serving process holds no encoder (as the peers, given their query vectors)."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from chaja.language import detect_language

        aligned = self.idx._aligned.table
        words = {w for q in self.queries for w in self.searcher.words_to_translate(q["text"], detect_language(q["text"]))}
        unknown = sorted(words - set(self.searcher.known_word_vectors(sorted(words))))
        if unknown:
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                aligned.update(zip(unknown, pool.submit(aligned_word_vectors, unknown).result()))

    def keys(self, ids) -> list[int]:
        return [int(i[1:]) for i in ids]

    def keyword(self, q: dict, k: int) -> list[int]:
        return self.keys(h.chunk_id for h in self.searcher.keyword_list(q["terms"], k))

    def vector(self, q: dict, k: int) -> list[int]:
        return self.keys(h.chunk_id for h in self.store.vector(np.asarray(q["vector"], np.float32), k))

    def _forget_translations(self, index) -> None:
        """A searcher remembers the words it has translated; every query here was asked in the
        warm-up pass, so each timed search starts without them, as a new question would."""
        lex = index.searcher().lexicon
        if lex is not None:
            lex.translations.clear()

    def hybrid(self, q: dict, k: int) -> list[int]:
        self._forget_translations(self.idx)
        return self.keys(d.doc_id for d in self.idx.search(q["text"], k).documents)


def aligned_word_vectors(words: list[str]) -> np.ndarray:
    """The aligned encoder's vectors of ``words`` (run in a child process by :meth:`Chaja.prepare`)."""
    from chaja.encoders.aligned import get_aligned_encoder

    return get_aligned_encoder("use-m3").encode_queries(words)


class ChajaEndToEnd(Chaja):
    """The chaja store ``bench_peers.py`` built (``<size>/chaja``), searched by a process of
    its own with the real encoders: each question encoded, then searched (``e2e``)."""
    name = "chaja-e2e"

    def __init__(self, folder: Path, queries: list[dict], encoder_name: str = ""):
        super().__init__(folder.parent / "chaja", queries, encoder_name)

    def build(self, chunks) -> dict:
        raise RuntimeError("chaja-e2e serves the chaja store; build chaja")

    def open(self) -> None:
        import chaja

        self.idx = chaja.open(self.path)
        self.store = self.idx.store
        self.searcher = self.idx.searcher()

    def prepare(self) -> None:
        """Nothing: the real encoders encode every question and word."""

    e2e = Chaja.hybrid          # the same search, its index holding the real encoders


class Bm25s:
    name = "bm25s"

    def __init__(self, folder: Path, queries: list[dict], ann: bool = False):
        self.folder, self.queries, self.ann = folder, queries, ann
        self.name = "bm25s+usearch" if ann else "bm25s+numpy"

    def build(self, chunks) -> dict:
        import time

        import bm25s
        fresh_folder(self.folder)
        t0 = time.perf_counter()
        texts, vecs = [], []
        for c in chunks:
            texts.append(flat_terms(c).split())
            vecs.append(c["vector"])
        mat = np.stack(vecs).astype(np.float32)
        retriever = bm25s.BM25(k1=1.2, b=0.75)
        retriever.index(texts, show_progress=False)
        retriever.save(str(self.folder / "bm25"))
        np.save(self.folder / "vectors.npy", mat)
        out = {"keyword_index_s": time.perf_counter() - t0}
        if self.ann:
            from usearch.index import Index
            t1 = time.perf_counter()
            index = Index(ndim=mat.shape[1], metric="ip", dtype="f32")
            index.add(np.arange(mat.shape[0]), mat, threads=2)
            index.save(str(self.folder / "hnsw.usearch"))
            out["ann_index_s"] = time.perf_counter() - t1
        return out

    def open(self) -> None:
        import bm25s
        self.bm25 = bm25s.BM25.load(str(self.folder / "bm25"), mmap=True)
        self.mat = np.load(self.folder / "vectors.npy", mmap_mode="r")
        self.mat = np.ascontiguousarray(self.mat)
        self.vocab = self.bm25.vocab_dict
        if self.ann:
            from usearch.index import Index
            self.hnsw = Index.restore(str(self.folder / "hnsw.usearch"), view=True)

    def keyword(self, q: dict, k: int) -> list[int]:
        ids = [self.vocab[t] for t in q["terms"] if t in self.vocab]
        if not ids:
            return []
        scores = self.bm25.get_scores(ids)
        k = min(k, int((scores > 0).sum()))
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in top[np.lexsort((top, -scores[top]))]]

    def vector(self, q: dict, k: int) -> list[int]:
        v = np.asarray(q["vector"], np.float32)
        if self.ann:
            return [int(x) for x in self.hnsw.search(v, k).keys]
        scores = self.mat @ v
        top = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in top[np.argsort(-scores[top])]]

    def hybrid(self, q: dict, k: int) -> list[int]:
        return rrf([self.keyword(q, DEPTH), self.vector(q, DEPTH)], k)


class Exact:
    """numpy alone: exact vector search, the reference for every system's recall@10 where
    bm25s does not fit (at 1,000,000 chunks it holds every token as a Python string)."""
    name = "numpy"

    def __init__(self, folder: Path, queries: list[dict]):
        self.folder, self.queries = folder, queries

    def build(self, chunks) -> dict:
        import time
        fresh_folder(self.folder)
        t0 = time.perf_counter()
        np.save(self.folder / "vectors.npy", np.stack([c["vector"] for c in chunks]).astype(np.float32))
        return {"vector_index_s": time.perf_counter() - t0}

    def open(self) -> None:
        self.mat = np.load(self.folder / "vectors.npy", mmap_mode="r")

    def keyword(self, q: dict, k: int) -> list[int]:      # the open check asks every system once
        return []

    def vector(self, q: dict, k: int) -> list[int]:
        scores = self.mat @ np.asarray(q["vector"], np.float32)
        top = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in top[np.argsort(-scores[top])]]


class Tantivy:
    name = "tantivy"

    def __init__(self, folder: Path, queries: list[dict]):
        self.folder, self.queries = folder, queries

    def build(self, chunks) -> dict:
        import time

        import tantivy
        fresh_folder(self.folder)
        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("key", stored=True, fast=True)
        sb.add_text_field("body", stored=False, tokenizer_name="whitespace")
        self.schema = sb.build()
        t0 = time.perf_counter()
        index = tantivy.Index(self.schema, path=str(self.folder))
        writer = index.writer(heap_size=256_000_000, num_threads=2)
        for c in chunks:
            writer.add_document(tantivy.Document(key=c["key"], body=flat_terms(c)))
        writer.commit()
        writer.wait_merging_threads()
        return {"keyword_index_s": time.perf_counter() - t0}

    def open(self) -> None:
        import tantivy
        self.index = tantivy.Index.open(str(self.folder))
        self.index.reload()
        self.schema = self.index.schema
        self.searcher_ = self.index.searcher()

    def keyword(self, q: dict, k: int) -> list[int]:
        import tantivy
        clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", t)) for t in q["terms"]]
        if not clauses:
            return []
        hits = self.searcher_.search(tantivy.Query.boolean_query(clauses), k).hits
        return [self.searcher_.doc(addr)["key"][0] for _, addr in hits]


class Lance:
    """LanceDB: its FTS index, and its vectors flat below :data:`INDEX_FROM` rows; from there
    an IVF-PQ index (√N partitions, 48 sub-vectors of 8 dimensions), searched with 50 probes
    and its candidates refined tenfold from the full vectors, as LanceDB advises for large
    tables (a flat search at 1,000,000 rows takes seconds a query)."""
    name = "lancedb"
    INDEX_FROM = 500_000
    NPROBES, REFINE = 50, 10

    def __init__(self, folder: Path, queries: list[dict]):
        self.folder, self.queries = folder, queries

    def build(self, chunks) -> dict:
        import time

        import lancedb
        import pyarrow as pa
        fresh_folder(self.folder)
        t0 = time.perf_counter()
        db = lancedb.connect(str(self.folder))
        keys, texts, vecs = [], [], []
        for c in chunks:
            keys.append(c["key"])
            texts.append(flat_terms(c))
            vecs.append(c["vector"])
        mat = np.stack(vecs).astype(np.float32)
        table = pa.table({"key": pa.array(keys, pa.int64()), "text": pa.array(texts),
                          "vector": pa.FixedSizeListArray.from_arrays(pa.array(mat.ravel()), mat.shape[1])})
        tbl = db.create_table("chunks", table)
        tbl.create_fts_index("text", base_tokenizer="whitespace", lower_case=False, stem=False,
                             remove_stop_words=False, ascii_folding=False)
        info = {"keyword_index_s": time.perf_counter() - t0}
        if mat.shape[0] >= self.INDEX_FROM:
            t1 = time.perf_counter()
            tbl.create_index(metric="dot", num_partitions=int(mat.shape[0] ** 0.5), num_sub_vectors=48,
                             index_type="IVF_PQ")
            info["ann_index_s"] = time.perf_counter() - t1
        return info

    def open(self) -> None:
        import lancedb
        from lancedb.rerankers import RRFReranker
        self.tbl = lancedb.connect(str(self.folder)).open_table("chunks")
        self.reranker = RRFReranker()
        self.indexed = any("vector" in i.columns for i in self.tbl.list_indices())

    def _tuned(self, query):
        return query.nprobes(self.NPROBES).refine_factor(self.REFINE) if self.indexed else query

    def keyword(self, q: dict, k: int) -> list[int]:
        if not q["terms"]:
            return []
        rows = self.tbl.search(" ".join(q["terms"]), query_type="fts").select(["key"]).limit(k).to_list()
        return [r["key"] for r in rows]

    def vector(self, q: dict, k: int) -> list[int]:
        rows = self._tuned(self.tbl.search(np.asarray(q["vector"], np.float32))).select(["key"]).limit(k).to_list()
        return [r["key"] for r in rows]

    def hybrid(self, q: dict, k: int) -> list[int]:
        if not q["terms"]:
            return self.vector(q, k)
        query = self.tbl.search(query_type="hybrid").vector(np.asarray(q["vector"], np.float32))
        rows = (self._tuned(query).text(" ".join(q["terms"])).select(["key"]).limit(k)
                .rerank(self.reranker).to_list())
        return [r["key"] for r in rows]


#: the modules each system needs beyond chaja's own (the ``bench`` extra)
NEEDS = {"chaja": (), "chaja-e2e": (), "numpy": (), "bm25s+numpy": ("bm25s",),
         "bm25s+usearch": ("bm25s", "usearch"), "tantivy": ("tantivy",), "lancedb": ("lancedb",)}


def missing_modules(names: list[str]) -> list[str]:
    """The modules the named systems need that are not installed (found without importing them)."""
    import importlib.util

    wanted = dict.fromkeys(m for n in names for m in NEEDS.get(n, ()))
    return [m for m in wanted if importlib.util.find_spec(m) is None]


def make(name: str, folder: Path, queries: list[dict], encoder_name: str = ""):
    return {"chaja": lambda: Chaja(folder, queries, encoder_name),
            "chaja-e2e": lambda: ChajaEndToEnd(folder, queries, encoder_name),
            "bm25s+numpy": lambda: Bm25s(folder, queries),
            "bm25s+usearch": lambda: Bm25s(folder, queries, ann=True), "tantivy": lambda: Tantivy(folder, queries),
            "lancedb": lambda: Lance(folder, queries), "numpy": lambda: Exact(folder, queries)}[name]()


def built_chaja_stores(work: Path, sizes: list[int], n_queries: int) -> tuple[list[dict], list[tuple[int, Path]]] | None:
    """The questions ``bench_peers.py`` wrote (``queries-<n>.json`` in ``work``) and, of
    ``sizes``, (size, folder) of each chaja store it built there (each one missing named
    and skipped); None, with a line saying why, when the questions are not there."""
    import json

    qfile = work / f"queries-{n_queries}.json"
    if not qfile.is_file():
        print(f"no {qfile}: run benchmarks/bench_peers.py first (it writes the questions and builds the stores)")
        return None
    found = []
    for size in sizes:
        folder = work / str(size) / "chaja"
        if not (folder / "peers.chaja").is_file():
            print(f"skipping {size:,}: no store in {folder} (python benchmarks/bench_peers.py --size {size})")
            continue
        found.append((size, folder))
    return json.loads(qfile.read_text()), found


def measured_stores(work: Path, sizes: list[int], n_queries: int, measure) -> dict | None:
    """``{"machine", "queries", "sizes": {size: measure(folder, questions)}}`` over the chaja
    stores ``bench_peers.py`` built of ``sizes`` (:func:`built_chaja_stores`); None, with the
    reason said, when there are no questions or no store."""
    from machine import describe

    got = built_chaja_stores(work, sizes, n_queries)
    if got is None:
        return None
    questions, stores = got
    report = {"machine": describe(), "queries": len(questions), "sizes": {}}
    for size, folder in stores:
        print(f"{size:,} chunks ...", flush=True)
        report["sizes"][str(size)] = measure(folder, questions)
    return report if report["sizes"] else None


def store_arguments(doc: str, sizes: list[int], work: Path):
    """The command line of a benchmark over the chaja stores ``bench_peers.py`` built:
    ``--sizes`` (default ``sizes``), ``--queries``, ``--rounds``, ``--work`` (default ``work``)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=sizes)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, default=work)
    return ap.parse_args()
