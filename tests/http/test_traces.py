"""OpenTelemetry traces (costmodel/http/traces.py): off by default; with OTEL_TRACES_EXPORTER a
span a request, named by its URL rule, carrying the request's id; asked for but not installed:
a warning and no traces, never a failure to start."""
from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.instrumentation.flask")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from costmodel.http import traces
from costmodel.server import create_app

API = "/api/v1"


def _app(db):
    return create_app({"DATABASE_URL": db, "TESTING": True, "OPEN_READS": True})


@pytest.fixture
def no_otel(monkeypatch):
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_off_by_default(db, no_otel):
    application = _app(db)
    assert traces.EXTENSION not in application.extensions
    assert traces.wanted({}) == []
    assert traces.wanted({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert traces.wanted({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}) == []
    assert traces.wanted({"OTEL_TRACES_EXPORTER": "otlp,console"}) == ["otlp", "console"]
    application.extensions["costmodel"].dispose()


def test_a_span_a_request_named_by_its_rule_with_the_request_id(db, no_otel):
    application = create_app({"DATABASE_URL": db, "TESTING": True, "OPEN_READS": True})
    exporter = InMemorySpanExporter()
    # the same installation as the environment's, to an in-memory exporter
    provider = traces.install(application, exporters=[exporter])
    assert provider is not None
    client = application.test_client()
    r = client.get(f"{API}/accelerators/gb300", headers={"X-Request-ID": "trace-me-1"})
    assert r.status_code == 200
    missing = client.get(f"{API}/accelerators/nope")
    assert missing.status_code == 404
    client.get("/metrics")  # not traced (scrapes every few seconds)
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["GET /api/v1/accelerators/<path:key>"] * 2
    first, second = spans
    assert first.attributes["costmodel.request_id"] == "trace-me-1"
    assert second.attributes["costmodel.request_id"] == missing.headers["X-Request-ID"]
    statuses = [s.attributes.get("http.response.status_code",
                                 s.attributes.get("http.status_code")) for s in spans]
    assert statuses == [200, 404]
    assert first.resource.attributes["service.name"] == "costmodel"
    application.extensions["costmodel"].dispose()


def test_the_environment_turns_them_on_with_the_console_exporter(db, no_otel):
    # a process of its own: the console exporter writes to the stdout it was imported with
    import os
    import subprocess
    code = ("from costmodel.server import create_app\n"
            f"app = create_app({{'DATABASE_URL': {db!r}, 'TESTING': True, 'OPEN_READS': True}})\n"
            "app.test_client().get('/api/v1/accelerators/gb300', "
            "headers={'X-Request-ID': 'console-1'})\n"
            "app.extensions['costmodel.traces'].force_flush()\n")
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "console",
           "OTEL_SERVICE_NAME": "costmodel-test-host"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    span = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert span["name"] == "GET /api/v1/accelerators/<path:key>"
    assert span["attributes"]["costmodel.request_id"] == "console-1"
    assert span["resource"]["attributes"]["service.name"] == "costmodel-test-host"


def test_an_exporter_not_installed_is_a_warning_not_a_failure(db, no_otel, caplog):
    no_otel.setenv("OTEL_TRACES_EXPORTER", "no-such-exporter")
    application = _app(db)
    assert traces.EXTENSION not in application.extensions
    assert application.test_client().get("/healthz").status_code == 200
    assert any("no exporter 'no-such-exporter' is installed" in r.getMessage()
               and "costmodel[otel]" in r.getMessage() for r in caplog.records)
    application.extensions["costmodel"].dispose()


def test_opentelemetry_not_installed_is_a_warning_not_a_failure(db, no_otel, caplog):
    no_otel.setenv("OTEL_TRACES_EXPORTER", "otlp")
    # as if the extra were not installed: the import fails
    no_otel.setitem(sys.modules, "opentelemetry.instrumentation.flask", None)
    application = _app(db)
    assert traces.EXTENSION not in application.extensions
    assert application.test_client().get("/healthz").status_code == 200
    assert any("OpenTelemetry is not installed" in r.getMessage()
               and "pip install 'costmodel[otel]'" in r.getMessage() for r in caplog.records)
    application.extensions["costmodel"].dispose()
