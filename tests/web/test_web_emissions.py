"""Emissions on the web pages: the Price page's grid factor pickers price the figures the API
answers for the same request, with the disclosure's Emissions line; Compare shows a row a
figure. Hand arithmetic where it is simple: eGRID's 736.6 lbCO2e/MWh is 334.1 g/kWh."""
from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from test_web_pages import api_price, api_value, figure_html, page_text, shown

from costmodel.render import display
from costmodel.render.display import NOT_STATED
from costmodel.web.pages import COMPARE_ROWS, EFFICIENCY
from costmodel.web.scenario_form import scenario_form

FORM = {"electricity": "eia-2023-us-tx-industrial", "carbon": "egrid2023-erct",
        "market_carbon": "illustrative-residual-mix"}
EMISSIONS = ("emissions_per_mtok", "emissions_market_per_mtok", "embodied_per_mtok",
             "emissions_total_per_mtok", "emissions_market_total_per_mtok")


def test_the_price_page_shows_location_and_market_emissions(web):
    form = scenario_form(FORM)
    assert form.valid, form.errors
    request = form.price_request()
    assert request["scenario"]["electricity"] == {
        "catalog": "eia-2023-us-tx-industrial", "carbon": "egrid2023-erct",
        "market_carbon": "illustrative-residual-mix"}
    page = page_text(web.get("/?" + urlencode(FORM)))
    answer = api_price(web, form)
    assert set(EMISSIONS) <= set(EFFICIENCY)
    for name in EMISSIONS:
        if name == "embodied_per_mtok":  # no footprint on the form: null, "not stated"
            assert api_value(answer, name)["value"] is None
            assert NOT_STATED in figure_html(page, name)
            continue
        assert shown(api_value(answer, name), name) in figure_html(page, name), name
    # location / market = the factors' ratio: 736.6 x 0.45359237 g over the residual mix's 450 g
    location, market = (api_value(answer, n)["value"] for n in EMISSIONS[:2])
    assert location / market == pytest.approx(736.6 * 0.45359237 / 450)
    e = answer["disclosure"]["emissions"]
    assert e["location"]["factor"]["value"] == pytest.approx(334.116, abs=1e-3)
    assert e["market"]["instrument"] == "residual_mix"
    assert "Emissions" in page and "EPA eGRID2023" in page


def test_an_unknown_factor_is_marked_at_its_field(web):
    page = page_text(web.get("/?" + urlencode({"carbon": "egrid1999-nowhere"})))
    error = re.search(r'id="carbon-error"[^>]*>([^<]*)<', page)
    assert error, "no error beside the location-based factor's field"
    assert "unknown catalog entry &#39;egrid1999-nowhere&#39;" in error.group(1)


def test_compare_has_a_row_a_figure():
    assert {"emissions_per_mtok", "emissions_market_per_mtok", "emissions_total_per_mtok",
            "emissions_market_total_per_mtok"} <= set(COMPARE_ROWS)


# ---- the Task and Plan pages pick the same grid factors ------------------------------------------

ERCT = 736.6 * 0.45359237  # g/kWh: eGRID2023's ERCOT output rate, 334.12
RESIDUAL = 450.0  # g/kWh: the illustrative residual mix


def _cell(page: str, figure: str) -> list[str]:
    """Each system's cell of a row of the Task page's table."""
    row = re.search(rf'<tr data-figure="{figure}"[^>]*>(.*?)</tr>', page, re.S)
    assert row, f"no row {figure}"
    return [re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r'<td class="num"[^>]*>(.*?)</td>', row.group(1), re.S)]


def test_the_task_page_offers_the_factor_pickers_and_shows_grams_per_task(web):
    query = urlencode({"carbon": "egrid2023-erct", "market_carbon": "illustrative-residual-mix"})
    page = page_text(web.get("/task?" + query))
    assert 'id="f-carbon"' in page and 'id="f-market_carbon"' in page
    assert '<option value="egrid2023-erct" selected>' in page
    answer = web.get("/task.json?" + query).get_json()
    for s in answer["systems"]:
        g = s["emissions_per_task"]
        # the same energy, two factors: location / market is the factors' ratio
        assert g["location"]["value"] / g["market"]["value"] == pytest.approx(ERCT / RESIDUAL)
        # no footprint: the totals are the operational grams
        assert g["location_total"]["value"] == pytest.approx(g["location"]["value"])
    shown_cells = _cell(page, "emissions_location")
    assert shown_cells == [display.format_quantity(s["emissions_per_task"]["location"]["value"],
                                                   "gCO2e/task")
                           for s in answer["systems"]]
    assert "CO2e per task, operational only, location" in page
    # without pickers (the curves give no factor): no emission rows
    assert 'data-figure="emissions_location"' not in page_text(web.get("/task"))


def test_the_task_page_says_an_unknown_factor_beside_its_picker(web):
    resp = web.get("/task?" + urlencode({"market_carbon": "nowhere-1999"}))
    assert resp.status_code == 422
    error = re.search(r'id="market_carbon-error"[^>]*>([^<]*)<', page_text(resp))
    assert error and "unknown catalog entry &#39;nowhere-1999&#39;" in error.group(1)


def test_the_plan_page_shows_the_fleets_tonnes_a_year(web):
    query = urlencode({"accelerator": "gb300", "point": "deepseek-r1/gb300/peak",
                       "carbon": "egrid2023-erct", "market_carbon": "illustrative-residual-mix",
                       "pl_demand": "2.5e6"})
    page = page_text(web.get("/plan?" + query))
    j = web.get("/plan.json?" + query).get_json()
    e = j["emissions_per_year"]
    # accelerators x g an hour x 8,760 h / 1e6: the two bases in the factors' ratio
    assert e["location"]["value"] / e["market"]["value"] == pytest.approx(ERCT / RESIDUAL)
    assert e["embodied"]["value"] is None  # no footprint: not 0
    row = figure_html(page, "emissions_location")
    assert display.format_quantity(e["location"]["value"], "tCO2e/year") in row
    assert "operational only" in figure_html(page, "emissions_location_total")
