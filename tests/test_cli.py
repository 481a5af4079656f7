"""The ``costmodel`` command: price, compare, catalog, steps.

Every expected number is hand arithmetic from published figures and the documented defaults,
written out below; none is pasted from a run of the code.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "fixtures" / "scenarios" / "published"
GB300_PEAK = PUBLISHED / "deepseek-r1_gb300_peak.toml"
GB300_MATCHED = PUBLISHED / "deepseek-r1_gb300_matched.toml"
JALAPENO_MATCHED = PUBLISHED / "deepseek-r1_jalapeno_matched.toml"

# Published figures (fixtures/catalog): DeepSeek R1 on GB300 at peak, 11,781 token/s per kW of
# the 1,400 W package TDP; EIA May 2026 US industrial electricity, 8.71 cent/kWh.
GB300_PEAK_PER_KW = 11781.0  # token/s/kW
GB300_RATED_W = 1400.0  # W
EIA_PRICE = 0.0871  # USD/kWh

# Energy per Mtok at the chip boundary, rated basis, utilisation 1 (so no idle hours):
# USD/kWh / (token/s/kW * 3600 s/h = token/kWh) * 1e6 token/Mtok  ~= 0.00205 USD/Mtok
ENERGY_PER_MTOK = EIA_PRICE / (GB300_PEAK_PER_KW * 3600) * 1e6

# Facility power per accelerator from the defaults in costmodel/inputs.py:
# node wall = (8 accelerators x 1,400 W + 2,400 W host) / 0.94 PSU;
# rack = (4 nodes x node wall + 1,500 W switch + 500 W other) / 0.97 delivery, split over
# 4 x 8 = 32 accelerators; facility = rack x PUE 1.3.  ~= 2,507.5 W
FACILITY_W = ((4 * ((8 * 1400 + 2400) / 0.94) + 1500 + 500) / 0.97) / 32 * 1.3


def run(args: list[str]):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return result


def price_json(path: Path, *sets: str) -> dict:
    args = ["price", path, "--json"]
    for s in sets:
        args += ["--set", s]
    return json.loads(run(args).stdout)


def test_hand_figures_are_what_the_brief_says():
    # guards against a slip in the arithmetic above
    assert round(ENERGY_PER_MTOK, 5) == 0.00205
    assert FACILITY_W == pytest.approx(2507.5, abs=0.1)


# -- price ------------------------------------------------------------------------------------

def test_price_json_published_gb300_peak():
    d = price_json(GB300_PEAK)
    energy = d["cost_per_mtok"]["energy"]
    assert energy["unit"] == "USD/Mtok"
    assert energy["value"] == pytest.approx(ENERGY_PER_MTOK, rel=1e-9)
    assert round(energy["value"], 5) == 0.00205
    assert d["disclosure"]["boundary"] == "chip"
    assert d["disclosure"]["power_basis"] == "rated"
    # the per-kW figure reproduces at its own denominator: chip, rated
    assert d["throughput_per_kw"] == {"value": pytest.approx(GB300_PEAK_PER_KW, rel=1e-9),
                                      "unit": "token/s/kW"}
    # 11,781 token/s/kW x 3,600 s/h = 42,411,600 token/kWh
    assert d["tokens_per_kwh"]["value"] == pytest.approx(11781 * 3600, rel=1e-9)
    assert d["power_per_accelerator"] == {"value": pytest.approx(1400.0, rel=1e-12),
                                          "unit": "W"}
    # 1,400 W / (11,781 token/s/kW x 1.4 kW) = 1,400 / 16,493.4 J/token
    assert d["joules_per_token"]["value"] == pytest.approx(1400 / (11781 * 1.4), rel=1e-9)
    for member in ("energy", "capex", "opex", "total"):
        assert d["cost_per_mtok"][member]["unit"] == "USD/Mtok"
        assert d["cost_per_mtok"][member]["value"] > 0
    parts = sum(d["cost_per_mtok"][m]["value"] for m in ("energy", "capex", "opex"))
    assert d["cost_per_mtok"]["total"]["value"] == pytest.approx(parts, rel=1e-12)


def test_price_set_facility_boundary():
    d = price_json(GB300_PEAK, "power.boundary=facility")
    assert d["disclosure"]["boundary"] == "facility"
    assert d["disclosure"]["power_basis"] == "rated"
    assert d["power_per_accelerator"]["value"] == pytest.approx(FACILITY_W, rel=1e-9)
    assert d["disclosure"]["power_per_accelerator"]["value"] == pytest.approx(FACILITY_W,
                                                                               rel=1e-9)
    # same tokens (11,781 token/s/kW x 1.4 kW per accelerator), more watts behind them:
    # throughput per kW at the facility = 11,781 x 1,400 W / facility W  (~6,578)
    assert d["throughput_per_kw"]["value"] == pytest.approx(11781 * 1400 / FACILITY_W,
                                                            rel=1e-9)
    # energy per Mtok = facility kW x USD/kWh / (token/s x 3600 s/h) x 1e6
    energy = FACILITY_W / 1000 * EIA_PRICE / (11781 * 1.4 * 3600) * 1e6
    assert d["cost_per_mtok"]["energy"]["value"] == pytest.approx(energy, rel=1e-9)


@pytest.mark.parametrize("setting", [
    "electricity.price=0.10 USD/kWh",  # what the shell passes for electricity.price="0.10 USD/kWh"
    'electricity.price="0.10 USD/kWh"',  # the quotes kept (read as a TOML string)
    "electricity.price=10 cent/kWh",
    'electricity.price={value = 0.10, unit = "USD/kWh"}',
], ids=["unquoted", "quoted", "cents", "inline-table"])
def test_price_set_electricity_price(setting):
    base = price_json(GB300_PEAK)["cost_per_mtok"]["energy"]["value"]
    d = price_json(GB300_PEAK, setting)
    energy = d["cost_per_mtok"]["energy"]["value"]
    assert energy / base == pytest.approx(0.10 / 0.0871, rel=1e-9)
    assert energy == pytest.approx(0.10 / (11781 * 3600) * 1e6, rel=1e-9)
    assert d["disclosure"]["electricity"]["price"]["value"] == pytest.approx(0.10, rel=1e-12)


def test_price_table_output():
    out = run(["price", GB300_PEAK]).stdout
    assert "cost per mtok total" in out
    assert "USD/Mtok" in out
    assert "boundary: chip" in out
    assert "power basis: rated" in out
    # the energy line shows 6 significant digits of 0.0871 / 42,411,600 x 1e6 = 0.00205368...
    assert "cost per mtok energy" in out
    assert f"{ENERGY_PER_MTOK:.8f}".rstrip("0") in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_price_table_output_follows_set():
    out = run(["price", GB300_PEAK, "--set", "power.boundary=facility"]).stdout
    assert "boundary: facility" in out
    assert "boundary: chip" not in out


def test_json_scenario_file_works_like_toml(tmp_path):
    # the published TOML scenario written out by hand as JSON
    data = {
        "name": "deepseek-r1 gb300 peak",
        "accelerator": "gb300",
        "operating_point": "deepseek-r1/gb300/peak",
        "electricity": "eia-2026-05-us-industrial",
        "utilisation": 1.0,
        "power": {"boundary": "chip", "basis": "rated"},
    }
    f = tmp_path / "deepseek-r1_gb300_peak.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    from_json = price_json(f)
    energy = from_json["cost_per_mtok"]["energy"]
    assert energy["unit"] == "USD/Mtok"
    assert energy["value"] == pytest.approx(ENERGY_PER_MTOK, rel=1e-9)
    assert from_json["disclosure"]["boundary"] == "chip"
    assert from_json["disclosure"]["power_basis"] == "rated"
    from_toml = price_json(GB300_PEAK)
    for member in ("energy", "capex", "opex", "total"):
        assert from_json["cost_per_mtok"][member] == from_toml["cost_per_mtok"][member]
    # --set works on a JSON file too
    d = price_json(f, "power.boundary=facility")
    assert d["power_per_accelerator"]["value"] == pytest.approx(FACILITY_W, rel=1e-9)


# -- compare ----------------------------------------------------------------------------------

# At matched interactivity (169 token/s/user), per kW of package TDP: Jalapeño 12,258, GB300 118.
MATCHED_RATIO = 12258 / 118  # ~= 103.9


def test_compare_json_matched_ratio():
    d = json.loads(run(["compare", GB300_MATCHED, JALAPENO_MATCHED, "--json"]).stdout)
    ratio = d["ratios"]["throughput_per_kw"]
    assert ratio[0] == pytest.approx(1.0, rel=1e-12)
    assert ratio[1] == pytest.approx(MATCHED_RATIO, rel=1e-9)
    assert round(ratio[1], 1) == 103.9
    assert [s["disclosure"]["boundary"] for s in d["scenarios"]] == ["chip", "chip"]
    assert d["baseline"] == d["scenarios"][0]["scenario"]


def test_compare_table_shows_ratio():
    out = run(["compare", GB300_MATCHED, JALAPENO_MATCHED]).stdout
    assert "throughput per kw" in out
    # 12,258 / 118 = 103.8813...; six significant digits
    assert f"{MATCHED_RATIO:.3f}x" == "103.881x"
    assert "103.881x" in out


# -- catalog and steps ------------------------------------------------------------------------

def test_catalog_lists_entries():
    out = run(["catalog"]).stdout
    assert "gb300" in out.split()
    assert "eia-2026-05-us-industrial" in out.split()
    assert "deepseek-r1/gb300/peak" in out.split()


def test_catalog_one_kind():
    out = run(["catalog", "accelerator"]).stdout
    assert "gb300" in out.split() and "jalapeno" in out.split()
    assert "eia-2026-05-us-industrial" not in out


def test_steps_lists_declared_calculation():
    out = run(["steps"]).stdout
    assert "cost_per_mtok_total [USD/Mtok]" in out.splitlines()
    assert "cost_per_mtok_energy [USD/Mtok]" in out.splitlines()
