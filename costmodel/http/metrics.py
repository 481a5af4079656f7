"""The service's figures for Prometheus: ``GET /metrics`` in the Prometheus text format, and the
one module that imports ``prometheus_client`` (the use cases report through the neutral hook
:mod:`costmodel.app.events`; this module listens).

Figures (all ``costmodel_``):

- ``http_requests_total{route, method, status}``: answers, by the URL rule that served them
  (``/api/v1/scenarios/<int:scenario_id>``, never the path asked: a bounded set of labels;
  ``unmatched`` for an address no rule serves);
- ``http_request_duration_seconds{route}``: the time to answer, a histogram;
- ``price_cache_total{result}``: price requests answered from the worker's answer cache
  (``hit``) or computed (``miss``);
- ``limit_refusals_total{limit}``: requests refused by the rate limit (``rate``) or for want
  of a heavy-analysis slot (``heavy``); ``heavy_slots_in_use``: heavy analyses running now,
  summed over the live workers;
- ``store_errors_total{store, kind}``: database errors (``unreachable``, ``unwritable``,
  ``other``) and failed Redis calls (``redis``, ``error``); ``fail_open_total{limit}``:
  requests limited by their worker alone because Redis failed (the limits fail open to each
  worker's own count);
- ``batch_rows_priced_total``: rows of batches priced;
- ``workbook_builds_total{route}`` and ``workbook_build_seconds{route}``: answers that were
  workbooks (.xlsx), and the time each took to build and answer.

Under gunicorn every worker writes its counts to files in ``PROMETHEUS_MULTIPROC_DIR``
(prometheus_client's multiprocess mode) and ``/metrics`` sums them, whichever worker answers;
the folder is made and emptied by the gunicorn configuration (deploy/gunicorn.conf.py and
``costmodel serve``, :func:`prepare_folder`), and a worker that exits is marked dead
(:func:`worker_exited`): its counts stay in the sums, its live gauges leave them. Without the
variable (one process: tests, Flask's own server) the counts are the process's.

Who may read them (docs/operations.md#metrics-logs-and-traces): a request made to the
service's own address (not through nginx: no ``X-Forwarded-For``) from an address of
``COSTMODEL_METRICS_ALLOW`` (addresses or networks, comma-separated; default
``127.0.0.0/8,::1``; ``none``: no address), or any request with ``Authorization: Bearer``
and the key ``COSTMODEL_METRICS_KEY`` (unset: no key). Others are answered 403.
``COSTMODEL_METRICS=off`` turns the figures off (no ``/metrics``, nothing counted).
"""
from __future__ import annotations

import hmac
import ipaddress
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

from ..app import events
from .errors import Problem

__all__ = ["install", "enabled_from_env", "prepare_folder", "worker_exited", "Access",
           "MULTIPROC_ENV", "FIGURES"]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
DEFAULT_ALLOW = "127.0.0.0/8,::1"
EXTENSION = "costmodel.metrics"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# [s] from a cached price (a fraction of a millisecond) to gunicorn's 60 s timeout
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                   5.0, 10.0, 30.0, 60.0)
WORKBOOK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# the figures' names as Prometheus shows them (a counter's with _total): the dashboard's
# test checks every expression names one of these
FIGURES = {
    "costmodel_http_requests_total": "counter",
    "costmodel_http_request_duration_seconds": "histogram",
    "costmodel_price_cache_total": "counter",
    "costmodel_limit_refusals_total": "counter",
    "costmodel_heavy_slots_in_use": "gauge",
    "costmodel_store_errors_total": "counter",
    "costmodel_fail_open_total": "counter",
    "costmodel_batch_rows_priced_total": "counter",
    "costmodel_workbook_builds_total": "counter",
    "costmodel_workbook_build_seconds": "histogram",
}


def enabled_from_env() -> bool:
    """``COSTMODEL_METRICS``: on unless ``off`` (0, false, no)."""
    return os.environ.get("COSTMODEL_METRICS", "on").strip().lower() not in (
        "off", "0", "false", "no")


# ---- the folder of the workers' counts (gunicorn's master) -------------------------------------

def prepare_folder(environ: Any = os.environ) -> tuple[str, bool]:
    """The folder the workers write their counts to: ``PROMETHEUS_MULTIPROC_DIR`` emptied of
    an earlier run's files, or a new temporary one, set in ``environ`` for the workers to
    inherit. Returns (folder, made here: to remove at exit). Called by gunicorn's master
    before the workers start (a count left from an earlier run would be added to this
    one's)."""
    folder = environ.get(MULTIPROC_ENV)
    if folder:
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
        return str(path), False
    folder = tempfile.mkdtemp(prefix="costmodel-metrics-")
    environ[MULTIPROC_ENV] = folder
    return folder, True


def remove_folder(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def worker_exited(pid: int) -> None:
    """gunicorn's ``child_exit``: the worker ``pid`` is gone. Its counters stay in the sums (a
    count made is never lost); its live gauges (heavy slots in use) leave them."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(pid)


# ---- the instruments ----------------------------------------------------------------------------

class _Figures:
    """The instruments, made once a process (prometheus_client refuses a name twice)."""

    def __init__(self) -> None:
        from prometheus_client import (
            CollectorRegistry,
            Counter,
            Gauge,
            Histogram,
            disable_created_metrics,
        )
        disable_created_metrics()  # a _created series beside each figure: noise to a scrape
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        # one process: a registry of our own (not the library's global one, with its
        # process and platform figures); several: none, /metrics reads the workers' files
        self.registry = None if self.multiprocess else CollectorRegistry()
        r = {"registry": self.registry}
        self.requests = Counter("costmodel_http_requests", "HTTP answers by URL rule, method "
                                "and status", ["route", "method", "status"], **r)
        self.latency = Histogram("costmodel_http_request_duration_seconds", "Time to answer "
                                 "a request [s], by URL rule", ["route"],
                                 buckets=LATENCY_BUCKETS, **r)
        self.cache = Counter("costmodel_price_cache", "Price requests answered from the "
                             "worker's answer cache (hit) or computed (miss)", ["result"], **r)
        self.refusals = Counter("costmodel_limit_refusals", "Requests refused by a limit "
                                "(rate: the rate limit; heavy: no heavy-analysis slot free)",
                                ["limit"], **r)
        self.heavy = Gauge("costmodel_heavy_slots_in_use", "Heavy analyses running now",
                           multiprocess_mode="livesum", **r)
        self.store_errors = Counter("costmodel_store_errors", "Database errors (unreachable, "
                                    "unwritable, other) and failed Redis calls",
                                    ["store", "kind"], **r)
        self.fail_open = Counter("costmodel_fail_open", "Requests limited by their worker "
                                 "alone because Redis failed (rate, heavy)", ["limit"], **r)
        self.batch_rows = Counter("costmodel_batch_rows_priced", "Rows of batches priced", **r)
        self.workbooks = Counter("costmodel_workbook_builds", "Answers that were workbooks "
                                 "(.xlsx), by URL rule", ["route"], **r)
        self.workbook_seconds = Histogram("costmodel_workbook_build_seconds", "Time to build "
                                          "and answer a workbook [s]", ["route"],
                                          buckets=WORKBOOK_BUCKETS, **r)
        # the children of each label set, made once (labels() costs a lock and a lookup)
        self._answers: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._children: dict[tuple[str, str], Any] = {}

    def answered(self, route: str, method: str, status: int, seconds: float) -> None:
        if method not in _METHODS:  # any word may be sent as a method: a bounded set
            method = "other"
        key = (route, method, status)
        pair = self._answers.get(key)
        if pair is None:
            pair = self._answers[key] = (self.requests.labels(route, method, str(status)),
                                         self.latency.labels(route))
        pair[0].inc()
        pair[1].observe(seconds)

    def workbook(self, route: str, seconds: float) -> None:
        self.workbooks.labels(route).inc()
        self.workbook_seconds.labels(route).observe(seconds)

    def child(self, metric: Any, *labels: str) -> Any:
        key = (metric._name, *labels)
        found = self._children.get(key)  # type: ignore[arg-type]
        if found is None:
            found = self._children[key] = metric.labels(*labels)  # type: ignore[index]
        return found

    def event(self, event: str, value: float, label: str) -> None:
        """The listener of :mod:`costmodel.app.events`."""
        if event == "price_cache":
            self.child(self.cache, label).inc(value)
        elif event == "batch_rows":
            self.batch_rows.inc(value)
        elif event == "heavy_slot":
            self.heavy.inc(value)
        elif event == "limit_refused":
            self.child(self.refusals, label).inc(value)
        elif event == "store_error":
            self.child(self.store_errors, "database", label).inc(value)
        elif event == "redis_error":
            self.child(self.store_errors, "redis", "error").inc(value)
        elif event == "fail_open":
            self.child(self.fail_open, label).inc(value)

    def exposition(self) -> bytes:
        from prometheus_client import CollectorRegistry, generate_latest
        if not self.multiprocess:
            return generate_latest(self.registry)
        from prometheus_client import multiprocess
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)


_FIGURES: _Figures | None = None


def figures() -> _Figures:
    """This process's instruments (made on first use)."""
    global _FIGURES
    if _FIGURES is None:
        _FIGURES = _Figures()
    return _FIGURES


# ---- who may read them --------------------------------------------------------------------------

class Access:
    """Who may read ``/metrics``: direct requests from ``allow`` (networks), or any request
    bearing ``key``."""

    def __init__(self, allow: str | None = None, key: str | None = None):
        text = DEFAULT_ALLOW if allow is None else allow
        self.allow = [] if text.strip().lower() in ("", "none", "off") else [
            ipaddress.ip_network(part.strip(), strict=False)
            for part in text.split(",") if part.strip()]
        self.key = (key or "").strip() or None

    @classmethod
    def from_env(cls) -> Access:
        return cls(os.environ.get("COSTMODEL_METRICS_ALLOW"),
                   os.environ.get("COSTMODEL_METRICS_KEY"))

    def allows(self, remote: str | None, headers: Any) -> bool:
        if self.key is not None:
            given = headers.get("Authorization", "")
            if hmac.compare_digest(given.encode(), f"Bearer {self.key}".encode()):
                return True
        # through a proxy (nginx sets X-Forwarded-For): the proxy's address says nothing of
        # the client's, so an address never opens it
        if not self.allow or not remote or "X-Forwarded-For" in headers \
                or "Forwarded" in headers:
            return False
        try:
            address = ipaddress.ip_address(remote.split("%")[0])
        except ValueError:
            return False
        return any(address in net for net in self.allow)

    def describe(self) -> str:
        where = ", ".join(map(str, self.allow)) or "no address"
        return f"/metrics from {where}" + (" or with the metrics key" if self.key else "")


# ---- the app ------------------------------------------------------------------------------------

def install(app: Flask, access: Access | None = None) -> _Figures | None:
    """Count every answer of ``app``, listen to the app layer's events and serve
    ``/metrics``; nothing when ``METRICS`` is off (``COSTMODEL_METRICS=off``)."""
    if not app.config.get("METRICS", True):
        return None
    figs = figures()
    events.listen(figs.event)
    access = access or Access.from_env()
    app.extensions[EXTENSION] = access
    answered, workbook = figs.answered, figs.workbook
    clock = time.perf_counter

    @app.before_request
    def _started() -> None:
        request.environ["costmodel.t0"] = clock()

    @app.after_request
    def _count(response: Response) -> Response:
        req = request._get_current_object()  # (one proxy lookup, not five)
        started = req.environ.get("costmodel.t0")
        seconds = clock() - started if started is not None else 0.0
        rule = req.url_rule
        route = rule.rule if rule is not None else "unmatched"
        answered(route, req.method, response.status_code, seconds)
        if response.headers.get("Content-Type", "").startswith(XLSX):
            workbook(route, seconds)
        return response

    @app.get("/metrics")
    def metrics() -> Response:
        if not access.allows(request.remote_addr, request.headers):
            raise Problem(403, "Forbidden", "the metrics answer on the service's own address "
                          "to the addresses of COSTMODEL_METRICS_ALLOW, or with the key of "
                          "COSTMODEL_METRICS_KEY (docs/operations.md#metrics-logs-and-traces)")
        from prometheus_client import CONTENT_TYPE_LATEST
        return Response(figs.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST,
                                                    "Cache-Control": "no-store"})

    return figs
