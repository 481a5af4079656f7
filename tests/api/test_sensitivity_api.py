"""Sensitivity through the API and in workbooks."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import ROOT, auth
from openpyxl import load_workbook

from costmodel.cli import main

API = "/api/v1/sensitivity"
GB300 = {"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}}
# GB300 at peak: 11,781 token/s/kW x 1.4 kW rated = 16,493.4 token/s at 1,400 W (chip, rated)
THROUGHPUT, POWER, IDLE = 11781 * 1.4, 1400.0, 0.3


def energy_per_mtok(price: float, u: float = 1.0) -> float:
    """USD/Mtok: power x (u + (1 - u) idle) x price / 1,000 per hour over u x tokens/h."""
    return POWER * (u + (1 - u) * IDLE) * price / 1000 / (u * THROUGHPUT * 3600) * 1e6


def test_montecarlo_of_a_linear_output_has_the_uniforms_quantiles(client, tokens):
    r = client.post(f"{API}/montecarlo", headers=auth(tokens["viewer"]), json={
        "scenario": GB300, "output": "cost_per_mtok_energy", "draws": 100000, "seed": 7,
        "distributions": {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}})
    assert r.status_code == 200, r.json
    d = r.json
    # energy per Mtok is linear in the price: its P10/P50/P90 are the price's, 0.06/0.10/0.14;
    # a sample quantile of 10^5 uniform draws is off by ~0.1 % of the range, so 1 % is 10 sigma
    for key, price in (("p10", 0.06), ("p50", 0.10), ("p90", 0.14)):
        assert d[key]["value"] == pytest.approx(energy_per_mtok(price), rel=0.01)
        assert d[key]["unit"] == "USD/Mtok"
    assert d["mean"]["value"] == pytest.approx(energy_per_mtok(0.10), rel=0.005)
    assert d["draws"] == 100000 and d["seed"] == 7
    again = client.post(f"{API}/montecarlo", headers=auth(tokens["viewer"]), json={
        "scenario": GB300, "output": "cost_per_mtok_energy", "draws": 100000, "seed": 7,
        "distributions": {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}}).json
    assert again["p50"] == d["p50"]  # the same seed, the same answer


def test_tornado_moves_a_linear_output_by_the_swing(client, tokens):
    r = client.post(f"{API}/tornado", headers=auth(tokens["viewer"]), json={
        "scenario": GB300, "output": "cost_per_mtok_energy", "inputs": ["electricity.price"]})
    assert r.status_code == 200, r.json
    bar = r.json["bars"][0]
    base = energy_per_mtok(0.0871)
    assert bar["output_low"]["value"] == pytest.approx(base * 0.8, rel=1e-12)
    assert bar["output_high"]["value"] == pytest.approx(base * 1.2, rel=1e-12)


def test_grid_cells_are_single_scenarios(client, tokens):
    r = client.post(f"{API}/grid", headers=auth(tokens["viewer"]), json={
        "scenario": GB300, "output": "cost_per_mtok_energy",
        "x": "electricity.price=0.05..0.15 USD/kWh:3", "y": "utilisation=0.5,1"})
    assert r.status_code == 200, r.json
    for i, u in enumerate((0.5, 1.0)):
        for j, price in enumerate((0.05, 0.10, 0.15)):
            assert r.json["values"][i][j] == pytest.approx(energy_per_mtok(price, u), rel=1e-12)


@pytest.mark.parametrize("endpoint,body,path", [
    ("montecarlo", {"distributions": {"electricity.prise": "uniform(1 USD/kWh, 2 USD/kWh)"}},
     "distributions.electricity.prise"),
    ("montecarlo", {"distributions": {"electricity.price": "normal(0.1 USD/kWh, 0.05 USD/kWh)"}},
     "distributions.electricity.price"),
    ("montecarlo", {"distributions": {"utilisation": "uniform(0.5, 0.9)"}, "draws": 5000000},
     "draws"),
    ("grid", {"x": "electricity.price=1..2 W:3", "y": "utilisation=0.5,1"}, "electricity.price"),
])
def test_bad_analyses_are_problems(client, tokens, endpoint, body, path):
    r = client.post(f"{API}/{endpoint}", headers=auth(tokens["viewer"]),
                    json={"scenario": GB300, **body})
    assert r.status_code == 422
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["errors"][0]["path"] == path


def test_sensitivity_sheet_in_the_workbook(tmp_path):
    out = tmp_path / "t.xlsx"
    sample = str(ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_peak.toml")
    r = CliRunner().invoke(main, ["sensitivity", "tornado", sample, "--output",
                                  "cost_per_mtok_energy", "--input", "electricity.price",
                                  "--json", "--workbook", str(out)])
    assert r.exit_code == 0, r.output
    ws = load_workbook(out)["Sensitivity"]
    assert ws["A6"].value == "electricity.price"
    base = energy_per_mtok(0.0871)
    # columns: low, high, output at low - base, output at high - base, swing
    assert ws["C6"].value == pytest.approx(0.0871 * 0.8)
    assert ws["E6"].value == pytest.approx(-0.2 * base, rel=1e-9)
    assert ws["F6"].value == pytest.approx(0.2 * base, rel=1e-9)
    assert ws["G6"].value == pytest.approx(0.4 * base, rel=1e-9)
    assert ws._charts  # the tornado chart
