"""The grid emission factors of the catalog (fixtures/catalog/grid_factors.toml).

Every entry is a dated, cited factor that validates as a catalog grid factor and, named from
a scenario, lands in the electricity's emission fields with its source; a factor in
lbCO2e/MWh is converted by the engine (1 lb = 453.59237 g), a price in its place is refused
by field. Figures are checked against the publications they cite.
"""
from __future__ import annotations

import re

import pytest

from costmodel.app.build import build_scenario
from costmodel.model.errors import InputError
from costmodel.model.inputs import GridFactor
from costmodel.sources.catalog import default_catalog

CATALOG = default_catalog()
KEYS = CATALOG.keys("grid_factor")
BASE = {"accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
        "operating_point": {"throughput": "1000 token/s"}}


def _built(data, overrides=(), catalog=CATALOG):
    loaded = build_scenario(data, overrides, catalog)
    return loaded.scenario, loaded.provenance


def _build(data, overrides=(), catalog=CATALOG):
    return _built(data, overrides, catalog)[0]


def entry(key: str):
    return CATALOG.get("grid_factor", key, "grid_factor")


def test_the_catalog_has_us_subregions_european_countries_and_market_factors():
    regions = {entry(k).data.get("region") for k in KEYS}
    # every region of the electricity catalog's prices has a location-based factor
    priced = {CATALOG.get("electricity", k, "e").data.get("region")
              for k in CATALOG.keys("electricity")} - {None}
    assert priced - {"US-OR"} <= regions, sorted(priced - regions)
    kinds = {entry(k).data.get("instrument") for k in KEYS}
    assert {"supplier", "contract", "residual_mix"} <= kinds


@pytest.mark.parametrize("key", KEYS)
def test_every_entry_validates_and_is_cited(key):
    e = entry(key)
    factor = GridFactor.model_validate(e.data)
    assert 0 <= factor.factor < 2000  # gCO2e/kWh: no grid emits 2 kg a kWh
    assert e.provenance.get("factor"), f"{key}: the factor has no source"
    assert re.fullmatch(r"\d{4}", factor.year)
    assert factor.source.strip()
    if "illustrative" in key:
        assert "illustrative assumption" in e.provenance["factor"]
        assert "illustrative assumption" in factor.source
    else:  # a published figure quotes itself in its source text
        shown = e.data["factor"]["value"]
        assert f"{shown:g}" in e.provenance["factor"].replace(".0 ", " "), e.provenance


# EPA eGRID2023 rev. 2, Table 1, total output emission rate CO2e [lb/MWh]; x 0.45359237
EGRID = {"egrid2023-erct": 736.6, "egrid2023-camx": 430.0, "egrid2023-srvc": 596.3,
         "egrid2023-nwpp": 635.3, "egrid2023-srso": 846.0, "egrid2023-rfcw": 916.1}


@pytest.mark.parametrize(("key", "lb_per_mwh"), sorted(EGRID.items()))
def test_an_egrid_factor_in_pounds_is_converted_by_the_engine(key, lb_per_mwh):
    e = entry(key)
    assert e.data["factor"] == {"value": lb_per_mwh, "unit": "lbCO2e/MWh"}
    scenario = _build({**BASE, "electricity": {"carbon": key}}, catalog=CATALOG)
    # 1 lb = 453.59237 g and 1 MWh = 1000 kWh: g/kWh = lb/MWh x 0.45359237
    assert scenario.electricity.carbon_intensity == pytest.approx(lb_per_mwh * 0.45359237)
    assert scenario.electricity.carbon_year == "2023"


def test_ercot_is_736_6_pounds_that_is_334_1_grams():
    scenario, provenance = _built({**BASE, "electricity": {"carbon": "egrid2023-erct"}},
                                          catalog=CATALOG)
    assert scenario.electricity.carbon_intensity == pytest.approx(334.116, abs=1e-3)
    assert "eGRID2023" in scenario.electricity.carbon_source
    assert "736.6 lb/MWh" in provenance["electricity.carbon_intensity"]


def test_ember_country_factors_are_the_published_grams():
    for key, grams in (("ember-2024-de", 344.14), ("ember-2024-fi", 72.25),
                       ("ember-2024-cy", 512.24)):
        scenario = _build({**BASE, "electricity": {"carbon": key}}, catalog=CATALOG)
        assert scenario.electricity.carbon_intensity == pytest.approx(grams)


def test_a_market_factor_carries_its_instrument_and_a_location_reference_refuses_it():
    scenario = _build(
        {**BASE, "electricity": {"carbon": "ember-2024-fi",
                                 "market_carbon": "illustrative-residual-mix"}},
        catalog=CATALOG)
    e = scenario.electricity
    assert (e.carbon_intensity, e.market_carbon_intensity) == (pytest.approx(72.25), 450.0)
    assert e.market_carbon_instrument == "residual_mix"
    with pytest.raises(InputError) as info:
        _build({**BASE, "electricity": {"carbon": "illustrative-contract-ppa"}},
                       catalog=CATALOG)
    assert [p for p, _ in info.value.errors] == ["electricity.carbon"]


def test_an_unknown_factor_is_refused_naming_the_field():
    with pytest.raises(InputError) as info:
        _build({**BASE, "electricity": {"carbon": "egrid2023-ercot"}}, catalog=CATALOG)
    assert [p for p, _ in info.value.errors] == ["electricity.carbon"]


@pytest.mark.parametrize(("field", "text"), [
    ("carbon_intensity", "0.1 USD/kWh"), ("market_carbon_intensity", "0.1 USD/kWh"),
    ("carbon_intensity", "736.6 lb/MWh")])
def test_a_price_or_a_bare_pound_in_place_of_a_factor_is_refused_by_field(field, text):
    with pytest.raises(InputError) as info:
        _build({**BASE, "electricity": {field: text}}, catalog=CATALOG)
    assert [p for p, _ in info.value.errors] == [f"electricity.{field}"]
    assert "carbon intensity" in info.value.errors[0][1]


def test_a_factor_given_in_pounds_converts():
    scenario = _build(
        {**BASE, "electricity": {"carbon_intensity": "1000 lbCO2e/MWh",
                                 "market_carbon_intensity": "0.2 kgCO2e/kWh"}},
        catalog=CATALOG)
    assert scenario.electricity.carbon_intensity == pytest.approx(453.59237)
    assert scenario.electricity.market_carbon_intensity == pytest.approx(200)


def test_a_factor_set_by_hand_replaces_the_catalog_citation():
    scenario = _build(
        {**BASE, "electricity": {"carbon": "egrid2023-erct"}},
        [("electricity.carbon_intensity", "300 gCO2e/kWh")], catalog=CATALOG)
    e = scenario.electricity
    assert e.carbon_intensity == 300 and e.carbon_year is None
    assert "eGRID" not in (e.carbon_source or "")


def test_a_market_entry_states_its_instrument_and_a_location_entry_none():
    for key in KEYS:
        data = entry(key).data
        assert (data["basis"] == "market") == (data.get("instrument") is not None), key


def test_a_catalog_factor_named_by_an_override_replaces_the_scenarios_own():
    # a scenario with its own 370 g/kWh, and --set electricity.carbon (or a page's picker):
    # the catalog's factor, year and source, not 370 under eGRID's citation
    own = {**BASE, "electricity": {"carbon_intensity": "370 gCO2e/kWh",
                                   "carbon_year": "2019", "carbon_source": "a site audit"}}
    scenario, provenance = _built(own, [("electricity.carbon", "egrid2023-erct")],
                                  catalog=CATALOG)
    e = scenario.electricity
    assert e.carbon_intensity == pytest.approx(736.6 * 0.45359237)  # 334.12
    assert e.carbon_year == "2023" and "eGRID2023" in e.carbon_source
    assert "egrid2023-erct" in provenance["electricity.carbon_intensity"]
    # the market factor, not named, is the scenario's own still
    scenario = _build({**own, "electricity": {**own["electricity"],
                                              "market_carbon_intensity": "0 gCO2e/kWh"}},
                      [("electricity.carbon", "egrid2023-erct")], catalog=CATALOG)
    assert scenario.electricity.market_carbon_intensity == 0


def test_a_factor_of_its_own_beside_a_reference_takes_nothing_of_the_entry():
    scenario = _build({**BASE, "electricity": {"carbon": "egrid2023-erct",
                                               "carbon_intensity": "370 gCO2e/kWh"}},
                      catalog=CATALOG)
    e = scenario.electricity
    assert e.carbon_intensity == 370  # its own wins, as before
    assert e.carbon_year is None and "eGRID" not in (e.carbon_source or "")  # not eGRID's
