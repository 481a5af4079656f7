"""The currency fields of the Price and Compare pages, with Flask's test client: the money
table the form sends (what the API takes), each bad field marked beside it in the engine's
words, amounts typed in the currency read at its rate, the downloads and the API call that
carry the choice and the page's what-if, the Plan and Sensitivity pages carrying the
currency in their own fields, a saved scenario's currency opened on the Price page, and a
system's own rates kept on Compare. The rate is the sample TOU scenario's (0.92 EUR/USD,
2026-11-30, illustrative).
"""
from __future__ import annotations

import html
import json
import re
import shlex
from urllib.parse import parse_qsl, urlencode

import pytest

from costmodel.web.saved import price_query
from costmodel.web.scenario_form import scenario_form

EUR_PER_USD = 0.92
FX = {"fx_rate": "0.92", "fx_date": "2026-11-30",
      "fx_source": "illustrative assumption for the test"}
EUR = {"currency": "EUR", **FX}
MONEY = {"currency": "EUR", "fx": {"EUR": {"rate": "0.92 EUR/USD", "date": "2026-11-30",
                                           "source": "illustrative assumption for the test"}}}
TOU = {"electricity_kind": "tariff", "tariff": "illustrative-tou-peak-16-21",
       "utilisation": "60"}


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def errors_of(page: str) -> dict[str, str]:
    return {m.group(1): html.unescape(m.group(2)) for m in re.finditer(
        r'<p class="field-error" id="([a-z_]+)-error" role="alert">([^<]*)</p>', page)}


def curl_body(page: str) -> dict:
    line = html.unescape(re.search(r'data-testid="curl">([^<]*)</pre>', page).group(1))
    words = shlex.split(line)
    return json.loads(words[words.index("-d") + 1])


# ---- the form's money table -------------------------------------------------------------------

def test_the_form_sends_the_money_table_the_api_takes():
    form = scenario_form({**EUR, "currency": " eur "})
    assert form.valid, form.errors
    assert form.mapping["money"] == MONEY
    assert form.values["currency"] == "EUR"  # written back as read
    # a rate typed with its unit is sent as typed
    assert scenario_form({**EUR, "fx_rate": "0.92 EUR/USD"}).mapping["money"] == MONEY
    # blank, or USD: no table, figures in USD
    for code in ("", "USD", "usd"):
        assert "money" not in scenario_form({"currency": code}).mapping


@pytest.mark.parametrize("values,field,message", [
    ({**EUR, "currency": "EUX"}, "currency",
     "'EUX' is not an ISO 4217 currency code (e.g. EUR, GBP, JPY; blank for USD)"),
    ({**EUR, "currency": "euro"}, "currency",
     "'euro' is not an ISO 4217 currency code (e.g. EUR, GBP, JPY; blank for USD)"),
    ({**EUR, "fx_rate": ""}, "fx_rate", "figures in EUR need the rate they are converted at: "
                                        "type how many EUR one USD buys (a bare number is "
                                        "EUR/USD)"),
    ({**EUR, "fx_rate": "0"}, "fx_rate", "rate: must be greater than zero, got 0 EUR / USD"),
    ({**EUR, "fx_rate": "0.92 GBP/USD"}, "fx_rate", "a rate for EUR is in EUR/USD, got GBP/USD"),
    ({**EUR, "fx_date": "30 Nov"}, "fx_date", "a date as YYYY-MM-DD (or YYYY-MM), got '30 Nov'"),
    ({**EUR, "fx_source": ""}, "fx_source", "type where the EUR rate comes from (e.g. a central "
                                            "bank's reference rate of the day)"),
    (FX, "fx_rate", "choose the currency this rate is for (without one results are in USD), "
                    "or clear it"),
])
def test_a_bad_money_field_is_marked_beside_it(web, values, field, message):
    assert scenario_form(values).errors[field] == message
    resp = web.get("/?" + urlencode(values))
    assert resp.status_code == 422
    page = resp.get_data(as_text=True)
    assert errors_of(page)[field] == message
    assert 'data-figure="price_per_mtok_total"' not in page  # nothing priced


def test_an_amount_typed_in_the_currency_is_read_at_its_rate(web):
    # 27,600 EUR at 0.92 EUR/USD is 30,000 USD: the same capex as 30000 typed in USD
    euros = scenario_form({**EUR, "accelerator_price": "27600 EUR"})
    assert euros.valid, euros.errors
    dollars = scenario_form({**EUR, "accelerator_price": "30000"})
    a, b = (web.post("/api/v1/price", json=f.price_request()).get_json()
            for f in (euros, dollars))
    catalog = web.post("/api/v1/price", json=scenario_form(EUR).price_request()).get_json()
    for name in ("capex_per_accelerator", "cost_per_mtok_total"):
        assert a["steps"][name]["value"] == pytest.approx(b["steps"][name]["value"], rel=1e-12)
        assert a["steps"][name]["value"] != catalog["steps"][name]["value"]  # not the default
    # without the currency the amount names the rate it needs, beside its field
    assert "an amount in EUR, but the scenario states no exchange rate" in \
        scenario_form({"accelerator_price": "27600 EUR"}).errors["accelerator_price"]


# ---- the page, its downloads and its API call --------------------------------------------------

def test_the_downloads_and_the_api_call_carry_the_currency_and_the_what_if(web):
    values = {**TOU, **EUR, "flexible_share": "30"}
    resp = web.get("/?" + urlencode(values))
    assert resp.status_code == 200, text_of(resp.get_data(as_text=True))[:1500]
    page = resp.get_data(as_text=True)
    # the API call: the form's scenario with its money table, and the what-if as a fraction
    body = curl_body(page)
    assert body["scenario"]["money"] == MONEY and body["flexible_share"] == 0.3
    answer = web.post("/api/v1/price", json=body).get_json()
    assert answer["what_if"]["change"]["unit"] == "EUR/Mtok"
    # the JSON download is that answer; the workbook's link carries the same query
    links = dict(re.findall(r'href="/price\.(json|xlsx)\?([^"]+)"', page))
    for kind in ("json", "xlsx"):
        query = dict(parse_qsl(html.unescape(links[kind]), keep_blank_values=True))
        assert (query["currency"], query["fx_rate"], query["flexible_share"]) == \
            ("EUR", "0.92", "30")
    got = web.get("/price.json?" + html.unescape(links["json"])).get_json()
    assert got == answer
    book = web.get("/price.xlsx?" + html.unescape(links["xlsx"]))
    assert book.status_code == 200 and book.data[:2] == b"PK"
    # the page's what-if line is in EUR, as the API's what_if
    assert "EUR per million tokens" in text_of(re.search(
        r'data-testid="what-if">(.*?)</p>', page, re.S).group(1))


def test_plan_and_sensitivity_show_the_currency_fields_and_carry_them(web):
    # Sensitivity and Plan answer in the currency too (tests/web/test_web_currency_pages.py);
    # the scenario's money table is in their Currency fieldset (an amount typed in EUR needs
    # its rate) and in the link back to the price
    values = {**EUR, "accelerator_price": "27600 EUR"}
    for path in ("/sensitivity?sa_draws=100&", "/plan?pl_demand=2.5e6&"):
        page = web.get(path + urlencode(values)).get_data(as_text=True)
        assert re.search(r'<input type="text"[^>]*value="EUR"[^>]*id="f-currency"', page)
        assert re.search(r'<input type="text"[^>]*value="0.92"[^>]*id="f-fx_rate"', page)
        assert '<input type="hidden" name="currency"' not in page
        assert "currency=EUR" in re.search(r'href="/\?([^"]*)"', page).group(1)


def test_a_saved_scenarios_currency_opens_on_the_price_page():
    query, dropped = price_query({"accelerator": "gb300",
                                  "operating_point": "deepseek-r1/gb300/peak",
                                  "money": {**MONEY, "fx": {**MONEY["fx"], "GBP": {
                                      "rate": "0.79 GBP/USD", "date": "2026-11-30",
                                      "source": "illustrative"}}}})
    form = scenario_form(dict(parse_qsl(query, keep_blank_values=True)))
    assert form.valid, form.errors
    assert form.mapping["money"] == MONEY
    # a rate for another currency has no field on the page: said to be left out
    assert dropped == ["money.fx.GBP.date", "money.fx.GBP.rate", "money.fx.GBP.source"]


# ---- Compare -------------------------------------------------------------------------------

def test_compare_shows_each_system_at_the_pages_rate_keeping_its_own(web):
    # the sample TOU scenario states its own EUR rate (0.92) and is in EUR already; shown in
    # GBP at 0.79 GBP/USD, it keeps its EUR rate (for amounts in EUR) beside the page's
    gbp = {"currency": "GBP", "fx_rate": "0.79", "fx_date": "2026-11-30",
           "fx_source": "illustrative assumption for the test"}
    query = urlencode([("sys", "fixture:sample-tco"), ("sys", "fixture:sample-tou"),
                       ("at", "own"), *gbp.items()])
    resp = web.get("/compare?" + query)
    assert resp.status_code == 200, text_of(resp.get_data(as_text=True))[:1500]
    page = resp.get_data(as_text=True)
    body = curl_body(page)
    for item in body["scenarios"]:
        assert item["overrides"]["money.currency"] == "GBP"
    assert set(body["scenarios"][1]["overrides"]["money.fx"]) == {"EUR", "GBP"}
    answer = web.get("/compare.json?" + query).get_json()
    usd = web.post("/api/v1/compare", json={"scenarios": [
        {"scenario": s["scenario"]} for s in body["scenarios"]]}).get_json()
    for shown, own in zip(answer["scenarios"], usd["scenarios"], strict=True):
        assert shown["cost_per_mtok"]["total"]["unit"] == "GBP/Mtok"
        steps = own["steps"]["cost_per_mtok_total"]["value"]  # the USD figure underneath
        assert shown["cost_per_mtok"]["total"]["value"] == pytest.approx(steps * 0.79,
                                                                         rel=1e-12)
    assert "shown in GBP at 0.79 GBP/USD (2026-11-30;" in text_of(page)
    # a bad code: beside the field, nothing compared
    bad = web.get("/compare?" + query.replace("GBP", "GBX"))
    assert bad.status_code == 422
    assert "'GBX' is not an ISO 4217 currency code" in errors_of(bad.get_data(as_text=True))[
        "currency"]
