"""The service: ``create_app()`` builds the Flask application and registers both faces side
by side, the JSON API (:mod:`costmodel.api`) and the web pages (:mod:`costmodel.web`); neither
face imports the other, and this is the one module that imports both.

Configuration comes from the environment (or the ``config`` mapping, which wins):

- ``DATABASE_URL``: SQLAlchemy URL; a SQLite file ``costmodel.db`` by default, PostgreSQL
  (``postgresql://...``) for several workers or hosts;
- ``COSTMODEL_OPEN_READS``: ``1`` lets price, compare and catalog reads answer without a key
  (``costmodel serve`` opens them on a loopback address); writes always need one;
- ``COSTMODEL_MAX_BODY``: the request body limit in bytes (default 2 MiB; workbook uploads
  may reach the reader's own 20 MiB limit);
- ``COSTMODEL_KEY_CACHE_SECONDS`` (``KEY_CACHE_SECONDS``): how long a worker's reads trust a
  key it verified (default 2; writes and key management always ask the database: see
  :mod:`costmodel.api.auth`);
- ``COSTMODEL_DRAIN_MAX`` (32 MiB) and ``COSTMODEL_DRAIN_SECONDS`` (5): what is left of a
  body the service answered without reading (a refusal) is read and dropped, up to that many
  bytes within that time, so that nginx never sees a refusal as a host failing (see
  :mod:`costmodel.http.drain`);
- limits (see :mod:`costmodel.http.limits`): ``COSTMODEL_RATE_LIMIT`` (``RATE_LIMIT``, default
  ``600/minute`` a key, ``off``), ``REDIS_URL`` (shared counts), ``COSTMODEL_REDIS_PREFIX``,
  ``COSTMODEL_HEAVY_PER_WORKER`` (2), ``COSTMODEL_HEAVY_TOTAL`` (4, with Redis),
  ``COSTMODEL_HEAVY_LEASE`` (300 s), ``COSTMODEL_GRID_MAX_CELLS`` (1,000,000);
- what operators see (docs/operations.md#metrics-logs-and-traces): ``COSTMODEL_METRICS``
  (``off``: no ``/metrics``), ``COSTMODEL_METRICS_ALLOW``, ``COSTMODEL_METRICS_KEY`` (see
  :mod:`costmodel.http.metrics`); ``COSTMODEL_LOG_FORMAT`` (``json``), ``COSTMODEL_LOG_LEVEL``,
  ``COSTMODEL_ACCESS_LOG`` (see :mod:`costmodel.http.logs`); ``OTEL_*`` (see
  :mod:`costmodel.http.traces`).

gunicorn: ``gunicorn 'costmodel.server:create_app()'``.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, date, datetime
from importlib import resources
from typing import Any

from flask import Flask, Response, abort, json, render_template, send_file
from flask.json.provider import DefaultJSONProvider

from . import __version__
from .api import chargeback as _chargeback  # noqa: F401  (registers /chargeback on pricing)
from .api import feed as _feed  # noqa: F401  (registers /feed.csv and /feed.json on pricing)
from .api.auth import EXTENSION as KEYS
from .api.auth import KEY_CACHE_SECONDS, VerifiedKeys
from .api.openapi import build_spec
from .api.routes import catalog, keys, pricing, scenarios
from .app.services import Services
from .http import limits, logs, metrics, security, traces
from .http.drain import DrainBody, drain_from_env
from .http.errors import register_error_handlers
from .http.services import install
from .resources import templates_dir
from .web import blueprint as web_pages

__all__ = ["create_app", "open_reads_from_env", "metrics"]

TEMPLATES = templates_dir()  # packaged with the wheel (costmodel.templates)


def open_reads_from_env() -> bool:
    """``COSTMODEL_OPEN_READS`` as a flag (1, true, yes, on)."""
    return os.environ.get("COSTMODEL_OPEN_READS", "0").strip().lower() in (
        "1", "true", "yes", "on")


class _JSON(DefaultJSONProvider):
    """ISO 8601 times (RFC 3339), as the OpenAPI ``date-time`` format says; no sorting;
    no NaN (the engine answers null where it has no value)."""
    sort_keys = False

    @staticmethod
    def default(o: Any) -> Any:
        if isinstance(o, datetime):
            # stored in UTC; SQLite hands times back without their zone
            return (o if o.tzinfo else o.replace(tzinfo=UTC)).isoformat()
        if isinstance(o, date):
            return o.isoformat()
        return DefaultJSONProvider.default(o)

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        # a non-finite number is no JSON (Python writes Infinity, which strict parsers
        # refuse): a ValueError, so a 500, which shows the input bound that let it through
        kwargs.setdefault("allow_nan", False)
        return super().dumps(obj, **kwargs)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    config = dict(config or {})
    app = Flask(__name__, template_folder=str(TEMPLATES))
    app.json = _JSON(app)  # this app's JSON, not every Flask app's in the process
    app.config.update(
        DATABASE_URL=os.environ.get("DATABASE_URL"),
        OPEN_READS=open_reads_from_env(),
        MAX_CONTENT_LENGTH=int(os.environ.get("COSTMODEL_MAX_BODY", 2 * 2**20)),
        KEY_CACHE_SECONDS=float(os.environ.get("COSTMODEL_KEY_CACHE_SECONDS",
                                               KEY_CACHE_SECONDS)),
        METRICS=metrics.enabled_from_env(),
        LOG_FORMAT=logs.log_format_from_env(),
        **limits.config_from_env(),
    )
    app.config["DRAIN_MAX"], app.config["DRAIN_SECONDS"] = drain_from_env(os.environ)
    app.config.update(config)
    services = Services(app.config["DATABASE_URL"])  # handed to both faces, once
    install(app, services)
    logs.install(app)  # first: the request's id is known to every hook after it
    metrics.install(app)
    app.extensions[KEYS] = VerifiedKeys(app.config["KEY_CACHE_SECONDS"])
    limits.install(app)
    security.install(app)
    register_error_handlers(app)
    # a refusal reads what the client sent before it answers (a dead host to nginx otherwise)
    app.wsgi_app = DrainBody(app.wsgi_app, app.config["DRAIN_MAX"],  # type: ignore[method-assign]
                             app.config["DRAIN_SECONDS"])
    for bp in (pricing, catalog, scenarios, keys, web_pages):
        app.register_blueprint(bp)
    traces.install(app)  # off unless OTEL_TRACES_EXPORTER asks for it
    app.jinja_env.globals["version"] = __version__
    spec = build_spec()

    @app.get("/healthz")
    def healthz() -> Response:
        # unreachable: 503 (nothing answers). Unwritable (disk full, read-only): 200 and
        # "degraded", since reads and prices still answer; a balancer that took every host
        # out over one full disk or a read-only database would stop those too.
        state = services.health()
        body = {"status": "ok" if state["database"] == "ok" else "degraded", **state,
                "version": __version__}
        return Response(json.dumps(body), status=503 if state["database"] == "unreachable"
                        else 200, mimetype="application/json")

    @app.get("/api/v1/openapi.json")
    def openapi() -> Response:
        return Response(json.dumps(spec), mimetype="application/json")

    @app.get("/api/v1/docs")
    def docs() -> Response:
        return Response(render_template("docs.html", version=__version__),
                        mimetype="text/html",
                        headers={"Content-Security-Policy": security.DOCS_CSP})

    @app.get("/api/v1/docs/assets/<name>")
    def docs_asset(name: str):
        # Swagger UI shipped in a Python package: the docs page works without a network
        # (its start-up script and note style are the pages' assets: docs.js, docs.css)
        allowed = {"swagger-ui.css": "css", "swagger-ui-bundle.js": "js",
                   "swagger-ui-standalone-preset.js": "js"}
        if name not in allowed:
            abort(404)
        root = resources.files("flask_openapi3_swagger") / "templates" / "swagger"
        return send_file(root / allowed[name] / name, max_age=86400)

    return app
