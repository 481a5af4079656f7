"""Emissions through the API: POST /price answers the five figures and
disclosure.emissions; a factor in the wrong unit (a price, bare pounds) is an RFC 9457
problem naming the field; the catalog's grid factors are listed under
/grid-factors."""
from __future__ import annotations

import pytest
from conftest import auth
from test_api import API, GB300_PEAK, ok, price, problem, value


@pytest.fixture(scope="module")
def viewer(tokens) -> dict:
    return auth(tokens["viewer"])


def test_price_answers_location_market_and_embodied(client, viewer):
    scenario = {**GB300_PEAK, "power": {"boundary": "chip"},
                "electricity": {"price": "0.1 USD/kWh", "carbon": "egrid2023-erct",
                                "market_carbon_intensity": "0 gCO2e/kWh",
                                "market_carbon_instrument": "contract"},
                "accelerator": {"catalog": "gb300", "embodied": "2000 kgCO2e"}}
    out = ok(price(client, viewer, scenario))
    steps = out["steps"]
    per_hour = steps["average_power"]["value"] / 1000 * 736.6 * 0.45359237  # g an hour
    mtok = steps["tokens_per_hour"]["value"] / 1e6
    assert value(out["emissions_per_mtok"]) == pytest.approx(per_hour / mtok)
    assert value(out["emissions_market_per_mtok"]) == 0
    embodied = 2e6 / (5 * 8760) / mtok  # no node footprint: the accelerator's alone
    assert value(out["embodied_per_mtok"]) == pytest.approx(embodied)
    assert value(out["emissions_market_total_per_mtok"]) == pytest.approx(embodied)
    e = out["disclosure"]["emissions"]
    assert e["location"]["year"] == "2023" and "eGRID2023" in e["location"]["source"]
    assert e["market"]["instrument"] == "contract"
    assert e["embodied"]["life"] == {"value": 5.0, "unit": "year"}
    assert "water" in e["scope"]


@pytest.mark.parametrize(("field", "text"), [
    ("carbon_intensity", "0.1 USD/kWh"), ("market_carbon_intensity", "736 lb/MWh")])
def test_a_factor_in_the_wrong_unit_is_a_problem_naming_the_field(client, viewer, field, text):
    scenario = {**GB300_PEAK, "electricity": {"price": "0.1 USD/kWh", field: text}}
    body = problem(price(client, viewer, scenario), 422, "invalid-input")
    assert [e["path"] for e in body["errors"]] == [f"scenario.electricity.{field}"]
    assert "carbon intensity" in body["errors"][0]["message"]


def test_an_unknown_grid_factor_is_a_problem_naming_the_field(client, viewer):
    scenario = {**GB300_PEAK, "electricity": {"carbon": "egrid1999-nowhere"}}
    body = problem(price(client, viewer, scenario), 422)
    assert body["errors"][0]["path"] == "scenario.electricity.carbon"


def test_the_grid_factors_are_listed(client, viewer):
    out = ok(client.get(f"{API}/grid-factors?limit=100", headers=viewer))
    keys = {item["key"] for item in out["items"]}
    assert {"egrid2023-erct", "ember-2024-de", "illustrative-residual-mix"} <= keys
    erct = ok(client.get(f"{API}/grid-factors/egrid2023-erct", headers=viewer))
    assert erct["data"]["factor"] == {"value": 736.6, "unit": "lbCO2e/MWh"}
