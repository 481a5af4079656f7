"""Optional OpenTelemetry traces of the service: off by default; on with the standard
environment, ``OTEL_TRACES_EXPORTER`` naming an exporter (``console``, or ``otlp`` with
``OTEL_EXPORTER_OTLP_ENDPOINT``...), ``OTEL_SERVICE_NAME`` (default ``costmodel``) and the
rest of ``OTEL_*`` as the SDK reads them; ``OTEL_SDK_DISABLED=true`` turns them off again.

Each request is a span of the OpenTelemetry Flask instrumentation (named by its URL rule), with
the request's id (``costmodel.request_id``) as an attribute, so a trace is found from a log
line. The packages are the optional extra ``costmodel[otel]`` (opentelemetry-sdk,
opentelemetry-instrumentation-flask, the OTLP exporter): traces asked for without them, or with
an exporter that is not installed, are a warning in the log, and the service runs without
traces.
"""
from __future__ import annotations

import logging
import os
from typing import Any

__all__ = ["install", "wanted", "EXTENSION"]

log = logging.getLogger("costmodel.traces")
EXTENSION = "costmodel.traces"
_INSTALL_HINT = "pip install 'costmodel[otel]'"


def wanted(environ: Any = os.environ) -> list[str]:
    """The exporters the environment asks for (empty: traces off)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",")]
    return [n for n in names if n and n != "none"]


def _exporters(names: list[str]) -> list[Any]:
    """Each named exporter, made from the SDK's entry points (what the SDK's own
    configuration reads); a warning for a name none provides."""
    from importlib.metadata import entry_points
    found = []
    for name in names:
        points = list(entry_points(group="opentelemetry_traces_exporter", name=name))
        if not points:
            log.warning("traces: no exporter %r is installed (OTEL_TRACES_EXPORTER); %s "
                        "brings otlp; the SDK brings console", name, _INSTALL_HINT)
            continue
        found.append(points[0].load()())
    return found


def install(app: Any, *, exporters: list[Any] | None = None) -> Any:
    """Trace ``app``'s requests when the environment asks for it (or to ``exporters``, given:
    a test's in-memory exporter); the tracer provider, or None when traces are off."""
    names = wanted()
    if exporters is None and not names:
        return None
    try:
        from opentelemetry.instrumentation.flask import FlaskInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError as exc:
        log.warning("traces: OTEL_TRACES_EXPORTER=%s asks for traces, but OpenTelemetry is "
                    "not installed (%s): %s; the service runs without traces",
                    ",".join(names), exc.name, _INSTALL_HINT)
        return None
    if exporters is None:
        exporters = _exporters(names)
        if not exporters:
            return None
        processor = BatchSpanProcessor  # off the request's path, in batches
    else:
        processor = SimpleSpanProcessor  # a test reads its spans at once
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are read by Resource.create
    service = os.environ.get("OTEL_SERVICE_NAME") or "costmodel"
    from .. import __version__
    provider = TracerProvider(resource=Resource.create({
        "service.name": service, "service.version": __version__}))
    for exporter in exporters:
        provider.add_span_processor(processor(exporter))

    def request_hook(span: Any, environ: dict[str, Any]) -> None:
        if span is not None and span.is_recording():
            from .logs import request_id
            rid = request_id()
            if rid:
                span.set_attribute("costmodel.request_id", rid)

    FlaskInstrumentor().instrument_app(app, tracer_provider=provider,
                                       request_hook=request_hook,
                                       excluded_urls="/metrics,/healthz")
    app.extensions[EXTENSION] = provider
    return provider
