"""The pages that compute follow their API twin's limits (costmodel/web/guard.py): the same
caps (costmodel/app/caps.py), the same rate per key or per address, the same heavy slots,
refused with a 429 page in words with Retry-After; and a decision prices each offer once a
grid scale. Counts are asserted, never times: windows are a minute long and open at a
caller's first request."""
from __future__ import annotations

import io
import json
import re
from html import unescape

import pytest
from conftest import auth

from costmodel import app as use_cases
from costmodel.api.openapi import ROUTES, _openapi_path
from costmodel.app.caps import MAX_QUOTES
from costmodel.http.limits import HEAVY
from costmodel.model.errors import InputError
from costmodel.store.repo import key_create

API = "/api/v1"
MATCHED = "fixture:published/deepseek-r1_gb300_matched"
B200 = "fixture:curve-gpt-oss-120b-b200"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
RATE_HEADERS = ("RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining",
                "RateLimit-Reset")


def _quote(i: int) -> dict:
    return {"name": f"offer-{i}", "vendor": f"Vendor {i}", "date": "2026-11-20",
            "form": "per_mtok", "price_input": f"{0.5 + i / 1000:.3f} USD/Mtok",
            "price_output": f"{2 + i / 1000:.3f} USD/Mtok", "term": "12 month",
            "operating_point": {"interactivity": "100 token/s/user"}}


def _file(count: int) -> bytes:
    return json.dumps({"quote": [_quote(i) for i in range(count)]}).encode()




def _viewer(application) -> tuple[int, str]:
    with application.extensions["costmodel"].sessions() as session:
        row, token = key_create(session, "web-limits-viewer", "viewer")
        return row.id, token


def _csrf(client, path: str = "/saved") -> str:
    """The session's CSRF token, from a page that computes nothing (it is not counted)."""
    r = client.get(path)
    found = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
    assert found, (path, r.status_code)
    return found.group(1)


def _signed_in(application):
    """A test client signed in with a new viewer key: (client, csrf token, api token)."""
    _, token = _viewer(application)
    client = application.test_client()
    csrf = _csrf(client, "/signin")
    r = client.post("/signin", data={"api_key": token, "csrf_token": csrf, "next": "/quotes"})
    assert r.status_code == 303
    return client, _csrf(client), token


def _errors(html: str) -> list[str]:
    return [unescape(m) for m in re.findall(r'class="field-error"[^>]*>([^<]*)<', html)]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def _post_quotes(client, csrf: str, path: str, count: int, **fields):
    """An upload of ``count`` quotes (the Quotes page's redirect to the view followed)."""
    return client.post(path, data={"csrf_token": csrf, "scenario": MATCHED,
                                   "quote_file": (io.BytesIO(_file(count)), "offers.json"),
                                   **fields}, content_type="multipart/form-data",
                       follow_redirects=True)


# ---- caps: stated once, the same on every face ---------------------------------------------

@pytest.mark.parametrize("path, fields", [
    ("/quotes", {}),
    ("/quotes/workbook", {}),
    ("/quotes/summary.pdf", {"d_volume": "50000", "d_interactivity": "100"}),
])
def test_more_quotes_than_the_cap_is_a_422_at_the_file_field(make_app, path, fields):
    client, csrf, _ = _signed_in(make_app(OPEN_READS=False))
    r = _post_quotes(client, csrf, path, MAX_QUOTES + 1, **fields)
    assert r.status_code == 422
    assert r.mimetype == "text/html"
    assert "quotes: at most 50 quotes in one request, got 51" in _errors(r.text)
    assert 'id="f-quote-file"' in r.text and "invalid" in r.text


def test_at_the_cap_the_quotes_are_ranked(make_app):
    client, csrf, _ = _signed_in(make_app())
    r = _post_quotes(client, csrf, "/quotes", MAX_QUOTES)
    assert r.status_code == 200, _errors(r.text)
    assert r.text.count('class="quote-row"') == MAX_QUOTES


@pytest.mark.parametrize("operation", ["compare", "decide"])
def test_the_api_refuses_more_quotes_than_the_same_cap(make_app, operation):
    application = make_app()
    _, token = _viewer(application)
    body = {"quotes": [_quote(i) for i in range(MAX_QUOTES + 1)],
            "scenarios": [{"scenario": GB300}]}
    if operation == "decide":
        body["demand"] = {"volume": "50000 Mtok/month"}
    r = application.test_client().post(f"{API}/quotes/{operation}", json=body,
                                       headers=auth(token))
    assert r.status_code == 422
    assert [e["path"] for e in r.json["errors"]] == ["quotes"]
    assert "at most 50" in r.json["errors"][0]["message"]


def test_the_use_cases_hold_the_cap_on_the_service_only(make_app):
    from costmodel.sources.quote_file import quotes_of
    quotes = quotes_of({"quote": [_quote(i) for i in range(MAX_QUOTES + 1)]}, "offers")
    spec = use_cases.ScenarioSpec(use_cases.InlineScenario({"name": "x", **GB300}))
    # the command line's context: its own machine, no bound
    assert len(use_cases.quotes_compare(use_cases.LocalContext(), quotes, [spec]).rows) == 51
    services = make_app().extensions["costmodel"]
    with services.sessions(write=False) as session, pytest.raises(InputError) as got:
        use_cases.quotes_compare(services.context(session), quotes, [spec])
    assert got.value.errors == [("quotes", "at most 50 quotes in one request, got 51")]
    with services.sessions(write=False) as session, pytest.raises(InputError) as got:
        use_cases.monte_carlo(services.context(session), spec, {
            "electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}, draws=2_000_001)
    assert got.value.errors == [("draws", "at most 2,000,000 draws in one request, "
                                          "got 2,000,001")]


# ---- the rate: per key, shared with the API; per address for anonymous reads -------------

def test_a_signed_in_key_is_counted_on_pages_and_the_api_together(make_app):
    application = make_app(RATE_LIMIT="3/minute")
    client, csrf, token = _signed_in(application)
    assert client.get("/price.json").status_code == 200
    assert client.post(f"{API}/price", json={"scenario": GB300},
                       headers=auth(token)).status_code == 200
    r = client.get("/sensitivity.json")
    assert r.status_code == 200
    assert r.headers["RateLimit-Remaining"] == "0"
    refused = _post_quotes(client, csrf, "/quotes", 3)
    assert refused.status_code == 429
    assert refused.mimetype == "text/html"
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert all(h in refused.headers for h in RATE_HEADERS)
    assert "more than 3 requests in 60 s for this key" in _text(refused.text)
    # and the API refuses the same key too: one count
    assert client.post(f"{API}/price", json={"scenario": GB300},
                       headers=auth(token)).status_code == 429


def test_anonymous_reads_are_counted_per_address(make_app):
    application = make_app(RATE_LIMIT="3/minute", OPEN_READS=True)
    here = application.test_client()
    for _ in range(3):
        assert here.get("/sensitivity").status_code == 200
    r = here.get("/sensitivity.xlsx")
    assert r.status_code == 429
    assert "more than 3 requests in 60 s for this address" in _text(r.text)
    assert int(r.headers["Retry-After"]) > 0 and r.headers["RateLimit-Remaining"] == "0"
    there = application.test_client()
    other = there.get("/sensitivity.json", environ_base={"REMOTE_ADDR": "127.0.0.2"})
    assert other.status_code == 200


def test_refused_sign_ins_are_not_counted(make_app):
    application = make_app(RATE_LIMIT="1/minute")
    client = application.test_client()
    for _ in range(3):  # reads closed: 401 before the count, as the API's
        assert client.get("/price.json").status_code == 401


@pytest.mark.parametrize("path", ["/", "/price.xlsx", "/compare", "/compare.json", "/plan",
                                  "/plan.json", "/sensitivity", "/saved/new", "/task",
                                  "/task.json"])
def test_pages_that_compute_carry_the_ratelimit_headers(make_app, path):
    application = make_app(RATE_LIMIT="100/minute", OPEN_READS=True)
    r = application.test_client().get(path)
    assert r.status_code in (200, 422)
    assert r.headers["RateLimit-Limit"] == "100" and r.headers["RateLimit-Remaining"] == "99"
    assert r.headers["RateLimit-Policy"] == '"per-key";q=100;w=60'


def test_a_page_that_falls_back_to_its_form_is_counted_once(make_app):
    application = make_app(RATE_LIMIT="100/minute", OPEN_READS=True)
    r = application.test_client().get("/plan.pdf?pl_demand=5+W")  # the page with its error
    assert r.status_code == 422
    assert r.headers["RateLimit-Remaining"] == "99"


# ---- heavy slots ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/price.xlsx", "/compare.xlsx", "/sensitivity",
                                  "/sensitivity.xlsx"])
def test_a_heavy_page_finds_no_free_slot_and_says_so(make_app, path):
    application = make_app(HEAVY_PER_WORKER=1, OPEN_READS=True)
    limits = application.extensions["costmodel.limits"]
    client = application.test_client()
    with limits.heavy():  # another analysis holds this worker's only slot
        r = client.get(path)
    assert r.status_code == 429 and r.mimetype == "text/html"
    assert r.headers["Retry-After"] == "2"
    assert "this worker runs 1 heavy analysis already" in _text(r.text)
    assert client.get(path).status_code == 200  # the slot is free again


@pytest.mark.parametrize("path", ["/quotes", "/quotes/workbook"])
def test_a_quotes_post_takes_a_heavy_slot(make_app, path):
    application = make_app(HEAVY_PER_WORKER=1)
    client, csrf, _ = _signed_in(application)
    with application.extensions["costmodel.limits"].heavy():
        r = _post_quotes(client, csrf, path, 3)
    assert r.status_code == 429 and r.headers["Retry-After"] == "2"
    assert _post_quotes(client, csrf, path, 3).status_code == 200


def test_light_pages_take_no_heavy_slot(make_app):
    application = make_app(HEAVY_PER_WORKER=1, OPEN_READS=True)
    with application.extensions["costmodel.limits"].heavy():
        assert application.test_client().get("/price.json").status_code == 200


# ---- every page that computes names a real API twin ---------------------------------------

COMPUTING = {"web.price_page", "web.price_workbook", "web.price_json", "web.compare_page",
             "web.compare_workbook", "web.compare_json", "web.plan_page", "web.plan_pdf",
             "web.plan_json", "web.quotes", "web.quotes_post", "web.quotes_summary",
             "web.quotes_workbook",
             "web.sensitivity_page", "web.sensitivity_workbook", "web.sensitivity_json",
             "web.saved_revision_json", "web.saved_revision_workbook", "web.saved_new",
             "web.saved_new_post", "web.saved_restore", "web.plan_workbook", "web.task_page",
             "web.task_json", "web.task_xlsx", "web.profit_json", "web.profit_xlsx",
             "web.chargeback_post"}


def test_every_page_that_computes_is_guarded_by_a_declared_twin(make_app):
    application = make_app()
    declared = {(r.method, _openapi_path(r.rule)[0]) for r in ROUTES}
    guarded = {name: view.api_twin for name, view in application.view_functions.items()
               if hasattr(view, "api_twin")}
    assert set(guarded) == COMPUTING
    assert set(guarded.values()) <= declared
    assert {name for name, twin in guarded.items() if twin in HEAVY} == {
        "web.price_workbook", "web.compare_workbook", "web.quotes", "web.quotes_post",
        "web.quotes_summary", "web.quotes_workbook", "web.sensitivity_page",
        "web.sensitivity_workbook", "web.sensitivity_json", "web.saved_revision_workbook",
        "web.plan_workbook", "web.chargeback_post"}
    # every workbook and PDF holds a slot, whatever its twin's JSON does (issue 38)
    heavy = {name for name, view in application.view_functions.items()
             if getattr(view, "heavy", False)}
    assert heavy == {"web.price_workbook", "web.compare_workbook", "web.quotes",
                     "web.quotes_post",
                     "web.quotes_summary", "web.quotes_workbook", "web.sensitivity_page",
                     "web.sensitivity_workbook", "web.sensitivity_json",
                     "web.saved_revision_workbook", "web.plan_workbook", "web.plan_pdf",
                     "web.task_xlsx", "web.profit_xlsx", "web.chargeback_post"}


# ---- a decision prices each offer once a grid scale ----------------------------------------

def test_a_decision_prices_each_offer_once_a_grid_scale():
    from costmodel.decisions.decision import _GRID, Option, decide
    from costmodel.decisions.demand import Charge, DemandLoad, Shape
    calls = [0]

    def offer(price: float):
        def charge(load: DemandLoad) -> Charge:
            calls[0] += 1
            return Charge(price * load.volume)
        return charge
    n = 40  # prices proportional to the volume: no two cross, the first wins everywhere
    options = [Option(f"o{i}", "per_mtok", "v", 12.0, offer(1.0 + i)) for i in range(n)]
    load = DemandLoad(1000.0, 1.0, 1.0, Shape(1000, 100), 0.0, 0.0, False)
    decision = decide(options, load, 0.08)
    assert [p.option.name for p in decision.ranked] == [f"o{i}" for i in range(n)]
    assert all(b["volume"] is None for b in decision.break_even)
    assert len(decision.break_even) == n * (n - 1) // 2
    # each offer priced once at the demand and once a grid scale (and the winner twice at
    # half the demand); pricing both of a pair at every scale was 2 x 780 x 121 = 188,760
    assert calls[0] <= n * (_GRID + 1) + 2


# ---- the Quotes page counts before it validates (issue 38, item 6) ------------------------

def _never(*args, **kwargs):
    raise AssertionError("a quote was validated before the quotes were counted")


def _small(i: int) -> dict:
    """A quote of few bytes: the issue's 51 KB link inflated to 14,000 of them."""
    return {"name": f"q{i}", "vendor": "V", "form": "per_mtok", "price_input": "1 USD/Mtok",
            "price_output": "1 USD/Mtok"}


@pytest.mark.parametrize("count", [MAX_QUOTES + 1, 14_000])
def test_a_link_carrying_more_quotes_than_the_cap_is_refused_before_any_is_read(
        make_app, monkeypatch, count):
    from costmodel.web import quotes_page
    client, csrf, _ = _signed_in(make_app())
    packed = quotes_page.pack_quotes({"quote": [_small(i) for i in range(count)]})
    monkeypatch.setattr(quotes_page, "quotes_of", _never)
    monkeypatch.setattr(quotes_page, "read_quotes_text", _never)
    r = client.post("/quotes", data={"csrf_token": csrf, "scenario": MATCHED, "quotes": "file",
                                     "qn": "offers.json", "qf": packed}, follow_redirects=True)
    assert r.status_code == 422, _errors(r.text)
    assert f"quotes: at most 50 quotes in one request, got {count:,}" in _errors(r.text)


def test_an_upload_of_more_quotes_than_the_cap_is_refused_before_any_is_read(make_app,
                                                                              monkeypatch):
    from costmodel.web import quotes_page
    client, csrf, _ = _signed_in(make_app())
    monkeypatch.setattr(quotes_page, "quotes_of", _never)
    monkeypatch.setattr(quotes_page, "read_quotes_text", _never)
    r = client.post("/quotes", data={
        "csrf_token": csrf, "scenario": MATCHED, "quote_file": (io.BytesIO(json.dumps(
            {"quote": [_small(i) for i in range(14_000)]}).encode()), "offers.json")},
        content_type="multipart/form-data", follow_redirects=True)
    assert r.status_code == 422
    assert "quotes: at most 50 quotes in one request, got 14,000" in _errors(r.text)
