"""Limits: requests per API key, and heavy analyses at once, per worker and in total.

The rules (docs/pricing-tools.md#limits says the same):

- **Rate**: ``RATE_LIMIT`` requests (``COSTMODEL_RATE_LIMIT``, e.g. ``600/minute``; default
  ``600/minute``; ``off`` turns it off; a Flask ``TESTING`` app without one set is off) per API
  key, anonymous reads per client address, over every ``/api/v1`` operation (not
  ``/healthz``, the OpenAPI document or the docs). A fixed window opens at a caller's first
  request and lasts the period; past the limit the answer is 429 ``application/problem+json``
  with ``Retry-After`` (seconds until the window closes). Requests refused for their key (401)
  are not counted: they never reach the limiter.
- **Shared or not**: with ``REDIS_URL`` the counts live in Redis (one atomic script a request),
  so they hold across workers and hosts; without it each worker counts alone, which is exact
  for one ``costmodel serve`` worker and at most ``workers x limit`` otherwise.
- **Heavy analyses** (``HEAVY``: the sensitivity analyses, workbooks, repricing an upload,
  quote comparison and decision) take a slot for as long as they run: at most
  ``HEAVY_PER_WORKER`` at once in a worker (``COSTMODEL_HEAVY_PER_WORKER``, default 2) and,
  with Redis, at most ``HEAVY_TOTAL`` at once across every worker and host
  (``COSTMODEL_HEAVY_TOTAL``, default 4; ``0`` = no total). A request finding no free slot
  is answered 429 at once, with ``Retry-After: 2``; it never waits. A slot in Redis is a
  lease that expires after ``HEAVY_LEASE`` seconds (default 300) should its worker die
  without releasing it.
- **Grid size**: the API answers a grid of at most ``GRID_MAX_CELLS`` cells
  (``COSTMODEL_GRID_MAX_CELLS``, default 1,000,000, about 100 MB and 1 s of one worker); a
  larger one is refused with 422 before it takes a slot. (The command line keeps the
  engine's own 10,000,000.)
- **Redis unreachable**: the limits fall back to each worker's own (the rate counted in the
  worker, the heavy bound per worker only) and a warning is logged; Redis is tried again
  after ``REDIS_RETRY_SECONDS`` (5 s). The service keeps answering: an outage of the limiter's
  store neither stops the pricing service nor lifts every limit.

Every answer of a limited operation carries ``RateLimit-Policy`` and ``RateLimit`` (IETF
draft-ietf-httpapi-ratelimit-headers: ``"per-key";q=600;w=60`` and ``"per-key";r=599;t=60``)
and the older ``RateLimit-Limit``, ``RateLimit-Remaining``, ``RateLimit-Reset``.

The web pages that compute follow the same rule as their API twins (:meth:`Limits.work`,
applied by :mod:`costmodel.web.guard`): the same count per key (or per address for an
anonymous read), the same heavy slots; how much one request may ask for is stated once, in
:mod:`costmodel.app.caps`.

Everything lives in the app (``app.extensions["costmodel.limits"]``); nothing is global.
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, g, request
from werkzeug.datastructures import Headers

from ..app.events import emit
from ..decisions.sensitivity.ranges import DEFAULT_POINTS, parse_axis
from ..model.errors import InputError
from .errors import Problem

__all__ = ["Limits", "Rate", "install", "current_limits", "config_from_env", "HEAVY", "GRID",
           "DEFAULT_RATE"]

log = logging.getLogger("costmodel.api")

EXTENSION = "costmodel.limits"
DEFAULT_RATE = "600/minute"
HEAVY_RETRY_AFTER = 2  # seconds: about the time a heavy analysis at its limits takes
POLICY = "per-key"

# (method, OpenAPI path) of the operations that take a heavy slot
HEAVY = frozenset({
    ("POST", "/api/v1/sensitivity/grid"),
    ("POST", "/api/v1/sensitivity/montecarlo"),
    ("POST", "/api/v1/sensitivity/tornado"),
    ("POST", "/api/v1/workbook"),
    ("POST", "/api/v1/workbook/reprice"),
    ("GET", "/api/v1/scenarios/{scenario_id}/workbook"),
    ("POST", "/api/v1/quotes/compare"),
    ("POST", "/api/v1/quotes/decide"),
    ("POST", "/api/v1/chargeback"),
})
GRID = ("POST", "/api/v1/sensitivity/grid")

_PERIODS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60,
            "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d*)\s*([a-z]+?)s?\s*")


@dataclass(frozen=True)
class Rate:
    """``limit`` requests a ``window`` of seconds."""
    limit: int
    window: int

    @classmethod
    def parse(cls, text: str | None) -> Rate | None:
        """``"600/minute"``, ``"10/second"``, ``"5000/hour"``, ``"100/10s"`` -> Rate;
        ``"off"`` (or ``0``, ``none``, empty) -> None. Anything else is a ValueError."""
        if text is None or str(text).strip().lower() in ("", "0", "off", "none", "false"):
            return None
        m = _RATE.fullmatch(str(text).lower())
        if not m or m.group(3) not in _PERIODS or int(m.group(1)) < 1 \
                or m.group(2) == "0":
            raise ValueError(f"rate limit {text!r}: expected N/PERIOD, e.g. 600/minute, "
                             f"10/second, 100/10s, or off")
        return cls(int(m.group(1)), int(m.group(2) or 1) * _PERIODS[m.group(3)])

    def __str__(self) -> str:
        return f"{self.limit}/{self.window}s"


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw is None or not raw.strip() else int(raw)


def config_from_env() -> dict[str, Any]:
    """The limits' configuration keys with the environment's values (``create_app``'s
    defaults; its ``config`` mapping wins)."""
    return {
        "RATE_LIMIT": os.environ.get("COSTMODEL_RATE_LIMIT"),  # None: the default rule
        "REDIS_URL": os.environ.get("REDIS_URL") or None,
        "REDIS_PREFIX": os.environ.get("COSTMODEL_REDIS_PREFIX", "costmodel:"),
        "HEAVY_PER_WORKER": _int_env("COSTMODEL_HEAVY_PER_WORKER", 2),
        "HEAVY_TOTAL": _int_env("COSTMODEL_HEAVY_TOTAL", 4),
        "HEAVY_LEASE": _int_env("COSTMODEL_HEAVY_LEASE", 300),
        "GRID_MAX_CELLS": _int_env("COSTMODEL_GRID_MAX_CELLS", 1_000_000),
        "REDIS_RETRY_SECONDS": 5.0,
    }


# ---- the counters -----------------------------------------------------------------------------

class MemoryCounter:
    """Fixed windows in this process: (count, seconds until the window closes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[int, float]] = {}
        self._prune_at = 10_000

    def hit(self, key: str, window: float) -> tuple[int, float]:
        now = time.monotonic()
        with self._lock:
            n, closes = self._windows.get(key, (0, 0.0))
            if closes <= now:
                n, closes = 0, now + window
            self._windows[key] = (n + 1, closes)
            if len(self._windows) > self._prune_at:  # forget closed windows now and then
                self._windows = {k: v for k, v in self._windows.items() if v[1] > now}
                self._prune_at = max(10_000, 2 * len(self._windows))
        return n + 1, closes - now


# INCR the caller's window; the first request of a window gives it its expiry. The TTL is the
# time until the window closes. (Redis's own clock: hosts need not agree on the time.)
_RATE_SCRIPT = """
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
"""

# A heavy slot is a lease in a sorted set scored by its expiry [ms]: expired leases (a worker
# that died holding one) are dropped before counting.
_ACQUIRE_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""


class _Redis:
    """The shared store, opened lazily in each process (never across gunicorn's fork), and
    set aside for ``retry`` seconds after a failure."""

    def __init__(self, url: str, prefix: str, retry: float):
        self.url, self.prefix, self.retry = url, prefix, retry
        self._pid: int | None = None
        self._client: Any = None
        self._scripts: dict[str, Any] = {}
        self._down_until = 0.0
        self._lock = threading.Lock()

    def _open(self) -> Any:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # a Redis that does not answer costs one request 0.25 s, then is set aside (retry)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.25,
                                      socket_timeout=0.25, retry=Retry(NoBackoff(), 0),
                                      health_check_interval=30)
        self._scripts = {"rate": client.register_script(_RATE_SCRIPT),
                         "acquire": client.register_script(_ACQUIRE_SCRIPT)}
        return client

    def available(self) -> bool:
        return time.monotonic() >= self._down_until

    def call(self, what: str, keys: list[str], args: list[Any]) -> Any:
        """Run a script; raises ``redis.RedisError`` (and marks the store down) on failure."""
        import redis
        with self._lock:
            if self._client is None or self._pid != os.getpid():
                self._client, self._pid = self._open(), os.getpid()
            script = self._scripts[what]
        try:
            out = script(keys=keys, args=args)
        except redis.RedisError as exc:
            self.failed(exc)
            raise
        if self._down_until:
            log.warning("limits: Redis at %s answers again; limits are shared again",
                        _redact(self.url))
            self._down_until = 0.0
        return out

    def release(self, member: str) -> None:
        import redis
        try:
            self._client.zrem(self.prefix + "heavy", member)
        except redis.RedisError as exc:  # the lease expires by itself
            self.failed(exc)

    def failed(self, exc: Exception) -> None:
        emit("redis_error")
        if self.available():
            log.warning("limits: Redis at %s failed (%s); each worker limits on its own "
                        "for %.0f s", _redact(self.url), exc, self.retry)
        self._down_until = time.monotonic() + self.retry


def _redact(url: str) -> str:
    return re.sub(r"//[^@/]*@", "//***@", url)


# ---- the limits -------------------------------------------------------------------------------

class Limits:
    """One app's limits: its rate, heavy slots and grid size."""

    def __init__(self, config: Mapping[str, Any]):
        rate = config.get("RATE_LIMIT")
        if rate is None:
            rate = "off" if config.get("TESTING") else DEFAULT_RATE
        self.rate = Rate.parse(rate)
        self._constant: tuple[Any, str, str] | None = None  # (rate, policy, limit) headers
        self.per_worker = int(config.get("HEAVY_PER_WORKER") or 0)
        self.total = int(config.get("HEAVY_TOTAL") or 0)
        self.lease_ms = int(float(config.get("HEAVY_LEASE", 300)) * 1000)
        self.grid_max_cells = int(config.get("GRID_MAX_CELLS") or 0)
        self._slots = threading.BoundedSemaphore(self.per_worker) if self.per_worker else None
        self._memory = MemoryCounter()
        url = config.get("REDIS_URL")
        if url:
            import redis
            redis.ConnectionPool.from_url(url)  # a malformed URL fails here, not per request
        self.redis = _Redis(url, config.get("REDIS_PREFIX") or "costmodel:",
                            float(config.get("REDIS_RETRY_SECONDS", 5.0))) if url else None

    def describe(self) -> str:
        """The limits in force, in one line (``costmodel serve`` prints it)."""
        rate = f"{self.rate.limit} requests a caller every {self.rate.window} s" if self.rate \
            else "no rate limit"
        heavy = f"{self.per_worker} heavy analyses at once a worker" if self.per_worker \
            else "no heavy bound a worker"
        if self.redis is None:
            return f"{rate}, {heavy} (each worker counts alone: set REDIS_URL to share)"
        total = f"{self.total} in total" if self.total else "no total"
        return f"{rate}, {heavy}, {total} (shared through Redis {_redact(self.redis.url)})"

    # -- rate ---------------------------------------------------------------------------
    def count(self, principal: Any) -> None:
        """Count a request of ``principal`` (a key, or anonymous: its address); raises a 429
        Problem past the rate. Sets the RateLimit headers of the answer."""
        if self.rate is None:
            return
        key_id = getattr(principal, "key_id", None)
        # (the objects behind the proxies: an attribute through one costs 0.7 us more)
        who = f"key:{key_id}" if key_id is not None else \
            f"addr:{request._get_current_object().remote_addr}"
        headers, refused = self.charge(who, key_id is not None)
        g._get_current_object().costmodel_ratelimit = headers  # on the 429 too: after_request
        if refused is not None:
            raise refused

    def charge(self, who: str, by_key: bool = True
               ) -> tuple[list[tuple[str, str]], Problem | None]:
        """Count a request of ``who`` (``key:<id>`` or ``addr:<address>``) against the rate,
        as every face counts it (the API, the pages, MCP over HTTP): the RateLimit headers of
        the answer, and past the rate the 429 Problem to answer (with Retry-After)."""
        if self.rate is None:
            return [], None
        n, seconds = self._hit(who)
        reset = max(1, min(math.ceil(self.rate.window), math.ceil(seconds)))
        remaining = max(0, self.rate.limit - n)
        constant = self._constant
        if constant is None or constant[0] is not self.rate:  # the rate's own headers, once
            constant = self._constant = (self.rate, f'"{POLICY}";q={self.rate.limit};'
                                                    f'w={self.rate.window}', str(self.rate.limit))
        headers = [("RateLimit-Policy", constant[1]),
                   ("RateLimit", f'"{POLICY}";r={remaining};t={reset}'),
                   ("RateLimit-Limit", constant[2]), ("RateLimit-Remaining", str(remaining)),
                   ("RateLimit-Reset", str(reset))]
        if n <= self.rate.limit:
            return headers, None
        emit("limit_refused", 1.0, "rate")
        return headers, Problem(429, "Too many requests",
                                f"more than {self.rate.limit} requests in {self.rate.window} s "
                                f"for this {'key' if by_key else 'address'}; "
                                f"retry after {reset} s", kind="rate-limited",
                                headers={"Retry-After": str(reset)})

    def _hit(self, who: str) -> tuple[int, float]:
        assert self.rate is not None
        if self.redis is not None and self.redis.available():
            import redis
            try:
                n, ttl_ms = self.redis.call("rate", [f"{self.redis.prefix}rate:{who}"],
                                            [self.rate.window * 1000])
                return int(n), int(ttl_ms) / 1000
            except redis.RedisError:
                pass  # this worker's own count (logged once by failed())
        if self.redis is not None:  # shared counts asked for, and Redis failing
            emit("fail_open", 1.0, "rate")
        return self._memory.hit(who, self.rate.window)

    # -- the one rule -------------------------------------------------------------------
    @contextlib.contextmanager
    def work(self, principal: Any, operation: tuple[str, str]) -> Iterator[None]:
        """The rule for work asked through any face but the API's own routes (which take
        the same two steps with the body parsed between them: ``openapi.route``): count the
        request of ``principal`` against the rate, then, if ``operation`` (the API twin's
        (method, OpenAPI path)) is in :data:`HEAVY`, hold a heavy slot while it runs. A
        429 Problem, with Retry-After, when either refuses."""
        self.count(principal)
        with self.heavy() if operation in HEAVY else contextlib.nullcontext():
            yield

    # -- heavy --------------------------------------------------------------------------
    @contextlib.contextmanager
    def heavy(self, body: Any = None, *, grid: bool = False) -> Iterator[None]:
        """Hold a heavy slot of this worker (and of the service, with Redis) while the
        analysis runs; a 429 Problem at once when none is free."""
        if grid:
            self.check_grid(body)
        if self._slots is not None and not self._slots.acquire(blocking=False):
            raise self._busy(f"this worker runs {self.per_worker} heavy "
                             f"{'analysis' if self.per_worker == 1 else 'analyses'} already")
        lease = None
        taken = False
        try:
            lease = self._lease()
            emit("heavy_slot", 1.0)
            taken = True
            yield
        finally:
            if taken:
                emit("heavy_slot", -1.0)
            if lease is not None:
                self.redis.release(lease)  # type: ignore[union-attr]
            if self._slots is not None:
                self._slots.release()

    def _lease(self) -> str | None:
        """A lease on one of the service's HEAVY_TOTAL slots (None: not shared)."""
        if not self.total or self.redis is None:
            return None
        if not self.redis.available():
            emit("fail_open", 1.0, "heavy")
            return None
        import redis
        member = uuid.uuid4().hex
        try:
            got = self.redis.call("acquire", [self.redis.prefix + "heavy"],
                                  [int(time.time() * 1000), self.lease_ms, self.total, member])
        except redis.RedisError:
            emit("fail_open", 1.0, "heavy")
            return None  # the per-worker bound only
        if not got:
            raise self._busy(f"the service runs {self.total} heavy analyses already")
        return member

    @staticmethod
    def _busy(why: str) -> Problem:
        emit("limit_refused", 1.0, "heavy")
        return Problem(429, "Too many analyses at once",
                       f"{why}; retry after {HEAVY_RETRY_AFTER} s", kind="busy",
                       headers={"Retry-After": str(HEAVY_RETRY_AFTER)})

    def check_grid(self, body: Any) -> None:
        """A 422 for a grid of more than GRID_MAX_CELLS cells, before it takes a slot."""
        if not self.grid_max_cells or body is None:
            return
        sizes = [_axis_size(getattr(body, axis, None)) for axis in ("x", "y")]
        if None in sizes:
            return  # malformed: the analysis says what is wrong
        nx, ny = sizes
        if nx * ny > self.grid_max_cells:  # type: ignore[operator]
            message = (f"{nx:,} x {ny:,} = {nx * ny:,} cells is more than the "  # type: ignore
                       f"{self.grid_max_cells:,} this service answers")
            raise Problem(422, "Invalid input", f"grid: {message}",
                          errors=[{"path": "grid", "message": message}])


def _axis_size(text: Any) -> int | None:
    """How many values a grid axis ``key=...`` names, read as the analysis will read it
    (None when it is malformed)."""
    if not isinstance(text, str):
        return None
    try:
        _, raw = parse_axis(text)
    except InputError:
        return None
    if ".." not in raw:
        return len(raw.split(","))
    _, colon, tail = raw.rpartition(":")
    count = tail.strip() if colon else DEFAULT_POINTS
    return int(count) if re.fullmatch(r"\d{1,12}", count) else None


# ---- the app ----------------------------------------------------------------------------------

def install(app: Flask) -> Limits:
    """Build the app's limits from its configuration and add the RateLimit headers to every
    limited answer."""
    limits = Limits(app.config)
    app.extensions[EXTENSION] = limits

    @app.after_request
    def _ratelimit_headers(response: Response) -> Response:
        headers = g._get_current_object().get("costmodel_ratelimit")  # (see count)
        if headers:  # on every answer of a counted request, a 429 or an error too
            _append_headers(response, headers)
        return response

    return limits


def _append_headers(response: Response, headers: list[tuple[str, str]]) -> None:
    """``response.headers.extend(headers)`` for headers this module wrote (fixed names, text
    made of digits and the rate's own words: no newline to refuse). Werkzeug's ``extend``
    checks each value (about 2 us a header, five a request); its list is appended directly
    where it has one."""
    items = getattr(response.headers, "_list", None)
    if type(response.headers) is Headers and type(items) is list:
        items.extend(headers)
    else:  # another headers class: its own way
        response.headers.extend(headers)


def current_limits() -> Limits:
    """The current app's limits."""
    # (the app behind the proxy: an attribute read through it costs 0.7 us more)
    return current_app._get_current_object().extensions[EXTENSION]
