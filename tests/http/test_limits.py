"""Limits (costmodel/api/limits.py): a rate per API key, in the worker or shared through Redis;
heavy analyses bounded per worker and in total; the API's own grid size. Counts are asserted,
never times: the windows here are an hour long and open at a caller's first request."""
from __future__ import annotations

import socket
import threading
import uuid

import pytest
from conftest import auth

from costmodel import app as use_cases
from costmodel.api.openapi import build_spec
from costmodel.http.limits import DEFAULT_RATE, HEAVY, Rate
from costmodel.server import create_app
from costmodel.store.repo import key_create

API = "/api/v1"
GB300_PEAK = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
GRID = {"scenario": {"scenario": GB300_PEAK},
        "x": "electricity.price=0.05..0.15 USD/kWh:3", "y": "utilisation=0.5..1:3"}
MONTECARLO = {"scenario": {"scenario": GB300_PEAK}, "draws": 100,
              "distributions": {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}}
REDIS_URL = "redis://127.0.0.1:6379/0"
RUN = f"costmodel-test-{uuid.uuid4().hex[:10]}"  # this run's Redis keys: no two runs collide


def _redis_client():
    try:
        import redis
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5, socket_timeout=1)
        client.ping()
        return client
    except Exception:
        return None


REDIS = _redis_client()
needs_redis = pytest.mark.skipif(REDIS is None, reason="no Redis on 127.0.0.1:6379")




@pytest.fixture
def prefix():
    """A Redis key prefix of its own for one test; its keys are deleted afterwards."""
    p = f"{RUN}-{uuid.uuid4().hex[:8]}:"
    yield p
    if REDIS is not None:
        for k in REDIS.scan_iter(match=p + "*"):
            REDIS.delete(k)


def _token(application, role: str = "viewer") -> str:
    with application.extensions["costmodel"].sessions() as session:
        return key_create(session, f"limits-{uuid.uuid4().hex[:6]}", role)[1]


def _read(client, headers=None, **kw):
    return client.get(f"{API}/accelerators?limit=1", headers=headers or {}, **kw)


# ---- the rate ------------------------------------------------------------------------------

@pytest.mark.parametrize("text,limit,window", [
    ("600/minute", 600, 60), ("10/second", 10, 1), ("5000/hour", 5000, 3600),
    ("100/10s", 100, 10), ("1000/day", 1000, 86400), (" 7 / 2 minutes ", 7, 120)])
def test_rate_parse(text, limit, window):
    assert Rate.parse(text) == Rate(limit, window)


@pytest.mark.parametrize("text", ["off", "OFF", "0", "none", "", None])
def test_rate_off(text):
    assert Rate.parse(text) is None


@pytest.mark.parametrize("text", ["600", "600/fortnight", "-1/minute", "0/minute", "5/0s",
                                  "ten/minute", "600/minute; drop table"])
def test_rate_malformed_fails_at_startup(text, make_app):
    with pytest.raises(ValueError, match="rate limit"):
        Rate.parse(text)
    with pytest.raises(ValueError, match="rate limit"):
        make_app(RATE_LIMIT=text)


def test_default_rate_is_on_except_for_testing_apps(db, monkeypatch):
    monkeypatch.delenv("COSTMODEL_RATE_LIMIT", raising=False)
    served = create_app({"DATABASE_URL": db})
    tested = create_app({"DATABASE_URL": db, "TESTING": True})
    assert served.extensions["costmodel.limits"].rate == Rate.parse(DEFAULT_RATE) \
        == Rate(600, 60)
    assert tested.extensions["costmodel.limits"].rate is None
    monkeypatch.setenv("COSTMODEL_RATE_LIMIT", "42/hour")
    assert create_app({"DATABASE_URL": db}).extensions["costmodel.limits"].rate == \
        Rate(42, 3600)
    monkeypatch.setenv("COSTMODEL_RATE_LIMIT", "off")
    assert create_app({"DATABASE_URL": db}).extensions["costmodel.limits"].rate is None
    for a in (served, tested):
        a.extensions["costmodel"].dispose()


def test_in_process_store_limits_a_key_at_n_then_429(make_app):
    application = make_app(RATE_LIMIT="3/hour")
    client = application.test_client()
    key, other = auth(_token(application)), auth(_token(application))
    for remaining in (2, 1, 0):
        r = _read(client, key)
        assert r.status_code == 200
        assert r.headers["RateLimit-Limit"] == "3"
        assert r.headers["RateLimit-Remaining"] == str(remaining)
        assert r.headers["RateLimit-Policy"] == '"per-key";q=3;w=3600'
        reset = int(r.headers["RateLimit-Reset"])
        assert 1 <= reset <= 3600
        assert r.headers["RateLimit"] == f'"per-key";r={remaining};t={reset}'
    r = _read(client, key)
    assert r.status_code == 429
    assert r.mimetype == "application/problem+json"
    assert r.json["status"] == 429
    assert r.json["type"].endswith("/rate-limited")
    assert "more than 3 requests in 3600 s" in r.json["detail"]
    assert 1 <= int(r.headers["Retry-After"]) <= 3600
    assert r.headers["RateLimit-Remaining"] == "0"
    # the role is checked before the count: a viewer's write is still a 403
    assert client.post(f"{API}/scenarios", json={"name": "x", "scenario": GB300_PEAK},
                       headers=key).status_code == 403
    # another key has its own count
    assert _read(client, other).status_code == 200
    assert _read(client, other).headers["RateLimit-Remaining"] == "1"


def test_the_limit_counts_requests_not_keys_refused(make_app):
    application = make_app(RATE_LIMIT="2/hour")
    client = application.test_client()
    for _ in range(5):  # a key that is not valid is refused (401) before it is counted
        assert _read(client, auth("cm_000000000000_nope")).status_code == 401
    key = auth(_token(application))
    assert [_read(client, key).status_code for _ in range(3)] == [200, 200, 429]


def test_health_and_documents_are_not_limited(make_app):
    application = make_app(RATE_LIMIT="1/hour", OPEN_READS=True)
    client = application.test_client()
    for _ in range(3):
        assert client.get("/healthz").status_code == 200
        r = client.get(f"{API}/openapi.json")
        assert r.status_code == 200 and "RateLimit-Limit" not in r.headers


def test_anonymous_reads_are_counted_per_client_address(make_app):
    application = make_app(RATE_LIMIT="2/hour", OPEN_READS=True)
    client = application.test_client()
    here, there = {"REMOTE_ADDR": "127.0.0.1"}, {"REMOTE_ADDR": "127.0.0.2"}
    assert [_read(client, environ_base=here).status_code for _ in range(3)] == [200, 200, 429]
    assert _read(client, environ_base=there).status_code == 200
    # a key is counted as itself, wherever it comes from
    key = auth(_token(application))
    assert _read(client, key, environ_base=here).status_code == 200


def test_off_sends_no_rate_headers(make_app):
    application = make_app(RATE_LIMIT="off")
    client = application.test_client()
    key = auth(_token(application))
    r = _read(client, key)
    assert r.status_code == 200 and "RateLimit" not in r.headers


@needs_redis
def test_two_workers_sharing_redis_share_the_count(make_app, prefix):
    one = make_app(RATE_LIMIT="4/hour", REDIS_URL=REDIS_URL, REDIS_PREFIX=prefix)
    two = make_app(RATE_LIMIT="4/hour", REDIS_URL=REDIS_URL, REDIS_PREFIX=prefix)
    key = auth(_token(one))
    c1, c2 = one.test_client(), two.test_client()
    assert [_read(c, key).status_code for c in (c1, c2, c1, c2)] == [200] * 4
    r = _read(c1, key)
    assert r.status_code == 429 and r.headers["RateLimit-Remaining"] == "0"
    assert _read(c2, key).status_code == 429
    # the window is Redis's: one key with an expiry
    (k,) = list(REDIS.scan_iter(match=prefix + "rate:*"))
    assert 0 < REDIS.pttl(k) <= 3600 * 1000
    assert int(REDIS.get(k)) == 6


def test_redis_unreachable_falls_back_to_the_workers_own_count(make_app, caplog):
    # the service keeps answering; each worker counts alone (and says so in the log)
    application = make_app(RATE_LIMIT="3/hour", REDIS_URL="redis://127.0.0.1:1/0",
                           HEAVY_TOTAL=1)
    client = application.test_client()
    key = auth(_token(application))
    with caplog.at_level("WARNING", logger="costmodel.api"):
        codes = [_read(client, key).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert any("Redis" in r.getMessage() and "on its own" in r.getMessage()
               for r in caplog.records)
    # heavy analyses run under the per-worker bound alone
    assert client.post(f"{API}/sensitivity/grid", json=GRID,
                       headers=auth(_token(application))).status_code == 200


def test_a_redis_that_never_answers_is_set_aside(make_app, caplog):
    silent = socket.socket()  # accepts connections (backlog), never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        application = make_app(RATE_LIMIT="2/hour",
                               REDIS_URL=f"redis://127.0.0.1:{silent.getsockname()[1]}/0")
        client = application.test_client()
        key = auth(_token(application))
        with caplog.at_level("WARNING", logger="costmodel.api"):
            codes = [_read(client, key).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        assert sum("failed" in r.getMessage() for r in caplog.records) == 1  # then set aside
    finally:
        silent.close()


def test_a_malformed_redis_url_fails_at_startup(make_app):
    with pytest.raises(ValueError):
        make_app(REDIS_URL="http://127.0.0.1:6379")


# ---- heavy analyses --------------------------------------------------------------------------

class _Blocker:
    """Stands in for an analysis: blocks until released, then answers an empty object."""

    def __init__(self):
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, *args, **kwargs):
        self.entered.set()
        assert self.release.wait(30), "the test never released the analysis"
        return type("Done", (), {"to_json": staticmethod(dict)})()


def _hold(application, token, blocker) -> tuple[threading.Thread, list]:
    """POST a grid from another thread; returns once the analysis runs (holding a slot)."""
    out: list = []

    def run():
        out.append(application.test_client().post(f"{API}/sensitivity/grid", json=GRID,
                                                   headers=auth(token)).status_code)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert blocker.entered.wait(30), "the held request never started its analysis"
    return thread, out


def test_the_per_worker_bound_answers_429_when_full(make_app, monkeypatch):
    application = make_app(HEAVY_PER_WORKER=1)
    token = _token(application)
    blocker = _Blocker()
    monkeypatch.setattr(use_cases, "grid", blocker)
    thread, held = _hold(application, token, blocker)
    try:
        client = application.test_client()
        r = client.post(f"{API}/sensitivity/grid", json=GRID, headers=auth(token))
        assert r.status_code == 429
        assert r.mimetype == "application/problem+json"
        assert r.json["type"].endswith("/busy")
        assert r.headers["Retry-After"] == "2"
        assert "this worker runs 1 heavy analysis already" in r.json["detail"]
        # every heavy operation shares the worker's slots; light ones are not held up
        assert client.post(f"{API}/sensitivity/montecarlo", json=MONTECARLO,
                           headers=auth(token)).status_code == 429
        assert client.post(f"{API}/price", json={"scenario": GB300_PEAK},
                           headers=auth(token)).status_code == 200
    finally:
        blocker.release.set()
        thread.join(30)
    assert held == [200]
    # the slot is free again: the next analysis runs
    monkeypatch.undo()
    r = application.test_client().post(f"{API}/sensitivity/grid", json=GRID,
                                       headers=auth(token))
    assert r.status_code == 200 and len(r.json["values"]) == 3


def test_a_failing_analysis_gives_its_slot_back(make_app, monkeypatch):
    application = make_app(HEAVY_PER_WORKER=1)
    token = _token(application)

    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(use_cases, "grid", broken)
    client = application.test_client()
    assert [client.post(f"{API}/sensitivity/grid", json=GRID, headers=auth(token)).status_code
            for _ in range(3)] == [500, 500, 500]  # never 429: the slot came back each time


@needs_redis
def test_the_total_bound_holds_across_workers(make_app, monkeypatch, prefix):
    config = {"REDIS_URL": REDIS_URL, "REDIS_PREFIX": prefix, "HEAVY_PER_WORKER": 2,
              "HEAVY_TOTAL": 1}
    one, two = make_app(**config), make_app(**config)
    token = _token(one)
    blocker = _Blocker()
    monkeypatch.setattr(use_cases, "grid", blocker)
    thread, held = _hold(one, token, blocker)
    try:
        assert REDIS.zcard(prefix + "heavy") == 1
        r = two.test_client().post(f"{API}/sensitivity/grid", json=GRID, headers=auth(token))
        assert r.status_code == 429 and r.headers["Retry-After"] == "2"
        assert "the service runs 1 heavy analyses already" in r.json["detail"]
        # the worker with a free slot of its own is refused too: the bound is the service's
        assert one.test_client().post(f"{API}/sensitivity/grid", json=GRID,
                                      headers=auth(token)).status_code == 429
    finally:
        blocker.release.set()
        thread.join(30)
    assert held == [200]
    assert REDIS.zcard(prefix + "heavy") == 0  # the lease was given back
    monkeypatch.undo()
    assert two.test_client().post(f"{API}/sensitivity/grid", json=GRID,
                                  headers=auth(token)).status_code == 200


@needs_redis
def test_a_dead_workers_lease_expires(make_app, prefix):
    application = make_app(REDIS_URL=REDIS_URL, REDIS_PREFIX=prefix, HEAVY_TOTAL=1)
    token = _token(application)
    client = application.test_client()
    REDIS.zadd(prefix + "heavy", {"alive": 2**52})  # a lease far in the future: held
    assert client.post(f"{API}/sensitivity/grid", json=GRID,
                       headers=auth(token)).status_code == 429
    REDIS.delete(prefix + "heavy")
    REDIS.zadd(prefix + "heavy", {"dead": 1})  # a lease that expired long ago
    assert client.post(f"{API}/sensitivity/grid", json=GRID,
                       headers=auth(token)).status_code == 200
    assert REDIS.zcard(prefix + "heavy") == 0


@pytest.mark.parametrize("x,y,cells", [
    ("electricity.price=0.05..0.15 USD/kWh:11", "utilisation=0.5..1:10", 110),
    ("electricity.price=0.05,0.06,0.07,0.08,0.09,0.1 USD/kWh", "utilisation=0.5..1:20", 120),
])
def test_the_api_grid_size_limit(make_app, x, y, cells):
    application = make_app(GRID_MAX_CELLS=100)
    token = _token(application)
    client = application.test_client()
    r = client.post(f"{API}/sensitivity/grid", headers=auth(token),
                    json={**GRID, "x": x, "y": y})
    assert r.status_code == 422
    assert r.json["errors"][0]["path"] == "grid"
    assert f"= {cells:,} cells is more than the 100 this service answers" in r.json["detail"]
    ok = client.post(f"{API}/sensitivity/grid", headers=auth(token),
                     json={**GRID, "y": "utilisation=0.5..1:9"})
    assert ok.status_code == 200


def test_the_default_grid_limit_refuses_the_huge_grid_before_running_it(make_app, monkeypatch):
    application = make_app()

    def never(*args, **kwargs):
        raise AssertionError("a grid over the limit was run")
    monkeypatch.setattr(use_cases, "grid", never)
    r = application.test_client().post(
        f"{API}/sensitivity/grid", headers=auth(_token(application)),
        json={**GRID, "x": "electricity.price=0.05..0.15 USD/kWh:3162",
              "y": "utilisation=0.1..1:3162"})
    assert r.status_code == 422
    assert "9,998,244 cells is more than the 1,000,000" in r.json["detail"]


# ---- the contract ---------------------------------------------------------------------------

def test_every_limited_operation_documents_429_with_its_headers():
    spec = build_spec()
    operations = [(m.upper(), p, op) for p, ops in spec["paths"].items()
                  for m, op in ops.items()]
    assert operations
    for method, path, op in operations:
        assert "429" in op["responses"], f"{method} {path}"
        headers = op["responses"]["429"]["headers"]
        assert {"Retry-After", "RateLimit", "RateLimit-Policy", "RateLimit-Limit",
                "RateLimit-Remaining", "RateLimit-Reset"} <= set(headers)
        assert ("heavy analysis" in op.get("description", "")) == ((method, path) in HEAVY)


def test_heavy_names_only_declared_operations():
    paths = build_spec()["paths"]
    for method, path in HEAVY:
        assert method.lower() in paths.get(path, {}), f"{method} {path} is not declared"


def test_serve_states_the_limits_in_force(make_app):
    assert make_app(RATE_LIMIT="600/minute").extensions["costmodel.limits"].describe() == (
        "600 requests a caller every 60 s, 2 heavy analyses at once a worker "
        "(each worker counts alone: set REDIS_URL to share)")
    shared = make_app(RATE_LIMIT="off", REDIS_URL="redis://user:secret@127.0.0.1:6379/0",
                      HEAVY_TOTAL=3)
    assert shared.extensions["costmodel.limits"].describe() == (
        "no rate limit, 2 heavy analyses at once a worker, 3 in total "
        "(shared through Redis redis://***@127.0.0.1:6379/0)")
