"""The Price page's Profit section with Flask's test client: the figures it shows are the
API's (POST /api/v1/profit) for the same request, rounded as displayed, and the hand figures
where they are simple; a bad market field is marked beside it in the unit it is typed in; the
Profit downloads are the API's JSON and a workbook with the Profit sheet."""
from __future__ import annotations

import html
import io
import json
import re
import shlex
from urllib.parse import urlencode

import openpyxl
import pytest

from costmodel.render import display
from costmodel.render.workbook.names import named_cells
from costmodel.web.pages import PROFIT_ROWS
from costmodel.web.scenario_form import scenario_form

# the default scenario (GB300 at DeepSeek R1's published peak) sold at a blended price
BLENDED = {"market_input": "1", "market_cached_input": "1", "market_output": "1",
           "revenue_share": "10"}
CATALOG = {"market": "illustrative/reasoning-model-api", "revenue_share": "20",
           "cached_share": "50", "utilisation": "60"}


def figure(page: str, name: str) -> str:
    m = re.search(rf'<tr data-profit="{name}"[^>]*>(.*?)</tr>', page, re.S)
    assert m, f"no {name} in the Profit section"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", m.group(1))).split())


def api_body(query: dict) -> dict:
    """The /profit body the page's query means: its scenario, and its market as typed."""
    form = scenario_form(query)
    market = {}
    for field, key in (("market", "catalog"), ("market_input", "price_input"),
                       ("market_cached_input", "price_cached_input"),
                       ("market_output", "price_output"), ("revenue_share", "revenue_share"),
                       ("cached_share", "cached_share")):
        if query.get(field):
            unit = "" if key == "catalog" else " %" if key.endswith("share") else " USD/Mtok"
            market[key] = query[field] + unit
    return {"scenarios": [form.price_request()], "market": market}


@pytest.mark.parametrize("query", [BLENDED, CATALOG])
def test_the_profit_section_shows_the_apis_figures(web, query):
    r = web.get("/?" + urlencode(query))
    assert r.status_code == 200, r.get_data(as_text=True)[:2000]
    page = r.get_data(as_text=True)
    api = web.post("/api/v1/profit", json=api_body(query))
    assert api.status_code == 200, api.get_json()
    s = api.get_json()["systems"][0]
    values = {"market_price_input": s["market_prices"]["input"],
              "market_price_cached_input": s["market_prices"]["cached_input"],
              "market_price_output": s["market_prices"]["output"],
              "market_price_per_mtok": s["market_prices"]["per_mtok"],
              "profit_margin": {"value": s["profit_margin"], "unit": "dimensionless"},
              "break_even_factor": {"value": s["break_even"]["factor"],
                                    "unit": "dimensionless"},
              "break_even_price": s["break_even"]["price_per_mtok"]}
    for name in filter(None, PROFIT_ROWS):
        q = values.get(name) or s[name]
        assert display.format_quantity(q["value"], q["unit"], name) in figure(page, name), name


def test_the_hand_figures_of_a_blended_price(web):
    """GB300 at the published peak: 11,781 token/s/kW x 1.4 kW = 16,493.4 token/s, every
    hour; at 1 USD per million tokens that is 16,493.4 x 3,600 / 10^6 = 59.37624 USD/h of
    revenue, 10 % of it paid out (5.937624), 53.438616 kept."""
    page = web.get("/?" + urlencode(BLENDED)).get_data(as_text=True)
    assert figure(page, "revenue_per_hour").endswith("59.376 USD/h")
    assert figure(page, "revenue_share_per_hour").endswith("5.938 USD/h")
    assert figure(page, "net_revenue_per_hour").endswith("53.439 USD/h")
    s = web.post("/api/v1/profit", json=api_body(BLENDED)).get_json()["systems"][0]
    assert s["revenue_per_hour"]["value"] == pytest.approx(59.37624, rel=1e-12)
    assert s["profit_per_hour"]["value"] == pytest.approx(
        53.438616 - s["cost_per_hour"]["value"], rel=1e-12)


def test_the_disclosure_names_the_price_its_date_source_share_and_utilisation(web):
    page = html.unescape(web.get("/?" + urlencode(CATALOG)).get_data(as_text=True))
    section = page[page.index('data-testid="profit-disclosure"'):]
    section = " ".join(re.sub(r"<[^>]+>", " ", section[:section.index("</dl>")]).split())
    assert "catalog entry illustrative/reasoning-model-api@2026-11" in section
    assert "2026-11" in section
    assert "Source: illustrative assumption: a made-up price list" in section
    assert "20.0% of revenue paid out of it" in section
    assert "60.0% of hours serving" in section


@pytest.mark.parametrize("query,field,says", [
    ({**BLENDED, "revenue_share": "100"}, "revenue_share", "must be below 100 %, got 100 %"),
    ({**BLENDED, "market_output": "-2"}, "market_output", "must not be negative"),
    ({**BLENDED, "cached_share": "150"}, "cached_share", "must be at most 100 %, got 150 %"),
    ({"revenue_share": "10"}, "market", "choose a market price"),
    ({"market": "nobody/nothing"}, "market", "unknown catalog entry"),
    ({"market": "deepseek/deepseek-r1-off-peak"}, "market_input", "required"),
])
def test_a_bad_market_field_is_marked_beside_it(web, query, field, says):
    r = web.get("/?" + urlencode(query))
    assert r.status_code == 422
    page = r.get_data(as_text=True)
    marked = re.search(rf'id="{field}-error"[^>]*>(.*?)</p>', page, re.S)
    assert marked and says in html.unescape(marked.group(1)), page[:3000]


def test_the_profit_downloads_are_the_apis(web):
    query = urlencode(CATALOG)
    got = web.get(f"/profit.json?{query}")
    assert got.status_code == 200 and got.mimetype == "application/json"
    assert got.get_json() == web.post("/api/v1/profit", json=api_body(CATALOG)).get_json()
    book = web.get(f"/profit.xlsx?{query}")
    assert book.status_code == 200
    wb = openpyxl.load_workbook(io.BytesIO(book.data), data_only=True)
    (cell,) = named_cells(wb, "profit_per_hour")
    assert cell.value == pytest.approx(got.get_json()["systems"][0]["profit_per_hour"]["value"],
                                       rel=1e-12)
    page = html.unescape(web.get(f"/?{query}").get_data(as_text=True))
    line = re.search(r'<pre id="profit-curl"[^>]*>(.*?)</pre>', page, re.S).group(1)
    argv = shlex.split(line)
    assert argv[:4] == ["curl", "-X", "POST", "http://localhost/api/v1/profit"]
    assert json.loads(argv[argv.index("-d") + 1]) == api_body(CATALOG)
    # without a market there is nothing to download: the page says why
    assert web.get("/profit.json").status_code == 422


def test_no_market_no_profit_section(web):
    page = web.get("/").get_data(as_text=True)
    assert 'data-testid="profit"' not in page
    assert 'id="f-market"' in page and 'id="f-revenue_share"' in page
