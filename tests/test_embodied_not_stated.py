"""No product carbon footprint given: no embodied figure, never 0, on every face (null in the
API and the JSON faces, "not stated" on the command line and the pages, an empty cell in the
workbook, recalculated so by LibreOffice), and the totals with embodied are the operational
figures alone, labelled so (docs/emissions.md).

The scenario, by hand: 1000 W at the chip boundary, 1000 token/s, utilisation 0.5, idle power
0.2: 600 W on average, 0.6 kWh an hour at 400 g/kWh = 240 g an hour over 1.8 million tokens:
133.33 gCO2e/Mtok location-based; 100 g/kWh market-based: 33.33 gCO2e/Mtok."""
from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner
from conftest import auth, require_libreoffice, workbook_systems
from openpyxl import load_workbook

from costmodel import app
from costmodel.cli import main
from costmodel.model.results import TOTALS_OPERATIONAL
from costmodel.render.display import NOT_STATED

SCENARIO = {"name": "no footprint", "utilisation": 0.5, "idle_power": 0.2,
            "power": {"boundary": "chip"},
            "accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
            "operating_point": {"throughput": "1000 token/s",
                                "interactivity": "100 token/s/user", "ttft": "1 s"},
            "electricity": {"price": "0.1 USD/kWh", "carbon_intensity": "400 gCO2e/kWh",
                            "market_carbon_intensity": "100 gCO2e/kWh"}}
LOCATION, MARKET = 240 / 1.8, 60 / 1.8  # gCO2e/Mtok
EMBODIED = ("embodied_per_mtok", "embodied_per_hour", "embodied_per_accelerator")
TOML = """name = "no footprint"
utilisation = 0.5
idle_power = 0.2
[power]
boundary = "chip"
[accelerator]
rated_power = "1000 W"
price = "30000 USD"
[operating_point]
throughput = "1000 token/s"
interactivity = "100 token/s/user"
ttft = "1 s"
[electricity]
price = "0.1 USD/kWh"
carbon_intensity = "400 gCO2e/kWh"
market_carbon_intensity = "100 gCO2e/kWh"
"""


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "no-footprint.toml"
    path.write_text(TOML, encoding="utf-8")
    return path


def value(q: dict) -> float | None:
    return q["value"]


def test_the_api_answers_null_and_the_operational_totals(client, tokens):
    r = client.post("/api/v1/price", json={"scenario": SCENARIO},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    assert out["embodied_per_mtok"] == {"value": None, "unit": "gCO2e/Mtok"}
    assert all(out["steps"][n]["value"] is None for n in EMBODIED)
    assert value(out["emissions_total_per_mtok"]) == pytest.approx(LOCATION)
    assert value(out["emissions_market_total_per_mtok"]) == pytest.approx(MARKET)
    e = out["disclosure"]["emissions"]
    assert e["embodied"] is None and e["totals"] == TOTALS_OPERATIONAL


def test_the_command_line_says_not_stated_and_operational_only(scenario_file):
    r = CliRunner().invoke(main, ["price", str(scenario_file)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rows = {line.strip().split("  ")[0]: line for line in r.output.splitlines()
            if line.startswith("   ")}
    assert re.search(rf"Embodied emissions\s+{NOT_STATED}\s", rows["Embodied emissions"])
    assert "133" in rows["Operational only, location-based"]
    assert "33.3" in rows["Operational only, market-based"]
    assert "With embodied" not in r.output
    assert "embodied: not stated (the totals are operational only)" in " ".join(r.output.split())
    # --json: null, not 0
    r = CliRunner().invoke(main, ["price", str(scenario_file), "--json"])
    out = json.loads(r.output)
    assert out["embodied_per_mtok"]["value"] is None
    assert out["emissions_total_per_mtok"]["value"] == pytest.approx(LOCATION)


def test_a_stated_footprint_keeps_its_label(tmp_path):
    path = tmp_path / "stated.toml"
    path.write_text(TOML.replace('price = "30000 USD"',
                                 'price = "30000 USD"\nembodied = "1500 kgCO2e"'), "utf-8")
    r = CliRunner().invoke(main, ["price", str(path)], catch_exceptions=False)
    assert "With embodied, location-based" in r.output and NOT_STATED not in r.output
    # 1.5e6 g over 5 x 8,760 h, 1.8 Mtok an hour: 19.03 g/Mtok
    assert re.search(r"Embodied emissions\s+19\.0\s", r.output)


def test_the_price_and_compare_pages(web):
    form = {"electricity": "eia-2023-us-tx-industrial", "carbon": "egrid2023-erct"}
    page = web.get("/?" + urlencode(form)).get_data(as_text=True)
    row = re.search(r'data-figure="embodied_per_mtok"[^>]*>(.*?)</tr>', page, re.S).group(1)
    assert NOT_STATED in row and ">0<" not in row
    total = re.search(r'data-figure="emissions_total_per_mtok"[^>]*>(.*?)</tr>', page, re.S)
    assert "Operational only, location-based" in total.group(1)
    # Compare: the sample scenarios give a factor and no footprint
    query = urlencode([("sys", "fixture:sample-tco"), ("sys", "fixture:sample-tou")])
    page = web.get("/compare?" + query).get_data(as_text=True)
    total = re.search(r'data-figure="emissions_total_per_mtok"[^>]*>(.*?)</tr>', page, re.S)
    assert total and "Operational only, location-based" in total.group(1)


def test_a_plan_and_a_task(scenario_file, tmp_path):
    spec = app.ScenarioSpec(app.InlineScenario(SCENARIO))
    # 9,000 token/s / (1,000 x 0.5) = 18 accelerators at 240 g an hour: 37.84 t a year
    planned = app.plan(app.LocalContext(), app.PlanRequest(spec, demand=9000.0))
    e = planned.to_json()["emissions_per_year"]
    assert e["embodied"]["value"] is None
    assert e["location_total"]["value"] == pytest.approx(18 * 240 * 8760 / 1e6)
    r = CliRunner().invoke(main, ["plan", str(scenario_file), "--demand", "9000 token/s"])
    assert r.exit_code == 0, r.output
    assert "location-based, operational only: no embodied footprint stated" in r.output
    task = tmp_path / "t.toml"
    task.write_text('[task]\nsteps = 1\ncontext = "8192 token"\noutput = "1024 token"\n'
                    'cached_share = 0\ntool_time = "0 s"\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["task", str(scenario_file), "--task", str(task)])
    assert r.exit_code == 0, r.output
    assert "CO2e per task, operational only, location" in r.output
    assert "with embodied" not in r.output
    r = CliRunner().invoke(main, ["task", str(scenario_file), "--task", str(task), "--json"])
    grams = json.loads(r.stdout)["systems"][0]["emissions_per_task"]
    assert grams["location_total"]["value"] == pytest.approx(9216 * LOCATION / 1e6)  # 1.2288


def test_chargeback_charges_the_operational_grams():
    from chargeback_support import HAND_SCENARIO, TWO_TENANTS, fleet

    from costmodel.app.chargeback import ChargebackRequest, chargeback
    from costmodel.sources.usage import read_usage_bytes
    data = fleet()
    data["pools"][0]["scenario"] = {**HAND_SCENARIO, "electricity": {
        "price": "0 USD/kWh", "carbon_intensity": "500 gCO2e/kWh"}}
    answer = chargeback(app.LocalContext(), ChargebackRequest(
        data, read_usage_bytes(TWO_TENANTS.encode(), "u"), idle="usage")).to_json()
    # tests/decisions/test_chargeback_emissions.py's pool without its footprint: 1000 W x
    # (u + (1 - u) x 0.3) at u = 6e9 / 1.0368e10, 500 g/kWh, 2 accelerators x 720 h
    u = 6e9 / 1.0368e10
    kg = 2 * 720 * (u + (1 - u) * 0.3) * 500 / 1000
    assert answer["emissions"]["location"]["total"]["value"] == pytest.approx(kg)  # 507.7
    assert answer["pools"][0]["emissions_counted"] == TOTALS_OPERATIONAL


def test_the_workbook_leaves_the_embodied_cells_empty(tmp_path, scenario_file):
    from costmodel.render.workbook.export import build_workbook, save_workbook
    from costmodel.render.workbook.names import named_cells
    systems, _ = workbook_systems([scenario_file])
    path = save_workbook(build_workbook(systems), tmp_path / "none.xlsx")
    wb = load_workbook(path)
    for name in EMBODIED:
        assert named_cells(wb, name)[0].value.startswith("="), name  # a live formula
    labels = {row[0].value for row in wb["Results"].iter_rows()}
    assert "Operational only, location-based" in labels
    assert "With embodied, location-based" not in labels
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    out = load_workbook(recalculate(path, tmp_path / "out"), data_only=True)
    for name in EMBODIED:
        assert named_cells(out, name)[0].value in (None, ""), name
    assert named_cells(out, "emissions_total_per_mtok")[0].value == pytest.approx(LOCATION)
    assert named_cells(out, "emissions_market_total_per_mtok")[0].value == pytest.approx(MARKET)
