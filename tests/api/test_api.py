"""The pricing service over HTTP: every endpoint's success and failure paths, on SQLite and
(when TEST_DATABASE_URL is set) PostgreSQL.

The ``database`` fixture is module-wide and common to every test here, so each test makes its
own uniquely named objects and asserts only presence or relative changes, never global counts.

Every expected number is hand arithmetic from published figures (fixtures/catalog, cited
below) or the documented defaults, written out here; none is pasted from a run of the code.
"""
from __future__ import annotations

import io
import json
import math
import re
import tomllib
import uuid
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import auth
from openpyxl import load_workbook

from costmodel.cli import main as cli_main
from costmodel.render.workbook.names import named_cells
from costmodel.server import create_app

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_TCO = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
ILLUSTRATIVE_CURVES = ROOT / "fixtures" / "curves" / "illustrative-gpt-oss-120b.csv"

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PROBLEM = "application/problem+json"

# ---- published figures and hand arithmetic ----------------------------------------------------

# EIA Electric Power Monthly, US industrial average, May 2026: 8.71 cent/kWh (catalog
# "eia-2026-05-us-industrial", the default electricity price).
EIA_PRICE = 0.0871  # USD/kWh
# DeepSeek R1 on GB300 (The Weighted Average, Aug 2026): 11,781 token/s per kW of the 1,400 W
# package TDP at peak; 118 token/s/kW matched at 169 token/s/user. Jalapeño matched: 12,258.
GB300_RATED_W = 1400.0
GB300_PEAK_PER_KW = 11781.0
GB300_MATCHED_PER_KW = 118.0
JALAPENO_MATCHED_PER_KW = 12258.0
B200_RATED_W = 1000.0  # NVIDIA HGX B200 specifications, 2024


def energy_per_mtok(usd_per_kwh: float, watts: float, token_per_s: float) -> float:
    """USD per million tokens of electricity: USD/kWh x kW / (token/s x 3600 s/h) x 1e6."""
    return usd_per_kwh * (watts / 1000) / (token_per_s * 3600) * 1e6


# Chip boundary, rated basis, utilisation 1: throughput = 11,781 x 1.4 kW, so the kW cancel:
# 0.0871 / (11,781 x 3,600) x 1e6 ~= 0.002054 USD/Mtok.
GB300_PEAK_ENERGY = EIA_PRICE / (GB300_PEAK_PER_KW * 3600) * 1e6
# Facility power per accelerator from the defaults in costmodel/model/inputs.py: node wall =
# (8 x 1,400 W + 2,400 W host) / 0.94 PSU; rack = (4 nodes + 1,500 W switch + 500 W other) /
# 0.97 delivery, split over 32 accelerators; facility = rack x PUE 1.3  ~= 2,507.5 W.
GB300_FACILITY_W = ((4 * ((8 * 1400 + 2400) / 0.94) + 1500 + 500) / 0.97) / 32 * 1.3

# fixtures/curves/illustrative-gpt-oss-120b.csv (illustrative sweeps): best interactivity
# H100 180, B200 320, MI300X 150 token/s/user; measured throughput at 150 token/s/user:
# H100 560 token/s (concurrency 4), MI300X 150 token/s (concurrency 1).
CURVE_HW = ("h100", "b200", "mi300x")
MI300X_BEST = 150.0
B200_BEST = 320.0
H100_AT_150 = 560.0
MI300X_AT_150 = 150.0


def test_hand_figures():
    # guards against a slip in the arithmetic above
    assert round(GB300_PEAK_ENERGY, 6) == 0.002054
    assert GB300_PEAK_ENERGY == pytest.approx(
        energy_per_mtok(EIA_PRICE, GB300_RATED_W, GB300_PEAK_PER_KW * GB300_RATED_W / 1000),
        rel=1e-12)
    assert GB300_FACILITY_W == pytest.approx(2507.5, abs=0.1)


# ---- helpers ----------------------------------------------------------------------------------

def uid(prefix: str = "t") -> str:
    """A name no other test (or run) uses: lower-case, valid as a catalog key."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


GB300_PEAK = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


def curve_id(hw: str) -> str:
    """The id of one of the illustrative GPT-OSS 120B sweeps."""
    return f"{hw}/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"


def curve_scenario(hw: str, at="peak") -> dict:
    return {"accelerator": hw, "operating_point": {"curve": curve_id(hw), "at": at}}


def problem(resp, status: int, kind: str | None = None) -> dict:
    """Check an RFC 9457 answer and return its body."""
    text = resp.get_data(as_text=True)
    assert resp.status_code == status, text[:1000]
    assert resp.mimetype == PROBLEM, resp.mimetype
    body = json.loads(text)
    assert {"type", "title", "status", "detail", "instance"} <= body.keys()
    assert body["status"] == status
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["instance"] == resp.request.path
    assert "Traceback" not in text and 'File "' not in text
    if kind is not None:
        assert body["type"].endswith("/" + kind), body["type"]
    return body


def ok(resp, status: int = 200) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)[:1000]
    assert resp.mimetype == "application/json"
    return resp.get_json()


def value(q: dict) -> float:
    """The number of an answered quantity {"value", "unit"}."""
    assert set(q) == {"value", "unit"}, q
    return q["value"]


def iso_time(text: str) -> datetime:
    """An RFC 3339 time, as the OpenAPI ``date-time`` format says: with its offset."""
    t = datetime.fromisoformat(text)
    assert t.tzinfo is not None, f"{text!r} has no UTC offset"
    return t


@pytest.fixture(scope="module")
def viewer(tokens) -> dict:
    return auth(tokens["viewer"])


@pytest.fixture(scope="module")
def editor(tokens) -> dict:
    return auth(tokens["editor"])


@pytest.fixture(scope="module")
def admin(tokens) -> dict:
    return auth(tokens["admin"])


@pytest.fixture(scope="module")
def open_app(database):
    """The same database, with reads open to callers without a key."""
    application = create_app({"DATABASE_URL": database, "OPEN_READS": True})
    yield application
    application.extensions["costmodel"].dispose()


def price(client, headers, scenario=None, **body):
    if scenario is not None:
        body["scenario"] = scenario
    return client.post(f"{API}/price", json=body, headers=headers)


def save_scenario(client, editor, scenario: dict, name: str | None = None) -> dict:
    return ok(client.post(f"{API}/scenarios", json={"name": name or uid("scenario-"),
                                                   "scenario": scenario}, headers=editor), 201)


# ---- health, OpenAPI, docs ----------------------------------------------------------------------

def test_healthz(client):
    import costmodel
    body = ok(client.get("/healthz"))
    assert body["status"] == "ok"
    assert body["version"] == costmodel.__version__


# every route the service declares, written out by hand
API_PATHS = {
    "/api/v1/price": {"post"},
    "/api/v1/compare": {"post"},
    "/api/v1/workbook": {"post"},
    "/api/v1/workbook/reprice": {"post"},
    "/api/v1/accelerators": {"get", "post"},
    "/api/v1/accelerators/{key}": {"get"},
    "/api/v1/operating-points": {"get", "post"},
    "/api/v1/operating-points/{key}": {"get"},
    "/api/v1/electricity-prices": {"get", "post"},
    "/api/v1/electricity-prices/{key}": {"get"},
    "/api/v1/grid-factors": {"get", "post"},
    "/api/v1/grid-factors/{key}": {"get"},
    "/api/v1/systems": {"get", "post"},
    "/api/v1/systems/{key}": {"get"},
    "/api/v1/curves": {"get", "post"},
    "/api/v1/curves/{curve_id}": {"get"},
    "/api/v1/scenarios": {"get", "post"},
    "/api/v1/scenarios/{scenario_id}": {"get"},
    "/api/v1/scenarios/{scenario_id}/revisions": {"post"},
    "/api/v1/scenarios/{scenario_id}/revisions/{number}": {"get"},
    "/api/v1/scenarios/{scenario_id}/workbook": {"get"},
    "/api/v1/keys": {"get", "post"},
    "/api/v1/keys/{key_id}": {"delete"},
}
# served outside the spec: the spec itself, its docs page and assets, and the health check
UNDOCUMENTED = {"/healthz", "/api/v1/openapi.json", "/api/v1/docs", "/api/v1/docs/assets/{name}",
                "/static/{filename}", "/metrics"}


@pytest.fixture(scope="module")
def spec(app) -> dict:
    resp = app.test_client().get(f"{API}/openapi.json")
    return ok(resp)


def test_openapi_document(spec):
    assert spec["openapi"] == "3.1.0"
    schemes = spec["components"]["securitySchemes"]
    assert isinstance(schemes, dict) and schemes
    for path, methods in API_PATHS.items():
        assert path in spec["paths"], path
        assert methods <= set(spec["paths"][path]), path


def test_openapi_lists_every_served_route(app, spec):
    served = {}
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("web."):  # the pages (HTML) are not API operations
            continue
        path = re.sub(r"<(?:[^:<>]+:)?(\w+)>", r"{\1}", rule.rule)
        served.setdefault(path, set()).update(m.lower() for m in rule.methods
                                              if m not in ("HEAD", "OPTIONS"))
    assert set(served) - UNDOCUMENTED == set(spec["paths"])
    for path, methods in spec["paths"].items():
        assert set(methods) == served[path], path


def test_openapi_security_names_declared_schemes(spec):
    schemes = set(spec["components"]["securitySchemes"])
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for requirement in op.get("security", []):
                assert set(requirement) <= schemes, (path, method)
            for code, answer in op["responses"].items():
                if int(code) >= 400 and code not in ("414", "431"):  # gunicorn's, as HTML
                    assert PROBLEM in answer["content"], (path, method, code)


def test_openapi_document_validates(spec):
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(spec)


def test_docs_page_is_offline(client):
    resp = client.get(f"{API}/docs")
    assert resp.status_code == 200
    assert resp.mimetype == "text/html"
    html = resp.get_data(as_text=True)
    urls = re.findall(r"<(?:script|link)\b[^>]*\b(?:src|href)\s*=\s*[\"']([^\"']+)", html)
    assert urls, "the page loads Swagger UI from somewhere"
    for url in urls:
        assert not re.match(r"(?i)(https?:)?//", url), url
    assert f"{API}/docs/assets/swagger-ui-bundle.js" in urls
    assert f"{API}/openapi.json" in html


@pytest.mark.parametrize("name,mimetype", [("swagger-ui-bundle.js", "text/javascript"),
                                           ("swagger-ui-standalone-preset.js", "text/javascript"),
                                           ("swagger-ui.css", "text/css")])
def test_docs_assets(client, name, mimetype):
    resp = client.get(f"{API}/docs/assets/{name}")
    assert resp.status_code == 200
    assert resp.mimetype == mimetype
    assert len(resp.data) > 1000


@pytest.mark.parametrize("name", ["nope.js", "..%2f..%2f..%2fetc%2fpasswd", "index.html"])
def test_docs_unknown_asset_404(client, name):
    problem(client.get(f"{API}/docs/assets/{name}"), 404, "not-found")


def test_unknown_route_and_method_are_problems(client, viewer):
    problem(client.get(f"{API}/nothing-here", headers=viewer), 404, "not-found")
    body = problem(client.put(f"{API}/price", headers=viewer), 405, "method-not-allowed")
    assert body["title"]


# ---- POST /price ------------------------------------------------------------------------------

def test_price_inline_scenario(client, viewer):
    body = ok(price(client, viewer, GB300_PEAK))
    energy = body["cost_per_mtok"]["energy"]
    assert energy["unit"] == "USD/Mtok"
    assert energy["value"] == pytest.approx(GB300_PEAK_ENERGY, rel=1e-9)
    assert value(body["power_per_accelerator"]) == GB300_RATED_W
    assert body["power_per_accelerator"]["unit"] == "W"
    assert value(body["throughput_per_kw"]) == pytest.approx(GB300_PEAK_PER_KW, rel=1e-12)
    assert body["disclosure"]["boundary"] == "chip"
    assert body["disclosure"]["electricity"]["price"] == {"value": EIA_PRICE, "unit": "USD/kWh"}
    # every step is answered as a quantity with its unit
    for name, step in body["steps"].items():
        assert {"value", "unit"} <= set(step), name


def test_price_quantities_as_text_or_value_unit(client, viewer):
    as_text = ok(price(client, viewer, {**GB300_PEAK, "electricity": {"price": "0.10 USD/kWh"}}))
    as_pair = ok(price(client, viewer, {**GB300_PEAK, "electricity": {
        "price": {"value": 10, "unit": "cent/kWh"}}}))
    expected = 0.10 / (GB300_PEAK_PER_KW * 3600) * 1e6
    for body in (as_text, as_pair):
        assert value(body["cost_per_mtok"]["energy"]) == pytest.approx(expected, rel=1e-9)


def test_price_with_overrides(client, viewer):
    body = ok(price(client, viewer, GB300_PEAK, overrides={"power.boundary": "facility"}))
    assert body["disclosure"]["boundary"] == "facility"
    assert value(body["power_per_accelerator"]) == pytest.approx(GB300_FACILITY_W, rel=1e-9)
    # energy scales with the facility power over the same throughput
    assert value(body["cost_per_mtok"]["energy"]) == pytest.approx(
        GB300_PEAK_ENERGY * GB300_FACILITY_W / GB300_RATED_W, rel=1e-9)


def test_price_saved_scenario_with_overrides(client, viewer, editor):
    saved = save_scenario(client, editor, GB300_PEAK)
    sid = saved["scenario_id"]
    plain = ok(price(client, viewer, scenario_id=sid))
    assert value(plain["cost_per_mtok"]["energy"]) == pytest.approx(GB300_PEAK_ENERGY, rel=1e-9)
    assert plain["disclosure"]["boundary"] == "chip"
    over = ok(price(client, viewer, scenario_id=sid,
                    overrides={"power.boundary": "facility",
                               "electricity.price": "0.10 USD/kWh"}))
    assert over["disclosure"]["boundary"] == "facility"
    assert value(over["cost_per_mtok"]["energy"]) == pytest.approx(
        energy_per_mtok(0.10, GB300_FACILITY_W, GB300_PEAK_PER_KW * GB300_RATED_W / 1000),
        rel=1e-9)
    # the saved scenario itself is unchanged by pricing it with overrides
    again = ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))
    assert again["number"] == 1 and again["scenario"] == GB300_PEAK


def test_price_saved_scenario_at_a_revision(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    ok(client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": {
        **GB300_PEAK, "electricity": {"price": "0.10 USD/kWh"}}}, headers=editor), 201)
    latest = ok(price(client, viewer, scenario_id=sid))
    first = ok(price(client, viewer, scenario_id=sid, revision=1))
    assert value(latest["cost_per_mtok"]["energy"]) == pytest.approx(
        0.10 / (GB300_PEAK_PER_KW * 3600) * 1e6, rel=1e-9)
    assert value(first["cost_per_mtok"]["energy"]) == pytest.approx(GB300_PEAK_ENERGY, rel=1e-9)
    problem(price(client, viewer, scenario_id=sid, revision=3), 404, "not-found")


def test_price_revision_with_inline_scenario_422(client, viewer):
    scenario = {**GB300_PEAK, "name": uid("revision-")}
    body = problem(price(client, viewer, scenario, revision=1), 422, "invalid-input")
    assert body["errors"][0]["path"] == "revision"
    # the same once the scenario's result is cached: the request is checked first
    ok(price(client, viewer, scenario))
    body = problem(price(client, viewer, scenario, revision=1), 422, "invalid-input")
    assert body["errors"][0]["path"] == "revision"


@pytest.mark.parametrize("body", [{}, {"overrides": {"power.boundary": "rack"}},
                                  {"scenario": None, "scenario_id": None}],
                         ids=["neither", "overrides-only", "nulls"])
def test_price_neither_scenario_nor_id_422(client, viewer, body):
    out = problem(client.post(f"{API}/price", json=body, headers=viewer), 422, "invalid-input")
    assert out["errors"][0]["path"] == "scenario"


def test_price_both_scenario_and_id_422(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    scenario = {**GB300_PEAK, "name": uid("both-")}
    out = problem(price(client, viewer, scenario, scenario_id=sid), 422, "invalid-input")
    assert out["errors"][0]["path"] == "scenario"
    # the same once the inline scenario's result is cached
    ok(price(client, viewer, scenario))
    out = problem(price(client, viewer, scenario, scenario_id=sid), 422, "invalid-input")
    assert out["errors"][0]["path"] == "scenario"


def test_price_unknown_scenario_id_404(client, viewer):
    body = problem(price(client, viewer, scenario_id=2_000_000_000), 404, "not-found")
    assert "2000000000" in body["detail"]


@pytest.mark.parametrize("path,body,error_path", [
    ("/price", {"scenario_id": 2**63}, "scenario_id"),
    ("/price", {"scenario_id": 2**31}, "scenario_id"),
    ("/price", {"scenario_id": 0}, "scenario_id"),
    ("/price", {"scenario_id": "{sid}", "revision": 2**63}, "revision"),
    ("/compare", {"scenarios": [{"scenario_id": "{sid}"}, {"scenario_id": 2**63}]},
     "scenarios[1].scenario_id"),
    ("/workbook", {"scenarios": [{"scenario_id": "{sid}", "revision": 2**31}]},
     "scenarios[0].revision"),
], ids=["price-id-2^63", "price-id-2^31", "price-id-0", "price-revision", "compare-id",
        "workbook-revision"])
def test_ids_out_of_range_422(client, viewer, editor, path, body, error_path):
    # ids are positive 32-bit integers on every backend: larger ones never reach the database
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    text = json.dumps(body).replace('"{sid}"', str(sid))
    resp = client.post(API + path, data=text, content_type="application/json", headers=viewer)
    out = problem(resp, 422, "invalid-input")
    assert out["errors"][0]["path"] == error_path


@pytest.mark.parametrize("revision", [2**31, 2**63])
def test_workbook_revision_out_of_range_is_a_client_error(client, viewer, editor, revision):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    resp = client.get(f"{API}/scenarios/{sid}/workbook?revision={revision}", headers=viewer)
    assert resp.status_code in (404, 422), resp.get_data(as_text=True)
    problem(resp, resp.status_code)


def test_price_wrong_dimension_422(client, viewer):
    scenario = {"accelerator": {"catalog": "gb300", "rated_power": "5 kg"},
                "operating_point": "deepseek-r1/gb300/peak"}
    body = problem(price(client, viewer, scenario), 422, "invalid-input")
    assert body["errors"][0]["path"] == "scenario.accelerator.rated_power"
    assert "power" in body["errors"][0]["message"]
    assert body["detail"]


def test_price_unknown_catalog_key_422(client, viewer):
    body = problem(price(client, viewer, {"accelerator": uid("nope-"),
                                          "operating_point": "deepseek-r1/gb300/peak"}), 422)
    assert body["errors"][0]["path"].startswith("scenario.accelerator")


def test_price_unreachable_operating_point(client, viewer):
    scenario = {"accelerator": "b200", "operating_point": {
        "curve": curve_id("b200"), "at": {"interactivity": "400 token/s/user"}}}
    body = problem(price(client, viewer, scenario), 422, "unreachable")
    assert re.search(r"\b320\b", body["detail"]), body["detail"]  # B200's best reachable
    assert body["errors"][0]["path"].startswith("scenario.operating_point")


def test_price_reachable_curve_point(client, viewer):
    # MI300X at 150 token/s/user is its measured concurrency-1 point: 150 token/s, 750 W
    scenario = {"accelerator": "mi300x", "operating_point": {
        "curve": curve_id("mi300x"), "at": {"interactivity": "150 token/s/user"}}}
    body = ok(price(client, viewer, scenario))
    assert value(body["throughput"]) == pytest.approx(MI300X_AT_150, rel=1e-12)
    assert value(body["cost_per_mtok"]["energy"]) == pytest.approx(
        energy_per_mtok(EIA_PRICE, 750.0, MI300X_AT_150), rel=1e-9)


@pytest.mark.parametrize("scenario,path", [
    ({"accelerator": "b200", "operating_point": {"curve": "/etc/passwd"}},
     "scenario.operating_point.curve"),
    ({"accelerator": "b200", "operating_point": {"curve": str(ILLUSTRATIVE_CURVES),
                                                 "at": "peak"}},
     "scenario.operating_point.curve"),
    ({**GB300_PEAK, "power": {"trace": "/etc/passwd"}}, "scenario.power.trace"),
], ids=["curve-etc-passwd", "curve-real-csv-file", "power-trace"])
def test_price_never_reads_files(client, viewer, scenario, path):
    body = problem(price(client, viewer, scenario), 422, "invalid-input")
    assert body["errors"][0]["path"] == path
    assert "root:" not in json.dumps(body)  # nothing of /etc/passwd came back


@pytest.mark.parametrize("body,path", [
    ({"scenario_id": True}, "scenario_id"),
    ({"scenario_id": "1"}, "scenario_id"),
    ({"scenario_id": 1.0}, "scenario_id"),
    ({"scenario": {**GB300_PEAK, "utilisation": True}}, "scenario.utilisation"),
    ({"scenario": {**GB300_PEAK, "idle_power": False}}, "scenario.idle_power"),
    ({"scenario": GB300_PEAK, "surprise": 1}, "surprise"),
], ids=["id-true", "id-string", "id-float", "utilisation-true", "idle-false", "extra-key"])
def test_price_strict_input(client, viewer, body, path):
    out = problem(client.post(f"{API}/price", json=body, headers=viewer), 422, "invalid-input")
    assert out["errors"][0]["path"] == path


def test_price_malformed_json_400(client, viewer):
    resp = client.post(f"{API}/price", data='{"scenario": ', content_type="application/json",
                       headers=viewer)
    problem(resp, 400, "bad-request")


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          None])
def test_price_wrong_content_type_415(client, viewer, content_type):
    kwargs = {"content_type": content_type} if content_type else {}
    resp = client.post(f"{API}/price", data=json.dumps({"scenario": GB300_PEAK}),
                       headers=viewer, **kwargs)
    problem(resp, 415, "unsupported-media-type")


def test_price_body_over_the_limit_413(client, viewer):
    big = json.dumps({"scenario": {**GB300_PEAK, "description": "x" * (2 * 2**20 + 1)}})
    assert len(big) > 2 * 2**20
    resp = client.post(f"{API}/price", data=big, content_type="application/json",
                       headers=viewer)
    problem(resp, 413, "payload-too-large")


def test_unexpected_failure_is_a_bare_500(app, client, viewer, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("secret internal detail /srv/costmodel")
    monkeypatch.setattr(app.extensions["costmodel"], "context", boom)
    scenario = {**GB300_PEAK, "name": uid("boom-")}  # not answered from a cache
    body = problem(price(client, viewer, scenario), 500, "internal-error")
    assert "secret" not in json.dumps(body) and "RuntimeError" not in json.dumps(body)


# ---- authentication and roles ----------------------------------------------------------------

def test_price_needs_a_key_when_reads_are_closed(app, client):
    assert app.config["OPEN_READS"] is False
    resp = price(client, {}, GB300_PEAK)
    problem(resp, 401, "unauthorized")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("path", ["/accelerators", "/curves", "/scenarios",
                                  "/operating-points/deepseek-r1/gb300/peak"])
def test_catalog_reads_need_a_key_when_reads_are_closed(client, viewer, path):
    problem(client.get(API + path), 401, "unauthorized")
    ok(client.get(API + path, headers=viewer))


def test_key_as_bearer_or_header(client, tokens):
    for headers in (auth(tokens["viewer"]), {"X-API-Key": tokens["viewer"]},
                    {"Authorization": f"bearer {tokens['viewer']}"}):
        ok(price(client, headers, GB300_PEAK))


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer cm_000000000000_not-a-real-secret"},
    {"Authorization": "Bearer not-even-the-format"},
    {"X-API-Key": "cm_abc_def"},
], ids=["unknown", "malformed", "header"])
def test_invalid_token_401(client, headers):
    resp = price(client, headers, GB300_PEAK)
    problem(resp, 401, "unauthorized")
    assert "invalid_token" in resp.headers["WWW-Authenticate"]


def test_right_prefix_wrong_secret_401(client, tokens):
    cm, prefix, secret = tokens["admin"].split("_", 2)  # cm_<prefix>_<secret>
    forged = f"{cm}_{prefix}_{'A' * len(secret)}"
    assert forged != tokens["admin"]
    problem(price(client, auth(forged), GB300_PEAK), 401, "unauthorized")
    problem(client.get(f"{API}/keys", headers=auth(forged)), 401, "unauthorized")


@pytest.mark.parametrize("method,path,body", [
    ("post", "/scenarios", {"name": "x", "scenario": GB300_PEAK}),
    ("post", "/accelerators", {"key": "viewer-cannot", "data": {"rated_power": "1 W"}}),
    ("post", "/operating-points", {"key": "viewer-cannot", "data": {}}),
    ("post", "/electricity-prices", {"key": "viewer-cannot", "data": {}}),
    ("post", "/systems", {"key": "viewer-cannot", "data": {}}),
    ("post", "/curves", {"content": "x"}),
    ("post", "/scenarios/1/revisions", {"scenario": GB300_PEAK}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_writes_need_editor(client, viewer, method, path, body):
    resp = getattr(client, method)(API + path, json=body, headers=viewer)
    out = problem(resp, 403, "forbidden")
    assert "editor" in out["detail"]
    problem(getattr(client, method)(API + path, json=body), 401, "unauthorized")


@pytest.mark.parametrize("method,path,body", [
    ("get", "/keys", None),
    ("post", "/keys", {"name": "x", "role": "viewer"}),
    ("delete", "/keys/1", None),
])
def test_keys_need_admin(client, viewer, editor, method, path, body):
    for headers in (viewer, editor):
        out = problem(getattr(client, method)(API + path, json=body, headers=headers), 403,
                      "forbidden")
        assert "admin" in out["detail"]
    problem(getattr(client, method)(API + path, json=body), 401, "unauthorized")


def test_keys_create_list_revoke(client, admin):
    name = uid("key-")
    created = ok(client.post(f"{API}/keys", json={"name": name, "role": "viewer"},
                             headers=admin), 201)
    token = created["token"]
    assert token.startswith("cm_") and created["role"] == "viewer"
    assert created["revoked_at"] is None
    iso_time(created["created_at"])
    ok(price(client, auth(token), GB300_PEAK))
    # listed, never with its secret
    listing = client.get(f"{API}/keys", headers=admin)
    mine = [k for k in ok(listing)["items"] if k["id"] == created["id"]]
    assert mine and mine[0]["name"] == name and "token" not in mine[0]
    assert token.split("_", 2)[2] not in listing.get_data(as_text=True)
    # revoked: refused at once
    revoked = ok(client.delete(f"{API}/keys/{created['id']}", headers=admin))
    assert revoked["id"] == created["id"]
    iso_time(revoked["revoked_at"])
    resp = price(client, auth(token), GB300_PEAK)
    problem(resp, 401, "unauthorized")
    assert "invalid_token" in resp.headers["WWW-Authenticate"]
    listed = [k for k in ok(client.get(f"{API}/keys", headers=admin))["items"]
              if k["id"] == created["id"]]
    assert listed[0]["revoked_at"] is not None


def test_keys_roles_grant_what_they_say(client, admin):
    editor_token = ok(client.post(f"{API}/keys", json={"name": uid("key-"), "role": "editor"},
                                  headers=admin), 201)["token"]
    save_scenario(client, auth(editor_token), GB300_PEAK)
    problem(client.get(f"{API}/keys", headers=auth(editor_token)), 403, "forbidden")


@pytest.mark.parametrize("body,path", [
    ({"name": "x", "role": "root"}, "role"),
    ({"name": "", "role": "viewer"}, "name"),
    ({"role": "viewer"}, "name"),
])
def test_keys_create_invalid_422(client, admin, body, path):
    out = problem(client.post(f"{API}/keys", json=body, headers=admin), 422, "invalid-input")
    assert out["errors"][0]["path"] == path


def test_keys_revoke_unknown_404(client, admin):
    problem(client.delete(f"{API}/keys/2000000000", headers=admin), 404, "not-found")


def test_open_reads(open_app, tokens):
    client = open_app.test_client()
    body = ok(price(client, {}, GB300_PEAK))
    assert value(body["cost_per_mtok"]["energy"]) == pytest.approx(GB300_PEAK_ENERGY, rel=1e-9)
    ok(client.get(f"{API}/accelerators/gb300"))
    # writes always need a key
    resp = client.post(f"{API}/scenarios", json={"name": uid(), "scenario": GB300_PEAK})
    problem(resp, 401, "unauthorized")
    assert "WWW-Authenticate" in resp.headers
    problem(client.post(f"{API}/accelerators", json={"key": uid(), "data": {}}), 401)
    problem(client.get(f"{API}/keys"), 401)
    # and a viewer key is still only a viewer
    problem(client.post(f"{API}/scenarios", json={"name": uid(), "scenario": GB300_PEAK},
                        headers=auth(tokens["viewer"])), 403, "forbidden")


# ---- POST /compare ----------------------------------------------------------------------------

def test_compare_published_matched_points(client, viewer):
    body = ok(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched"}},
        {"scenario": {"accelerator": "jalapeno",
                      "operating_point": "deepseek-r1/jalapeno/matched"}},
    ]}, headers=viewer))
    assert len(body["scenarios"]) == 2
    ratio = body["ratios"]["throughput_per_kw"]
    assert ratio[0] == pytest.approx(1.0)
    assert ratio[1] == pytest.approx(JALAPENO_MATCHED_PER_KW / GB300_MATCHED_PER_KW, rel=1e-9)
    for s, per_kw in zip(body["scenarios"], (GB300_MATCHED_PER_KW, JALAPENO_MATCHED_PER_KW),
                         strict=True):
        assert value(s["throughput_per_kw"]) == pytest.approx(per_kw, rel=1e-12)


def test_compare_saved_with_overrides(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    body = ok(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario_id": sid},
        {"scenario_id": sid, "overrides": {"electricity.price": "0.1742 USD/kWh"}},
    ]}, headers=viewer))
    # twice the electricity price, twice the energy cost per token
    assert body["ratios"]["cost_per_mtok"]["energy"][1] == pytest.approx(2.0, rel=1e-9)


def test_compare_matched_curves(client, viewer):
    body = ok(client.post(f"{API}/compare", json={
        "scenarios": [{"scenario": curve_scenario(hw)} for hw in CURVE_HW], "matched": True},
        headers=viewer))
    points = [s["disclosure"]["operating_point"] for s in body["scenarios"]]
    for p in points:  # all read at MI300X's best interactivity, the lowest of the three
        assert value(p["interactivity"]) == MI300X_BEST
    h100, b200, mi300x = (value(s["throughput"]) for s in body["scenarios"])
    assert h100 == pytest.approx(H100_AT_150, rel=1e-12)
    assert mi300x == pytest.approx(MI300X_AT_150, rel=1e-12)
    assert 3000 < b200 < 6500  # between B200's measured 210 and 120 token/s/user points


def test_compare_at_named_interactivity(client, viewer):
    body = ok(client.post(f"{API}/compare", json={
        "scenarios": [{"scenario": curve_scenario(hw)} for hw in CURVE_HW],
        "at_interactivity": {"value": 100, "unit": "token/s/user"}}, headers=viewer))
    for s in body["scenarios"]:
        assert value(s["disclosure"]["operating_point"]["interactivity"]) == 100.0


def test_compare_unreachable_interactivity(client, viewer):
    body = problem(client.post(f"{API}/compare", json={
        "scenarios": [{"scenario": curve_scenario(hw)} for hw in CURVE_HW],
        "at_interactivity": "400 token/s/user"}, headers=viewer), 422, "unreachable")
    assert body["errors"][0]["path"].startswith("scenarios[0].")
    assert "180" in body["detail"]  # H100's best, the first one that cannot reach 400


def test_compare_matched_needs_curves(client, viewer):
    body = problem(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario": curve_scenario("h100")}, {"scenario": GB300_PEAK}], "matched": True},
        headers=viewer), 422, "invalid-input")
    assert body["errors"][0]["path"].startswith("scenarios[1]")


def test_compare_matched_needs_curves_path(client, viewer):
    body = problem(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario": curve_scenario("h100")}, {"scenario": GB300_PEAK}], "matched": True},
        headers=viewer), 422)
    assert body["errors"][0]["path"] == "scenarios[1].scenario.operating_point"


@pytest.mark.parametrize("body,path", [
    ({"scenarios": [{"scenario": GB300_PEAK}]}, "scenarios"),
    ({"scenarios": []}, "scenarios"),
    ({"scenarios": [{"scenario": GB300_PEAK}] * 13}, "scenarios"),
    ({"scenarios": [{"scenario": curve_scenario(hw)} for hw in CURVE_HW],
      "matched": True, "at_interactivity": "100 token/s/user"}, "matched"),
    ({"scenarios": [{"scenario": curve_scenario(hw)} for hw in CURVE_HW],
      "at_interactivity": "100 W"}, "at_interactivity"),
    ({"scenarios": [{"scenario": GB300_PEAK}] * 2, "matched": 1}, "matched"),
    ({"scenarios": [{"scenario": GB300_PEAK}, {}]}, "scenarios[1].scenario"),
], ids=["one", "none", "thirteen", "matched-and-at", "at-wrong-unit", "matched-int",
        "second-empty"])
def test_compare_invalid_422(client, viewer, body, path):
    out = problem(client.post(f"{API}/compare", json=body, headers=viewer), 422)
    assert out["errors"][0]["path"] == path


def test_compare_unknown_saved_scenario_404(client, viewer):
    problem(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario": GB300_PEAK}, {"scenario_id": 2_000_000_000}]}, headers=viewer), 404)


# ---- catalog ----------------------------------------------------------------------------------

# For each kind: a seeded key, a filter text it matches, a valid new entry, a scenario using
# a new key, and the figure that shows the new entry was used (hand arithmetic).
GB300_PEAK_TOKEN_S = GB300_PEAK_PER_KW * GB300_RATED_W / 1000  # 16,493.4 token/s


def _new_accelerator():
    data = {"name": "test accelerator", "vendor": "test",
            "rated_power": {"value": 800, "unit": "W", "source": "a test figure"},
            "price": "20000 USD"}
    return data, (lambda key: {"accelerator": key,
                               "operating_point": "deepseek-r1/gb300/peak"}), \
        ("power_per_accelerator", 800.0), energy_per_mtok(EIA_PRICE, 800, GB300_PEAK_TOKEN_S)


def _new_operating_point():
    data = {"label": "test point", "throughput": "1000 token/s", "token_kind": "mixed",
            "workload": {"model": "Test 1B", "isl": 1024, "osl": 1024}}
    return data, (lambda key: {"accelerator": "gb300", "operating_point": key}), \
        ("throughput", 1000.0), energy_per_mtok(EIA_PRICE, GB300_RATED_W, 1000)


def _new_electricity():
    data = {"price": {"value": 12, "unit": "cent/kWh", "source": "a test tariff"},
            "source": "test tariff", "date": "2026-01"}
    return data, (lambda key: {**GB300_PEAK, "electricity": key}), \
        ("power_per_accelerator", GB300_RATED_W), \
        energy_per_mtok(0.12, GB300_RATED_W, GB300_PEAK_TOKEN_S)


# A system of 2-GPU nodes (500 W host, 90% PSU), 3 per rack (300 W switch, 100 W other, 100%
# delivery): rack = 3 x (2 x 1,400 + 500) / 0.9 + 400 = 11,400 W over 6 GPUs = 1,900 W.
SYSTEM_RACK_W = (3 * (2 * 1400 + 500) / 0.9 + 300 + 100) / 1.0 / 6


def _new_system():
    data = {"name": "test system", "node": {"accelerators": 2, "host_power": "500 W",
                                            "psu_efficiency": 0.9},
            "rack": {"nodes": 3, "switch_power": "300 W", "other_power": "100 W",
                     "power_delivery_efficiency": 1.0}}
    return data, (lambda key: {**GB300_PEAK, "system": key, "power": {"boundary": "rack"}}), \
        ("power_per_accelerator", SYSTEM_RACK_W), \
        energy_per_mtok(EIA_PRICE, SYSTEM_RACK_W, GB300_PEAK_TOKEN_S)


CATALOG = {
    "accelerators": ("accelerator", "gb300", "gb3", _new_accelerator,
                     {"rated_power": "5 kg"}, "data.rated_power"),
    "operating-points": ("operating_point", "deepseek-r1/gb300/peak", "deepseek-r1/",
                         _new_operating_point, {"throughput": "5 W"}, "data.throughput"),
    "electricity-prices": ("electricity", "eia-2026-05-us-industrial", "eia-",
                           _new_electricity, {"price": "5 W"}, "data.price"),
    "systems": ("system", "gb300-nvl72", "nvl72", _new_system, {"bogus": 1}, "data.bogus"),
}
KINDS = list(CATALOG)


def test_hand_system_figure():
    assert SYSTEM_RACK_W == pytest.approx(1900.0, rel=1e-12)


@pytest.mark.parametrize("path", KINDS)
def test_catalog_list_and_page(client, viewer, path):
    kind, seeded, _, _, _, _ = CATALOG[path]
    first = ok(client.get(f"{API}/{path}?limit=1&offset=0", headers=viewer))
    assert first["limit"] == 1 and first["offset"] == 0 and len(first["items"]) == 1
    assert first["total"] >= 1
    assert first["items"][0]["kind"] == kind
    everything = ok(client.get(f"{API}/{path}?limit=200", headers=viewer))
    keys = [e["key"] for e in everything["items"]]
    assert seeded in keys
    assert keys == sorted(keys)
    assert everything["total"] >= len(keys)
    if first["total"] > 1:
        second = ok(client.get(f"{API}/{path}?limit=1&offset=1", headers=viewer))
        assert second["items"][0]["key"] != first["items"][0]["key"]
    beyond = ok(client.get(f"{API}/{path}?offset=2000000000", headers=viewer))
    assert beyond["items"] == [] and beyond["offset"] == 2000000000


@pytest.mark.parametrize("path", KINDS)
def test_catalog_filter(client, viewer, path):
    _, seeded, q, _, _, _ = CATALOG[path]
    body = ok(client.get(f"{API}/{path}", query_string={"q": q}, headers=viewer))
    assert seeded in [e["key"] for e in body["items"]]
    assert all(q in e["key"] for e in body["items"])
    # LIKE wildcards are literal text in a filter
    for wildcard in ("%", "_"):
        body = ok(client.get(f"{API}/{path}", query_string={"q": wildcard}, headers=viewer))
        assert all(wildcard in e["key"] for e in body["items"])
    none = ok(client.get(f"{API}/{path}", query_string={"q": uid("absent-")}, headers=viewer))
    assert none["items"] == [] and none["total"] == 0


@pytest.mark.parametrize("path", KINDS)
def test_catalog_get(client, viewer, path):
    kind, seeded, _, _, _, _ = CATALOG[path]
    body = ok(client.get(f"{API}/{path}/{seeded}", headers=viewer))
    assert body["kind"] == kind and body["key"] == seeded
    assert body["origin"] and isinstance(body["data"], dict)
    iso_time(body["created_at"])
    problem(client.get(f"{API}/{path}/{uid('absent-')}", headers=viewer), 404, "not-found")


def test_catalog_get_published_figures(client, viewer):
    acc = ok(client.get(f"{API}/accelerators/gb300", headers=viewer))
    assert acc["data"]["rated_power"] == {"value": 1400, "unit": "W"}
    assert "Weighted Average" in acc["provenance"]["rated_power"]  # sources kept apart
    op = ok(client.get(f"{API}/operating-points/deepseek-r1/gb300/peak", headers=viewer))
    assert op["data"]["throughput_per_kw"] == {"value": 11781, "unit": "token/s/kW"}


@pytest.mark.parametrize("path", KINDS)
def test_catalog_create_then_use(client, viewer, editor, path):
    kind, _, _, make, _, _ = CATALOG[path]
    data, scenario_with, (field, expected), energy = make()
    key = uid("new-")
    created = ok(client.post(f"{API}/{path}", json={"key": key, "data": data},
                             headers=editor), 201)
    assert created["kind"] == kind and created["key"] == key
    assert created["origin"].startswith("api:")
    iso_time(created["created_at"])
    # it appears in the list and by key
    listed = ok(client.get(f"{API}/{path}", query_string={"q": key}, headers=viewer))
    assert [e["key"] for e in listed["items"]] == [key] and listed["total"] == 1
    ok(client.get(f"{API}/{path}/{key}", headers=viewer))
    # and a scenario using it prices with it
    body = ok(price(client, viewer, scenario_with(key)))
    assert value(body[field]) == pytest.approx(expected, rel=1e-9)
    assert value(body["cost_per_mtok"]["energy"]) == pytest.approx(energy, rel=1e-9)


def test_catalog_create_keeps_sources_apart(client, viewer, editor):
    key = uid("src-")
    created = ok(client.post(f"{API}/accelerators", json={"key": key, "data": {
        "name": "x", "rated_power": {"value": 800, "unit": "W", "source": "a test figure"}}},
        headers=editor), 201)
    assert created["data"]["rated_power"] == {"value": 800, "unit": "W"}
    assert created["provenance"]["rated_power"] == "a test figure"


def test_catalog_key_with_slashes(client, viewer, editor):
    key = f"{uid('m')}/gb300/peak"
    ok(client.post(f"{API}/operating-points", json={"key": key, "data": {
        "throughput": "500 token/s"}}, headers=editor), 201)
    assert ok(client.get(f"{API}/operating-points/{key}", headers=viewer))["key"] == key


@pytest.mark.parametrize("path", KINDS)
def test_catalog_duplicate_409(client, editor, path):
    _, seeded, _, make, _, _ = CATALOG[path]
    data = make()[0]
    problem(client.post(f"{API}/{path}", json={"key": seeded, "data": data}, headers=editor),
            409, "conflict")
    key = uid("dup-")
    ok(client.post(f"{API}/{path}", json={"key": key, "data": data}, headers=editor), 201)
    problem(client.post(f"{API}/{path}", json={"key": key, "data": data}, headers=editor),
            409, "conflict")


@pytest.mark.parametrize("path", KINDS)
def test_catalog_invalid_data_422(client, viewer, editor, path):
    _, _, _, make, bad, error_path = CATALOG[path]
    data = {**make()[0], **bad}
    key = uid("bad-")
    body = problem(client.post(f"{API}/{path}", json={"key": key, "data": data},
                               headers=editor), 422, "invalid-input")
    assert body["errors"][0]["path"] == error_path
    problem(client.get(f"{API}/{path}/{key}", headers=viewer), 404)  # nothing was saved


def test_catalog_system_error_path_names_the_section(client, editor):
    body = problem(client.post(f"{API}/systems", json={"key": uid("bad-"), "data": {
        "name": "x", "node": {"accelerators": "two"}}}, headers=editor), 422)
    assert body["errors"][0]["path"] == "data.node.accelerators"


@pytest.mark.parametrize("label", ["name", "note"])
@pytest.mark.parametrize("value", [[], ["x"], {"value": "x"}])
def test_catalog_system_label_is_a_scalar(client, viewer, editor, label, value):
    """A system's name and note are labels the document gives as text, a number, a boolean or
    null: a list or a table is refused (schemathesis sent ``"name": []``), and nothing saved."""
    key = uid("bad-")
    body = problem(client.post(f"{API}/systems", json={"key": key, "data": {
        label: value, "node": {"accelerators": 8}}}, headers=editor), 422, "invalid-input")
    assert body["errors"][0]["path"] == f"data.{label}"
    problem(client.get(f"{API}/systems/{key}", headers=viewer), 404)


@pytest.mark.parametrize("path", KINDS)
@pytest.mark.parametrize("key", ["-leading-dash", "has space", "", "x" * 101, "semi;colon",
                                 "../up"])
def test_catalog_bad_key_422(client, editor, path, key):
    data = CATALOG[path][3]()[0]
    body = problem(client.post(f"{API}/{path}", json={"key": key, "data": data},
                               headers=editor), 422, "invalid-input")
    assert body["errors"][0]["path"] == "key"


@pytest.mark.parametrize("path", KINDS)
@pytest.mark.parametrize("body", [{"key": "x"}, {"data": {}}, {"key": "x", "data": []},
                                  {"key": 1, "data": {}}])
def test_catalog_create_malformed_body_422(client, editor, path, body):
    problem(client.post(f"{API}/{path}", json=body, headers=editor), 422, "invalid-input")


@pytest.mark.parametrize("path", [*KINDS, "curves", "scenarios"])
@pytest.mark.parametrize("query,field", [("limit=0", "limit"), ("limit=1000", "limit"),
                                         ("limit=-1", "limit"), ("limit=abc", "limit"),
                                         ("offset=-1", "offset"), ("offset=x", "offset")])
def test_list_bad_paging_422(client, viewer, path, query, field):
    body = problem(client.get(f"{API}/{path}?{query}", headers=viewer), 422, "invalid-input")
    assert body["errors"][0]["path"] == field


# ---- curves -----------------------------------------------------------------------------------

CURVE_CSV = """\
hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,concurrency,\
interactivity [token/s/user],throughput [token/s],source
{hw},tiny,vllm,fp8,1024,1024,none,false,1,200,200,a test sweep
{hw},tiny,vllm,fp8,1024,1024,none,false,8,100,1000,a test sweep
"""


def test_curves_list_by_hardware(client, viewer):
    body = ok(client.get(f"{API}/curves", query_string={"hardware": "b200"}, headers=viewer))
    assert body["items"] and all(c["hardware"] == "b200" for c in body["items"])
    assert curve_id("b200") in [c["curve_id"] for c in body["items"]]
    assert all("csv" not in c for c in body["items"])  # points only on a single curve
    by_model = ok(client.get(f"{API}/curves", query_string={"model": "gpt-oss-120b"},
                             headers=viewer))
    assert {curve_id(hw) for hw in CURVE_HW} <= {c["curve_id"] for c in by_model["items"]}
    none = ok(client.get(f"{API}/curves", query_string={"hardware": uid("none-")},
                         headers=viewer))
    assert none["items"] == [] and none["total"] == 0
    page = ok(client.get(f"{API}/curves?limit=1&offset=1", headers=viewer))
    assert len(page["items"]) == 1 and page["total"] >= 2


def test_curves_q_filter(client, viewer):
    body = ok(client.get(f"{API}/curves", query_string={"q": uid("absent-")}, headers=viewer))
    assert body["total"] == 0


def test_curve_get_with_csv(client, viewer):
    body = ok(client.get(f"{API}/curves/{curve_id('b200')}", headers=viewer))
    assert body["curve_id"] == curve_id("b200")
    assert body["hardware"] == "b200" and body["model"] == "gpt-oss-120b"
    assert body["points"] == 6  # six b200 rows in the illustrative sweep
    rows = body["csv"].strip().splitlines()
    assert rows[0].startswith("hardware,") and len(rows) == 1 + 6
    interactivity = sorted(float(r.split(",")[9]) for r in rows[1:])
    assert interactivity == [28, 50, 120, 210, 280, 320]
    problem(client.get(f"{API}/curves/b200/none/such/curve", headers=viewer), 404, "not-found")


def test_curve_import_then_price(client, viewer, editor):
    hw = uid("chip")
    created = ok(client.post(f"{API}/curves", json={"content": CURVE_CSV.format(hw=hw)},
                             headers=editor), 201)
    cid = f"{hw}/tiny/vllm/fp8/1024x1024/none/agg"
    assert [c["curve_id"] for c in created["items"]] == [cid]
    assert created["items"][0]["points"] == 2 and created["items"][0]["hardware"] == hw
    got = ok(client.get(f"{API}/curves/{cid}", headers=viewer))
    assert got["points"] == 2 and hw in got["csv"]
    listed = ok(client.get(f"{API}/curves", query_string={"hardware": hw}, headers=viewer))
    assert [c["curve_id"] for c in listed["items"]] == [cid]
    # read at its measured 100 token/s/user point: 1,000 token/s on a 1,000 W B200
    scenario = {"accelerator": "b200", "operating_point": {
        "curve": cid, "at": {"interactivity": "100 token/s/user"}}}
    body = ok(price(client, viewer, scenario))
    assert value(body["throughput"]) == pytest.approx(1000.0, rel=1e-12)
    assert value(body["cost_per_mtok"]["energy"]) == pytest.approx(
        energy_per_mtok(EIA_PRICE, B200_RATED_W, 1000), rel=1e-9)
    # and its best interactivity bounds what can be read
    scenario["operating_point"]["at"] = {"interactivity": "300 token/s/user"}
    out = problem(price(client, viewer, scenario), 422, "unreachable")
    assert re.search(r"\b200\b", out["detail"])


def test_curve_import_duplicate_409(client, editor):
    content = CURVE_CSV.format(hw=uid("chip"))
    ok(client.post(f"{API}/curves", json={"content": content}, headers=editor), 201)
    problem(client.post(f"{API}/curves", json={"content": content}, headers=editor), 409,
            "conflict")
    # the seeded fixture curves cannot be overwritten either
    fixture = ILLUSTRATIVE_CURVES.read_text()
    problem(client.post(f"{API}/curves", json={"content": fixture}, headers=editor), 409,
            "conflict")


@pytest.mark.parametrize("body,path", [
    ({"content": "garbage,,\n1,2"}, "content"),
    ({"content": "hardware,model\n"}, "content"),
    ({"content": ""}, "content"),
    ({"content": "x", "gpus": 0}, "gpus"),
    ({"content": "x", "gpus": True}, "gpus"),
    ({}, "content"),
])
def test_curve_import_malformed_422(client, editor, body, path):
    out = problem(client.post(f"{API}/curves", json=body, headers=editor), 422)
    assert out["errors"][0]["path"] == path


def test_curve_import_bad_row_is_all_or_nothing(client, viewer, editor):
    hw = uid("chip")
    content = CURVE_CSV.format(hw=hw) + f"{hw},tiny,vllm,fp8,1024,1024,none,false,16,fast,1,x\n"
    problem(client.post(f"{API}/curves", json={"content": content}, headers=editor), 422)
    listed = ok(client.get(f"{API}/curves", query_string={"hardware": hw}, headers=viewer))
    assert listed["items"] == []


# ---- scenarios --------------------------------------------------------------------------------

CHEAP_POWER = {**GB300_PEAK, "electricity": {"price": "0.10 USD/kWh"}}
CHEAP_POWER_ENERGY = 0.10 / (GB300_PEAK_PER_KW * 3600) * 1e6


def test_scenario_create_and_get(client, viewer, editor):
    name = uid("scenario-")
    created = save_scenario(client, editor, GB300_PEAK, name)
    assert created["number"] == 1
    assert created["scenario"] == GB300_PEAK
    assert re.fullmatch(r"[0-9a-f]{64}", created["content_hash"])
    assert created["created_by"] == "test-editor"
    iso_time(created["created_at"])
    assert value(created["result"]["cost_per_mtok"]["energy"]) == pytest.approx(
        GB300_PEAK_ENERGY, rel=1e-9)
    assert created["result"]["cost_per_mtok"]["total"]["unit"] == "USD/Mtok"
    got = ok(client.get(f"{API}/scenarios/{created['scenario_id']}", headers=viewer))
    assert got == created


def test_scenario_revisions(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    first = ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))
    # an edit is the next revision
    second = ok(client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": CHEAP_POWER},
                            headers=editor), 201)
    assert second["scenario_id"] == sid and second["number"] == 2
    assert second["content_hash"] != first["content_hash"]
    assert value(second["result"]["cost_per_mtok"]["energy"]) == pytest.approx(
        CHEAP_POWER_ENERGY, rel=1e-9)
    assert ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))["number"] == 2
    # the same content again is no edit
    same = client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": CHEAP_POWER},
                       headers=editor)
    same_body = ok(same, 200)
    assert same_body["number"] == 2 and same_body["content_hash"] == second["content_hash"]
    assert ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))["number"] == 2
    # revision 1 shows what was priced then, with its result as computed then
    old = ok(client.get(f"{API}/scenarios/{sid}/revisions/1", headers=viewer))
    assert old == first
    assert old["scenario"] == GB300_PEAK
    assert value(old["result"]["cost_per_mtok"]["energy"]) == pytest.approx(
        GB300_PEAK_ENERGY, rel=1e-9)
    assert ok(client.get(f"{API}/scenarios/{sid}/revisions/2", headers=viewer)) == second


def test_scenario_revise_identical_answers_the_stored_revision(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    stored = ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))
    same = ok(client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": GB300_PEAK},
                          headers=editor), 200)
    assert same["number"] == 1 and same["content_hash"] == stored["content_hash"]
    assert same["result"] == stored["result"]


def test_scenario_revise_identical_times_match(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    stored = ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))
    same = ok(client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": GB300_PEAK},
                          headers=editor), 200)
    assert iso_time(same.pop("created_at")) == iso_time(stored.pop("created_at"))
    assert same == stored


def test_scenario_invalid_edit_saves_nothing(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    bad = {**GB300_PEAK, "accelerator": {"catalog": "gb300", "rated_power": "5 kg"}}
    body = problem(client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": bad},
                               headers=editor), 422, "invalid-input")
    assert body["errors"][0]["path"] == "scenario.accelerator.rated_power"
    assert ok(client.get(f"{API}/scenarios/{sid}", headers=viewer))["number"] == 1


def test_scenario_not_found(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    body = problem(client.get(f"{API}/scenarios/{sid}/revisions/99", headers=viewer), 404,
                   "not-found")
    assert "99" in body["detail"]
    problem(client.get(f"{API}/scenarios/2000000000", headers=viewer), 404, "not-found")
    problem(client.get(f"{API}/scenarios/2000000000/revisions/1", headers=viewer), 404)
    problem(client.post(f"{API}/scenarios/2000000000/revisions", json={"scenario": GB300_PEAK},
                        headers=editor), 404, "not-found")
    for path in (f"/scenarios/{2**31}", "/scenarios/0", "/scenarios/-1", "/scenarios/abc",
                 f"/scenarios/{sid}/revisions/0", f"/scenarios/{2**63}/workbook"):
        problem(client.get(API + path, headers=viewer), 404)


@pytest.mark.parametrize("body,path", [
    ({"name": "", "scenario": GB300_PEAK}, "name"),
    ({"name": "x" * 201, "scenario": GB300_PEAK}, "name"),
    ({"scenario": GB300_PEAK}, "name"),
    ({"name": "x"}, "scenario"),
    ({"name": 7, "scenario": GB300_PEAK}, "name"),
    ({"name": "x", "scenario": {"accelerator": "gb300"}}, "scenario.operating_point"),
    ({"name": "x", "scenario": {**GB300_PEAK, "utilisation": True}}, "scenario.utilisation"),
    ({"name": "x", "scenario": {**GB300_PEAK, "operating_point": {"curve": "/etc/passwd"}}},
     "scenario.operating_point.curve"),
], ids=["empty-name", "long-name", "no-name", "no-scenario", "name-int", "no-op",
        "utilisation-true", "file"])
def test_scenario_create_invalid_422(client, viewer, editor, body, path):
    out = problem(client.post(f"{API}/scenarios", json=body, headers=editor), 422)
    assert out["errors"][0]["path"] == path
    if path.startswith("scenario."):  # a rejected save leaves nothing behind
        name = uid("rejected-")
        problem(client.post(f"{API}/scenarios", json={**body, "name": name}, headers=editor),
                422)
        listed = ok(client.get(f"{API}/scenarios", query_string={"q": name}, headers=viewer))
        assert listed["total"] == 0


def test_scenario_list_pages(client, viewer, editor):
    tag = uid("page-")
    ids = [save_scenario(client, editor, GB300_PEAK, f"{tag}-{i}")["scenario_id"]
           for i in range(3)]
    first = ok(client.get(f"{API}/scenarios", query_string={"q": tag, "limit": 2},
                          headers=viewer))
    assert first["total"] == 3 and first["limit"] == 2 and first["offset"] == 0
    rest = ok(client.get(f"{API}/scenarios", query_string={"q": tag, "limit": 2, "offset": 2},
                         headers=viewer))
    assert rest["total"] == 3 and rest["offset"] == 2
    items = first["items"] + rest["items"]
    assert [s["id"] for s in items] == ids  # oldest first
    assert [s["name"] for s in items] == [f"{tag}-{i}" for i in range(3)]
    assert all(s["latest_revision"] == 1 for s in items)
    for s in items:
        iso_time(s["created_at"])
    everything = ok(client.get(f"{API}/scenarios?limit=200", headers=viewer))
    assert everything["total"] >= 3


def test_scenario_workbook(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    ok(client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": CHEAP_POWER},
                   headers=editor), 201)
    for query, price_kwh in (("", 0.10), ("?revision=1", EIA_PRICE), ("?revision=2", 0.10)):
        resp = client.get(f"{API}/scenarios/{sid}/workbook{query}", headers=viewer)
        assert resp.status_code == 200
        assert resp.mimetype == XLSX
        assert resp.data[:2] == b"PK"
        assert "attachment" in resp.headers["Content-Disposition"]
        wb = load_workbook(io.BytesIO(resp.data))
        assert "electricity_price" in wb.defined_names
        assert named_cells(wb, "electricity_price")[0].value == pytest.approx(price_kwh)
    problem(client.get(f"{API}/scenarios/{sid}/workbook?revision=9", headers=viewer), 404)
    problem(client.get(f"{API}/scenarios/{sid}/workbook?revision=x", headers=viewer), 422)
    problem(client.get(f"{API}/scenarios/2000000000/workbook", headers=viewer), 404)
    problem(client.get(f"{API}/scenarios/{sid}/workbook"), 401)


# ---- workbooks --------------------------------------------------------------------------------

TWO_SYSTEMS = [{"scenario": GB300_PEAK},
               {"scenario": {"accelerator": "jalapeno",
                             "operating_point": "deepseek-r1/jalapeno/peak"}}]
# Jalapeño at DeepSeek R1 peak: 19,641 token/s/kW of 700 W (The Weighted Average, Aug 2026)
JALAPENO_PEAK_ENERGY = EIA_PRICE / (19641 * 3600) * 1e6


@pytest.fixture(scope="module")
def exported(app, tokens) -> bytes:
    resp = app.test_client().post(f"{API}/workbook", json={"scenarios": TWO_SYSTEMS,
                                                           "title": "API test"},
                                  headers=auth(tokens["viewer"]))
    assert resp.status_code == 200 and resp.mimetype == XLSX
    return resp.data


def test_workbook_export(exported):
    assert exported[:2] == b"PK"
    wb = load_workbook(io.BytesIO(exported))
    assert {"Inputs", "Calculations", "Results"} <= set(wb.sheetnames)
    prices = [c.value for c in named_cells(wb, "electricity_price")]
    assert prices == [pytest.approx(EIA_PRICE)] * 2


def test_workbook_export_of_saved_and_matched(client, viewer, editor):
    sid = save_scenario(client, editor, GB300_PEAK)["scenario_id"]
    resp = client.post(f"{API}/workbook", json={"scenarios": [{"scenario_id": sid}]},
                       headers=viewer)
    assert resp.status_code == 200 and resp.data[:2] == b"PK"
    resp = client.post(f"{API}/workbook", json={
        "scenarios": [{"scenario": curve_scenario(hw)} for hw in CURVE_HW], "matched": True},
        headers=viewer)
    assert resp.status_code == 200 and resp.mimetype == XLSX
    assert "Curves" in load_workbook(io.BytesIO(resp.data)).sheetnames


@pytest.mark.parametrize("body,status,path", [
    ({"scenarios": []}, 422, "scenarios"),
    ({"scenarios": [{"scenario": GB300_PEAK}] * 13}, 422, "scenarios"),
    ({"scenarios": [{"scenario": GB300_PEAK}], "title": "x" * 201}, 422, "title"),
    ({"scenarios": [{"scenario_id": 2_000_000_000}]}, 404, None),
    ({"scenarios": [{"scenario": {"accelerator": "gb300"}}]}, 422,
     "scenarios[0].scenario.operating_point"),
    ({"scenarios": [{"scenario": curve_scenario("b200")}],
      "at_interactivity": "400 token/s/user"}, 422,
     "scenarios[0].scenario.operating_point.at.interactivity"),
])
def test_workbook_export_invalid(client, viewer, body, status, path):
    out = problem(client.post(f"{API}/workbook", json=body, headers=viewer), status)
    if path is not None:
        assert out["errors"][0]["path"] == path


def test_workbook_reprice_unchanged(client, viewer, exported):
    body = ok(client.post(f"{API}/workbook/reprice", data=exported, content_type=XLSX,
                          headers=viewer))
    assert body["changes"] == []
    assert len(body["results"]) == 2
    energies = [value(r["cost_per_mtok"]["energy"]) for r in body["results"]]
    assert energies[0] == pytest.approx(GB300_PEAK_ENERGY, rel=1e-9)
    assert energies[1] == pytest.approx(JALAPENO_PEAK_ENERGY, rel=1e-9)


def test_workbook_reprice_edited(client, viewer, exported):
    wb = load_workbook(io.BytesIO(exported))
    named_cells(wb, "electricity_price")[0].value = 0.12  # the GB300 column only
    buf = io.BytesIO()
    wb.save(buf)
    body = ok(client.post(f"{API}/workbook/reprice", data=buf.getvalue(), content_type=XLSX,
                          headers=viewer))
    assert len(body["changes"]) == 1
    change = body["changes"][0]
    assert change["name"] == "electricity_price" and change["unit"] == "USD/kWh"
    assert change["before"] == pytest.approx(EIA_PRICE) and change["after"] == 0.12
    energies = [value(r["cost_per_mtok"]["energy"]) for r in body["results"]]
    assert energies[0] == pytest.approx(0.12 / (GB300_PEAK_PER_KW * 3600) * 1e6, rel=1e-9)
    assert energies[1] == pytest.approx(JALAPENO_PEAK_ENERGY, rel=1e-9)


@pytest.mark.parametrize("data", [b"garbage", b"PK\x03\x04" + b"\0" * 100, b""],
                         ids=["garbage", "broken-zip", "empty"])
def test_workbook_reprice_garbage_422(client, viewer, data):
    body = problem(client.post(f"{API}/workbook/reprice", data=data, content_type=XLSX,
                               headers=viewer), 422, "invalid-input")
    assert body["errors"][0]["path"] == "workbook"


def test_workbook_reprice_not_a_costmodel_workbook_422(client, viewer):
    from openpyxl import Workbook
    buf = io.BytesIO()
    Workbook().save(buf)
    body = problem(client.post(f"{API}/workbook/reprice", data=buf.getvalue(),
                               content_type=XLSX, headers=viewer), 422, "invalid-input")
    assert "sheet" in body["detail"]


def test_workbook_reprice_json_415(client, viewer):
    problem(client.post(f"{API}/workbook/reprice", json={"scenarios": TWO_SYSTEMS},
                        headers=viewer), 415, "unsupported-media-type")


def test_workbook_reprice_needs_a_key(client, exported):
    problem(client.post(f"{API}/workbook/reprice", data=exported, content_type=XLSX), 401)


def test_workbook_reprice_body_limits(client, viewer):
    # a workbook may exceed the 2 MiB JSON limit: the reader's own 20 MiB limit applies
    body = problem(client.post(f"{API}/workbook/reprice", data=b"\0" * (3 * 2**20),
                               content_type=XLSX, headers=viewer), 422)
    assert body["errors"][0]["path"] == "workbook"
    problem(client.post(f"{API}/workbook/reprice", data=b"\0" * (20 * 2**20 + 1),
                        content_type=XLSX, headers=viewer), 413, "payload-too-large")


# ---- user-provided text ------------------------------------------------------------------------

HOSTILE_NAMES = ["<script>alert(1)</script>", '=HYPERLINK("http://evil.example","click")',
                 "@SUM(A1)", "Robert'); DROP TABLE scenarios;--", "Jalapeño \u202e ✓ \U0001F336",
                 "+cmd|' /C calc'!A0"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_names_round_trip_exactly(client, viewer, editor, name):
    created = save_scenario(client, editor, {**GB300_PEAK, "name": name}, name)
    sid = created["scenario_id"]
    assert created["scenario"]["name"] == name
    assert created["result"]["scenario"] == name
    got = client.get(f"{API}/scenarios/{sid}", headers=viewer)
    assert got.mimetype == "application/json"  # never served as HTML
    assert got.get_json()["scenario"]["name"] == name
    listed = ok(client.get(f"{API}/scenarios", query_string={"q": name, "limit": 200},
                           headers=viewer))
    assert name in [s["name"] for s in listed["items"]]
    assert ok(price(client, viewer, scenario_id=sid))["scenario"] == name


@pytest.mark.parametrize("name", [n for n in HOSTILE_NAMES if n[0] in "=@+"])
def test_names_never_become_workbook_formulas(client, viewer, editor, name):
    sid = save_scenario(client, editor, {**GB300_PEAK, "name": name}, name)["scenario_id"]
    resp = client.get(f"{API}/scenarios/{sid}/workbook", headers=viewer)
    assert resp.status_code == 200
    wb = load_workbook(io.BytesIO(resp.data))
    found = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and name in cell.value:
                    found.append(cell)
                    assert cell.data_type == "s", (ws.title, cell.coordinate, cell.value)
    assert found, "the name is shown somewhere in the workbook"
    with zipfile.ZipFile(io.BytesIO(resp.data)) as package:
        for member in package.namelist():
            if member.startswith("xl/worksheets/"):
                formulas = re.findall(rb"<f>(.*?)</f>", package.read(member))
                assert not any(b"HYPERLINK" in f or b"cmd|" in f for f in formulas), member


def test_catalog_text_round_trips(client, viewer, editor):
    key = uid("xss-")
    name = "<img src=x onerror=alert(1)>"
    ok(client.post(f"{API}/accelerators", json={"key": key, "data": {
        "name": name, "rated_power": "700 W"}}, headers=editor), 201)
    got = client.get(f"{API}/accelerators/{key}", headers=viewer)
    assert got.mimetype == "application/json"
    assert got.get_json()["data"]["name"] == name


# ---- the API and the CLI agree ----------------------------------------------------------------

def _numbers(result: dict) -> dict[str, float | None]:
    """Every step value and headline figure of a result, by dotted name."""
    out = {f"steps.{k}": v["value"] for k, v in result["steps"].items()}
    for k, v in result.items():
        if isinstance(v, dict) and set(v) == {"value", "unit"}:
            out[k] = v["value"]
        elif k in ("cost_per_mtok", "price_per_mtok"):
            out.update({f"{k}.{p}": q["value"] for p, q in v.items()})
    return out


def test_api_price_equals_cli_price(client, viewer):
    with SAMPLE_TCO.open("rb") as fh:
        scenario = tomllib.load(fh)
    api = ok(price(client, viewer, scenario))
    run = CliRunner().invoke(cli_main, ["price", str(SAMPLE_TCO), "--json"],
                             catch_exceptions=False)
    assert run.exit_code == 0, run.output
    cli = json.loads(run.stdout)
    assert api["scenario"] == cli["scenario"] == scenario["name"]
    api_numbers, cli_numbers = _numbers(api), _numbers(cli)
    assert set(api_numbers) == set(cli_numbers)
    assert len(cli_numbers) > 40
    for name, expected in cli_numbers.items():
        got = api_numbers[name]
        if expected is None or got is None:
            assert got is expected, name
        else:
            assert got == expected or math.isclose(got, expected, rel_tol=1e-12), \
                (name, got, expected)
    for step in cli["steps"]:
        assert api["steps"][step]["unit"] == cli["steps"][step]["unit"], step
    assert api["disclosure"]["boundary"] == cli["disclosure"]["boundary"] == "facility"
