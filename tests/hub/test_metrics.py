"""The Prometheus text the hub exports (:mod:`chaja.hub.metrics`)."""
import re

from chaja.hub.metrics import Metrics, TimedEncoder

from hubs import READ_KEY
from raw import call


def test_counters_histograms_and_gauges_render():
    m = Metrics()
    m.request("/v1/search", "POST", 200, 0.004)
    m.request("/v1/search", "POST", 200, 0.2)
    m.request("/v1/search", "POST", 422, 0.001)
    m.gauge("chaja_store_chunks", "chunks", lambda: 12)
    m.gauge("chaja_broken", "a gauge that fails is left out", lambda: 1 / 0)
    text = m.render()
    assert 'chaja_requests_total{route="/v1/search",method="POST",status="200"} 2' in text
    assert 'chaja_requests_total{route="/v1/search",method="POST",status="422"} 1' in text
    assert 'chaja_request_seconds_bucket{route="/v1/search",le="0.005"} 2' in text
    assert 'chaja_request_seconds_bucket{route="/v1/search",le="+Inf"} 3' in text
    assert 'chaja_request_seconds_count{route="/v1/search"} 3' in text
    assert re.search(r'chaja_request_seconds_sum\{route="/v1/search"\} 0\.205', text)
    assert "chaja_store_chunks 12" in text and "chaja_broken" not in text
    assert "# TYPE chaja_request_seconds histogram" in text


def test_label_values_are_escaped():
    m = Metrics()
    m.request('/a"b\\c', "GET", 404, 0.0)
    assert 'route="/a\\"b\\\\c"' in m.render()


def test_timed_encoder_reports_each_call():
    class Fake:
        name, dim = "fake", 2

        def encode_queries(self, texts):
            return [[1.0, 0.0]] * len(texts)

        encode_passages = encode_queries

        def token_count(self, text, is_query=False):
            return 7

    m = Metrics()
    enc = TimedEncoder(Fake(), m, "e5")
    assert enc.encode_queries(["a", "b"]) == [[1.0, 0.0]] * 2
    enc.encode_passages(["c"])
    assert enc.token_count("x") == 7 and enc.name == "fake"
    assert 'chaja_encode_seconds_count{encoder="e5"} 2' in m.render()


def test_metrics_count_requests_and_time_them(hub):
    c = hub.client()
    c.search("타이어", 3)
    call(hub.url, "POST", "/v1/search", {"k": 1}, key=READ_KEY)
    text = c.request("GET", "/metrics")
    found = {m: float(v) for m, v in
             (line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))}
    assert found['chaja_requests_total{route="/v1/search",method="POST",status="200"}'] >= 1
    assert found['chaja_requests_total{route="/v1/search",method="POST",status="422"}'] >= 1
    assert found['chaja_request_seconds_count{route="/v1/search"}'] >= 2
    assert found['chaja_encode_seconds_count{encoder="passage+query"}'] >= 1
    assert found["chaja_store_documents"] >= 9
