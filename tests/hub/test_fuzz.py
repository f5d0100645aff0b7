"""Schema-driven fuzzing: schemathesis generates requests from the hub's own
/openapi.json (valid and invalid bodies, odd strings, boundaries) and no answer
may be a 5xx. A hub of its own, since fuzzed writes and prunes change the store."""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is in the dev extra")
from hypothesis import HealthCheck, given, settings  # noqa: E402

from hubs import start_hub, stop_hub  # noqa: E402


@pytest.fixture(scope="module")
def fuzzed_hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    running = start_hub(root / "fuzz.chaja", root / "fuzz.log", ["hub.max_batch=5", "hub.max_inputs=8",
                                                                  "hub.body_timeout_s=5"])
    running.client(None).add_documents([{"id": "seed", "title": "씨앗", "text": "퍼징을 위한 첫 문서 seed"}])
    yield running
    stop_hub(running)


def test_no_request_gets_a_server_error(fuzzed_hub):
    schema = schemathesis.openapi.from_url(fuzzed_hub.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    seen: list[tuple[str, str, int]] = []

    for operation in operations:
        @settings(max_examples=30, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(operation.as_strategy())
        def fuzz(case):
            response = case.call(timeout=60)
            seen.append((case.method, case.path, response.status_code))
            assert response.status_code < 500, (case.method, case.path, case.body, response.text[:500])
            kind = response.headers.get("content-type") or [""]
            kind = kind[0] if isinstance(kind, list) else kind
            assert kind.startswith(("application/json", "text/plain")), (case.method, case.path, kind)
        fuzz()
    statuses = {status for _, _, status in seen}
    assert 200 in statuses and 422 in statuses        # the fuzzing reached both sides of validation
