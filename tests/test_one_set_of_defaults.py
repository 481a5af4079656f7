"""One minimal choice (a GB300 at DeepSeek R1's published peak, nothing else) gives one figure
on every face: the CLI, the API (its own OpenAPI example), the web Price page as it opens, and
the workbook. Every face starts from the scenario model's defaults and says which it used
beside the figure."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook

from costmodel.server import create_app

MINIMAL = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
# by hand: 11,781 token/s/kW (the published peak) x 1,400 W (GB300's package power, the chip
# boundary) = 16,493.4 token/s; 1.4 kW at 0.0871 USD/kWh (EIA, May 2026) and 100 %
# utilisation over 16,493.4 x 3,600 / 1e6 = 59.376 Mtok an hour
THROUGHPUT = 11_781 * 1.4
MTOK_PER_HOUR = THROUGHPUT * 3600 / 1e6
ENERGY_PER_MTOK = 1.4 * 0.0871 / MTOK_PER_HOUR
# the rest by hand from the defaults docs/scenarios.md lists: a GB300 at 50,000 USD in an
# 8-accelerator node (2,400 W host, PSU 0.94, 60,000 USD), 4 nodes a rack (1,500 + 500 W,
# delivery 0.97, 100,000 USD); 5 years at 10 % with 10 % salvage; maintenance 3 %/year;
# hosting 150 USD/kW/month on rated rack power; 8,760 h a year
CAPEX = 50_000 + 60_000 / 8 + 100_000 / 32  # 60,625 USD
GROWTH = 1.1 ** 5
CAPEX_PER_HOUR = (CAPEX - 0.1 * CAPEX / GROWTH) * (0.1 * GROWTH / (GROWTH - 1)) / 8760
RACK_POWER = ((4 * (8 * 1400 + 2400) / 0.94 + 1500 + 500) / 0.97) / 32  # [W] per accelerator
OPEX_PER_HOUR = 0.03 * CAPEX / 8760 + 150 * RACK_POWER / 1000 * 12 / 8760
COST_PER_MTOK = ENERGY_PER_MTOK + (CAPEX_PER_HOUR + OPEX_PER_HOUR) / MTOK_PER_HOUR


@pytest.fixture(scope="module")
def client(db):
    app = create_app({"DATABASE_URL": db, "OPEN_READS": True, "TESTING": True})
    yield app.test_client()
    app.extensions["costmodel"].dispose()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "costmodel.cli", *args], capture_output=True,
                          text=True, timeout=120, check=True)


def test_the_api_example_is_the_minimal_choice(client):
    doc = client.get("/api/v1/openapi.json").json
    body = doc["paths"]["/api/v1/price"]["post"]["requestBody"]["content"]["application/json"]
    assert body["example"] == {"scenario": MINIMAL}


def test_one_figure_on_every_face(client, tmp_path):
    api = client.post("/api/v1/price", json={"scenario": MINIMAL}).json
    price = api["price_per_mtok"]["total"]["value"]
    cost = api["cost_per_mtok"]["total"]["value"]
    assert api["throughput"]["value"] == pytest.approx(THROUGHPUT)
    assert api["cost_per_mtok"]["energy"]["value"] == pytest.approx(ENERGY_PER_MTOK)
    assert cost == pytest.approx(COST_PER_MTOK, rel=1e-12)
    assert price == pytest.approx(COST_PER_MTOK / (1 - 0.5), rel=1e-12)  # margin 50 %
    assert round(price, 4) == 0.0821

    scenario = tmp_path / "minimal.toml"
    scenario.write_text("".join(f'{k} = "{v}"\n' for k, v in MINIMAL.items()))
    cli = json.loads(_cli("price", str(scenario), "--json").stdout)
    assert cli["price_per_mtok"]["total"]["value"] == price
    text = _cli("price", str(scenario)).stdout
    assert re.search(r"=> Price per million tokens\s+0\.0821 ", text)
    assert "At the engine's defaults: utilisation 100.0%; power at the chip boundary, rated " \
           "basis; electricity 0.0871 USD/kWh" in " ".join(text.split())

    for page in (client.get("/"), client.get("/?accelerator=gb300&point=deepseek-r1/gb300/peak")):
        html = page.get_data(as_text=True)
        shown = re.search(r'data-figure="price_per_mtok_total">.*?figure-value">([^<]*)<',
                          html, re.S)[1]
        assert shown == "0.0821 USD/Mtok"
        assert 'data-testid="assumed">At the engine&#39;s defaults: utilisation 100.0%' in html

    book = tmp_path / "minimal.xlsx"
    _cli("workbook", str(scenario), "-o", str(book))
    wb = load_workbook(book, data_only=True)
    sheet, cell = next(iter(wb.defined_names["price_per_mtok_total"].destinations))
    assert wb[sheet][cell.replace("$", "")].value == pytest.approx(price, rel=1e-12)


def test_a_scenario_that_gives_its_inputs_says_no_defaults(tmp_path):
    """The sample TCO scenario gives every input that moves the price: nothing is said."""
    from costmodel.sources.catalog import fixtures_dir
    text = _cli("price", str(Path(fixtures_dir()) / "scenarios" / "sample-tco.toml")).stdout
    assert "engine's defaults" not in text
