"""A full TCO case computed by hand, line by line, against the engine.

Every expected number below is written as arithmetic on the scenario's literal inputs, following
the conventions in docs/methodology.md; none is taken from the engine's output.
"""
from __future__ import annotations

import pytest
from conftest import price_data

CASE = {
    "name": "hand case",
    "accelerator": {"name": "X1", "rated_power": "1000 W", "measured_power": "800 W",
                    "memory_bandwidth": "8 TB/s", "price": "30000 USD"},
    "node": {"accelerators": 8, "host_power": "2 kW", "psu_efficiency": 0.95,
             "price": {"value": 40000, "unit": "USD"}},
    "rack": {"nodes": 4, "switch_power": "1200 W", "other_power": "400 W",
             "power_delivery_efficiency": "96 %", "price": "80000 USD"},
    "facility": {"pue": 1.25, "hosting": "120 USD/kW/month"},
    "financing": {"life": "48 month", "cost_of_capital": 0.08, "salvage": 0.15,
                  "maintenance": 0.04},
    "electricity": {"price": "12 cent/kWh", "source": "hand case", "date": "2026-11",
                    "carbon_intensity": "400 gCO2e/kWh"},
    "utilisation": 0.6,
    "idle_power": 0.25,
    "operating_point": {"throughput": "5000 token/s", "token_kind": "output",
                        "tbt": "20 ms"},
    "workload": {"model": "M", "isl": 2000, "osl": 500},
    "power": {"boundary": "facility", "basis": "measured"},
    "pricing": {"gross_margin": 0.4, "output_weight": 3},
}

# ---- the hand arithmetic ------------------------------------------------------------------
chip = 800.0                                        # measured basis [W]
node_wall = (8 * chip + 2000) / 0.95                # 8,842.1 W
power_node = node_wall / 8                          # 1,105.3 W
rack_wall = (4 * node_wall + 1200 + 400) / 0.96     # 38,508.8 W
power_rack = rack_wall / 32                         # 1,203.4 W
power_facility = power_rack * 1.25                  # 1,504.2 W
rack_rated = ((4 * ((8 * 1000 + 2000) / 0.95) + 1200 + 400) / 0.96) / 32  # 1,422.7 W
throughput = 5000.0                                 # token/s per accelerator
load = 0.6 + (1 - 0.6) * 0.25                       # 0.7
avg_power = power_facility * load                   # W
tokens_per_hour = 0.6 * 5000 * 3600                 # 10.8 M tokens/h
energy_h = avg_power / 1000 * 0.12                  # USD/h
capex = 30000 + 40000 / 8 + 80000 / 32              # 37,500 USD
n, r = 4.0, 0.08                                    # 48 months = 4 years
g = (1 + r) ** n
crf = r * g / (g - 1)                               # 1/year
amortised_year = (capex - 0.15 * capex / g) * crf   # USD/year
capex_h = amortised_year / 8760
maint_h = 0.04 * capex / 8760
hosting_h = 120 * (rack_rated / 1000) * 12 / 8760   # USD/kW/month x kW x 12 / 8,760
opex_h = maint_h + hosting_h
cost_h = energy_h + capex_h + opex_h
per_mtok = 1e6 / tokens_per_hour


@pytest.fixture(scope="module")
def result():
    return price_data(CASE)


@pytest.mark.parametrize("name,expected", [
    ("power_chip", chip),
    ("node_wall_power", node_wall),
    ("power_node", power_node),
    ("rack_wall_power", rack_wall),
    ("power_rack", power_rack),
    ("power_facility", power_facility),
    ("power_per_accelerator", power_facility),
    ("power_rack_rated", rack_rated),
    ("throughput", throughput),
    ("throughput_per_kw", throughput / power_facility * 1000),
    ("tokens_per_kwh", throughput / power_facility * 1000 * 3600),
    ("joules_per_token", power_facility / throughput),
    ("bandwidth_per_watt", 8000 / power_facility),   # 8 TB/s = 8,000 GB/s
    ("load_factor", load),
    ("average_power", avg_power),
    ("tokens_per_hour", tokens_per_hour),
    ("energy_cost_per_hour", energy_h),
    ("emissions_per_hour", avg_power / 1000 * 400),
    ("life_years", 4.0),
    ("growth_factor", g),
    ("capital_recovery_factor", crf),
    ("capex_per_accelerator", 37500.0),
    ("salvage_present_value", 0.15 * 37500 / g),
    ("amortised_capex_per_year", amortised_year),
    ("maintenance_per_year", 1500.0),
    ("capex_per_hour", capex_h),
    ("maintenance_per_hour", maint_h),
    ("hosting_per_hour", hosting_h),
    ("opex_per_hour", opex_h),
    ("cost_per_hour", cost_h),
    ("cost_per_mtok_energy", energy_h * per_mtok),
    ("cost_per_mtok_capex", capex_h * per_mtok),
    ("cost_per_mtok_opex", opex_h * per_mtok),
    ("cost_per_mtok_total", cost_h * per_mtok),
    ("emissions_per_mtok", avg_power / 1000 * 400 * per_mtok),
    ("price_per_mtok_total", cost_h * per_mtok / (1 - 0.4)),
    # output tokens counted: a request of 500 output tokens carries 500 counted tokens
    ("tokens_per_request", 500.0),
    ("price_per_request", cost_h * per_mtok / 0.6 * 500 / 1e6),
    ("weighted_tokens_per_request", 2000 + 3 * 500),
    ("price_per_mtok_input", cost_h * per_mtok / 0.6 * 500 / (2000 + 3 * 500)),
    ("price_per_mtok_output", 3 * cost_h * per_mtok / 0.6 * 500 / (2000 + 3 * 500)),
])
def test_step_by_hand(result, name, expected):
    assert result.value(name) == pytest.approx(expected, rel=1e-12)


def test_hand_case_magnitudes(result):
    # a sanity anchor in round numbers, so a reader sees what the case amounts to
    assert round(capex) == 37500
    assert round(crf, 4) == 0.3019              # 4-year annuity at 8%
    assert round(power_facility, 1) == 1504.2
    assert round(result.value("cost_per_mtok_total"), 4) == round(cost_h * per_mtok, 4)


def test_split_adds_up(result):
    parts = sum(result.value(f"cost_per_mtok_{k}") for k in ("energy", "capex", "opex"))
    assert parts == pytest.approx(result.value("cost_per_mtok_total"), rel=1e-12)
    # input and output prices recover the request price: 2,000 x in + 500 x out
    request = (2000 * result.value("price_per_mtok_input")
               + 500 * result.value("price_per_mtok_output")) / 1e6
    assert request == pytest.approx(result.value("price_per_request"), rel=1e-12)


def test_zero_cost_of_capital_is_straight_line():
    case = {**CASE, "financing": {**CASE["financing"], "cost_of_capital": 0}}
    r = price_data(case)
    # (capex - salvage x capex) / n, no discounting
    assert r.value("amortised_capex_per_year") == pytest.approx(37500 * (1 - 0.15) / 4, rel=1e-12)
    assert r.value("capital_recovery_factor") == pytest.approx(0.25, rel=1e-12)


def test_hourly_price_replaces_capex_and_maintenance():
    case = {**CASE, "accelerator": {**CASE["accelerator"], "hourly_price": "2.5 USD/h"}}
    r = price_data(case)
    assert r.value("capex_per_hour") == pytest.approx(2.5)
    assert r.value("maintenance_per_hour") == 0
    assert r.value("opex_per_hour") == pytest.approx(hosting_h, rel=1e-12)  # hosting still added
    assert r.value("cost_per_hour") == pytest.approx(energy_h + 2.5 + hosting_h, rel=1e-12)
    assert r.disclosure()["financing"]["cost_basis"] == "rent"
    assert r.disclosure()["financing"]["hourly_price"] == {"value": 2.5, "unit": "USD/h"}


def test_all_in_rate_with_zero_energy_and_hosting():
    # "set them to zero for an all-in rate": cost per Mtok = rate / tokens per hour x 10^6
    case = {**CASE, "accelerator": {**CASE["accelerator"], "hourly_price": "3 USD/h"},
            "electricity": {"price": "0 USD/kWh"}, "facility": {"hosting": "0 USD/kW/month"},
            "utilisation": 1}
    r = price_data(case)
    assert r.value("cost_per_mtok_total") == pytest.approx(3 / (5000 * 3600) * 1e6, rel=1e-12)


def test_mixed_tokens_count_the_whole_request():
    case = {**CASE, "operating_point": {**CASE["operating_point"], "token_kind": "mixed"}}
    r = price_data(case)
    assert r.value("tokens_per_request") == 2500
    assert r.disclosure()["token_kind"] == "mixed"


def test_disclosure_of_the_hand_case(result):
    d = result.disclosure()
    assert d["boundary"] == "facility" and d["power_basis"] == "measured"
    assert d["operating_point"]["tbt"] == {"value": 20.0, "unit": "ms"}
    assert d["operating_point"]["interactivity"] == {"value": 50.0, "unit": "token/s/user"}
    assert d["financing"]["life"] == {"value": 4.0, "unit": "year"}
    assert d["electricity"]["price"]["value"] == pytest.approx(0.12)
    assert d["defaults_used"] == []  # every input given
    assert "8,760 hours" in " ".join(d["conventions"])
