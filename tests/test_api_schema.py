"""Property-based run over the OpenAPI document (schemathesis): generated requests to every
operation, bounded, must never get a server error, and every answer must match the
documented status codes, content types and schemas."""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from costmodel.api import create_app
from costmodel.api.openapi import build_spec
from costmodel.store.repo import key_create

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
OPERATIONS = [(method.upper(), path) for path, ops in build_spec()["paths"].items()
              for method in ops]
EXAMPLES = 25  # per operation: bounded, so the suite stays fast on two cores
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@schemathesis.serializer(XLSX)
def _xlsx_bytes(ctx, value):
    # generated "binary" bodies arrive as bytes or text: send them as they are
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture(scope="module")
def api(database):
    app = create_app({"DATABASE_URL": database, "OPEN_READS": False, "TESTING": True})
    with app.extensions["costmodel"].sessions() as session:
        _, token = key_create(session, "schemathesis", "admin")
    loaded = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    yield loaded, {"Authorization": f"Bearer {token}"}
    app.extensions["costmodel"].dispose()


@pytest.mark.parametrize("method,path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_operation_conforms(api, method, path):
    schema, headers = api
    operation = schema[path][method]

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def run(case):
        case.call_and_validate(checks=CHECKS, headers=headers)

    run()
