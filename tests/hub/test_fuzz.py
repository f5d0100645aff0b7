"""Schema-driven fuzzing: schemathesis generates requests from the hub's own
/openapi.json (valid and invalid bodies, odd strings, boundaries); no answer may be
a 5xx, and every answer must be one the document declares for its route, with the
body and content type it declares (422's ``detail`` a list or a sentence, the other
errors a sentence). A hub of its own, since fuzzed writes and prunes change the
store; the shared hub (which has keys) is fuzzed without a key and with a read key,
which change nothing, for the 401 and 403 answers."""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is in the dev extra")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from hubs import READ_KEY, start_hub, stop_hub  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def fuzzed_hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    running = start_hub(root / "fuzz.chaja", root / "fuzz.log", ["hub.max_batch=5", "hub.max_inputs=8",
                                                                  "hub.body_timeout_s=5", "search.reranker=e5-windows",
                                                                  "rerank.depth=0"])
    running.client(None).add_documents([{"id": "seed", "title": "씨앗", "text": "퍼징을 위한 첫 문서 seed"}])
    yield running
    stop_hub(running)


def _fuzz(schema, examples: int, headers: dict | None = None,
          modes=(GenerationMode.POSITIVE, GenerationMode.NEGATIVE)) -> list[tuple[str, str, int]]:
    """Every operation of ``schema``, ``examples`` cases each, requests that fit the
    schema and requests that do not; (method, path, status) of each."""
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    seen: list[tuple[str, str, int]] = []

    for operation, mode in ((o, m) for o in operations for m in modes):
        @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(operation.as_strategy(mode))
        def fuzz(case):
            response = case.call(timeout=60, headers=headers)
            seen.append((case.method, case.path, response.status_code))
            assert response.status_code < 500, (case.method, case.path, case.body, response.text[:500])
            kind = response.headers.get("content-type") or [""]
            kind = kind[0] if isinstance(kind, list) else kind
            assert kind.startswith(("application/json", "text/plain")), (case.method, case.path, kind)
            case.validate_response(response, checks=CHECKS, headers=headers)
        try:
            fuzz()
        except Unsatisfiable:
            assert mode == GenerationMode.NEGATIVE      # a route without parameters has no wrong request
    return seen


def test_every_answer_is_one_the_schema_declares(fuzzed_hub):
    schema = schemathesis.openapi.from_url(fuzzed_hub.url + "/openapi.json")
    statuses = {status for _, _, status in _fuzz(schema, 20)}      # about 400 requests
    assert 200 in statuses and 422 in statuses        # the fuzzing reached both sides of validation


def test_answers_without_a_key_or_with_a_read_key_are_declared(hub):
    spec = hub.client().request("GET", "/openapi.json")
    schema = schemathesis.openapi.from_dict(spec)
    schema.config.update(base_url=hub.url)
    refused = {status for _, _, status in _fuzz(schema, 3, modes=[GenerationMode.POSITIVE])}
    assert refused >= {401}
    read = {(m, status) for m, _, status in _fuzz(schema, 3, {"Authorization": f"Bearer {READ_KEY}"})}
    assert ("DELETE", 403) in read and ("GET", 200) in read
