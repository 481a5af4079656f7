"""Three service hosts behave as one service (bench/cluster.py: each a gunicorn master of
deploy/gunicorn.conf.py on its own loopback address, 127.0.0.2-4, one PostgreSQL and one Redis
of the test's own, nginx with deploy/nginx.conf balancing across them).

Coherence: a key revoked through one host is refused by the others (writes at once, reads
within the stated cache window); rate limits and heavy slots are counted once across hosts; a
session signed in on one host is read on another and ended everywhere by a sign-out on a
third; what is saved through one host is read and priced by the others; equal answers carry
equal ETags. Faults: a host killed (kill -9, master and workers) under a mixed load loses no
acknowledged save and duplicates none, reads are retried on the others; PostgreSQL stopped
under load gives 503 ``store-unreachable`` (never a 500 or a hang) and the hosts recover by
themselves when it is back; Redis killed under load changes no answer (limits fall back to
each worker's own) and counts are shared again once it is back.

The short version of bench/hosts.py (which measures capacity and runs longer faults). Skipped
where nginx, PostgreSQL's server binaries or redis-server are missing, unless
COSTMODEL_REQUIRE_NGINX is set (as .ci/run does, after installing them). Outcomes only: no
assertion on how fast anything answers; every wait is bounded.
"""
from __future__ import annotations

import os
import re
import threading
import time
import uuid

import pytest
from conftest import bench_module

cl = bench_module("cluster.py")
httpx = pytest.importorskip("httpx")

MISSING = cl.missing()
if MISSING and os.environ.get("COSTMODEL_REQUIRE_NGINX"):
    raise RuntimeError(f"COSTMODEL_REQUIRE_NGINX is set but this machine lacks {MISSING}")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(MISSING), reason=f"missing: {', '.join(MISSING)}")]

RATE = 100_000  # requests a key a minute: the loads below never reach it
KEY_CACHE = 1.0  # [s] COSTMODEL_KEY_CACHE_SECONDS of these hosts: the revocation window
HEAVY_TOTAL = 2  # heavy analyses at once across the three hosts
MARKER_SECONDS = 1.0  # how long a worker trusts its catalog copy (Services.MARKER_SECONDS)
RETRY_REDIS = 5.0  # [s] a worker tries Redis again this long after it failed
GB300 = cl.GB300
# gb300 at deepseek-r1/gb300/peak (fixtures/catalog): 1,400 W rated at the chip (the default
# boundary), 16,493.4 token/s a GPU
GB300_W, GB300_TOKEN_S = 1400.0, 16493.4
MTOK_PER_HOUR = GB300_TOKEN_S * 3600 / 1e6  # 59.37624 Mtok an accelerator-hour


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hosts")
    c = cl.Cluster(folder, hosts_count=3, extra_env={
        "COSTMODEL_KEY_CACHE_SECONDS": str(KEY_CACHE),
        "COSTMODEL_RATE_LIMIT": f"{RATE}/minute",
        "COSTMODEL_HEAVY_TOTAL": str(HEAVY_TOTAL),
        "COSTMODEL_HEAVY_PER_WORKER": "2"})
    with c:
        c.admin = c.key("admin", "hosts-admin")
        yield c


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _each_worker(host, method: str, path: str, token: str, times: int = 6, **kw) -> list[int]:
    """The statuses of ``times`` requests to one host, each on a new connection (so each of
    its workers answers some)."""
    out = []
    for _ in range(times):
        with httpx.Client(base_url=host.base, timeout=20) as http:
            out.append(http.request(method, path, headers=_auth(token), **kw).status_code)
    return out


# ---- coherence ---------------------------------------------------------------------------------

def test_the_same_answer_and_etag_on_every_host(cluster):
    body = {"scenario": {**GB300, "electricity": {"price": "0.1 USD/kWh"}}}
    answers = [httpx.post(h.base + "/api/v1/price", json=body, headers=_auth(cluster.admin),
                          timeout=20) for h in cluster.hosts]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert len({a.content for a in answers}) == 1
    assert len({a.headers["ETag"] for a in answers}) == 1
    # by hand: 0.1 USD/kWh x 1.4 kW / 59.37624 Mtok an hour = 0.00235785 USD/Mtok
    energy = answers[0].json()["cost_per_mtok"]["energy"]["value"]
    assert energy == pytest.approx(0.1 * GB300_W / 1000 / MTOK_PER_HOUR, rel=1e-9)
    # a catalog read too, and its 304 on another host
    first = httpx.get(cluster.hosts[0].base + "/api/v1/accelerators/gb300",
                      headers=_auth(cluster.admin), timeout=20)
    again = httpx.get(cluster.hosts[2].base + "/api/v1/accelerators/gb300", timeout=20,
                      headers={**_auth(cluster.admin), "If-None-Match": first.headers["ETag"]})
    assert first.status_code == 200 and again.status_code == 304


def test_a_columnar_batch_larger_than_a_json_body_passes_nginx(cluster):
    """deploy/nginx.conf takes a batch body up to 65 MiB (a columnar batch's own 64 MiB), not
    its 3 MiB elsewhere: a million rows of an Arrow stream (8 MB) is priced through it."""
    import json

    import numpy as np
    import pyarrow as pa
    prices = np.linspace(0.02, 0.2, 1_000_000)
    schema = pa.schema([pa.field("electricity.price", pa.float64(),
                                 metadata={"unit": "USD/kWh"})],
                       metadata={"costmodel": json.dumps({"scenario": GB300, "outputs": [
                           "cost_per_mtok.energy"]})})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        writer.write_table(pa.Table.from_arrays([pa.array(prices)], schema=schema))
    body = sink.getvalue().to_pybytes()
    assert len(body) > 3 * 2**20  # (nginx takes 3 MiB on other operations)
    headers = {**_auth(cluster.admin), "Content-Type": "application/vnd.apache.arrow.stream"}
    r = httpx.post(cluster.front + "/api/v1/price/batch", content=body, headers=headers,
                   timeout=120)
    assert r.status_code == 200, r.text[:300]
    energy = pa.ipc.open_stream(r.content).read_all().column(0).to_numpy()
    # by hand: price x 1.4 kW / 59.37624 Mtok an hour
    assert energy[-1] == pytest.approx(prices[999_999] * GB300_W / 1000 / MTOK_PER_HOUR,
                                       rel=1e-9)


def test_a_key_revoked_through_one_host_is_refused_by_every_host(cluster):
    a, b, c = cluster.hosts
    made = httpx.post(a.base + "/api/v1/keys", json={"name": "revoke-me", "role": "editor"},
                      headers=_auth(cluster.admin), timeout=20)
    assert made.status_code == 201
    token, key_id = made.json()["token"], made.json()["id"]
    body = {"scenario": GB300}
    for host in (b, c):  # every worker of B and C verifies it (and caches it for reads)
        assert set(_each_worker(host, "POST", "/api/v1/price", token, json=body)) == {200}
    assert httpx.delete(f"{a.base}/api/v1/keys/{key_id}", headers=_auth(cluster.admin),
                        timeout=20).status_code == 200
    # a write asks the database on every request: refused at once, on every host
    save = {"name": f"after revocation {uuid.uuid4().hex[:6]}", "scenario": GB300}
    for host in (a, b, c):
        assert set(_each_worker(host, "POST", "/api/v1/scenarios", token, json=save)) == {401}
    # a read may be answered from a worker's cache of verified keys for KEY_CACHE seconds;
    # after that window no host answers it
    time.sleep(KEY_CACHE + 0.2)
    for host in (a, b, c):
        assert set(_each_worker(host, "POST", "/api/v1/price", token, json=body)) == {401}


def _key_id(cluster, name: str) -> int:
    listed = httpx.get(cluster.front + "/api/v1/keys?limit=500", headers=_auth(cluster.admin),
                       timeout=20).json()
    return next(k["id"] for k in listed["items"] if k["name"] == name)


def test_a_rate_limit_is_counted_once_across_hosts(cluster):
    name = f"rate-{uuid.uuid4().hex[:6]}"
    token = cluster.key("viewer", name)
    remaining = []
    for i in range(30):  # round robin over the three hosts
        host = cluster.hosts[i % 3]
        r = httpx.get(host.base + "/api/v1/accelerators/gb300", headers=_auth(token),
                      timeout=20)
        assert r.status_code == 200
        remaining.append(int(r.headers["RateLimit-Remaining"]))
    # one count, not one a host (or a worker)
    assert remaining == list(range(RATE - 1, RATE - 31, -1))
    # the key's window brought to its limit in the shared store: every host refuses it
    redis = cluster.redis.client()
    counter = f"costmodel:rate:key:{_key_id(cluster, name)}"
    assert int(redis.get(counter)) == 30
    redis.set(counter, RATE, keepttl=True)
    for host in cluster.hosts:
        r = httpx.get(host.base + "/api/v1/accelerators/gb300", headers=_auth(token),
                      timeout=20)
        assert r.status_code == 429
        assert r.headers["Content-Type"] == "application/problem+json"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
        assert r.headers["RateLimit-Remaining"] == "0"


GRID = {"scenario": {"scenario": GB300}, "x": "electricity.price=0.05..0.15 USD/kWh:1000",
        "y": "utilisation=0.1..1:1000"}  # 1,000,000 cells: about a second of one worker
SMALL_GRID = {"scenario": {"scenario": GB300}, "x": "electricity.price=0.05..0.15 USD/kWh:3",
              "y": "utilisation=0.5,1"}


def test_heavy_slots_are_counted_once_across_hosts(cluster):
    redis = cluster.redis.client()
    slots = "costmodel:heavy"
    far = int(time.time() * 1000) + 600_000  # leases held by workers elsewhere
    redis.zadd(slots, {f"elsewhere-{i}": far for i in range(HEAVY_TOTAL)})
    try:
        for host in cluster.hosts:  # the service's slots are full: every host refuses
            r = httpx.post(host.base + "/api/v1/sensitivity/grid", json=SMALL_GRID,
                           headers=_auth(cluster.admin), timeout=20)
            assert r.status_code == 429
            assert f"the service runs {HEAVY_TOTAL} heavy analyses already" in r.json()["detail"]
        redis.zrem(slots, "elsewhere-0")  # one slot free: a real analysis on A takes it
        a, b = cluster.hosts[0], cluster.hosts[1]
        refused = 0
        for _ in range(3):  # bounded: the analysis on A may end before B is asked
            running: dict = {}

            def on_a(into: dict = running) -> None:
                into["r"] = httpx.post(a.base + "/api/v1/sensitivity/grid", json=GRID,
                                       headers=_auth(cluster.admin), timeout=60)
            t = threading.Thread(target=on_a)
            t.start()
            deadline = time.monotonic() + 30
            while redis.zcard(slots) < HEAVY_TOTAL and time.monotonic() < deadline \
                    and t.is_alive():
                time.sleep(0.01)
            r = httpx.post(b.base + "/api/v1/sensitivity/grid", json=SMALL_GRID,
                           headers=_auth(cluster.admin), timeout=20)
            t.join(90)
            assert running["r"].status_code == 200
            if r.status_code == 429:
                refused += 1
                break
        assert refused == 1  # B saw A's slot
        assert redis.zcard(slots) == HEAVY_TOTAL - 1  # A released its lease
        r = httpx.post(b.base + "/api/v1/sensitivity/grid", json=SMALL_GRID,
                       headers=_auth(cluster.admin), timeout=20)
        assert r.status_code == 200
    finally:
        redis.delete(slots)


def _csrf(text: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', text)
    assert found, "no CSRF field"
    return found.group(1)


def test_a_session_signed_in_on_one_host_is_read_on_another_and_ended_on_a_third(cluster):
    a, b, c = cluster.hosts
    token = cluster.key("editor", f"web-{uuid.uuid4().hex[:6]}")
    with httpx.Client(base_url=a.base, timeout=20) as browser:
        form = browser.get("/signin")
        r = browser.post("/signin", data={"api_key": token, "csrf_token": _csrf(form.text),
                                          "next": "/saved"})
        assert r.status_code == 303 and r.headers["Location"] == "/saved"
        cookie = browser.cookies["session"]
    signed = {"Cookie": f"session={cookie}"}
    page_b = httpx.get(b.base + "/saved", headers=signed, timeout=20)
    assert page_b.status_code == 200  # B reads A's cookie: one COSTMODEL_SECRET_KEY
    page_c = httpx.get(c.base + "/saved", headers=signed, timeout=20)
    assert page_c.status_code == 200
    out = httpx.post(c.base + "/signout", data={"csrf_token": _csrf(page_c.text)},
                     headers=signed, timeout=20)
    assert out.status_code == 303
    for host in (a, b, c):  # the same cookie, ended everywhere
        r = httpx.get(host.base + "/saved", headers=signed, timeout=20)
        assert r.status_code == 401
        assert "session ended" in r.text


def test_what_one_host_saves_the_others_read_and_price(cluster):
    a, b, c = cluster.hosts
    admin = _auth(cluster.admin)
    # a scenario saved through A is read through C and priced through B
    name = f"saved-through-a-{uuid.uuid4().hex[:6]}"
    made = httpx.post(a.base + "/api/v1/scenarios", json={"name": name, "scenario": GB300},
                      headers=admin, timeout=20)
    assert made.status_code == 201
    sid = made.json()["scenario_id"]
    read = httpx.get(f"{c.base}/api/v1/scenarios/{sid}", headers=admin, timeout=20)
    assert read.status_code == 200
    assert read.json()["content_hash"] == made.json()["content_hash"]
    assert read.json()["scenario"]["accelerator"] == "gb300"
    priced = httpx.post(b.base + "/api/v1/price", json={"scenario_id": sid}, headers=admin,
                        timeout=20)
    assert priced.status_code == 200
    # a new catalog entry through A, named by a price through B and C at once (a key a
    # worker does not know makes it read the catalog again)
    key = f"hosts-{uuid.uuid4().hex[:6]}"
    entry = {"key": key, "data": {"price": {"value": 12, "unit": "cent/kWh",
                                            "source": "a test tariff"},
                                  "source": "test tariff", "date": "2026-01"}}
    assert httpx.post(a.base + "/api/v1/electricity-prices", json=entry, headers=admin,
                      timeout=20).status_code == 201
    for host in (b, c):
        r = httpx.post(host.base + "/api/v1/price", json={"scenario": {
            **GB300, "electricity": key}}, headers=admin, timeout=20)
        assert r.status_code == 200, r.text
        # by hand: 0.12 USD/kWh x 1.4 kW / 59.37624 Mtok an hour = 0.00282941 USD/Mtok
        assert r.json()["cost_per_mtok"]["energy"]["value"] == pytest.approx(
            0.12 * GB300_W / 1000 / MTOK_PER_HOUR, rel=1e-9)


def test_a_new_version_of_a_rate_is_priced_by_every_host_within_the_stated_lag(cluster):
    a = cluster.hosts[0]
    admin = _auth(cluster.admin)
    body = {"scenario": {**GB300, "accelerator": {"catalog": "gb300", "rate": "rental"}}}

    def hourly(host) -> set[float]:
        return {httpx.post(host.base + "/api/v1/price", json=body, headers=admin,
                           timeout=20).json()["cost_per_hour"]["value"] for _ in range(6)}
    before = {v for h in cluster.hosts for v in hourly(h)}
    assert before == {5.0}  # gb300/rental@2026-09: 5.0 USD/h (fixtures/catalog/rates.toml)
    version = {"key": "gb300/rental@2026-12", "data": {
        "accelerator": "gb300", "kind": "rental", "date": "2026-12",
        "hourly_price": {"value": 6.5, "unit": "USD/h"}, "all_in_power": "2.12 kW",
        "source": "a test rate version (illustrative)"}}
    r = httpx.post(a.base + "/api/v1/rates", json=version, headers=admin, timeout=20)
    assert r.status_code == 201, r.text
    # "rental" names the latest version: every worker of every host prices the new one once
    # its catalog copy is older than MARKER_SECONDS
    time.sleep(MARKER_SECONDS + 0.2)
    for host in cluster.hosts:
        assert hourly(host) == {6.5}
    # by hand: 6.5 USD/h / 59.37624 Mtok/h = 0.109471 USD/Mtok
    r = httpx.post(cluster.front + "/api/v1/price", json=body, headers=admin, timeout=20)
    assert r.json()["cost_per_mtok"]["total"]["value"] == pytest.approx(
        6.5 / MTOK_PER_HOUR, rel=1e-9)


# ---- refusals ----------------------------------------------------------------------------------

# nginx's own note that a body went to a temporary file (client_body_buffer_size): not a failure
BUFFERED = "a client request body is buffered to a temporary file"


def test_bodies_refused_without_a_key_never_mark_a_host_down(cluster):
    """Issue 38, item 1: 30 posts of 1 to 3 MB to the price without a key, while another
    client prices with its key. A worker refusing a body it has not read must not look like a
    dead host to nginx (a broken pipe while sending the body, a 502, the host marked down and
    the other client's requests refused with "no live upstreams")."""
    token = cluster.key("viewer", f"bystander-{uuid.uuid4().hex[:6]}")
    since = cluster.nginx_log.stat().st_size
    # 1 MiB to 3,048,576 bytes: inside nginx's 3 MiB (client_max_body_size 3m), some above
    # the service's 2 MiB (a 413 if read; the missing key is refused first: 401)
    sizes = [2**20 + i * 2_000_000 // 29 for i in range(30)]
    anonymous: list[int] = []
    signed: list[int] = []
    done = threading.Event()

    def bodies_without_a_key() -> None:
        try:
            with httpx.Client(base_url=cluster.front, timeout=30) as http:
                for size in sizes:
                    body = b'{"scenario": "' + b"x" * (size - 16) + b'"}'
                    anonymous.append(http.post("/api/v1/price", content=body, headers={
                        "Content-Type": "application/json"}).status_code)
        finally:
            done.set()

    def bystander() -> None:
        with httpx.Client(base_url=cluster.front, timeout=30, headers=_auth(token)) as http:
            after = 0
            while after < 60:  # during the posts, then 60 more (past nginx's fail_timeout)
                price = 0.05 + len(signed) / 1e5  # a new price each time: computed
                signed.append(http.post("/api/v1/price?view=summary", json={"scenario": {
                    **GB300, "electricity": {"price": f"{price:.5f} USD/kWh"}}}).status_code)
                after += done.is_set()
    threads = [threading.Thread(target=f) for f in (bodies_without_a_key, bystander)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(anonymous) == 30 and set(anonymous) <= {401, 413}, anonymous
    assert len(signed) >= 60 and set(signed) == {200}, \
        {s: signed.count(s) for s in set(signed)}
    # nginx saw no upstream fail: no broken pipe, no host marked down, never "no live
    # upstreams"
    failures = [line for line in cluster.nginx_errors(since) if BUFFERED not in line]
    assert failures == [], "\n".join(failures[:10])


# ---- faults ------------------------------------------------------------------------------------

def _summary(outcomes) -> dict:
    out: dict = {}
    for o in outcomes:
        out.setdefault(o.kind, {}).setdefault(o.status, 0)
        out[o.kind][o.status] += 1
    return out


def test_a_host_killed_under_load_loses_no_acknowledged_save(cluster):
    victim = cluster.hosts[2]
    prefix = f"kill-{uuid.uuid4().hex[:6]}"
    outcomes = cl.mixed_load(cluster.front, cluster.admin, seconds=6, clients=6,
                             prefix=prefix, events=[(2.0, victim.kill)])
    try:
        summary = _summary(outcomes)
        acked = [o for o in outcomes if o.kind == "save" and o.status == 201]
        assert len(acked) >= 10, summary
        stored = cl.saved_names(cluster.postgres.url, prefix)
        # every acknowledged save is there, once; nothing is there twice
        assert all(stored.get(o.name) == 1 for o in acked), summary
        assert set(stored.values()) == {1}
        # reads and prices never fail: nginx tried them on another host
        for kind in ("price", "read"):
            assert set(summary[kind]) == {200}, summary
        # a save in flight on the killed host is answered 502 (not sent twice), or, when the
        # host died after its answer had begun, the connection closes with no status (0):
        # nginx cannot turn half an answer into a 502. Never a 500; only those in flight
        lost = [o for o in outcomes if o.kind == "save" and o.status != 201]
        assert {o.status for o in lost} <= {502, 0}, summary
        assert len(lost) <= 6 and all(o.at >= 2.0 for o in lost), summary  # 6 clients
        after = [o for o in outcomes if o.at > 2.5]
        assert after and {o.status for o in after if o.kind != "save"} == {200}
    finally:
        victim.start()  # the host back for the tests after this one


def test_postgresql_stopped_under_load_gives_503_and_the_hosts_recover_alone(cluster):
    prefix = f"pg-{uuid.uuid4().hex[:6]}"
    outcomes = cl.mixed_load(cluster.front, cluster.admin, seconds=12, clients=4,
                             prefix=prefix, events=[(2.0, cluster.postgres.stop),
                                                    (6.0, cluster.postgres.start)])
    summary = _summary(outcomes)
    statuses = {o.status for o in outcomes}
    # never a 500, never no answer (a hang)
    assert statuses <= {200, 201, 503}, f"{summary}\n{cl.logged_failures(cluster)}"
    down = [o for o in outcomes if o.status == 503]
    assert down, summary
    assert {o.problem for o in down} == {"store-unreachable"}
    # each host answers again with no restart of its own (bounded wait: PostgreSQL is back)
    for host in cluster.hosts:
        cl.wait_for(f"{host.address} after PostgreSQL's restart",
                    lambda h=host: set(_each_worker(h, "GET", "/api/v1/accelerators/gb300",
                                                    cluster.admin)) == {200}, seconds=30)
    acked = [o for o in outcomes if o.kind == "save" and o.status == 201]
    stored = cl.saved_names(cluster.postgres.url, prefix)
    assert all(stored.get(o.name) == 1 for o in acked)


def test_redis_killed_under_load_changes_no_answer_and_counts_are_shared_again(cluster):
    prefix = f"redis-{uuid.uuid4().hex[:6]}"
    outcomes = cl.mixed_load(cluster.front, cluster.admin, seconds=6, clients=4,
                             prefix=prefix, events=[(2.0, cluster.redis.stop)])
    summary = _summary(outcomes)
    # fail open to each worker's own limits: every answer as without the outage
    assert {o.status for o in outcomes} <= {200, 201}, summary
    cluster.redis.start()
    # once a worker tries Redis again (RETRY_REDIS seconds after its failure), a key's
    # requests are counted once across hosts again
    name = f"after-redis-{uuid.uuid4().hex[:6]}"
    token = cluster.key("viewer", name)
    time.sleep(RETRY_REDIS + 0.5)

    def shared() -> bool:
        remaining = [int(httpx.get(h.base + "/api/v1/accelerators/gb300", timeout=20,
                                   headers=_auth(token)).headers["RateLimit-Remaining"])
                     for h in cluster.hosts for _ in range(4)]
        return remaining == list(range(remaining[0], remaining[0] - 12, -1))
    cl.wait_for("shared rate counts after Redis's restart", shared, seconds=30)
