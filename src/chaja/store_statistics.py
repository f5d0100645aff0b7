"""The statistics a store records for its searches, and whether they follow it.

What the searcher reads from the store's meta rather than from every vector at
search time: the mean chunk vector of each language (:mod:`chaja.language_means`,
for the projection), each vector field's background mean and covariance
(:mod:`chaja.search.background`, for calibrated fusion) and the translation lexicon
(:mod:`chaja.search.lexicon`). They are recomputed when none are recorded, a language
appears or disappears, or the chunk count has moved by more than a share (``drift``)
since they were: a mean or covariance over thousands of vectors does not move with a
handful more, and recomputing reads every vector.
"""
from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np

from chaja import __version__, meta_arrays
from chaja.encoders.base import Encoder
from chaja.language_means import META_KEY, decode_means, encode_means
from chaja.search import background, lexicon
from chaja.stores.base import Store

#: meta key set while an index run has written documents its statistics do not follow yet
PENDING = "statistics.pending"
SHAPE = "statistics.shape"
#: meta key: "deferred" while the lexicon a bulk load recorded waits for its nearest-word tables
TABLES = "index.lexicon_tables"
#: how the command line names them among the work a bulk load deferred
TABLES_LABEL = "translation tables"
#: meta key: the sample the recorded lexicon was counted over (:func:`sample_key`)
SAMPLED = "index.lexicon_sample"
#: meta key: the samples the recorded background statistics were fit on (:func:`background.sample_key`)
BACKGROUND_SAMPLED = "index.background_sample"


def record(store: Store, aligned: Callable[[], Encoder | None], drift: float, changed: bool = True,
           stage: Callable[[str], None] = lambda name: None, tables: bool = True) -> None:
    """Record the per-language mean vectors, the background statistics of each vector
    field and the translation lexicon (``aligned()`` gives the aligned encoder), unless
    they follow the store within ``drift`` (0, or ``changed`` with no drift: always);
    ``tables`` False (a bulk load) leaves the lexicon's nearest-word tables to
    :func:`complete_lexicon`."""
    stats = store.stats()
    shape = json.dumps({"chunks": stats.chunks, "langs": sorted(k for k, v in stats.by_lang.items() if v)})
    recorded = store.get_meta(SHAPE)
    exact = drift <= 0 and changed
    if (not exact and recorded is not None and store.get_meta(META_KEY) is not None
            and lexicon.is_current(store.get_meta(lexicon.META_KEY))
            and background.is_current(store.get_meta(background.META_KEY))):
        then = json.loads(recorded)
        if then["langs"] == json.loads(shape)["langs"] and _within(drift, stats.chunks, then):
            repack(store)
            done(store)
            return
    stage("vector statistics")
    means = record_vector_statistics(store)
    several = sum(1 for lang, (count, _) in means.items() if lang and count) > 1
    encoder = aligned() if several else None
    if encoder is not None:
        stage("translation lexicon")
    record_lexicon(store, encoder, tables)
    store.set_meta(SHAPE, shape)
    done(store)


def done(store: Store) -> None:
    """Say the statistics follow the last index run."""
    if store.get_meta(PENDING) is not None:
        store.set_meta(PENDING, "0")


def record_vector_statistics(store: Store) -> dict:
    """Record the per-language mean vectors and each vector field's background statistics
    (:func:`record_background`); the means."""
    means = store.language_means()
    store.set_meta(META_KEY, encode_means(means))
    record_background(store, chunks=sum(count for count, _ in means.values()))
    return means


def record_background(store: Store, chunks: int | None = None) -> bool:
    """Record each vector field's background statistics (packed where the store keeps bytes:
    :mod:`chaja.meta_arrays`), unless those recorded were fit on the samples the store holds
    now (:func:`background.sample_key`) and decode in the form it writes: those are what a
    fit would give, and are kept. True when they were fit. The key is cleared before a fit
    and written after it, so a crash between the two leaves nothing to trust. It is made only
    where there are statistics to keep and the store (``chunks``, when known) is larger than
    the sample, so a write can leave the sample as it was: a bulk load, or a store whose
    every write changes its sample, pays for no key."""
    value = store.get_meta(background.META_KEY)
    key = background.sample_key(store) if value and (chunks is None or chunks > background.SAMPLE) else None
    binary = meta_arrays.stores_bytes(store)
    if (key is not None and store.get_meta(BACKGROUND_SAMPLED) == key
            and (not isinstance(value, str)) == binary and background.is_current(value) and _decodes(value)):
        return False
    if store.get_meta(BACKGROUND_SAMPLED):
        store.set_meta(BACKGROUND_SAMPLED, "")
    store.set_meta(background.META_KEY, background.encode(background.of_store(store), binary=binary))
    if key is not None:
        store.set_meta(BACKGROUND_SAMPLED, key)
    return True


def _decodes(value: str | bytes) -> bool:
    try:
        return bool(background.decode(value))
    except (ValueError, KeyError, TypeError):
        return False


def record_lexicon(store: Store, aligned: Encoder | None, tables: bool = True) -> None:
    """Record the translation lexicon of a store of more than one language indexed with
    aligned vectors (``aligned``), with its nearest-word tables or (``tables`` False)
    without them, marked deferred; a store of one language records none. A lexicon
    recorded over the same sample (:func:`sample_key`) is kept: it is the one a build
    would give (its tables added where they were deferred and are asked for now)."""
    if aligned is None:
        if store.get_meta(lexicon.META_KEY) != "":
            store.set_meta(lexicon.META_KEY, "")      # recorded: none
        _mark_tables(store, deferred=False)
        return
    value, key = store.get_meta(lexicon.META_KEY), sample_key(store, aligned)
    if (value and store.get_meta(SAMPLED) == key and lexicon.is_current(value)
            and lexicon.decode(value) is not None):         # (a damaged value is counted again)
        if tables:
            complete_lexicon(store)
        return
    if store.get_meta(SAMPLED):         # cleared first: a crash before the key below leaves nothing to trust
        store.set_meta(SAMPLED, "")
    built = lexicon.of_store(store, aligned, lexicon.decode(value), tables)
    if not tables:          # marked first: a crash between the two leaves tables to build, never tables missed
        _mark_tables(store, deferred=True)
    store.set_meta(lexicon.META_KEY, lexicon.encode(built, binary=meta_arrays.stores_bytes(store)))
    if tables:
        _mark_tables(store, deferred=False)
    store.set_meta(SAMPLED, key)


def sample_key(store: Store, aligned: Encoder) -> str:
    """What a store's lexicon is made from, short of its words' vectors: the chunks it counts
    (:meth:`Store.sample_fingerprint` of :data:`lexicon.SAMPLE`), the counting rules and
    chaja's version, and the aligned encoder. On a store larger than the sample, an index
    run that writes no sampled chunk keeps the key, and the lexicon needs no count (1.4 s at
    100,000 chunks) and no new tables."""
    return json.dumps({"sample": store.sample_fingerprint(lexicon.SAMPLE), "encoder": aligned.name,
                       "rules": [lexicon.RULES, lexicon.SAMPLE, lexicon.MIN_COUNT, lexicon.SMALL_SAMPLE,
                                 lexicon.MAX_WORDS, __version__]})


def repack(store: Store) -> list[str]:
    """Rewrite the lexicon and the background statistics recorded as text (base64 in JSON)
    as packed values, in a store that keeps bytes (:mod:`chaja.meta_arrays`): no encoder,
    no vector read, what they hold is in them. The meta keys rewritten; an index run with
    nothing else to do calls it, so an older store moves to the smaller form at its next
    ``chaja index``."""
    if not meta_arrays.stores_bytes(store):
        return []
    done = []
    value = store.get_meta(lexicon.META_KEY)
    found = lexicon.decode(value) if isinstance(value, str) and value and lexicon.is_current(value) else None
    if found is not None:
        store.set_meta(lexicon.META_KEY, lexicon.encode(found, binary=True))
        done.append(lexicon.META_KEY)
    value = store.get_meta(background.META_KEY)
    try:
        stats = background.decode(value) if isinstance(value, str) and value else None
    except (ValueError, KeyError, TypeError):
        stats = None            # damaged: left for the next recount to write again
    if stats:
        store.set_meta(background.META_KEY, background.encode(stats, binary=True))
        done.append(background.META_KEY)
    return done


def split_deferred(deferred: list[str]) -> tuple[list[str], bool]:
    """(the vector fields among ``deferred`` (:meth:`Index.deferred_graphs`), whether the
    translation tables are among them)."""
    return [f for f in deferred if f != TABLES_LABEL], TABLES_LABEL in deferred


def tables_deferred(store: Store) -> bool:
    """Whether the store's lexicon waits for the nearest-word tables a bulk load left out."""
    return store.get_meta(TABLES) == "deferred"


def complete_lexicon(store: Store) -> bool:
    """Add the nearest-word tables a bulk load left out of the store's lexicon (no
    encoder: the words' vectors are in it); True when it did."""
    if not tables_deferred(store):
        return False
    found = lexicon.decode(store.get_meta(lexicon.META_KEY))
    if found is not None and not found.nearest:      # (a crash may have left the mark on a full lexicon)
        store.set_meta(lexicon.META_KEY, lexicon.encode(lexicon.with_tables(found),
                                                        binary=meta_arrays.stores_bytes(store)))
    _mark_tables(store, deferred=False)
    return found is not None


def _mark_tables(store: Store, deferred: bool) -> None:
    if deferred or store.get_meta(TABLES) is not None:
        store.set_meta(TABLES, "deferred" if deferred else "")


def off(store: Store, drift: float) -> str:
    """How far the recorded language means are from the stored vectors: "" (they match),
    "drift" (they differ, but the chunk count moved within ``drift`` of what they were
    recorded at, as a hub's writer leaves them), "interrupted" (an index run stopped
    before it recorded them) or "fault"."""
    recorded = decode_means(store.get_meta(META_KEY), min_chunks=1)
    actual = {lang: mean for lang, (count, mean) in store.language_means().items() if lang and count}
    stats = store.stats()
    if not stats.chunks or (set(recorded) == set(actual) and all(
            float(np.abs(recorded[k] - actual[k]).max()) <= 1e-4 for k in actual)):
        return ""
    shape = store.get_meta(SHAPE)
    if shape is not None and set(recorded) == set(actual) and _within(drift, stats.chunks, json.loads(shape)):
        return "drift"
    return "interrupted" if store.get_meta(PENDING) == "1" else "fault"


def _within(drift: float, chunks: int, then: dict) -> bool:
    """Whether ``chunks`` is within ``drift`` (a share) of the count the statistics were
    recorded at (``then``, the decoded :data:`SHAPE`)."""
    return abs(chunks - then["chunks"]) <= drift * max(then["chunks"], 1)
