"""A real Prometheus (Debian's ``prometheus``) scraping two hosts under load, with
deploy/prometheus.yml (its targets and interval substituted): the request counts it reads
equal the requests sent, summed over each host's workers (prometheus_client's multiprocess
mode, deploy/gunicorn.conf.py); a worker killed (kill -9) loses none of its counts and doubles
none of the others'; every expression of the Grafana dashboard runs on it. And the request id
ties nginx's log line to the worker's.

The hosts are bench/cluster.py's (gunicorn with deploy/gunicorn.conf.py on 127.0.0.2-3, one
PostgreSQL, one Redis, nginx in front); Prometheus listens on 127.0.0.1, a free port, with its
own temporary storage. Skipped where prometheus, nginx, PostgreSQL's server binaries or
redis-server are missing, unless COSTMODEL_REQUIRE_NGINX is set (as .ci/run does, after
installing them). Outcomes only: every wait is bounded, nothing is timed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import bench_module

cl = bench_module("cluster.py")
httpx = pytest.importorskip("httpx")

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
ROOT = Path(__file__).resolve().parents[2]
MISSING = cl.missing() + ([] if Path(PROMETHEUS).exists() else ["prometheus (prometheus)"])
if MISSING and os.environ.get("COSTMODEL_REQUIRE_NGINX"):
    raise RuntimeError(f"COSTMODEL_REQUIRE_NGINX is set but this machine lacks {MISSING}")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(MISSING), reason=f"missing: {', '.join(MISSING)}")]

GB300 = cl.GB300
PRICE, READ = "/api/v1/price", "/api/v1/accelerators/<path:key>"
CLIENTS = 6
EACH = 30  # requests a client a phase: 180 a phase, through nginx to both hosts


class Prometheus:
    """prometheus on 127.0.0.1:``port`` scraping ``targets`` every second."""

    def __init__(self, folder: Path, targets: list[str]):
        self.folder, self.port = folder, cl.free_port()
        text = (ROOT / "deploy" / "prometheus.yml").read_text()
        text = cl.sub_line(text, r"^(\s*)- targets: \[.*\]$",
                           r"\g<1>- targets: " + json.dumps(targets))
        text = cl.sub_line(text, r"^(\s*)scrape_interval: 15s$", r"\g<1>scrape_interval: 1s")
        text = cl.sub_line(text, r"^(\s*)scrape_timeout: 5s$", r"\g<1>scrape_timeout: 1s")
        self.config = folder / "prometheus.yml"
        self.config.write_text(text)
        self.log = folder / "prometheus.log"
        self.proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [PROMETHEUS, f"--config.file={self.config}",
                 f"--storage.tsdb.path={self.folder / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=fh, stderr=fh, stdin=subprocess.DEVNULL, start_new_session=True)

        def ready() -> bool:
            return httpx.get(self.base + "/-/ready", timeout=2).status_code == 200
        cl.wait_for("prometheus", lambda: _quiet(ready), seconds=60, log=self.log)

    def stop(self) -> None:
        if self.proc is not None:
            cl.kill_group(self.proc)

    def query(self, expr: str) -> list[dict]:
        r = httpx.get(self.base + "/api/v1/query", params={"query": expr}, timeout=10)
        body = r.json()
        assert body["status"] == "success", (expr, body)
        return body["data"]["result"]


def _quiet(check) -> bool:
    try:
        return check()
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("metrics-hosts")
    cluster = cl.Cluster(folder, hosts_count=2, extra_env={
        "COSTMODEL_RATE_LIMIT": "1000000/minute", "COSTMODEL_ACCESS_LOG": "1",
        "COSTMODEL_LOG_FORMAT": "json"})
    with cluster:
        cluster.token = cluster.key("viewer", "metrics-hosts")
        prom = Prometheus(folder, [f"{h.address}:{h.port}" for h in cluster.hosts])
        prom.start()
        try:
            yield cluster, prom
        finally:
            prom.stop()


def _load(base: str, token: str, phase: int) -> Counter:
    """CLIENTS threads each sending EACH requests through nginx, alternately a price (a new
    electricity price every time: never from the cache) and a catalog read. Counts
    (route, status) as the clients received them."""
    seen: Counter = Counter()
    lock = threading.Lock()

    def client(n: int) -> None:
        with httpx.Client(base_url=base, timeout=30,
                          headers={"Authorization": f"Bearer {token}"}) as http:
            for i in range(EACH):
                if i % 2 == 0:
                    price = 0.05 + (phase * 100_000 + n * 1_000 + i) / 1e7
                    r = http.post("/api/v1/price?view=summary", json={"scenario": {
                        **GB300, "electricity": {"price": f"{price:.7f} USD/kWh"}}})
                    route = PRICE
                else:
                    r = http.get("/api/v1/accelerators/gb300")
                    route = READ
                with lock:
                    seen[(route, str(r.status_code))] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return seen


def _counts(prom: Prometheus) -> Counter:
    """(route, status) -> requests, summed over hosts and workers, as Prometheus read them."""
    out: Counter = Counter()
    for row in prom.query('sum by (route, status) (costmodel_http_requests_total'
                          '{job="costmodel"})'):
        key = (row["metric"].get("route"), row["metric"].get("status"))
        if key[0] in (PRICE, READ):
            out[key] = int(float(row["value"][1]))
    return out


def _settled(prom: Prometheus, expected: Counter, seconds: float = 30) -> Counter:
    """What Prometheus reads once its scrapes have caught up with ``expected`` (or, after
    ``seconds``, what it reads then)."""
    deadline = time.monotonic() + seconds
    while True:
        got = _counts(prom)
        if got == expected or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def _workers(master: int) -> list[int]:
    """The pids of a gunicorn master's workers."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:  # ppid
            out.append(int(stat.parent.name))
    return out


def test_prometheus_reads_what_was_sent_and_a_killed_worker_loses_nothing(setup):
    cluster, prom = setup
    before = _settled(prom, Counter(), seconds=5)  # nothing of these routes yet
    assert before == Counter()
    first = _load(cluster.front, cluster.token, 1)
    assert first == Counter({(PRICE, "200"): CLIENTS * EACH // 2,
                             (READ, "200"): CLIENTS * EACH // 2})
    assert _settled(prom, first) == first
    # both hosts answered some (nginx takes each in turn): the sum is over hosts
    per_host = {row["metric"]["instance"]: float(row["value"][1]) for row in prom.query(
        'sum by (instance) (costmodel_http_requests_total{job="costmodel",'
        'route="/api/v1/price"})')}
    assert len(per_host) == 2 and all(v > 0 for v in per_host.values()), per_host
    assert sum(per_host.values()) == CLIENTS * EACH // 2

    # a worker of the first host killed (kill -9) between two loads; gunicorn starts another
    host = cluster.hosts[0]
    workers = _workers(host.proc.pid)
    assert len(workers) == 2, workers
    os.kill(workers[0], signal.SIGKILL)
    cl.wait_for("a new worker", lambda: len(set(_workers(host.proc.pid)) - {workers[0]}) == 2
                and workers[0] not in _workers(host.proc.pid), seconds=60)
    second = _load(cluster.front, cluster.token, 2)
    assert set(second) == {(PRICE, "200"), (READ, "200")}
    total = first + second
    # the dead worker's counts are still in the sum, and no one's are counted twice
    assert _settled(prom, total) == total
    # (and each host's own /metrics, read directly, sums its workers the same way)
    direct = 0.0
    for h in cluster.hosts:
        text = httpx.get(h.base + "/metrics", timeout=10).text
        direct += sum(float(m.group(1)) for m in re.finditer(
            r'^costmodel_http_requests_total\{[^}]*route="/api/v1/price"[^}]*\} (\S+)$',
            text, re.MULTILINE))
    assert direct == total[(PRICE, "200")]
    # the price cache saw every price: each a miss (a new price every time)
    misses = prom.query('sum(costmodel_price_cache_total{job="costmodel",result="miss"})')
    assert float(misses[0]["value"][1]) >= total[(PRICE, "200")]


def test_metrics_answer_on_the_hosts_own_address_not_through_nginx(setup):
    cluster, _ = setup
    assert httpx.get(cluster.front + "/metrics", timeout=10).status_code == 404
    direct = httpx.get(cluster.hosts[1].base + "/metrics", timeout=10)
    assert direct.status_code == 200
    assert "# TYPE costmodel_http_requests_total counter" in direct.text


def test_every_dashboard_expression_runs_on_prometheus(setup):
    cluster, prom = setup
    if not _counts(prom):  # run alone (or first): requests of its own to show
        sent = _load(cluster.front, cluster.token, 3)
        assert _settled(prom, sent) == sent
    dash = json.loads((ROOT / "deploy" / "grafana" / "costmodel-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert len(exprs) >= 10
    for expr in exprs:
        runnable = expr.replace("$job", "costmodel").replace("$__rate_interval", "1m")
        prom.query(runnable)  # a parse error is status "error"
    # one with data: requests a second by route (a rate: once two scrapes hold the routes)
    expr = dash["panels"][0]["targets"][0]["expr"].replace(
        "$job", "costmodel").replace("$__rate_interval", "1m")
    deadline = time.monotonic() + 30
    while True:
        routes = {r["metric"]["route"] for r in prom.query(expr)}
        if routes >= {PRICE, READ} or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert routes >= {PRICE, READ}


def test_the_request_id_ties_nginx_log_line_to_the_workers(setup):
    cluster, _ = setup
    r = httpx.get(cluster.front + "/api/v1/accelerators/h100-not-here", timeout=20,
                  headers={"Authorization": f"Bearer {cluster.token}",
                           "X-Request-ID": "chosen-by-the-client"})
    assert r.status_code == 404
    rid = r.headers["X-Request-ID"]
    # nginx's own id replaced the client's, and the problem quotes it
    assert re.fullmatch(r"[0-9a-f]{32}", rid), rid
    assert r.json()["request_id"] == rid

    def nginx_line() -> str | None:
        lines = [x for x in cluster.nginx_log.read_text(errors="replace").splitlines()
                 if f"request_id={rid}" in x]
        return lines[0] if lines else None

    def worker_line() -> dict | None:
        for host in cluster.hosts:
            for x in host.log.read_text(errors="replace").splitlines():
                if x.startswith("{") and rid in x:
                    line = json.loads(x)
                    if line.get("request_id") == rid:
                        return line
        return None
    cl.wait_for("the log lines", lambda: nginx_line() is not None and worker_line() is not None,
                seconds=15)
    assert "GET /api/v1/accelerators/h100-not-here" in nginx_line()
    assert " 404 " in nginx_line()
    line = worker_line()
    assert (line["logger"], line["path"], line["status"]) == (
        "costmodel.access", "/api/v1/accelerators/h100-not-here", 404)
