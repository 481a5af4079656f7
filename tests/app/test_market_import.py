"""Market prices imported from OpenRouter's list into the service's catalog, and used by
profit with their date and source in the disclosure: through the API (POST /api/v1/profit)
and the command line (costmodel market import, then costmodel profit --url).

Hand arithmetic (tests/profit_support.py's owned system: 14,400 requests an hour of 1,000
input and 250 output tokens, cost 1.065 USD/h) at the sample's DeepSeek R1 prices (0.4 USD
per million input tokens, 2.0 output; no cached share, no revenue share): a request earns
(1,000 x 0.4 + 250 x 2.0) / 10^6 = 0.0009 USD; revenue 14,400 x 0.0009 = 12.96 USD/h;
profit 12.96 - 1.065 = 11.895 USD/h.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from profit_support import COST, OWNED, toml_text

from costmodel.app.market_import import import_openrouter
from costmodel.cli import main
from tests.conftest import ROOT, auth

SAMPLE = ROOT / "fixtures" / "market" / "openrouter-models.json"
KEY = "openrouter/deepseek.deepseek-r1@2026-12-06"
SOURCE = "OpenRouter model list (https://openrouter.ai/api/v1/models), fetched 2026-12-06"


def test_import_then_profit_through_the_api(app, tokens):
    services = app.extensions["costmodel"]
    done = import_openrouter(services, SAMPLE, date="2026-12-06")
    assert KEY in done.added and len(done.added) == 4 and len(done.skipped) == 1
    again = import_openrouter(services, SAMPLE, date="2026-12-06")
    assert again.added == [] and sorted(again.existing) == sorted(done.added)
    client = app.test_client()
    entry = client.get(f"/api/v1/market-prices/{KEY}", headers=auth(tokens["viewer"]))
    assert entry.status_code == 200 and entry.get_json()["origin"] == "import:openrouter"
    r = client.post("/api/v1/profit", headers=auth(tokens["viewer"]), json={
        "scenarios": [{"scenario": OWNED}],
        "market": {"catalog": "openrouter/deepseek.deepseek-r1"}})  # the latest version
    assert r.status_code == 200, r.get_json()
    system = r.get_json()["systems"][0]
    assert system["revenue_per_hour"]["value"] == pytest.approx(12.96)
    assert system["profit_per_hour"]["value"] == pytest.approx(12.96 - COST["owned"])
    market = system["disclosure"]["market"]
    assert (market["entry"], market["date"], market["source"]) == (KEY, "2026-12-06", SOURCE)
    assert market["prices"]["output"]["source"].endswith("pricing.completion 0.000002 "
                                                         "USD/token")


def test_import_then_profit_on_the_command_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    runner = CliRunner()
    r = runner.invoke(main, ["market", "import", str(SAMPLE), "--date", "2026-12-06",
                             "--url", url], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "added 4 market prices dated 2026-12-06" in r.output
    assert "left out data[4] openrouter/auto" in r.output
    scenario = tmp_path / "owned.toml"
    scenario.write_text(toml_text(OWNED, market=None), encoding="utf-8")
    r = runner.invoke(main, ["profit", str(scenario), "--market-price",
                             "openrouter/deepseek.deepseek-r1", "--url", url, "--json"],
                      catch_exceptions=False)
    assert r.exit_code == 0, r.output
    system = json.loads(r.output)["systems"][0]
    assert system["profit_per_hour"]["value"] == pytest.approx(11.895)
    assert system["disclosure"]["market"]["date"] == "2026-12-06"
    assert system["disclosure"]["market"]["source"] == SOURCE
    text = runner.invoke(main, ["profit", str(scenario), "--market-price",
                                "openrouter/deepseek.deepseek-r1", "--url", url]).output
    assert "DeepSeek: R1 (OpenRouter), 2026-12-06" in text and SOURCE in text
    # without --url the fixtures' catalog: no such entry, one line, exit 2
    r = runner.invoke(main, ["profit", str(scenario), "--market-price",
                             "openrouter/deepseek.deepseek-r1"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1


def test_a_bad_file_is_one_line_and_adds_nothing(tmp_path):
    bad = tmp_path / "models.json"
    bad.write_text(json.dumps({"data": [{"id": "a/b", "pricing": {"prompt": "x",
                                                                  "completion": "0"}}]}))
    url = f"sqlite:///{tmp_path / 'c.db'}"
    r = CliRunner().invoke(main, ["market", "import", str(bad), "--date", "2026-12-06",
                                  "--url", url])
    assert r.exit_code == 2
    assert "data[0].pricing.prompt: not a price: 'x'" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_bad_date_names_the_option(tmp_path):
    r = CliRunner().invoke(main, ["market", "import", str(SAMPLE), "--date", "yesterday",
                                  "--url", f"sqlite:///{tmp_path / 'c.db'}"])
    assert r.exit_code == 2 and "--date: not a date: 'yesterday'" in r.output
