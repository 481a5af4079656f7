"""Hostile input, replayed row by row from the hardening issue: each gets a clear 4xx (or a
one-line CLI error), fast by construction, and nothing is stored.

Rows covered here: 1 (a quantity that pint would evaluate: "9**9**9 W"), 6 (pint parser
errors that escaped as 500), 10 (loopback decided by resolving the address:
tests/test_service_cli.py). Quantities are read by costmodel's own grammar
(costmodel.units), never by pint's expression evaluator, at every entry: API bodies, scenario
files and --set, sensitivity ranges and distributions, workbook cells, curve files.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import PUBLISHED, auth

from costmodel.cli import main
from costmodel.units import (
    MAX_EXPONENT,
    MAX_QUANTITY_TEXT,
    UnitInputError,
    parse_quantity,
    parse_unit,
)

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}

# strings pint would evaluate (9**9**9 never finishes; 2**1100 overflows) or fail on with an
# exception the service did not catch
HOSTILE = ["9**9**9 W", "2**1100 W", "(700 W", "700 W)", "[", "1/0 W", "700 W**",
           "700 W**99", "700 W**9**9", "700 (((((W)))))", "7e7 " + "W*" * 60 + "W",
           "700 __import__", "700 W; drop", "0x10 W", "700 W" + " " * 500 + "x"]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_quantity_text_is_refused_by_the_grammar(text):
    with pytest.raises(UnitInputError) as info:
        parse_quantity(text, "W")
    assert str(info.value) and "Traceback" not in str(info.value)


@pytest.mark.parametrize("text,watts", [
    ("700 W", 700.0), ("0.7 kW", 700.0), ("700 J/s", 700.0), ("7e2 W", 700.0),
    ("700 kW h/h", 700_000.0), ("700 W*h/h", 700.0), ("700 (W)", 700.0),
    ("700 m**2*kg/s**3", 700.0), ("700 m^2 kg s^-3", 700.0)])
def test_ordinary_units_still_read(text, watts):
    assert parse_quantity(text, "W") == pytest.approx(watts, rel=1e-12)


def test_bounds_of_the_grammar():
    assert parse_unit(f"m**{MAX_EXPONENT}") is not None
    with pytest.raises(UnitInputError, match="exponent"):
        parse_unit(f"m**{MAX_EXPONENT + 1}")
    with pytest.raises(UnitInputError, match="at most"):
        parse_quantity("7 " + "W" * MAX_QUANTITY_TEXT, "W")
    with pytest.raises(UnitInputError, match="nested"):
        parse_unit("(" * 20 + "W" + ")" * 20)


@pytest.fixture
def viewer(tokens):
    return auth(tokens["viewer"])


@pytest.mark.parametrize("text", HOSTILE)
def test_api_answers_422_with_the_field_path(client, viewer, text):
    resp = client.post(f"{API}/price", headers=viewer, json={
        "scenario": {**GB300, "accelerator": {"catalog": "gb300", "rated_power": text}}})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    assert resp.json["errors"][0]["path"] == "scenario.accelerator.rated_power"


@pytest.mark.parametrize("text", ["9**9**9 W", "2**1100 W", "1/0 W"])
def test_api_overrides_and_dict_units_too(client, viewer, text):
    resp = client.post(f"{API}/price", headers=viewer,
                       json={"scenario": GB300, "overrides": {"accelerator.rated_power": text}})
    assert resp.status_code == 422 and resp.json["errors"][0]["path"] == \
        "scenario.accelerator.rated_power"
    unit = text.partition(" ")[0]  # "9**9**9" as the unit of a quantity object
    resp = client.post(f"{API}/price", headers=viewer, json={"scenario": {
        **GB300, "accelerator": {"catalog": "gb300",
                                 "rated_power": {"value": 700, "unit": unit}}}})
    assert resp.status_code == 422 and resp.json["errors"][0]["path"] == \
        "scenario.accelerator.rated_power"


@pytest.mark.parametrize("text", ["9**9**9 W", "(700 W"])
def test_cli_set_is_one_line_and_exit_2(text):
    r = CliRunner().invoke(main, ["price", str(PUBLISHED / "deepseek-r1_gb300_peak.toml"),
                                  "--set", f'accelerator.rated_power="{text}"'])
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and "accelerator.rated_power" in r.stderr


def test_sensitivity_ranges_use_the_grammar_too(client, viewer):
    resp = client.post(f"{API}/sensitivity/tornado", headers=viewer, json={
        "scenario": {"scenario": GB300}, "ranges": {"electricity.price": "9**9**9..1 USD/kWh"}})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    resp = client.post(f"{API}/sensitivity/montecarlo", headers=viewer, json={
        "scenario": {"scenario": GB300},
        "distributions": {"electricity.price": "uniform(9**9**9 USD/kWh, 1 USD/kWh)"}})
    assert resp.status_code == 422, resp.get_data(as_text=True)
