"""API keys: who may use which route (:mod:`chaja.hub.auth`), without a server."""
from chaja.config import HubConfig
from chaja.hub.auth import Keys


def test_no_keys_means_open():
    keys = Keys([], [])
    assert not keys.enabled
    assert keys.check(None, write=False) == keys.check(None, write=True) == 200


def test_read_keys_guard_every_route():
    keys = Keys(["r"], [])
    assert keys.check(None, write=False) == 401
    assert keys.check("Bearer nope", write=False) == 401
    assert keys.check("Basic r", write=False) == 401
    assert keys.check("Bearer r", write=False) == 200
    assert keys.check("bearer  r ", write=True) == 200     # no write keys: a read key writes


def test_write_keys_guard_writes_and_also_read():
    keys = Keys(["r"], ["w"])
    assert keys.check("Bearer r", write=True) == 403
    assert keys.check("Bearer w", write=True) == 200
    assert keys.check("Bearer w", write=False) == 200
    assert keys.check("Bearer x", write=True) == 401


def test_write_keys_alone_leave_reads_open():
    keys = Keys([], ["w"])
    assert keys.check(None, write=False) == 200
    assert keys.check(None, write=True) == 401


def test_keys_come_from_config_and_environment():
    keys = Keys.from_config(HubConfig(api_keys=["a"]), {"CHAJA_API_KEYS": "b, c", "CHAJA_WRITE_KEYS": "w"})
    assert keys.read == ["a", "b", "c"] and keys.write == ["w"]
