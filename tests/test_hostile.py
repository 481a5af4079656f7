"""Hostile input, replayed row by row from the hardening issue: each gets a clear 4xx (or a
one-line CLI error), fast by construction, and nothing is stored.

Rows covered here: 1 (a quantity that pint would evaluate: "9**9**9 W"), 6 (pint parser
errors that escaped as 500), 7 and 9 (control characters and NUL in names and titles), 11
(catalog entries validated as deeply as scenarios), 12 (a cost that overflows is refused,
never saved), 15 (a chunked body over the limit is a 413; long names); 10 (loopback decided
by resolving the address) is in tests/cli/test_service_cli.py. Quantities are read by
costmodel's own grammar (costmodel.model.units), never by pint's expression evaluator, at every
entry: API bodies, scenario files and --set, sensitivity ranges and distributions, workbook
cells, curve files.
"""
from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from conftest import PUBLISHED, auth

from costmodel.cli import main
from costmodel.model.units import (
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


# ---- rows 7 and 9: names and titles -----------------------------------------------------------

def _scenario_count(client, viewer) -> int:
    return client.get(f"{API}/scenarios?limit=1", headers=viewer).json["total"]


@pytest.mark.parametrize("name,why", [
    ("a\u0001b", "control characters"), ("x\u0000y", "NUL"), ("x" * 201, "200"),
    ("a\u009bb", "control characters")])
def test_names_with_control_characters_are_refused_and_nothing_is_stored(
        client, tokens, name, why):
    editor, viewer = auth(tokens["editor"]), auth(tokens["viewer"])
    before = _scenario_count(client, viewer)
    resp = client.post(f"{API}/scenarios", headers=editor,
                       json={"name": name, "scenario": GB300})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert why in resp.json["detail"]
    assert resp.json["errors"][0]["path"] == "name"
    # the same text as the scenario's own name, inside the stored data (its limit: 2,000)
    inner = "x" * 2001 if why == "200" else name
    resp = client.post(f"{API}/scenarios", headers=editor,
                       json={"name": "ok", "scenario": {**GB300, "name": inner}})
    assert resp.status_code == 422
    assert resp.json["errors"][0]["path"] == "scenario.name"
    assert _scenario_count(client, viewer) == before


def test_workbook_title_and_key_names_refuse_control_characters(client, tokens):
    resp = client.post(f"{API}/workbook", headers=auth(tokens["viewer"]),
                       json={"scenarios": [{"scenario": GB300}], "title": "t\u0007"})
    assert resp.status_code == 422 and resp.json["errors"][0]["path"] == "title"
    resp = client.post(f"{API}/keys", headers=auth(tokens["admin"]),
                       json={"name": "k\u0000", "role": "viewer"})
    assert resp.status_code == 422


def test_nul_anywhere_in_a_body_is_refused_with_its_path(client, tokens):
    resp = client.post(f"{API}/price", headers=auth(tokens["viewer"]),
                       json={"scenario": GB300, "overrides": {"workload.model": "a\u0000"}})
    assert resp.status_code == 422
    assert resp.json["errors"][0]["path"] == "overrides.workload.model"


def test_tabs_and_newlines_stay_allowed_in_descriptions(client, tokens):
    resp = client.post(f"{API}/price", headers=auth(tokens["viewer"]),
                       json={"scenario": {**GB300, "description": "line 1\n\tline 2"}})
    assert resp.status_code == 200, resp.get_data(as_text=True)


# ---- row 11: catalog entries validated before they are stored ---------------------------------

@pytest.mark.parametrize("workload,path", [
    ({"isl": "nan", "foo": "x"}, "data.workload."),
    ({"isl": "8192 W"}, "data.workload.isl"),
    ({"precision": "fp8\u0001"}, "data.workload.precision"),
])
def test_catalog_operating_point_workload_is_validated(client, tokens, workload, path):
    key = f"hostile-{abs(hash(str(workload))) % 10**8}"
    resp = client.post(f"{API}/operating-points", headers=auth(tokens["editor"]), json={
        "key": key, "data": {"throughput": "100 token/s", "workload": workload}})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert resp.json["errors"][0]["path"].startswith(path)
    assert client.get(f"{API}/operating-points/{key}",
                      headers=auth(tokens["viewer"])).status_code == 404


# ---- row 12: overflow ---------------------------------------------------------------------------

@pytest.mark.parametrize("override,path,why", [
    # (a throughput this small is now refused by its field's bound: issue 22, section 6)
    ({"operating_point.throughput": "1e-308 token/s"}, "scenario.operating_point.throughput",
     "at least 1e-06"),
    ({"electricity.price": "1e308 USD/kWh"}, "scenario.electricity.price", "overflows"),
])
def test_a_cost_that_overflows_is_refused_and_never_saved(client, tokens, override, path, why):
    viewer, editor = auth(tokens["viewer"]), auth(tokens["editor"])
    scenario = {"accelerator": "gb300", "operating_point": {"throughput": "1000 token/s"}}
    resp = client.post(f"{API}/price", headers=viewer,
                       json={"scenario": scenario, "overrides": override})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert resp.json["errors"][0]["path"] == path
    assert why in resp.json["detail"]
    key, value = next(iter(override.items()))
    section, field = key.split(".")
    saved = {**scenario, section: {**scenario.get(section, {}), field: value}} \
        if isinstance(scenario.get(section), dict) else {**scenario, section: {field: value}}
    before = _scenario_count(client, viewer)
    resp = client.post(f"{API}/scenarios", headers=editor, json={"name": "x", "scenario": saved})
    assert resp.status_code == 422
    assert _scenario_count(client, viewer) == before


# ---- row 15: words and limits -------------------------------------------------------------------

def test_a_chunked_body_over_the_limit_is_413_not_400(app, client, tokens):
    limit = app.config["MAX_CONTENT_LENGTH"]
    body = b'{"scenario": {"name": "' + b"x" * (limit + 10) + b'"}}'

    # no Content-Length: the server de-chunks the body and the app counts what it reads
    resp = client.post(f"{API}/price", headers={**auth(tokens["viewer"]),
                                                "Transfer-Encoding": "chunked"},
                       input_stream=io.BytesIO(body), content_type="application/json")
    assert resp.status_code == 413, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    assert f"{limit // 2**20} MiB" in resp.json["detail"]


# ---- row 4: curves parsed once per worker; uploads bounded ---------------------------------------

CURVE_HEADER = ("hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,"
                "concurrency,interactivity [token/s/user],throughput [token/s],source")


def _curve_csv(hardware: str, n: int) -> str:
    rows = [f"{hardware},hostile-model,vllm,fp8,1024,1024,none,false,{i + 1},"
            f"{1000 / (i + 1):.6f},{100 + i},test" for i in range(n)]
    return "\n".join([CURVE_HEADER, *rows])


def test_adding_a_curve_parses_only_the_new_one(app, client, tokens):
    services = app.extensions["costmodel"]
    _, before = services.curves(None, fresh=True)
    old_id = before.ids()[0]
    new = f"h-{abs(hash(old_id)) % 10**8}"
    resp = client.post(f"{API}/curves", headers=auth(tokens["editor"]),
                       json={"content": _curve_csv(new, 3)})
    assert resp.status_code == 201, resp.get_data(as_text=True)
    _, after = services.curves(None, fresh=True)
    assert len(after) == len(before) + 1
    assert after.get(old_id)[0] is before.get(old_id)[0]  # the same object: not parsed again
    assert len(after.get(resp.json["items"][0]["curve_id"])[0]) == 3


def test_curve_uploads_are_bounded_before_parsing(client, tokens):
    from costmodel.api.schemas import MAX_CURVE_POINTS, MAX_UPLOAD_POINTS
    resp = client.post(f"{API}/curves", headers=auth(tokens["editor"]),
                       json={"content": _curve_csv("too-long", MAX_CURVE_POINTS + 1)})
    assert resp.status_code == 422 and f"{MAX_CURVE_POINTS:,} a curve" in resp.json["detail"]
    rows = "\n".join(f"hw{i % 40},m,vllm,fp8,1,1,none,false,{i},1,1,x"
                     for i in range(MAX_UPLOAD_POINTS + 1))
    resp = client.post(f"{API}/curves", headers=auth(tokens["editor"]),
                       json={"content": CURVE_HEADER + "\n" + rows})
    assert resp.status_code == 422 and "an upload" in resp.json["detail"]
