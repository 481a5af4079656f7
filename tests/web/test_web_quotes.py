"""The Quotes page (Flask test client): a first visit shows the decision of the negotiators'
example as the API decides it; every view is a link that reproduces it (an uploaded file
carried in it, or posted when too large); without a demand the ranking is by unit price and
recommends nothing; the example quote file ranked as the API ranks it, the workbook and the
one-page summary, a typed quote, and bad files said in words at the field."""
from __future__ import annotations

import io
import json
import re
import tomllib
import uuid
from html import unescape
from urllib.parse import parse_qsl, urlsplit

import openpyxl
import pytest
from conftest import ROOT, auth
from werkzeug.datastructures import MultiDict

from costmodel.render import display
from costmodel.store.repo import key_create, scenario_list
from costmodel.web.quotes_page import LINK_LIMIT, pack_quotes

API = "/api/v1"
EXAMPLE = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
FIXTURE = ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_matched.toml"
NEGOTIATION = ROOT / "fixtures" / "quotes" / "negotiation.toml"
MATCHED = "fixture:published/deepseek-r1_gb300_matched"


@pytest.fixture(scope="module")
def viewer(app) -> str:
    with app.extensions["costmodel"].sessions() as session:
        _, token = key_create(session, f"quotes-viewer-{uuid.uuid4().hex[:6]}", "viewer")
    return token


@pytest.fixture
def signed(app, client, viewer):
    """The client signed in with a viewer key (reads are closed in the ``app`` fixture);
    its CSRF token."""
    token = _csrf(client, "/signin")
    r = client.post("/signin", data={"api_key": viewer, "csrf_token": token, "next": "/quotes"})
    assert r.status_code == 303
    return _csrf(client, "/quotes")


def _csrf(client, path: str) -> str:
    r = client.get(path)
    found = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
    assert found, (path, r.status_code)
    return found.group(1)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def _upload(client, token: str, content: bytes, name: str, scenario: str = MATCHED,
            **fields):
    """An upload, as the page's upload form sends it; the redirect to the view followed."""
    return client.post("/quotes", data={"csrf_token": token, "scenario": scenario, **fields,
                                        "upload": "1",
                                        "quote_file": (io.BytesIO(content), name)},
                       content_type="multipart/form-data", follow_redirects=True)


def _link(html: str, testid: str = "view-link") -> str:
    """The href of the page's link ``data-testid=<testid>``."""
    return unescape(re.search(rf'href="([^"]*)"[^>]*data-testid="{testid}"', html)[1])


def _decision(html: str) -> list[tuple[str, str, bool]]:
    """(offer, cost a month as shown, marked recommended) in the page's order."""
    return [(name, cost, bool(marked)) for marked, name, cost in re.findall(
        r'<tr class="quote-row( recommended)?" data-quote="([^"]+)">.*?'
        r'<td class="num monthly"[^>]*>([^<]+)</td>', html, flags=re.S)]


def _curve_scenario(name: str) -> dict:
    """A curve fixture scenario as the API takes it (a stored curve by id)."""
    scenario = tomllib.loads((ROOT / "fixtures" / "scenarios" / f"{name}.toml").read_text())
    scenario["operating_point"].pop("curve")
    scenario["operating_point"]["curve"] = scenario["operating_point"].pop("curve_id")
    return scenario


def _ranking(html: str) -> list[tuple[str, str]]:
    """(quote name, price per Mtok as shown) in the page's order."""
    return re.findall(r'<tr class="quote-row" data-quote="([^"]+)">.*?'
                      r'<td class="num quote-price"[^>]*>([^<]+)</td>', html, flags=re.S)


def _errors(html: str) -> list[str]:
    return [unescape(m) for m in re.findall(r'class="field-error"[^>]*>([^<]*)<', html)]


def test_the_example_file_ranks_as_the_api_ranks_it(client, signed, viewer):
    r = _upload(client, signed, EXAMPLE.read_bytes(), "example-quotes.toml")
    assert r.status_code == 200, _errors(r.text)
    shown = _ranking(r.text)

    quotes = tomllib.loads(EXAMPLE.read_text())["quote"]
    scenario = tomllib.loads(FIXTURE.read_text())
    api = client.post(f"{API}/quotes/compare", json={"quotes": quotes, "scenarios": [
        {"scenario": scenario}]}, headers=auth(viewer))
    assert api.status_code == 200, api.json
    ranked = api.json["scenarios"][0]["ranked"]
    assert shown == [(c["quote"], display.format_quantity(
        c["price_per_mtok"]["value"], "USD/Mtok", "price_per_mtok_total")) for c in ranked]
    # vendor A blended over an 8k/1k request: (8,192 x 0.55 + 1,024 x 2.19) / 9,216
    # = 0.73222 USD/Mtok; B and C are capacity at our throughput, a little dearer
    assert [n for n, _ in shown] == ["vendor-a-tokens", "vendor-b-reserved",
                                     "vendor-c-no-point"]
    assert shown[0][1] == "0.7322 USD/Mtok"
    text = _text(r.text)
    assert ("Ranked by unit price at each offer's own volume and term, against deepseek-r1 "
            "gb300 matched") in text
    assert "Flag no operating point in writing" in text  # vendor C states none
    # the implied margin of vendor A: 1 - our cost / its price, as a percentage
    assert display.format_quantity(ranked[0]["implied_margin"], "dimensionless",
                                   "implied_margin") in text


def test_the_workbook_download_opens_with_openpyxl(client, signed):
    r = _upload(client, signed, EXAMPLE.read_bytes(), "example-quotes.toml")
    book = client.get(_link(r.text, "download-xlsx"))  # the file carried in the link
    assert book.status_code == 200
    assert book.mimetype == ("application/vnd.openxmlformats-officedocument."
                             "spreadsheetml.sheet")
    assert book.headers["Content-Disposition"].startswith("attachment; filename=")
    wb = openpyxl.load_workbook(io.BytesIO(book.data))
    assert "Quotes" in wb.sheetnames
    cells = [str(c.value) for row in wb["Quotes"].iter_rows() for c in row if c.value]
    # one block per quote, headed by its name, in the file's order
    assert [c for c in cells if c.startswith("quote ")] == [
        "quote vendor-a-tokens", "quote vendor-b-reserved", "quote vendor-c-no-point"]
    assert "deepseek-r1 gb300 matched" in cells


def test_a_typed_quote_is_ranked_and_a_bad_field_is_marked(client, signed, viewer):
    typed = {"quotes": "typed", "scenario": MATCHED, "q_name": "typed-offer",
             "q_vendor": "Vendor T", "q_form": "per_mtok", "q_price_input": "0.5",
             "q_price_output": "2 USD/Mtok", "q_interactivity": "169", "q_term": "12"}
    r = client.get("/quotes", query_string=typed)
    assert r.status_code == 200, _errors(r.text)
    # (8,192 x 0.5 + 1,024 x 2) / 9,216 = 0.6667 USD/Mtok
    assert _ranking(r.text) == [("typed-offer", "0.6667 USD/Mtok")]

    r = client.get("/quotes", query_string={**typed, "q_price_output": "2 W"})
    assert r.status_code == 422
    assert 'aria-invalid="true"' in re.search(r'<input[^>]*id="f-q_price_output"[^>]*>',
                                              r.text)[0]
    # the API's words for the same quote, at the field
    api = client.post(f"{API}/quotes/compare", json={"quotes": [{
        "name": "typed-offer", "vendor": "Vendor T", "form": "per_mtok",
        "price_input": "0.5 USD/Mtok", "price_output": "2 W"}], "scenarios": [
        {"scenario": tomllib.loads(FIXTURE.read_text())}]}, headers=auth(viewer))
    assert api.json["errors"][0]["path"] == "quotes[0].price_output"
    assert _errors(r.text) == [api.json["errors"][0]["message"]] == [
        "expected units like 'USD/Mtok', got watt"]
    r = client.get("/quotes", query_string={k: v for k, v in typed.items()
                                            if k != "q_price_output"})
    assert r.status_code == 422
    assert _errors(r.text) == ["required for form per_mtok"]


@pytest.mark.parametrize("content,name,words", [
    (b"[[quote]\nname = 'x'", "q.toml", "q.toml: malformed TOML"),
    (b"\xff\xfe\x00bad", "q.toml", "q.toml is not UTF-8 text"),
    (b"title = 'no quotes'", "q.toml", "quote: q.toml: no [[quote]] tables"),
    (b'[[quote]]\nname = "x"\nvendor = "v"\nform = "per_mtok"\nprice_input = "1 W"\n'
     b'price_output = "1 USD/Mtok"\n', "q.toml", "quote[0].price_input: "),
    (b'{"quote": [{"name": "x"}]}', "q.json", "quote[0].vendor: "),
])
def test_a_bad_file_is_said_in_words_at_the_file_field(client, signed, content, name, words):
    r = _upload(client, signed, content, name)
    assert r.status_code == 422
    errors = _errors(r.text)
    assert any(e.startswith(words) for e in errors), errors
    assert "Traceback" not in r.text and "Ranked by unit price" not in r.text


def test_an_upload_over_the_body_limit_is_refused_in_words(database):
    from costmodel.server import create_app
    small = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True,
                        "MAX_CONTENT_LENGTH": 4096})
    try:
        client = small.test_client()
        token = _csrf(client, "/quotes")
        r = _upload(client, token, b"#" * 8192 + EXAMPLE.read_bytes(), "big.toml")
        assert r.status_code == 413
        assert _errors(r.text) == ["the upload is larger than the service's limit of 4 KiB "
                                   "(COSTMODEL_MAX_BODY): send a smaller file"]
    finally:
        small.extensions["costmodel"].dispose()


def test_quotes_against_a_saved_scenario_match_the_api(app, client, signed, viewer):
    with app.extensions["costmodel"].sessions() as session:
        _, editor = key_create(session, "quotes-editor", "editor")
    name = f"quotes saved {uuid.uuid4().hex[:6]}"
    saved = client.post(f"{API}/scenarios", json={"name": name, "scenario": {
        "accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched",
        "utilisation": "50 %"}}, headers=auth(editor))
    assert saved.status_code == 201
    sid = saved.json["scenario_id"]
    r = _upload(client, signed, EXAMPLE.read_bytes(), "example-quotes.toml",
                scenario=f"saved:{sid}")
    assert r.status_code == 200, _errors(r.text)
    api = client.post(f"{API}/quotes/compare", json={
        "quotes": tomllib.loads(EXAMPLE.read_text())["quote"],
        "scenarios": [{"scenario_id": sid}]}, headers=auth(viewer)).json
    ranked = api["scenarios"][0]["ranked"]
    assert _ranking(r.text) == [(c["quote"], display.format_quantity(
        c["price_per_mtok"]["value"], "USD/Mtok", "price_per_mtok_total")) for c in ranked]
    # at 50 % utilisation a capacity quote is spread over half the tokens: vendor B is
    # 14,000 USD / 8 accelerators / 730 h over 118 token/s/kW x 1.4 kW x 3,600 s x 0.5
    assert ranked[1]["quote"] == "vendor-b-reserved"
    assert ranked[1]["price_per_mtok"]["value"] == pytest.approx(
        14000 / 8 / 730 / (118 * 1.4 * 3600 * 0.5) * 1e6)
    assert _ranking(r.text)[1] == ("vendor-b-reserved", "8.06 USD/Mtok")
    with app.extensions["costmodel"].sessions(write=False) as session:
        assert scenario_list(session, q=name)[1] == 1  # reading quotes saved nothing


def test_the_quotes_page_needs_a_reader_and_a_csrf_token(client, viewer):
    assert client.get("/quotes").status_code == 401  # reads are closed in this app
    r = client.post("/quotes", data={"scenario": MATCHED, "quotes": "example-quotes"})
    assert r.status_code == 400
    assert "it carries no security token" in _text(r.text)


def test_the_price_pages_scenario_is_offered_when_arriving_from_it(client, signed):
    r = client.get("/quotes?accelerator=gb300&point=deepseek-r1/gb300/matched&utilisation=100"
                   "&boundary=chip&system=")
    assert r.status_code == 200
    assert '<option value="price" selected>The Price page\'s scenario</option>' in r.text
    # the link of the view carries the Price page's fields; with the other example's quotes
    query = [(k, v) for k, v in parse_qsl(urlsplit(_link(r.text)).query,
                                          keep_blank_values=True) if k != "quotes"]
    assert ("scenario", "price") in query and ("point", "deepseek-r1/gb300/matched") in query
    r = client.get("/quotes", query_string=[("quotes", "example-quotes"), *query])
    assert r.status_code == 200, _errors(r.text)
    assert [n for n, _ in _ranking(r.text)] == ["vendor-a-tokens", "vendor-b-reserved",
                                                "vendor-c-no-point"]


DECIDE_FILE = {"quote": [
    {"name": "h100-capacity", "vendor": "Cloud X", "date": "2026-11-20",
     "form": "per_accelerator_hour", "hourly_price": "2.10 USD/h", "accelerators": 64,
     "term": "12 month", "hardware": "h100"},
    {"name": "api-tokens", "vendor": "API Y", "date": "2026-11-20", "form": "per_mtok",
     "price_input": "0.60 USD/Mtok", "price_output": "0.60 USD/Mtok", "term": "12 month",
     "operating_point": {"interactivity": "100 token/s/user"}}]}
B200 = "fixture:curve-gpt-oss-120b-b200"


def _decide_upload(client, token, **fields):
    return _upload(client, token, json.dumps(DECIDE_FILE).encode(), "offers.json", B200,
                   **fields)


def test_with_a_demand_the_offers_are_ranked_for_it_as_the_api_ranks_them(client, signed,
                                                                          viewer):
    r = _decide_upload(client, signed, d_volume="50000", d_interactivity="100")
    assert r.status_code == 200, _errors(r.text)
    text = _text(r.text)
    scenario = _curve_scenario("curve-gpt-oss-120b-b200")
    api = client.post(f"{API}/quotes/decide", headers=auth(viewer), json={
        "quotes": DECIDE_FILE["quote"], "scenarios": [{"scenario": scenario}],
        "demand": {"volume": "50000 Mtok/month", "interactivity": "100 token/s/user"}})
    assert api.status_code == 200, api.json
    assert _decision(r.text) == [
        (p["offer"], display.format_quantity(p["monthly_cost"]["value"], "USD"), i == 0)
        for i, p in enumerate(api.json["ranked"])]
    assert api.json["recommendation"]["text"] in text
    # the H100 offer is not priced at the B200's throughput: said, not ranked
    assert "not priced at another accelerator's throughput" in text


def test_a_bad_demand_is_marked_at_its_field(client, signed):
    r = _decide_upload(client, signed, d_volume="5 W")
    assert r.status_code == 422
    assert any("Mtok/month" in e for e in _errors(r.text)), _errors(r.text)
    assert 'id="f-d_volume"' in r.text and 'aria-invalid="true"' in r.text


# 12 quiet hours at 0.4 of the peak, 12 busy ones at the peak: a mean of 0.7, the B200
# scenario's own utilisation (so the scenario and the shape agree)
SHAPE_70 = [0.4] * 8 + [1.0] * 12 + [0.4] * 4


def test_a_load_shape_typed_prices_as_the_api_prices_it(client, signed, viewer):
    r = _decide_upload(client, signed, d_volume="50000", d_interactivity="100",
                       d_load=", ".join(f"{x:g}" for x in SHAPE_70))
    assert r.status_code == 200, _errors(r.text)
    text = _text(r.text)
    assert "the busiest hour is the peak, the average 0.7 of it" in text
    api = client.post(f"{API}/quotes/decide", headers=auth(viewer), json={
        "quotes": DECIDE_FILE["quote"],
        "scenarios": [{"scenario": _curve_scenario("curve-gpt-oss-120b-b200")}],
        "demand": {"volume": "50000 Mtok/month", "interactivity": "100 token/s/user",
                   "load": {"hourly": SHAPE_70}}})
    assert api.status_code == 200, api.json
    # 50,000 Mtok a month is 19,026 token/s on average; over a mean of 0.7: a 27,180 peak
    assert api.json["demand"]["peak"]["value"] == pytest.approx(
        50_000e6 / (730 * 3600) / 0.7)
    assert _decision(r.text) == [
        (p["offer"], display.format_quantity(p["monthly_cost"]["value"], "USD"), i == 0)
        for i, p in enumerate(api.json["ranked"])]
    # a shape whose busiest hour is not 1: said at its field
    r = _decide_upload(client, signed, d_volume="50000", d_load=", ".join(["0.5"] * 24))
    assert r.status_code == 422
    assert any("the busiest hour is 0.5" in e for e in _errors(r.text)), _errors(r.text)
    assert re.search(r'class="field invalid">\s*<label for="f-d_load"', r.text)



XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _bills(content: bytes) -> tuple[list[str], list[float], str]:
    """A decision workbook's options (ranked as exported), their bills a month as cached,
    and the recommended one."""
    wb = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    assert wb.sheetnames[0] == "Decision" and "Scan" in wb.sheetnames

    def named(name):
        (sheet, ref), = wb.defined_names[name].destinations
        cells = wb[sheet][ref.replace("$", "")]
        return [c.value for row in cells for c in row] if isinstance(cells, tuple) \
            else cells.value
    ws = wb["Decision"]
    header = next(r for r in range(1, 40) if ws.cell(r, 2).value == "name")
    names = [c.value for c in ws[header][3:] if c.value]
    return names, named("option_bill"), named("decision_offer")


def test_a_shaped_demands_decision_downloads_as_a_workbook_as_the_api_decides(
        client, signed, viewer):
    """The Quotes page's workbook link for a decision (a load shape of mean 0.7), and the API's
    decide by Accept: the same bills a month as the API's JSON, cheapest first."""
    r = _decide_upload(client, signed, d_volume="50000", d_interactivity="100",
                       d_load=", ".join(f"{x:g}" for x in SHAPE_70))
    assert r.status_code == 200, _errors(r.text)
    book = client.get(_link(r.text, "download-decision-xlsx"))
    assert book.status_code == 200 and book.mimetype == XLSX
    body = {"quotes": DECIDE_FILE["quote"],
            "scenarios": [{"scenario": _curve_scenario("curve-gpt-oss-120b-b200")}],
            "demand": {"volume": "50000 Mtok/month", "interactivity": "100 token/s/user",
                       "load": {"hourly": SHAPE_70}}}
    api = client.post(f"{API}/quotes/decide", headers=auth(viewer), json=body)
    by_accept = client.post(f"{API}/quotes/decide", json=body,
                            headers={**auth(viewer), "Accept": XLSX})
    assert by_accept.status_code == 200 and by_accept.mimetype == XLSX
    ranked = api.json["ranked"]
    for content in (book.data, by_accept.data):
        names, bills, offer = _bills(content)
        assert names == [p["offer"] for p in ranked]
        assert bills == pytest.approx([p["monthly_cost"]["value"] for p in ranked], rel=1e-12)
        assert offer == api.json["recommendation"]["offer"]
    # the average over the peak is the shape's mean, 0.7
    wb = openpyxl.load_workbook(io.BytesIO(book.data), data_only=True)
    (sheet, ref), = wb.defined_names["decision_load_factor"].destinations
    assert wb[sheet][ref.replace("$", "")].value == pytest.approx(0.7, rel=1e-12)

def test_the_one_page_summary_downloads(client, signed):
    from io import BytesIO

    from pypdf import PdfReader
    r = client.get("/quotes/summary.pdf", query_string={
        "quotes": "file", "qn": "offers.json", "qf": pack_quotes(DECIDE_FILE), "scenario": B200,
        "d_volume": "50000", "d_interactivity": "100"})
    assert r.status_code == 200 and r.mimetype == "application/pdf"
    reader = PdfReader(BytesIO(r.data))
    assert len(reader.pages) == 1
    assert "Take gpt-oss-120b b200" in " ".join(reader.pages[0].extract_text().split())


FREE_FILE = b'''
[[quote]]
name = "free-tokens"
vendor = "Trial"
form = "per_mtok"
price_input = "0 USD/Mtok"
price_output = "0 USD/Mtok"

[[quote]]
name = "free-reserved"
vendor = "Credit"
form = "reserved_monthly"
monthly_price = "0 USD/month"
accelerators = 8

[[quote]]
name = "free-hours"
vendor = "Credit"
form = "per_accelerator_hour"
hourly_price = "0 USD/h"
'''


def test_free_offers_are_shown_first_with_the_margin_not_defined(client, signed):
    r = _upload(client, signed, EXAMPLE.read_bytes()
                + FREE_FILE, "free.toml")
    assert r.status_code == 200, _errors(r.text)
    shown = _ranking(r.text)
    assert shown[:3] == [("free-tokens", "0 USD/Mtok"), ("free-reserved", "0 USD/Mtok"),
                         ("free-hours", "0 USD/Mtok")]
    assert len(shown) == 6
    margins = re.findall(r'data-label="Implied margin">(.*?)</td>', r.text)
    assert [_text(m) for m in margins[:3]] == ["not defined (free offer)"] * 3
    assert all(m.endswith("%") for m in margins[3:])
    # the workbook of the same quotes: the free offers' margins are text, not #DIV/0!
    book = client.get(_link(r.text, "download-xlsx"))
    assert book.status_code == 200
    ws = openpyxl.load_workbook(io.BytesIO(book.data), data_only=True)["Quotes"]
    cached = [r[3].value for r in ws.iter_rows() if r[0].value == "Implied margin on our cost"]
    assert cached[3:] == ["not defined (free offer)"] * 3


# ---- the first view: the decision of the negotiators' example, and its link ----------------

def _api_decision(client, viewer, quotes_file=NEGOTIATION, **demand_over) -> dict:
    """POST /api/v1/quotes/decide for a quote file's quotes and [demand] against the B200 and
    H100 example builds (the page's first view)."""
    data = tomllib.loads(quotes_file.read_text())
    api = client.post(f"{API}/quotes/decide", headers=auth(viewer), json={
        "quotes": data["quote"], "demand": {**data["demand"], **demand_over},
        "scenarios": [{"scenario": _curve_scenario("curve-gpt-oss-120b-b200")},
                      {"scenario": _curve_scenario("curve-gpt-oss-120b-h100")}]})
    assert api.status_code == 200, api.json
    return api.json


def test_a_first_visit_shows_the_decision_as_the_api_decides_it(client, signed, viewer):
    r = client.get("/quotes")
    assert r.status_code == 200, _errors(r.text)
    api = _api_decision(client, viewer)
    rec = api["recommendation"]
    # every offer and own build for the example's demand, cheapest month first; the mark on
    # the recommended row, and only there
    assert _decision(r.text) == [
        (p["offer"], display.format_quantity(p["monthly_cost"]["value"], "USD"),
         p["offer"] == rec["offer"]) for p in api["ranked"]]
    assert [n for n, _, marked in _decision(r.text) if marked] == [api["ranked"][0]["offer"]]
    text = _text(r.text)
    assert rec["text"] in text
    # the figures docs/negotiators.md prints for `costmodel quotes compare` with this demand
    assert rec["text"].startswith("Take gpt-oss-120b b200 (illustrative curve) (own build): "
                                  "5,477 USD a month for 50,000 Mtok a month (0.1095 USD/Mtok); "
                                  "12,686 USD a month (69.8%) below gpt-oss-120b h100")
    # what it uses and how to change it, said plainly
    assert "The example file fixtures/quotes/negotiation.toml" in text
    assert "h100-capacity (Cloud X (illustrative)" in text and "api-tokens (API Y" in text
    assert ("50,000 Mtok/month (mixed tokens), peak 30,000 token/s; service level 100 "
            "token/s/user (median)") in text
    assert "From the [demand] table of fixtures/quotes/negotiation.toml" in text
    assert "Change the demand : what is typed there replaces the file's value" in text
    assert "Decision for the buyer's demand: 50,000 Mtok/month" in text


def test_the_link_of_a_view_reproduces_it_in_another_browser(client, signed, web):
    """Demand typed over the file's, a second example build, an improvement: the view's link,
    opened by a client without this one's session, shows the same figures."""
    r = client.get("/quotes", query_string=[
        ("quotes", "negotiation"), ("demand", "buyer"), ("d_volume", "8000"),
        ("d_peak", "9000"), ("d_improvement", "30"),
        ("scenario", "fixture:curve-gpt-oss-120b-h100"),
        ("scenario", "fixture:curve-gpt-oss-120b-mi300x")])
    assert r.status_code == 200, _errors(r.text)
    link = _link(r.text)
    assert link.startswith("/quotes?quotes=negotiation&demand=buyer&d_volume=8000&d_peak=9000")
    again = web.get(link)  # a browser with no session (reads open there)
    assert again.status_code == 200
    assert _decision(again.text) == _decision(r.text) and len(_decision(r.text)) == 4
    rec = re.compile(r'<div class="answer recommendation".*?</div>', re.S)
    assert rec.search(again.text)[0] == rec.search(r.text)[0]
    assert "8,000 Mtok/month" in _text(r.text)
    # its form shows the same fields, so changing one keeps the rest
    for field in ('name="d_volume" value="8000"', 'name="d_improvement" value="30"',
                  '<option value="fixture:curve-gpt-oss-120b-mi300x" selected>'):
        assert field in again.text


def test_an_uploaded_file_is_carried_in_the_link_of_its_view(client, signed, web):
    r = _upload(client, signed, json.dumps(DECIDE_FILE).encode(), "offers.json", B200,
                d_volume="50000", d_interactivity="100")
    assert r.history and r.history[0].status_code == 303  # the upload: a redirect to a view
    assert r.status_code == 200, _errors(r.text)
    link = _link(r.text)
    assert parse_qsl(urlsplit(r.request.url).query) == parse_qsl(urlsplit(link).query)
    assert dict(parse_qsl(urlsplit(link).query))["qn"] == "offers.json"
    assert len(link) <= LINK_LIMIT
    again = web.get(link)
    assert _decision(again.text) == _decision(r.text) != []
    assert "Your file offers.json" in _text(again.text)
    # a link cut short is said in words, at the file
    cut = link.replace("&qf=", "&qf=AAAA", 1)
    bad = web.get(cut)
    assert bad.status_code == 422
    assert _errors(bad.text)[0].startswith("the quote file in this link is damaged")


def test_a_file_too_large_for_a_link_is_posted_and_said(client, signed):
    """A quote file whose link would exceed LINK_LIMIT: answered on the POST, the view says it
    has no link, and its form (posted, with the file) shows the same figures again."""
    import secrets
    offers = "".join(
        f'[[quote]]\nname = "offer-{i}"\nvendor = "Vendor {secrets.token_hex(4)}"\n'
        f'form = "per_mtok"\nprice_input = "0.{i + 10} USD/Mtok"\n'
        f'price_output = "1.{i + 10} USD/Mtok"\nsource = "{secrets.token_urlsafe(90)}"\n'
        f'[quote.operating_point]\ninteractivity = "169 token/s/user"\n\n' for i in range(30))
    r = _upload(client, signed, offers.encode(), "many.toml")
    assert not r.history and r.status_code == 200, _errors(r.text)
    assert len(_ranking(r.text)) == 30
    text = _text(r.text)
    assert "No link to this view: the quote file is too large to carry in a link" in text
    assert 'data-testid="view-link"' not in r.text
    form = re.search(r'<form class="quotes" id="view-form" method="post".*?</form>', r.text,
                     re.S)[0]
    fields = [(unescape(k), unescape(v)) for k, v in re.findall(
        r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form)]
    assert ("quotes", "file") not in fields  # the radio, not hidden
    again = client.post("/quotes", data=MultiDict([*fields, ("quotes", "file"),
                                                   ("scenario", MATCHED)]))
    assert again.status_code == 200
    assert _ranking(again.text) == _ranking(r.text)


# ---- without a demand: by unit price, and no recommendation -------------------------------

@pytest.mark.parametrize("query", [
    {"demand": "none"},  # the example's demand left out
    {"quotes": "example-quotes", "scenario": MATCHED},  # quotes with no [demand], none typed
])
def test_without_a_demand_the_ranking_is_by_unit_price_and_recommends_nothing(client, signed,
                                                                              query):
    r = client.get("/quotes", query_string=query)
    assert r.status_code == 200, _errors(r.text)
    headings = re.findall(r"<h2 [^>]*>([^<]*)</h2>", r.text)
    ranked = [h for h in headings if h.startswith("Ranked")]
    assert ranked and all(unescape(h).startswith(
        "Ranked by unit price at each offer's own volume and term, against ") for h in ranked)
    assert _ranking(r.text)
    # no face marks a recommendation over unequal volumes: no mark, no recommendation box
    assert 'class="mark"' not in r.text and "quote-row recommended" not in r.text
    assert "answer recommendation" not in r.text and "Take " not in _text(r.text)
    assert "Decision for the buyer's demand" not in r.text
    assert "nothing is recommended" in _text(r.text)


def test_the_market_improvement_prices_the_lock_in_and_is_checked(client, signed):
    # a cheap typed offer wins the demand: the lock-in of its 12-month term is priced
    cheap = {"quotes": "typed", "q_name": "cheap", "q_vendor": "V", "q_form": "per_mtok",
             "q_price_input": "0.01", "q_price_output": "0.01", "q_term": "12",
             "q_interactivity": "100", "d_volume": "50000", "d_interactivity": "100",
             "scenario": B200}
    r = client.get("/quotes", query_string={**cheap, "d_improvement": "30"})
    assert r.status_code == 200, _errors(r.text)
    assert [n for n, _, marked in _decision(r.text) if marked] == ["cheap"]
    assert "locking in 12 months at today's price costs" in _text(r.text)
    r = client.get("/quotes", query_string=cheap)
    assert "give an improvement to price the lock-in" in _text(r.text)
    r = client.get("/quotes", query_string={"d_improvement": "150"})
    assert r.status_code == 422
    assert _errors(r.text) == ["expected 0 to 100 % a year, got 1.5 (150.0%)"]


def test_a_demand_in_tasks_ranks_the_offers_at_the_task_target(client, signed):
    """A file whose [demand.task] is an agent's task, its volume typed in tasks a day: the
    per-Mtok offer (100 token/s/user guaranteed) is below what a 150 s task needs (12,000
    output tokens in 150 - 46.8 s of tool time - 40 x 0.5 s TTFT = 83.2 s: 144.2), as the
    API says."""
    data = {**DECIDE_FILE, "demand": {"ttft_max": "0.5 s", "task": {
        "steps": 40, "context": 8000, "growth": 1500, "output": 300, "cached_share": 0.8,
        "tool_time": "1.2 s", "target": "150 s"}}}
    r = _upload(client, signed, json.dumps(data).encode(), "agent.json", B200,
                d_volume="20000 task/day")
    assert r.status_code == 200, _errors(r.text)
    text = _text(r.text)
    assert "20,000 tasks a day of 40 steps" in text
    assert "100 token/s/user, below the demand's service level (144.2)" in text


def test_a_typed_market_price_is_ranked_flagged_and_decided_as_the_api(client, signed, viewer):
    # the illustrative reasoning model's 2026-11 list price (fixtures/catalog/market_prices.toml):
    # 0.50 USD per million input tokens, 2.00 output: over an 8k/1k request
    # (8,192 x 0.5 + 1,024 x 2) / 9,216 = 0.6667 USD/Mtok
    market = "illustrative/reasoning-model-api"
    typed = {"quotes": "typed", "scenario": MATCHED, "q_market": market, "demand": "none"}
    r = client.get("/quotes", query_string=typed)
    assert r.status_code == 200, _errors(r.text)
    assert _ranking(r.text) == [(market, "0.6667 USD/Mtok")]
    flag = ("Flag market price illustrative/reasoning-model-api@2026-11 (version 2026-11, "
            "illustrative assumption: a made-up price list to show the arithmetic, not a "
            "published price): a public list price, not a negotiated quote")
    assert flag in _text(r.text)
    # for a demand: 20,000 Mtok a month at the same price, 13,333 USD a month as the API says
    r = client.get("/quotes", query_string={**typed, "demand": "buyer", "d_volume": "20000"})
    assert r.status_code == 200, _errors(r.text)
    api = client.post(f"{API}/quotes/decide", json={
        "quotes": [{"market": market}], "demand": {"volume": "20000 Mtok/month"},
        "scenarios": [{"scenario": tomllib.loads(FIXTURE.read_text())}]},
        headers=auth(viewer)).json
    option = next(o for o in api["ranked"] if o["offer"] == market)
    assert option["monthly_cost"]["value"] == pytest.approx(20000 * 6144 / 9216, rel=1e-12)
    shown = {n: c for n, c, _ in _decision(r.text)}
    assert "13,333" in shown[market], shown
    assert "market price illustrative/reasoning-model-api@2026-11" in _text(r.text)
    # a market price gives the prices: one typed beside it is refused at its field
    r = client.get("/quotes", query_string={**typed, "q_price_input": "0.4"})
    assert r.status_code == 422
    assert _errors(r.text) == ["the market price gives the prices: give one of market or "
                               "price_input/price_output"]
    r = client.get("/quotes", query_string={**typed, "q_market": "nobody/nothing"})
    assert r.status_code == 422
    assert 'aria-invalid="true"' in re.search(r'<input[^>]*id="f-q_market"[^>]*>', r.text)[0]
