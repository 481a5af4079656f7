"""The Currency fieldset of the Task, Plan, Quotes and Sensitivity pages, with Flask's test
client: each page answers in the currency typed, every money figure 0.92 x its USD figure at
0.92 EUR/USD, the rate said beside the figures, the downloads and links carrying the choice,
and a bad code marked beside its field with nothing computed.
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlencode

import pytest

EUR_PER_USD = 0.92
EUR = {"currency": "EUR", "fx_rate": "0.92", "fx_date": "2026-11-30",
       "fx_source": "illustrative assumption for the test"}
SAID = "shown in EUR at 0.92 EUR/USD (2026-11-30; illustrative assumption for the test)"


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def note(page: str) -> str:
    return text_of(re.search(r'data-testid="money-note">(.*?)</p>', page, re.S).group(1))


def get(web, path: str, status: int = 200) -> str:
    resp = web.get(path)
    page = resp.get_data(as_text=True)
    assert resp.status_code == status, text_of(page)[:1500]
    return page


def field_error(page: str, name: str) -> str:
    return html.unescape(re.search(rf'<p class="field-error" id="{name}-error1?" '
                                   rf'role="alert">([^<]*)</p>', page).group(1))


# ---- Task ---------------------------------------------------------------------------------------

def test_the_task_page_answers_in_euros(web):
    usd = web.get("/task.json").get_json()
    query = urlencode(EUR)
    eur = web.get(f"/task.json?{query}").get_json()
    for a, b in zip(eur["systems"], usd["systems"], strict=True):
        for key in ("price_per_task", "cost_per_thousand_tasks", "cost_per_mtok"):
            assert a[key]["unit"] == b[key]["unit"].replace("USD", "EUR")
            assert a[key]["value"] == pytest.approx(b[key]["value"] * EUR_PER_USD, rel=1e-12)
        assert a["latency"] == b["latency"]
    page = get(web, f"/task?{query}")
    assert 'id="f-currency"' in page and 'value="EUR"' in page  # the fieldset, filled in
    row = re.search(r'<tr data-figure="cost_per_task".*?</tr>', page, re.S).group(0)
    assert "Cost per task EUR" in text_of(row)
    assert text_of(row).count(" EUR") >= len(eur["systems"])
    assert SAID in note(page)
    # the downloads carry the choice
    assert f"/task.json?{query.split('&')[0]}" not in page  # (the links carry the whole query)
    assert re.search(r'href="/task\.json\?[^"]*currency=EUR[^"]*fx_rate=0\.92', page)
    assert "money.currency" in html.unescape(page)  # the API call sets the currency


def test_a_bad_currency_on_the_task_page_is_beside_its_field(web):
    page = get(web, "/task?" + urlencode({**EUR, "currency": "EUX"}), 422)
    assert field_error(page, "currency").startswith("'EUX' is not an ISO 4217 currency code")
    assert 'data-figure="cheapest"' not in page


# ---- Plan ---------------------------------------------------------------------------------------

def test_the_plan_page_answers_in_euros(web):
    usd = web.get("/plan.json?pl_demand=2.5e6").get_json()
    query = "pl_demand=2.5e6&" + urlencode(EUR)
    eur = web.get(f"/plan.json?{query}").get_json()
    assert eur["accelerators"] == usd["accelerators"]
    for key, unit in (("capex", "EUR"), ("cost_per_hour", "EUR/h"),
                      ("cost_per_month", "EUR/month")):
        assert eur[key] == {"value": pytest.approx(usd[key]["value"] * EUR_PER_USD,
                                                   rel=1e-12), "unit": unit}
    page = get(web, f"/plan?{query}")
    month = re.search(r'data-figure="cost_per_month">([^<]*)<', page).group(1)
    assert month.endswith(" EUR")
    assert SAID in note(page)
    assert '<input type="text" inputmode="text" autocomplete="off" value="EUR"' in page
    assert "currency=EUR" in re.search(r'href="/\?([^"]*)"', page).group(1)  # back to Price
    bad = get(web, "/plan?pl_demand=2.5e6&" + urlencode({**EUR, "fx_date": "30 Nov"}), 422)
    assert field_error(bad, "fx_date") == "a date as YYYY-MM-DD (or YYYY-MM), got '30 Nov'"


# ---- Sensitivity --------------------------------------------------------------------------------

def test_the_sensitivity_page_answers_in_euros(web):
    usd = web.get("/sensitivity.json?sa_draws=100&analysis=tornado").get_json()
    query = "sa_draws=100&" + urlencode(EUR)
    eur = web.get(f"/sensitivity.json?{query}&analysis=tornado").get_json()
    assert eur["unit"] == usd["unit"].replace("USD", "EUR") == "EUR/Mtok"
    assert eur["base"]["value"] == pytest.approx(usd["base"]["value"] * EUR_PER_USD, rel=1e-12)
    assert eur["money"]["rate"]["value"] == 0.92
    page = get(web, f"/sensitivity?{query}")
    assert "EUR/Mtok" in text_of(re.search(r'class="scenario-name">(.*?)</p>', page,
                                           re.S).group(1))
    assert SAID in note(page)
    bad = get(web, "/sensitivity?sa_draws=100&" + urlencode({**EUR, "currency": "euro"}), 422)
    assert field_error(bad, "currency").startswith("'euro' is not an ISO 4217 currency code")


# ---- Quotes -------------------------------------------------------------------------------------

def _monthly(page: str) -> dict[str, float]:
    rows = re.findall(r'data-quote="([^"]+)".*?data-label="Cost a month">([^<]*)</td>', page,
                      re.S)
    return {name: float(text.split()[0].replace(",", "")) for name, text in rows}


def test_the_quotes_page_answers_in_euros(web):
    usd = _monthly(get(web, "/quotes"))
    page = get(web, "/quotes?" + urlencode(EUR))
    eur = _monthly(page)
    assert eur.keys() == usd.keys() and eur
    for name, value in eur.items():  # each shown to its rounding
        assert value == pytest.approx(usd[name] * EUR_PER_USD, rel=2e-3)
    assert re.search(r'data-label="Cost a month">[^<]* EUR</td>', page)
    said = note(page)
    assert SAID in said and "quote prices are stated in USD, and shown in EUR" in said
    # the view's link carries the currency
    assert "currency=EUR" in html.unescape(re.search(r'href="(/quotes\?[^"]*)"', page).group(1))
    # ranked by unit price (no demand): the quote's price at the rate
    ranking = get(web, "/quotes?quotes=example-quotes&demand=none&" + urlencode(EUR))
    price = re.search(r'data-quote="vendor-a-tokens".*?data-label="Their price per million '
                      r'tokens">([^<]*)</td>', ranking, re.S).group(1)
    # (8,192 x 0.55 + 1,024 x 2.19) / 9,216 = 6,748.16 / 9,216 = 0.73222 USD/Mtok; x 0.92 =
    # 0.67364 EUR/Mtok
    assert price == "0.6736 EUR/Mtok"


def test_a_bad_currency_on_the_quotes_page_is_beside_its_field(web):
    page = get(web, "/quotes?" + urlencode({**EUR, "currency": "EUX"}), 422)
    assert field_error(page, "currency").startswith("'EUX' is not an ISO 4217 currency code")
    assert "Nothing was ranked" in page


def test_the_price_pages_currency_arrives_in_the_quotes_pages_fields(web):
    # from the Price page (/quotes?<its query>): its scenario is the own build, and its
    # currency fills the Currency fields, which show every figure in it
    query = urlencode({"accelerator": "gb300", "point": "deepseek-r1/gb300/matched",
                       "utilisation": "100", "boundary": "chip", **EUR})
    page = get(web, "/quotes?quotes=example-quotes&demand=none&" + query)
    assert '<option value="price" selected>' in page
    assert re.search(r'<input type="text"[^>]*value="EUR"[^>]*id="f-currency"', page)
    price = re.search(r'data-quote="vendor-a-tokens".*?data-label="Their price per million '
                      r'tokens">([^<]*)</td>', page, re.S).group(1)
    assert price == "0.6736 EUR/Mtok"  # 0.73222 USD/Mtok x 0.92, as above
    assert SAID in note(page)
