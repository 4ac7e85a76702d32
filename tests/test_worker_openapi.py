"""The OpenAPI document matches the real routes, and a property-based run against the live
worker finds no 5xx and no response that violates it."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.routing import Route

from claude_mem.worker.api import openapi
from claude_mem.worker.app import create_app
from claude_mem.worker.routes import ENDPOINTS
from tests.worker_fixtures import RunningWorker

DOCUMENT = openapi(ENDPOINTS)
schema = schemathesis.openapi.from_dict(DOCUMENT)


def test_document_lists_exactly_the_routes_the_app_serves() -> None:
    app = create_app()
    served = set()
    for route in app.routes:
        assert isinstance(route, Route)
        for method in route.methods or ():
            if method != "HEAD":
                path = route.path.replace(":int", "")
                served.add((method.lower(), path))
    documented = {(method, path) for path, ops in DOCUMENT["paths"].items() for method in ops}
    assert served == documented


def test_every_reference_resolves() -> None:
    import json

    text = json.dumps(DOCUMENT)
    names = set(DOCUMENT["components"]["schemas"])
    for ref in set(part.split('"')[0] for part in text.split("#/components/schemas/")[1:]):
        assert ref in names


def test_served_document_equals_generated(worker: RunningWorker) -> None:
    assert worker.client.get("/api/openapi.json").json() == DOCUMENT


# The stream never ends and shutdown ends the server: both are tested on their own.
@schema.exclude(path="/api/stream").exclude(path="/api/admin/shutdown").parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_conforms_to_its_document(case: schemathesis.Case, worker: RunningWorker) -> None:
    response = case.call(base_url=worker.base, headers={"x-claude-mem-token": worker.state.token})
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
