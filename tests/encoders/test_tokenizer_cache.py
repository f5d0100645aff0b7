"""The e5 tokenizer's tables read back from the model cache tokenize as tables built from
the vocabulary do; a damaged cache file is built again, never trusted."""
from __future__ import annotations

import marshal

from e5_texts import PASSAGES, QUERIES

from chaja.encoders.e5_tokenizer import E5Tokenizer
from chaja.encoders.tokenizer_cache import cached_tokenizer, tables_key

MIXED = ["Service를 LoadBalancer로 바꿨는데 EXTERNAL-IP가 계속 pending이에요", "ｆｕｌｌ-width　텍스트 ①②",
         "\u00a0nbsp\tand tabs\n새 줄", "emoji 😀 and 漢字", ""]


def test_cached_tables_tokenize_as_built_ones(weights, tokenizer, tmp_path):
    built = cached_tokenizer(weights, tmp_path)                 # built into the cache
    read = cached_tokenizer(weights, tmp_path)                  # read back from it
    assert (tmp_path / tables_key(weights)).is_file()
    for text in [*PASSAGES, *QUERIES, *MIXED]:
        for is_query in (False, True):
            want = tokenizer.content_ids(text, is_query)
            assert built.content_ids(text, is_query) == want
            assert read.content_ids(text, is_query) == want
    assert read.tables() == tokenizer.tables()


def test_a_damaged_cache_file_is_built_again(weights, tokenizer, tmp_path):
    path = tmp_path / tables_key(weights)
    for damage in (b"not marshal at all", marshal.dumps({"table": {}})):
        path.write_bytes(damage)
        again = cached_tokenizer(weights, tmp_path)
        assert again.content_ids(MIXED[0]) == tokenizer.content_ids(MIXED[0])
        assert isinstance(marshal.loads(path.read_bytes()), dict) and path.stat().st_size > 1_000_000


def test_tables_are_built_from_the_vocabulary_alone(weights):
    tables = E5Tokenizer.build_tables(weights.vocab)
    assert tables["table"]["▁the"] == weights.vocab.pieces.index("▁the")
    assert tables["longest"] == max(len(p) for p in weights.vocab.pieces)
