"""Aligned vectors only where a store holds more than one language.

The aligned encoder (:mod:`chaja.encoders.aligned`) exists to bridge languages: its lists
and the translated keyword list are searched only in a store of two languages or more
(:meth:`chaja.search.searcher.Searcher.aligned_query`), so a store of one language spent
a fifth of its indexing time (KorQuAD's 960 paragraphs: 2.2 of 11 s) and half its vector
bytes on vectors no search reads. An index run therefore encodes them for a batch only once
the store and the run so far hold two languages (:class:`AlignedNeed`; the store's
languages as its statistics recorded them, chunks without a language not counted), and
the run in which a store first holds two gives the chunks written before theirs
(:func:`fill_pending`): the same passage and section-name texts an index run encodes, so
the store ends as a run that encoded every chunk would leave it. The fill is marked in the
store's meta before it starts and cleared when it ends, so a run that is stopped midway
is finished by the next one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from chaja.encoders.base import Encoder
from chaja.language_means import META_KEY, decode_means
from chaja.stores import Store

#: chunks read, encoded and written at a time by :func:`fill_missing`
FILL_BATCH = 256
#: meta key: "1" while the chunks written before a store held two languages await theirs
PENDING_KEY = "aligned.fill_pending"


class AlignedNeed:
    """Whether a batch needs aligned vectors: the store's recorded languages and those of
    every batch seen so far, two or more."""

    def __init__(self, store: Store):
        self.before = {lang for lang in decode_means(store.get_meta(META_KEY), min_chunks=1) if lang}
        self.languages = set(self.before)

    def __call__(self, batch_languages: Iterable[str]) -> bool:
        self.languages |= {lang for lang in batch_languages if lang}
        return len(self.languages) > 1

    @property
    def turned_multilingual(self) -> bool:
        """The store held fewer than two languages before this run and holds two now."""
        return len(self.before) < 2 <= len(self.languages)


def fill_pending(store: Store, encoder: Encoder, need: AlignedNeed,
                 stage: Callable[[str], None] = lambda name: None) -> int:
    """After an index run: where the store turned multilingual in it (or a fill was left
    unfinished), encode and store the aligned vectors of every chunk that has none; the
    chunks given vectors."""
    if getattr(store, "put_aligned_vectors", None) is None:
        return 0
    if need.turned_multilingual:
        store.set_meta(PENDING_KEY, "1")
    elif store.get_meta(PENDING_KEY) != "1":
        return 0
    stage("aligned vectors")
    done = fill_missing(store, encoder)
    store.set_meta(PENDING_KEY, "0")
    return done


def fill_missing(store: Store, encoder: Encoder) -> int:
    """Encode and store the aligned vectors of every chunk that has none; how many."""
    done, after = 0, ""
    while chunks := store.chunks_without_aligned(after, FILL_BATCH):
        after = chunks[-1].id
        passages = encoder.encode_passages([c.passage_text() for c in chunks])
        names = sorted({n for c in chunks if (n := c.aligned_name())})
        named = dict(zip(names, encoder.encode_passages(names))) if names else {}
        done += store.put_aligned_vectors([(c.id, v, named.get(c.aligned_name() or ""))
                                           for c, v in zip(chunks, passages)])
    return done
