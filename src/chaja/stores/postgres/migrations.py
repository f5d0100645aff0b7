"""The chaja schema in PostgreSQL and its migrations: ``schema_version`` records each
applied step of :data:`MIGRATIONS`, each step runs in its own transaction under an
advisory lock, so two processes opening a new database at once do not race."""
from __future__ import annotations

from chaja.stores.base import StoreError
from chaja.stores.postgres.replica import not_replayed

# Each migration: (version, description, SQL statements). ``{s}`` is the quoted
# schema name. A step, once released, is never edited: later changes are new steps.
MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "documents, chunks, full-text and vector columns", [
        """CREATE TABLE {s}.meta (
            key text PRIMARY KEY,
            value text NOT NULL
        )""",
        """CREATE TABLE {s}.documents (
            id text PRIMARY KEY,
            fingerprint text NOT NULL,
            title text NOT NULL,
            lang text NOT NULL,
            source text NOT NULL,
            doc_type text NOT NULL,
            date text,
            path text NOT NULL,
            n_chunks integer NOT NULL,
            indexed_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE {s}.chunks (
            seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            id text PRIMARY KEY,
            doc_id text NOT NULL REFERENCES {s}.documents (id) ON DELETE CASCADE,
            ordinal integer NOT NULL,
            title text NOT NULL,
            heading_path text[] NOT NULL,
            text text NOT NULL,
            lang text NOT NULL,
            source text NOT NULL,
            doc_type text NOT NULL,
            date text,
            title_terms text NOT NULL,
            heading_terms text NOT NULL,
            body_terms text NOT NULL,
            embedding vector NOT NULL
        )""",
        "CREATE INDEX chunks_doc_id ON {s}.chunks (doc_id)",
        "CREATE INDEX chunks_lang ON {s}.chunks (lang)",
        # The full-text side in its own narrow table: a chunks row with text, terms
        # and a 384-dimension vector is wide enough that PostgreSQL moves the
        # tsvector out of line (TOAST), and fetching it back for every matching
        # row made keyword ranking about twice as slow.
        """CREATE TABLE {s}.chunk_fts (
            chunk_id text PRIMARY KEY REFERENCES {s}.chunks (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            lang text NOT NULL,
            tsv tsvector NOT NULL,
            title_tsv tsvector NOT NULL
        )""",
        "CREATE INDEX chunk_fts_tsv ON {s}.chunk_fts USING gin (tsv)",
        "CREATE INDEX chunk_fts_title_tsv ON {s}.chunk_fts USING gin (title_tsv)",
        # OR of any number of tsqueries, so a text[] of terms becomes one query.
        """CREATE AGGREGATE {s}.tsquery_or_all (tsquery) (
            SFUNC = pg_catalog.tsquery_or, STYPE = tsquery
        )""",
    ]),
    (2, "heading vectors", [
        # One row per chunk that has a heading: the vector of its section name.
        # The chunks of one section share that vector; only the section's first
        # chunk (``lead``) enters the HNSW index, because a graph full of identical
        # points loses recall (measured: nDCG@10 -0.054 on the React docs). A
        # search finds sections by their lead rows, then returns all their chunks.
        # The column gets its dimension (and its index) with the chunk vectors'.
        """CREATE TABLE {s}.chunk_headings (
            chunk_id text PRIMARY KEY REFERENCES {s}.chunks (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            doc_id text NOT NULL,
            lang text NOT NULL,
            section text NOT NULL,
            lead boolean NOT NULL,
            embedding vector NOT NULL
        )""",
        "CREATE INDEX chunk_headings_section ON {s}.chunk_headings (doc_id, section)",
    ]),
    (3, "chunk length in tokens, for BM25", [
        # tokens in a tsvector = positions summed over its lexemes
        """CREATE FUNCTION {s}.tsvector_tokens(tsvector) RETURNS integer
           LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
           $$ SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer FROM unnest($1) AS u $$""",
        "ALTER TABLE {s}.chunk_fts ADD COLUMN n_tokens integer NOT NULL DEFAULT 0",
        "UPDATE {s}.chunk_fts SET n_tokens = {s}.tsvector_tokens(tsv)",
    ]),
    (4, "vectors kept in the row", [
        # A chunks row (text, terms, a 384-d vector: about 3 KB) is over PostgreSQL's
        # 2 KB TOAST target, and the vector, the largest value that may move, went
        # out of line: every exact distance then fetched it from the TOAST table.
        # Stored inline, an exact top-60 over the React docs' 3,896 chunks takes
        # 2.0 ms instead of 7.3. Rows written before this step keep their layout
        # until they are written again. New stores get this when their dimension
        # is fixed (see chaja.stores.postgres.hnsw.keep_inline).
        """DO $$ BEGIN
             IF (SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                 JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = current_schema() AND c.relname = 'chunks'
                 AND a.attname = 'embedding') BETWEEN 1 AND 1536 THEN
               ALTER TABLE {s}.chunks ALTER COLUMN embedding SET STORAGE PLAIN;
               ALTER TABLE {s}.chunk_headings ALTER COLUMN embedding SET STORAGE PLAIN;
             END IF;
           END $$""",
    ]),
    (5, "BM25 statistics kept on write", [
        # N and the total length of all chunks, for idf and avgdl: adjusted in each
        # document's transaction, so a query no longer scans chunk_fts for them
        # (at 100k chunks that scan was 67 of a keyword query's 82 ms).
        """CREATE TABLE {s}.fts_stats (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            chunks bigint NOT NULL,
            tokens bigint NOT NULL
        )""",
        "INSERT INTO {s}.fts_stats (chunks, tokens) SELECT count(*), coalesce(sum(n_tokens), 0) FROM {s}.chunk_fts",
    ]),
    (6, "aligned vectors", [
        # The aligned encoder's vectors of each chunk's passage and section name
        # (chaja.encoders.aligned), of their own dimension; searched exactly.
        """CREATE TABLE {s}.chunk_aligned (
            chunk_id text PRIMARY KEY REFERENCES {s}.chunks (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            lang text NOT NULL,
            embedding vector NOT NULL,
            name_embedding vector
        )""",
        # two 512-d vectors (4 KB) fit a page: kept in the row, as migration 4 does
        "ALTER TABLE {s}.chunk_aligned ALTER COLUMN embedding SET STORAGE PLAIN,"
        " ALTER COLUMN name_embedding SET STORAGE PLAIN",
    ]),
    (7, "large documents staged a batch at a time", [
        # The finished chunks of a document longer than one ingest batch, committed a
        # batch at a time where no search reads them, then moved into the tables above
        # in one transaction (put_staged); see chaja.stores.sqlite_staging.
        """CREATE TABLE {s}.staged_chunks (
            doc_id text NOT NULL,
            stage_key text NOT NULL,
            ordinal integer NOT NULL,
            id text NOT NULL,
            title text NOT NULL,
            heading_path text[] NOT NULL,
            text text NOT NULL,
            lang text NOT NULL,
            source text NOT NULL,
            doc_type text NOT NULL,
            date text,
            title_terms text NOT NULL,
            heading_terms text NOT NULL,
            body_terms text NOT NULL,
            embedding vector NOT NULL,
            section text,
            heading_embedding vector,
            aligned_embedding vector,
            aligned_name_embedding vector,
            PRIMARY KEY (doc_id, ordinal)
        )""",
    ]),
    (8, "keyword change log, for postings held by readers", [
        # One row per chunk added or removed, written in the chunk's own transaction
        # after the fts_stats row lock that orders writers: readers that keep postings
        # (chaja.stores.postgres.keywords) apply the entries after their own.
        """CREATE TABLE {s}.keyword_log (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            row bigint NOT NULL,
            added boolean NOT NULL
        )""",
        # names the readers' cache files; a new schema (or a new database) gets a new one
        "INSERT INTO {s}.meta (key, value) VALUES ('store_id', md5(random()::text || clock_timestamp()::text))"
        " ON CONFLICT (key) DO NOTHING",
    ]),
    (9, "each chunk's location in its file", [
        # chaja.documents.Location.encode(): 'page:3:4', 'row:2:41:Prices'; NULL where none
        "ALTER TABLE {s}.chunks ADD COLUMN location text",
        "ALTER TABLE {s}.staged_chunks ADD COLUMN location text",
    ]),
    (10, "keyword postings kept in the database, for readers that keep none", [
        # chaja.stores.postgres.stored_postings: the postings of the rows the keyword log
        # had reached (meta 'keyword_postings'), in parts, one row per term and part
        # (chaja.stores.posting_blobs), and the rows of some part deleted since
        """CREATE TABLE {s}.keyword_parts (
            part bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            low bigint NOT NULL,
            rows bigint NOT NULL,
            langs text[] NOT NULL
        )""",
        """CREATE TABLE {s}.keyword_postings (
            term text COLLATE "C" NOT NULL,
            part bigint NOT NULL REFERENCES {s}.keyword_parts (part) ON DELETE CASCADE,
            postings bytea NOT NULL,
            PRIMARY KEY (term, part)
        )""",
        # fetched whole, term by term: no compression to undo on every read
        "ALTER TABLE {s}.keyword_postings ALTER COLUMN postings SET STORAGE EXTERNAL",
        "CREATE INDEX keyword_postings_part ON {s}.keyword_postings (part)",
        # one row: the rows of some part deleted since, sorted int64 bytes, read by every search
        """CREATE TABLE {s}.keyword_removed (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            rows bytea NOT NULL
        )""",
        "ALTER TABLE {s}.keyword_removed ALTER COLUMN rows SET STORAGE EXTERNAL",
    ]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def advisory_lock(store) -> None:
    """The schema's transaction-level advisory lock, which orders schema changes."""
    store._conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext('chaja.schema:' || %s))", (store.schema,)
    )


def current_version(store) -> int:
    row = store._conn.execute(
        store._q("SELECT coalesce(max(version), 0) FROM {s}.schema_version")
    ).fetchone()
    return int(row[0])


def migrate(store) -> None:
    """Create the schema if it is missing and apply each step of :data:`MIGRATIONS` it
    lacks; a schema written by a newer chaja, or a replica behind this one, is refused."""
    conn = store._conn
    exists = conn.execute(
        "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relname = 'schema_version'", (store.schema,)
    ).fetchone()
    if exists is None and store.replica:
        raise StoreError(not_replayed(store._target, f"the chaja schema {store.schema!r}"))
    if exists is None:
        with conn.transaction():
            advisory_lock(store)
            conn.execute(store._q("CREATE SCHEMA IF NOT EXISTS {s}"))
            conn.execute(store._q(
                "CREATE TABLE IF NOT EXISTS {s}.schema_version ("
                " version integer PRIMARY KEY,"
                " description text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            ))
    current = current_version(store)
    if current > SCHEMA_VERSION:
        raise StoreError(
            f"the schema {store.schema!r} is at version {current}, written by a newer "
            f"chaja (this one knows up to {SCHEMA_VERSION}); upgrade chaja"
        )
    if store.replica and current < SCHEMA_VERSION:
        raise StoreError(not_replayed(store._target, f"version {SCHEMA_VERSION} of the chaja schema "
                                                     f"{store.schema!r} (it has version {current})"))
    for version, description, steps in MIGRATIONS:
        if version <= current:
            continue
        with conn.transaction():
            advisory_lock(store)
            if current_version(store) >= version:  # another process got here first
                continue
            for step in steps:
                conn.execute(store._q(step))
            conn.execute(
                store._q("INSERT INTO {s}.schema_version (version, description) VALUES (%s, %s)"),
                (version, description),
            )
