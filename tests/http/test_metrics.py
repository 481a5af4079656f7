"""GET /metrics in one process (costmodel/http/metrics.py): each figure moves by exactly what
the requests did, labels are URL rules (a bounded set), and who may read them. The figures of
a process are shared by every app made in it, so each test reads them before and after and
asserts the difference. Several workers summed, and a real Prometheus: test_metrics_hosts.py.
"""
from __future__ import annotations

import json
import uuid

import pytest
from conftest import auth
from prometheus_client.parser import text_string_to_metric_families

from costmodel.http.limits import current_limits
from costmodel.http.metrics import FIGURES, Access
from costmodel.store.repo import key_create

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


def _token(application, role: str = "admin") -> str:
    with application.extensions["costmodel"].sessions() as session:
        return key_create(session, f"metrics-{uuid.uuid4().hex[:6]}", role)[1]


def scrape(application) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    r = application.test_client().get("/metrics")
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"].startswith("text/plain; version=")
    out = {}
    for family in text_string_to_metric_families(r.data.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def delta(before, after, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


@pytest.fixture
def service(make_app):
    application = make_app()
    return application, _token(application)


def test_answers_are_counted_by_url_rule_method_and_status(service):
    application, token = service
    client = application.test_client()
    before = scrape(application)
    for _ in range(3):
        assert client.get(f"{API}/accelerators/gb300", headers=auth(token)).status_code == 200
    for key in ("nope-1", "nope-2"):  # two paths, one rule
        assert client.get(f"{API}/accelerators/{key}", headers=auth(token)).status_code == 404
    assert client.get(f"{API}/accelerators/gb300").status_code == 401
    assert client.get(f"/no/such/{uuid.uuid4().hex}").status_code == 404
    assert client.open(f"{API}/accelerators/gb300", method="BREW").status_code == 405
    after = scrape(application)
    rule = "/api/v1/accelerators/<path:key>"
    n = "costmodel_http_requests_total"
    assert delta(before, after, n, route=rule, method="GET", status="200") == 3
    assert delta(before, after, n, route=rule, method="GET", status="404") == 2
    assert delta(before, after, n, route=rule, method="GET", status="401") == 1
    assert delta(before, after, n, route="unmatched", method="GET", status="404") == 1
    # a method no one knows is counted, under one label: "other"
    assert delta(before, after, n, route="unmatched", method="other", status="405") == 1
    # the latency histogram counts the same answers, each in one bucket and the +Inf one
    h = "costmodel_http_request_duration_seconds"
    assert delta(before, after, h + "_count", route=rule) == 6
    assert delta(before, after, h + "_bucket", route=rule, le="+Inf") == 6
    assert delta(before, after, h + "_bucket", route=rule, le="60.0") == 6
    assert delta(before, after, h + "_sum", route=rule) > 0
    # no label holds a path as asked: only rules (a bounded set). The labels these requests
    # counted (the counts are the process's: another module's app may have counted its own)
    routes = {dict(labels).get("route") for (name, labels), count in after.items()
              if name == n and count != before.get((name, labels), 0)}
    assert {rule, "unmatched"} <= routes
    assert not any("nope" in r or "gb300" in r or "/no/such" in r for r in routes)
    assert routes <= {r.rule for r in application.url_map.iter_rules()} | {"unmatched"}


def test_the_price_cache_hits_and_misses(service):
    application, token = service
    client = application.test_client()
    body = {"scenario": {**GB300, "electricity": {"price": f"0.{uuid.uuid4().int % 10**6:06d}1 "
                                                           f"USD/kWh"}}}
    before = scrape(application)
    for _ in range(3):  # the first computed, the next two from the cache
        assert client.post(f"{API}/price", json=body, headers=auth(token)).status_code == 200
    after = scrape(application)
    assert delta(before, after, "costmodel_price_cache_total", result="miss") == 1
    assert delta(before, after, "costmodel_price_cache_total", result="hit") == 2


def test_batch_rows_priced(service):
    application, token = service
    rows = [{"electricity.price": "0.05 USD/kWh"}, {"electricity.price": "0.07 USD/kWh"},
            {"electricity.price": "0.09 USD/kWh"}, {"electricity.price": "-1 furlong"}]
    before = scrape(application)
    r = application.test_client().post(f"{API}/price/batch", headers=auth(token),
                                       json={"scenario": GB300, "overrides": rows})
    assert r.status_code == 200, r.json
    assert r.json["priced"] == 3  # the fourth row's error is in the answer, not priced
    after = scrape(application)
    assert delta(before, after, "costmodel_batch_rows_priced_total") == 3


def test_workbook_builds_and_their_seconds(service):
    application, token = service
    before = scrape(application)
    r = application.test_client().post(f"{API}/workbook", headers=auth(token),
                                       json={"scenarios": [{"scenario": GB300}]})
    assert r.status_code == 200, r.data[:300]
    assert r.mimetype.endswith("spreadsheetml.sheet")
    after = scrape(application)
    route = "/api/v1/workbook"
    assert delta(before, after, "costmodel_workbook_builds_total", route=route) == 1
    assert delta(before, after, "costmodel_workbook_build_seconds_count", route=route) == 1
    assert delta(before, after, "costmodel_workbook_build_seconds_sum", route=route) > 0
    # a JSON answer is not a workbook
    application.test_client().get(f"{API}/accelerators/gb300", headers=auth(token))
    assert delta(after, scrape(application), "costmodel_workbook_builds_total",
                 route="/api/v1/accelerators/<path:key>") == 0


def test_rate_limit_refusals(make_app):
    application = make_app(RATE_LIMIT="2/hour")
    token = _token(application, "viewer")
    client = application.test_client()
    before = scrape(application)
    statuses = [client.get(f"{API}/accelerators/gb300", headers=auth(token)).status_code
                for _ in range(4)]
    assert statuses == [200, 200, 429, 429]
    after = scrape(application)
    assert delta(before, after, "costmodel_limit_refusals_total", limit="rate") == 2
    assert delta(before, after, "costmodel_http_requests_total", status="429", method="GET",
                 route="/api/v1/accelerators/<path:key>") == 2


def test_heavy_slots_in_use_and_refused(make_app):
    application = make_app(HEAVY_PER_WORKER=1)
    token = _token(application)
    grid = {"scenario": {"scenario": GB300}, "x": "electricity.price=0.05..0.15 USD/kWh:3",
            "y": "utilisation=0.5,1"}
    before = scrape(application)
    limits = application.extensions["costmodel.limits"]
    with application.test_request_context():
        assert current_limits() is limits
    with limits.heavy():  # this worker's one slot, held
        held = scrape(application)
        assert delta(before, held, "costmodel_heavy_slots_in_use") == 1
        r = application.test_client().post(f"{API}/sensitivity/grid", json=grid,
                                           headers=auth(token))
        assert r.status_code == 429
    after = scrape(application)
    assert delta(before, after, "costmodel_heavy_slots_in_use") == 0
    assert delta(before, after, "costmodel_limit_refusals_total", limit="heavy") == 1


def test_redis_failing_is_an_error_and_the_limits_fail_open(make_app):
    # nothing listens on port 1: every call fails, then Redis is set aside for 5 s
    application = make_app(RATE_LIMIT="100/hour", REDIS_URL="redis://127.0.0.1:1/0")
    token = _token(application, "viewer")
    client = application.test_client()
    before = scrape(application)
    for _ in range(3):
        assert client.get(f"{API}/accelerators/gb300", headers=auth(token)).status_code == 200
    after = scrape(application)
    # one failed call (then set aside: not asked again within 5 s); three requests counted
    # by the worker alone
    assert delta(before, after, "costmodel_store_errors_total", store="redis", kind="error") == 1
    assert delta(before, after, "costmodel_fail_open_total", limit="rate") == 3


def test_database_unreachable_is_counted(make_app):
    # a PostgreSQL address nothing listens on
    application = make_app(DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",
                           OPEN_READS=True)
    before = scrape(application)
    r = application.test_client().get(f"{API}/accelerators/gb300")
    assert r.status_code == 503
    assert r.json["type"].endswith("store-unreachable")
    after = scrape(application)
    assert delta(before, after, "costmodel_store_errors_total", store="database",
                 kind="unreachable") == 1


def test_every_figure_is_exposed_with_its_type(service):
    application, token = service
    client = application.test_client()
    client.post(f"{API}/price", json={"scenario": GB300}, headers=auth(token))
    text = client.get("/metrics").data.decode()
    for name, kind in FIGURES.items():
        assert f"# TYPE {name} {kind}" in text, name


# ---- who may read them ---------------------------------------------------------------------

def test_loopback_reads_them_but_not_through_the_proxy_nor_from_elsewhere(service):
    application, _ = service
    client = application.test_client()
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    for headers, remote in (({"X-Forwarded-For": "203.0.113.7"}, "127.0.0.1"),
                            ({"Forwarded": "for=203.0.113.7"}, "127.0.0.1"),
                            ({}, "10.1.2.3"), ({}, "203.0.113.7")):
        r = client.get("/metrics", headers=headers, environ_base={"REMOTE_ADDR": remote})
        assert r.status_code == 403, (headers, remote)
        assert r.mimetype == "application/problem+json"
        assert "COSTMODEL_METRICS_ALLOW" in r.json["detail"]
        assert r.json["request_id"] == r.headers["X-Request-ID"]


def test_an_allow_list_and_a_key(make_app, monkeypatch):
    monkeypatch.setenv("COSTMODEL_METRICS_ALLOW", "10.0.0.0/24, 192.0.2.9")
    monkeypatch.setenv("COSTMODEL_METRICS_KEY", "s3cret-metrics-key")
    client = make_app().test_client()

    def status(remote: str, **headers: str) -> int:
        return client.get("/metrics", headers=headers,
                          environ_base={"REMOTE_ADDR": remote}).status_code
    assert status("10.0.0.20") == 200
    assert status("192.0.2.9") == 200
    assert status("10.0.1.20") == 403
    assert status("127.0.0.1") == 403  # the list replaces the default
    assert status("203.0.113.7", Authorization="Bearer s3cret-metrics-key") == 200
    assert status("203.0.113.7", Authorization="Bearer s3cret-metrics-keY") == 403
    # the key opens it through the proxy too (an address never does)
    assert status("127.0.0.1", Authorization="Bearer s3cret-metrics-key",
                  **{"X-Forwarded-For": "203.0.113.7"}) == 200


def test_key_only():
    access = Access("none", "k" * 32)
    assert not access.allows("127.0.0.1", {})
    assert access.allows("198.51.100.1", {"Authorization": "Bearer " + "k" * 32})
    assert Access(None, None).allows("::1", {})
    assert Access(None, None).allows("127.0.0.5", {})
    assert not Access(None, None).allows("::ffff:10.0.0.1", {})
    with pytest.raises(ValueError):
        Access("not-an-address", None)


def test_metrics_off(make_app):
    on = make_app()
    before = scrape(on)
    off = make_app(METRICS=False)
    client = off.test_client()
    assert client.get("/metrics").status_code == 404
    client.get(f"{API}/accelerators/gb300")
    after = scrape(on)
    # the app without metrics counted nothing (the listener of the app layer is still on's)
    assert delta(before, after, "costmodel_http_requests_total", status="401", method="GET",
                 route="/api/v1/accelerators/<path:key>") == 0


def test_the_dashboard_names_only_figures_that_exist():
    """deploy/grafana: JSON that Grafana imports (the fields it requires), each panel's
    expressions naming figures of this module (a histogram's _bucket, _sum, _count) or
    Prometheus's own ``up``. (test_metrics_hosts.py runs each expression on Prometheus.)"""
    import re
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / \
        "costmodel-dashboard.json"
    dash = json.loads(path.read_text())
    for field, kind in (("title", str), ("uid", str), ("schemaVersion", int),
                        ("panels", list), ("templating", dict), ("time", dict)):
        assert isinstance(dash.get(field), kind), field
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dash["uid"])
    names = set(FIGURES) | {"up"}
    for f, kind in FIGURES.items():
        if kind == "histogram":
            names |= {f + "_bucket", f + "_sum", f + "_count"}
    ids, used = set(), set()
    variables = {v["name"] for v in dash["templating"]["list"]}
    for panel in dash["panels"]:
        for field in ("id", "type", "title", "gridPos", "targets", "datasource"):
            assert field in panel, (panel.get("title"), field)
        assert panel["id"] not in ids
        ids.add(panel["id"])
        grid = panel["gridPos"]
        assert {"h", "w", "x", "y"} <= grid.keys() and grid["x"] + grid["w"] <= 24
        assert panel["datasource"]["type"] == "prometheus"
        assert panel["datasource"]["uid"].strip("${}") in variables
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert {"refId", "expr"} <= target.keys()
            expr = target["expr"]
            metrics = set(re.findall(r"\b(costmodel_[a-z_]+|up)\b(?=\s*[{\[(]|\s*\))", expr))
            assert metrics, (panel["title"], expr)
            assert metrics <= names, (panel["title"], metrics - names)
            used |= metrics
            for var in re.findall(r"\$(\w+)", expr):
                assert var in variables | {"__rate_interval"}, var
    # every figure is on the dashboard
    assert {n.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
            for n in used} >= set(FIGURES)
