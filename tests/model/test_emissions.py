"""Emissions beside cost, hand-derived: grams of CO2e per million tokens for a flat factor and
for an hourly factor weighed by a load shape, location- and market-based, with and without
the hardware's embodied emissions (straight-line over the economic life, not discounted)."""
from __future__ import annotations

import math

import pytest

from costmodel.model.chain import price
from costmodel.model.inputs import InputError, validate_scenario
from costmodel.model.steps import MODEL

# 1000 W at the chip boundary, 1000 token/s, utilisation 0.5 and idle power 0.2:
# average power 1000 x (0.5 + 0.5 x 0.2) = 600 W; tokens 0.5 x 1000 x 3600 = 1.8e6 an hour
BASE = {"accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
        "operating_point": {"throughput": "1000 token/s"}, "utilisation": 0.5,
        "idle_power": 0.2, "electricity": {"price": "0.1 USD/kWh"}}
MTOK_PER_HOUR = 1.8


def priced(electricity=None, **more):
    data = {**BASE, **more, "electricity": {**BASE["electricity"], **(electricity or {})}}
    return price(validate_scenario(data)).values


def test_a_flat_factor_location_and_market_based():
    v = priced({"carbon_intensity": "400 gCO2e/kWh", "market_carbon_intensity": "100 gCO2e/kWh"})
    # 0.6 kWh an hour x 400 g = 240 g an hour; / 1.8 Mtok = 133.33 g/Mtok
    assert v["emissions_per_hour"] == pytest.approx(240)
    assert v["emissions_per_mtok"] == pytest.approx(240 / MTOK_PER_HOUR)
    assert v["emissions_market_per_hour"] == pytest.approx(60)
    assert v["emissions_market_per_mtok"] == pytest.approx(60 / MTOK_PER_HOUR)
    # no product carbon footprint given: no embodied figure (not 0: not stated), and the
    # totals are the operational figures alone
    assert all(math.isnan(v[n]) for n in ("embodied_per_accelerator", "embodied_per_hour",
                                          "embodied_per_mtok"))
    assert v["emissions_total_per_mtok"] == pytest.approx(133.333333)
    assert v["emissions_market_total_per_mtok"] == pytest.approx(33.333333)


def test_with_embodied_emissions_amortised_straight_line_over_the_life():
    v = priced({"carbon_intensity": "400 gCO2e/kWh", "market_carbon_intensity": "100 gCO2e/kWh"},
               accelerator={**BASE["accelerator"], "embodied": "1500 kgCO2e"},
               node={"embodied": "2400 kgCO2e"})  # 8 accelerators a node (the default)
    per_accelerator = 1_500_000 + 2_400_000 / 8  # 1.8e6 g
    per_hour = per_accelerator / (5 * 8760)  # a 5-year life, every hour: 41.0959 g
    assert v["embodied_per_accelerator"] == pytest.approx(1.8e6)
    assert v["embodied_per_hour"] == pytest.approx(per_hour)
    assert v["embodied_per_mtok"] == pytest.approx(per_hour / MTOK_PER_HOUR)  # 22.831
    assert v["emissions_total_per_mtok"] == pytest.approx((240 + per_hour) / MTOK_PER_HOUR)
    assert v["emissions_market_total_per_mtok"] == pytest.approx((60 + per_hour) / MTOK_PER_HOUR)
    assert v["emissions_total_per_mtok"] == pytest.approx(156.164384)


def test_embodied_of_the_accelerator_alone_or_the_node_alone():
    alone = priced(accelerator={**BASE["accelerator"], "embodied": "1000 kgCO2e"})
    assert alone["embodied_per_accelerator"] == pytest.approx(1e6)
    node = priced(node={"embodied": "800 kgCO2e", "accelerators": 4})
    assert node["embodied_per_accelerator"] == pytest.approx(2e5)
    # a life of 4 years: 2e5 g / 35,040 h / 1.8 Mtok
    shorter = priced(node={"embodied": "800 kgCO2e", "accelerators": 4},
                     financing={"life": "4 year"})
    assert shorter["embodied_per_mtok"] == pytest.approx(2e5 / 35040 / 1.8)
    # no grid factor: no operational figure, and so no total (never a total without it)
    assert math.isnan(node["emissions_per_mtok"]) and math.isnan(node["emissions_total_per_mtok"])


def test_an_hourly_factor_weighs_the_hours_a_load_shape_draws():
    # serving 12:00-24:00 only: 0.2 of the power 00-12 (idle), 1.0 12-24; factor 100 g in the
    # morning hours, 300 g in the afternoon and evening
    hourly = {"value": [100] * 12 + [300] * 12, "unit": "gCO2e/kWh"}
    v = priced({"carbon_hourly": hourly, "market_carbon_hourly": {
                   "value": [0] * 12 + [50] * 12, "unit": "gCO2e/kWh"}},
               load={"hourly": [0] * 12 + [1] * 12})
    # weighted factor (12 x 0.2 x 100 + 12 x 1 x 300) / (12 x 0.2 + 12 x 1) = 3840 / 14.4
    assert v["grid_factor_location"] == pytest.approx(3840 / 14.4)  # 266.67
    assert v["average_power"] == pytest.approx(600)
    assert v["emissions_per_hour"] == pytest.approx(0.6 * 3840 / 14.4)  # 160 g
    assert v["emissions_per_mtok"] == pytest.approx(160 / 1.8)  # 88.89
    # market: (12 x 1 x 50) / 14.4 = 41.67 g/kWh; x 0.6 kWh = 25 g an hour
    assert v["grid_factor_market"] == pytest.approx(600 / 14.4)
    assert v["emissions_market_per_mtok"] == pytest.approx(25 / 1.8)


def test_an_hourly_factor_under_an_even_load_is_the_plain_mean():
    hourly = {"value": [100] * 12 + [300] * 12, "unit": "gCO2e/kWh"}
    s = validate_scenario({**BASE, "electricity": {**BASE["electricity"],
                                                   "carbon_hourly": hourly}})
    assert s.electricity.carbon_intensity == 200  # stated as the hours' mean
    v = price(s).values
    assert v["grid_factor_location"] == pytest.approx(200)
    assert v["emissions_per_mtok"] == pytest.approx(0.6 * 200 / 1.8)


def test_an_hourly_factor_with_a_weekend_load_and_a_time_of_use_tariff():
    # the tariff and the load tell weekend days apart (48 hours); the factor is the same on
    # both days. Weekdays serve all day (1.0), weekends not at all (0.2 idle).
    tou = {"hourly": {"value": [0.1] * 24, "unit": "USD/kWh"},
           "weekend": {"value": [0.05] * 24, "unit": "USD/kWh"}}
    hourly = {"value": [100] * 12 + [300] * 12, "unit": "gCO2e/kWh"}
    data = {**BASE, "electricity": {"tariff": tou, "carbon_hourly": hourly},
            "load": {"hourly": [1] * 24, "weekend": [0] * 24}}
    data.pop("utilisation")
    v = price(validate_scenario(data)).values
    # every hour's factor mean is 200 on both kinds of day: the weighting leaves 200
    assert v["grid_factor_location"] == pytest.approx(200)
    # power: 5/7 x 1000 + 2/7 x 200 = 771.43 W; tokens 5/7 x 3.6e6 an hour
    power = 5 / 7 * 1000 + 2 / 7 * 200
    assert v["emissions_per_mtok"] == pytest.approx(power / 1000 * 200 / (5 / 7 * 3.6))


def test_the_facility_boundary_counts_pue():
    chip = priced({"carbon_intensity": "400 gCO2e/kWh"})
    facility = priced({"carbon_intensity": "400 gCO2e/kWh"}, power={"boundary": "facility"})
    # node (8 x 1000 + 2400) / 0.94; rack (4 x node + 2000) / 0.97 / 32; x PUE 1.3
    node = (8 * 1000 + 2400) / 0.94
    per_accelerator = (4 * node + 1500 + 500) / 0.97 / 32 * 1.3
    assert facility["emissions_per_mtok"] == pytest.approx(
        per_accelerator * 0.6 / 1000 * 400 / 1.8)
    assert facility["emissions_per_mtok"] / chip["emissions_per_mtok"] == pytest.approx(
        per_accelerator / 1000)


def test_electricity_carbon_intensity_stays_the_location_based_factor():
    old = priced({"carbon_intensity": "0.4 kgCO2e/kWh"})
    assert old["emissions_per_mtok"] == pytest.approx(240 / 1.8)
    assert math.isnan(old["emissions_market_per_mtok"])


def test_no_factor_no_emissions():
    v = priced()
    assert all(math.isnan(v[n]) for n in ("emissions_per_mtok", "emissions_market_per_mtok",
                                          "emissions_total_per_mtok"))
    assert math.isnan(v["embodied_per_mtok"])  # no footprint either: not stated, not 0


def test_the_declaration_holds_the_emission_steps():
    for name in ("grid_factor_location", "grid_factor_market", "emissions_market_per_hour",
                 "embodied_per_accelerator", "embodied_per_hour", "emissions_market_per_mtok",
                 "embodied_per_mtok", "emissions_total_per_mtok",
                 "emissions_market_total_per_mtok"):
        assert name in MODEL.steps
    assert MODEL.steps["embodied_per_mtok"].unit == "gCO2e/Mtok"


def test_a_bad_factor_is_refused_by_field():
    with pytest.raises(InputError) as info:
        validate_scenario({**BASE, "electricity": {"price": "0.1 USD/kWh",
                                                   "market_carbon_intensity": "0.1 USD/kWh"}})
    assert [p for p, _ in info.value.errors] == ["electricity.market_carbon_intensity"]
    with pytest.raises(InputError) as info:
        validate_scenario({**BASE, "accelerator": {**BASE["accelerator"],
                                                   "embodied": "1500 kg"}})
    assert [p for p, _ in info.value.errors] == ["accelerator.embodied"]


# ---- on the faces beyond the price: a plan's tonnes a year ---------------------------------------

def test_a_plan_gives_the_fleets_tonnes_a_year():
    from costmodel import app
    data = {**BASE, "electricity": {**BASE["electricity"], "carbon_intensity": "400 gCO2e/kWh",
                                    "market_carbon_intensity": "100 gCO2e/kWh"},
            "accelerator": {**BASE["accelerator"], "embodied": "1500 kgCO2e"}}
    spec = app.ScenarioSpec(app.InlineScenario(data))
    # 9,000 token/s / (1,000 x 0.5) = 18 accelerators, serving at 50 %: 240 g an hour each
    planned = app.plan(app.LocalContext(), app.PlanRequest(spec, demand=9000.0))
    assert planned.accelerators == 18
    e = planned.to_json()["emissions_per_year"]
    assert e["location"] == {"value": pytest.approx(18 * 240 * 8760 / 1e6), "unit": "tCO2e/year"}
    assert e["market"]["value"] == pytest.approx(18 * 60 * 8760 / 1e6)  # 9.46 t
    assert e["embodied"]["value"] == pytest.approx(18 * 1.5 / 5)  # 1.5 t each over 5 years
    assert e["location_total"]["value"] == pytest.approx(37.8432 + 5.4)


def test_a_task_gives_grams_per_task(tmp_path):
    import json

    from click.testing import CliRunner

    from costmodel.cli import main
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'utilisation = 0.5\nidle_power = 0.2\n[accelerator]\nrated_power = "1000 W"\n'
        'price = "30000 USD"\n[operating_point]\nthroughput = "1000 token/s"\n'
        'interactivity = "100 token/s/user"\nttft = "1 s"\n'
        '[electricity]\nprice = "0.1 USD/kWh"\ncarbon_intensity = "400 gCO2e/kWh"\n'
        'market_carbon_intensity = "100 gCO2e/kWh"\n', encoding="utf-8")
    task = tmp_path / "t.toml"
    # one call of the workload's own shape: 8,192 in, 1,024 out, nothing cached
    task.write_text('[task]\nsteps = 1\ncontext = "8192 token"\noutput = "1024 token"\n'
                    'cached_share = 0\ntool_time = "0 s"\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["task", str(scenario), "--task", str(task), "--json"])
    assert r.exit_code == 0, r.output
    grams = json.loads(r.stdout)["systems"][0]["emissions_per_task"]
    # 9,216 tokens (8,192 + 1,024, mixed) x 133.33 g/Mtok = 1.2288 g; market 0.3072 g
    assert grams["location"] == {"value": pytest.approx(9216 * 240 / 1.8 / 1e6),
                                 "unit": "gCO2e/task"}
    assert grams["market"]["value"] == pytest.approx(0.3072)
    assert grams["location_total"]["value"] == pytest.approx(1.2288)  # no footprint given


def test_sensitivity_varies_a_factor():
    from costmodel.decisions.sensitivity import tornado
    s = validate_scenario({**BASE, "electricity": {**BASE["electricity"],
                                                   "market_carbon_intensity": "100 gCO2e/kWh"},
                           "accelerator": {**BASE["accelerator"], "embodied": "1500 kgCO2e"}})
    t = tornado(s, inputs=["electricity.market_carbon_intensity", "accelerator.embodied"],
                output="emissions_market_total_per_mtok")
    bars = {b.key: b for b in t.bars}
    # +/-20 %: 80 and 120 g/kWh -> 0.6 x 80 / 1.8 and 0.6 x 120 / 1.8, plus the embodied part
    embodied = 1.5e6 / (5 * 8760) / 1.8
    factor = bars["electricity.market_carbon_intensity"]
    assert (factor.output_low, factor.output_high) == (
        pytest.approx(0.6 * 80 / 1.8 + embodied), pytest.approx(0.6 * 120 / 1.8 + embodied))
    footprint = bars["accelerator.embodied"]
    assert footprint.output_high - footprint.output_low == pytest.approx(0.4 * embodied)


def test_embodied_not_stated_in_a_batch_beside_a_stated_one():
    """The fused batch and the plain evaluator agree row by row: a row without a footprint
    has no embodied figure and its total is operational; a row with one counts it."""
    import numpy as np

    from costmodel.model.evaluate import Evaluator
    none = validate_scenario({**BASE, "electricity": {**BASE["electricity"],
                                                      "carbon_intensity": "400 gCO2e/kWh"}})
    stated = validate_scenario({**BASE, "electricity": {**BASE["electricity"],
                                                        "carbon_intensity": "400 gCO2e/kWh"},
                                "accelerator": {**BASE["accelerator"],
                                                "embodied": "1500 kgCO2e"}})
    rows = [none.to_inputs(), stated.to_inputs()]
    batch = {k: np.array([r[k] for r in rows]) if np.ndim(rows[0][k]) == 0 else rows[0][k]
             for k in rows[0]}
    embodied = 1.5e6 / (5 * 8760) / MTOK_PER_HOUR  # 34.25 g/Mtok
    for fused in (True, False):
        out = Evaluator(MODEL, outputs=["embodied_per_mtok", "emissions_total_per_mtok"],
                        fused=fused)(batch)
        assert math.isnan(out["embodied_per_mtok"][0])
        assert out["embodied_per_mtok"][1] == pytest.approx(embodied)
        assert list(out["emissions_total_per_mtok"]) == pytest.approx(
            [240 / MTOK_PER_HOUR, 240 / MTOK_PER_HOUR + embodied])
