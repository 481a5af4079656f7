"""Emissions on the web pages: the Price page's grid factor pickers price the figures the API
answers for the same request, with the disclosure's Emissions line; Compare shows a row a
figure. Hand arithmetic where it is simple: eGRID's 736.6 lbCO2e/MWh is 334.1 g/kWh."""
from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from test_web_pages import api_price, api_value, figure_html, page_text, shown

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
