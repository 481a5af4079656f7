"""costmodel profit: the hand figures (tests/profit_support.py) as text and JSON, the market
from a file's [market] table or the options, and bad input as one line naming the option or
the file's line, exit status 2."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from profit_support import MARKET, OWNED, RENTED, toml_text

from costmodel.cli import main


@pytest.fixture
def files(tmp_path):
    out = []
    for scenario in (OWNED, RENTED):
        path = tmp_path / f"{scenario['name']}.toml"
        path.write_text(toml_text(scenario), encoding="utf-8")
        out.append(str(path))
    return out


def run(*args):
    return CliRunner().invoke(main, ["profit", *map(str, args)], catch_exceptions=False)


def test_the_text_is_the_hand_figures(files):
    r = run(*files)
    assert r.exit_code == 0, r.output
    lines = {line[3:].split("  ")[0]: line for line in r.output.splitlines()}
    assert lines["Revenue"].split()[1:3] == ["11.520", "11.520"]
    assert lines["Cost, every hour"].split()[3:5] == ["1.065", "2.065"]
    assert lines["Profit"].split()[2:4] == ["8.151", "7.151"]
    assert lines["Margin on revenue"].split()[3:5] == ["70.8%", "62.1%"]
    assert lines["Profit per month"].split()[3:5] == ["5,950", "5,220"]
    assert lines["Profit per GW-year"].split()[3:5] == ["35,701.4", "31,321.4"]
    assert lines["Break-even market price"].split()[4:6] == ["0.0740", "0.1434"]
    assert lines["Tokens per dollar of cost"].split()[5:7] == ["16,901,408", "8,716,707"]
    assert "=> Most profitable per accelerator-hour: owned" in r.output
    assert "revenue share 20.0%, cached share 50.0%, utilisation 50.0%" in r.output


def test_the_json_is_the_engines(files):
    r = run(*files, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    owned, rented = out["systems"]
    assert owned["profit_per_hour"]["value"] == pytest.approx(8.151, rel=1e-12)
    assert rented["profit_per_gw_year"]["value"] == pytest.approx(31_321_380_000, rel=1e-12)
    assert owned["disclosure"]["market"]["prices"]["input"]["source"] == \
        "illustrative assumption"
    assert owned["disclosure"]["utilisation"] == 0.5


def test_the_options_replace_the_files_market(files):
    r = run(files[0], "--market-price", "illustrative/reasoning-model-api@2026-06",
            "--revenue-share", "0", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)["systems"][0]
    assert s["disclosure"]["market"]["entry"] == "illustrative/reasoning-model-api@2026-06"
    # 0.60 input, 0.15 cached (half the input), 2.40 output: (300 + 75 + 600) / 10^6 a
    # request, 14,400 an hour = 14.04 USD/h; no share: profit 14.04 - 1.065
    assert s["revenue_per_hour"]["value"] == pytest.approx(14.04, rel=1e-12)
    assert s["profit_per_hour"]["value"] == pytest.approx(14.04 - 1.065, rel=1e-12)
    blended = json.loads(run(files[0], "--market-price", "0.6 USD/Mtok", "--json").output)
    market = blended["systems"][0]["disclosure"]["market"]
    assert market["basis"] == "blended" and market["prices"]["input"]["source"] == \
        "--market-price"
    typed = json.loads(run(files[0], "--price-output", "3 USD/Mtok", "--json").output)
    assert typed["systems"][0]["disclosure"]["market"]["prices"]["output"] == \
        {"value": 3.0, "unit": "USD/Mtok", "source": "--price-output"}


def test_a_workbook(files, tmp_path):
    r = run(*files, "--workbook", tmp_path / "p.xlsx")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p.xlsx").stat().st_size > 0
    assert f"workbook written to {tmp_path / 'p.xlsx'}" in r.output


@pytest.mark.parametrize("args,says", [
    (["--revenue-share", "1"], "--revenue-share: must be below 1, got 1"),
    (["--price-output", "-1 USD/Mtok"], "--price-output: must not be negative"),
    (["--market-price", "0.6 EUR/Mtok"], "--market-price: an amount in EUR"),
    (["--market-price", "nobody/nothing"], "--market-price: unknown catalog entry"),
    (["--market-price", "deepseek/deepseek-r1-off-peak"],
     "--price-input: required (or give a blended price)"),
])
def test_a_bad_option_is_one_line_naming_it(files, args, says):
    r = CliRunner().invoke(main, ["profit", files[0], *args])
    assert r.exit_code == 2
    assert says in r.output and r.output.count("\n") == 1, r.output


def test_a_bad_file_is_one_line_naming_its_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(toml_text(OWNED, {**MARKET, "price_output": "-2 USD/Mtok"}))
    r = CliRunner().invoke(main, ["profit", str(path)])
    line = path.read_text().splitlines().index('price_output = "-2 USD/Mtok"') + 1
    assert r.exit_code == 2
    assert r.output == (f"costmodel: error: {path} line {line}: market.price_output: must not "
                        f"be negative, got -2 USD / Mtok\n")


def test_no_market_is_said(tmp_path):
    path = tmp_path / "none.toml"
    path.write_text(toml_text(OWNED, None))
    r = CliRunner().invoke(main, ["profit", str(path)])
    assert r.exit_code == 2
    assert "no market price: give a [market] table in the file, or --market-price" in r.output
    # and costmodel price leaves a [market] table alone
    with_market = tmp_path / "with.toml"
    with_market.write_text(toml_text(OWNED))
    assert CliRunner().invoke(main, ["price", str(with_market)]).exit_code == 0
