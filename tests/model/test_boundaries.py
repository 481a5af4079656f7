"""Every boundary x basis combination: the power used, and a disclosure that says so."""
from __future__ import annotations

import itertools

import pytest
from conftest import price_data

BASE = {
    "accelerator": {"rated_power": "1200 W", "measured_power": "900 W", "price": "40000 USD"},
    "node": {"accelerators": 4, "host_power": "800 W", "psu_efficiency": 0.9},
    "rack": {"nodes": 18, "switch_power": "3 kW", "other_power": "1 kW",
             "power_delivery_efficiency": 0.95},
    "facility": {"pue": 1.2},
    "operating_point": {"throughput_per_kw": "1000 token/s/kW"},
}


def hand_power(boundary: str, chip: float) -> float:
    node = (4 * chip + 800) / 0.9
    rack = (18 * node + 3000 + 1000) / 0.95
    return {"chip": chip, "node": node / 4, "rack": rack / 72,
            "facility": rack / 72 * 1.2}[boundary]


@pytest.mark.parametrize("boundary,basis",
                         list(itertools.product(["chip", "node", "rack", "facility"],
                                                ["rated", "measured"])))
def test_boundary_and_basis(boundary, basis):
    r = price_data(BASE, [("power.boundary", boundary), ("power.basis", basis)])
    chip = 1200.0 if basis == "rated" else 900.0
    expected = hand_power(boundary, chip)
    assert r.value("power_per_accelerator") == pytest.approx(expected, rel=1e-12)
    # throughput comes from the published convention (figure x rated power), whatever the basis
    assert r.value("throughput") == pytest.approx(1000 * 1.2, rel=1e-12)
    assert r.value("throughput_per_kw") == pytest.approx(1200 / expected * 1000, rel=1e-12)
    d = r.disclosure()
    assert d["boundary"] == boundary
    assert d["power_basis"] == basis
    assert d["power_per_accelerator"]["value"] == pytest.approx(expected, rel=1e-12)
    # hosting is charged on rated rack power regardless of the chosen boundary and basis
    assert r.value("power_rack_rated") == pytest.approx(hand_power("rack", 1200.0), rel=1e-12)
    assert r.to_json()["power_per_accelerator"]["unit"] == "W"


def test_boundaries_are_ordered():
    values = [price_data(BASE, [("power.boundary", b)]).value("power_per_accelerator")
              for b in ("chip", "node", "rack", "facility")]
    assert values == sorted(values) and len(set(values)) == 4


def test_measured_basis_leaves_host_power_rated():
    # only the accelerator's own power changes between bases: node delta = 4 x 300 W / 0.9 / 4
    rated = price_data(BASE, [("power.boundary", "node")]).value("power_per_accelerator")
    measured = price_data(BASE, [("power.boundary", "node"), ("power.basis", "measured")])
    assert rated - measured.value("power_per_accelerator") == pytest.approx(300 / 0.9, rel=1e-12)


def test_idle_power_counts_for_energy_not_tokens():
    full = price_data(BASE, [("utilisation", 1.0)])
    half = price_data(BASE, [("utilisation", 0.5), ("idle_power", 0.2)])
    # energy per hour scales by 0.5 + 0.5 x 0.2 = 0.6, tokens per hour by 0.5
    assert half.value("energy_cost_per_hour") == pytest.approx(
        full.value("energy_cost_per_hour") * 0.6, rel=1e-12)
    assert half.value("cost_per_mtok_energy") == pytest.approx(
        full.value("cost_per_mtok_energy") * 0.6 / 0.5, rel=1e-12)


def test_system_preset_fills_node_and_rack_and_the_scenario_wins():
    data = {"accelerator": "gb300", "operating_point": {"throughput": "1000 token/s"},
            "system": "gb300-nvl72", "node": {"host_power": "1.5 kW"},
            "power": {"boundary": "rack"}}
    r = price_data(data)
    # preset: 4 GPUs a tray, PSU 0.95, 18 trays, switches 7,200 W, other 1,000 W, delivery
    # 0.97; the scenario's own 1,500 W host power replaces the preset's 1,200 W
    node = (4 * 1400 + 1500) / 0.95
    rack = (18 * node + 7200 + 1000) / 0.97
    assert r.value("power_per_accelerator") == pytest.approx(rack / 72, rel=1e-12)
    sources = r.disclosure()["sources"]
    assert sources["node.psu_efficiency"].startswith("catalog system 'gb300-nvl72'")
    assert sources["node.host_power"] == "inline"
    assert r.scenario.system == "gb300-nvl72"
