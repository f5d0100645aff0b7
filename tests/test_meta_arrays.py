"""Arrays kept in a store's meta as bytes: written, read back as views, refused when damaged."""
from __future__ import annotations

import numpy as np
import pytest

from chaja import meta_arrays
from chaja.stores.sqlite import SqliteStore


def test_arrays_and_their_header_come_back_as_they_went_in():
    arrays = {"codes": np.arange(-60, 60, dtype=np.int8).reshape(8, 15), "scales": np.linspace(0, 1, 8, dtype="<f4"),
              "rows": np.array([3, 1, 2], dtype="<i4"), "none": np.zeros((0, 4), dtype=np.int8)}
    meta = {"ko": {"words": ["상태", "키"], "dim": 15}}
    value = meta_arrays.pack(meta, arrays)
    assert meta_arrays.is_packed(value) and not meta_arrays.is_packed(b"{}") and not meta_arrays.is_packed("text")
    back_meta, back = meta_arrays.unpack(value)
    assert back_meta == meta and set(back) == set(arrays)
    for name, a in arrays.items():
        assert back[name].dtype == a.dtype and back[name].shape == a.shape
        np.testing.assert_array_equal(back[name], a)
        assert not back[name].flags.writeable                                 # a view of the value
        assert back[name].ctypes.data % 8 == 0 or back[name].size == 0       # each array starts aligned


def test_a_damaged_value_is_refused_not_misread():
    value = meta_arrays.pack({"n": 1}, {"a": np.arange(100, dtype="<f4")})
    with pytest.raises(ValueError, match="not a packed"):
        meta_arrays.unpack(b"chaja-a0" + value[8:])
    with pytest.raises(ValueError, match="cut short"):
        meta_arrays.unpack(value[:-4])
    with pytest.raises(ValueError, match="cut short"):
        meta_arrays.unpack(value[:10])
    broken = bytearray(value)
    broken[14] = 0xFF                                                        # inside the JSON header
    with pytest.raises(ValueError, match="damaged header"):
        meta_arrays.unpack(bytes(broken))
    with pytest.raises(ValueError, match="objects"):
        meta_arrays.pack({}, {"o": np.array([object()])})


def test_the_sqlite_store_keeps_bytes_as_they_are(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as store:
        assert meta_arrays.stores_bytes(store)
        value = meta_arrays.pack({"k": "v"}, {"a": np.ones(3, dtype="<f4")})
        store.set_meta("some.arrays", value)
    with SqliteStore(tmp_path / "s.chaja") as store:
        assert store.get_meta("some.arrays") == value
    assert not meta_arrays.stores_bytes(object())
