"""Bad input: each kind gives ONE clear error naming the field, and nothing else happens.

Every case is checked twice: through the library (``build_scenario`` raises ``InputError``
whose ``.errors`` is a list of ``(field path, message)``) and through the command line
(``costmodel price FILE --set KEY=VALUE``: exit code 2, nothing on stdout, one line on stderr
starting ``costmodel: error:`` that names the field path).

The valid scenario every case starts from is the minimal one below; each case breaks exactly
one thing.
"""
from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel.app.build import build_scenario, load_scenario_file
from costmodel.cli import main
from costmodel.model.inputs import InputError
from costmodel.sources.scenario_file import parse_override

BASE = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
BASE_TOML = 'accelerator = "gb300"\noperating_point = "deepseek-r1/gb300/peak"\n'

NAN = float("nan")
INF = float("inf")


# -- helpers -------------------------------------------------------------------------------

def api_error(data=None, overrides=()) -> tuple[str, str]:
    """Build a scenario that must fail; return its single (path, message); check no mutation."""
    data = copy.deepcopy(BASE) if data is None else data
    before = copy.deepcopy(data)
    with pytest.raises(InputError) as info:
        build_scenario(data, overrides=list(overrides))
    assert data == before or _nan_equal(data, before), "build_scenario mutated its input"
    errors = info.value.errors
    assert len(errors) == 1, f"expected one error, got {errors}"
    path, message = errors[0]
    assert isinstance(message, str) and message.strip()
    return path, message


def _nan_equal(a, b) -> bool:
    # NaN != NaN, so compare the JSON texts of inputs that contain one.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def toml_literal(value) -> str:
    """The TOML spelling of a value, as a user would type it after ``--set key=``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for these plain ASCII values
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def run_cli(args: list[str]):
    # click >= 8.2 keeps stderr apart from stdout in the result.
    return CliRunner().invoke(main, args, catch_exceptions=False)


def cli_error(args: list[str], folder: Path | None = None) -> str:
    """Run the CLI expecting a usage error; return the single stderr line."""
    before = sorted(folder.iterdir()) if folder else None
    result = run_cli(args)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == "", f"stdout must be empty on error, got {result.stdout!r}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {result.stderr!r}"
    line = lines[0]
    assert line.startswith("costmodel: error: "), line
    assert "Traceback" not in result.stderr
    if folder is not None:
        assert sorted(folder.iterdir()) == before, "the command wrote files on error"
    return line


@pytest.fixture
def base_file(tmp_path: Path) -> Path:
    p = tmp_path / "scenario.toml"
    p.write_text(BASE_TOML, encoding="utf-8")
    return p


def test_base_scenario_is_valid(base_file):
    """The starting point of every case below prices without error."""
    loaded = build_scenario(copy.deepcopy(BASE))
    assert loaded.scenario.accelerator.rated_power == 1400.0  # GB300 package TDP, W
    result = run_cli(["price", str(base_file), "--json"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    json.loads(result.stdout)


# -- one bad value at one key: (id, key, value, expected path, fragments of the message) ------

VALUE_CASES = [
    # wrong dimension
    ("power-in-kg", "accelerator.rated_power", "5 kg", "accelerator.rated_power",
     ["power expected", "kilogram"]),
    ("power-in-kg-dict", "accelerator.rated_power", {"value": 5, "unit": "kg"},
     "accelerator.rated_power", ["power expected", "kilogram"]),
    ("price-in-watts", "electricity.price", "3 W", "electricity.price",
     ["expected", "USD/kWh", "watt"]),
    ("hosting-without-month", "facility.hosting", "100 USD/kW", "facility.hosting",
     ["expected", "USD/kW/month"]),
    ("isl-in-watts", "workload.isl", "8192 W", "workload.isl", ["token count expected", "watt"]),
    ("interactivity-without-user", "operating_point.interactivity", "169 token/s",
     "operating_point.interactivity", ["expected", "token/s/user"]),
    ("unknown-unit", "accelerator.rated_power", "700 Wats", "accelerator.rated_power",
     ["cannot read", "700 Wats"]),
    ("unknown-unit-dict", "accelerator.rated_power", {"value": 700, "unit": "Wats"},
     "accelerator.rated_power", ["unknown unit", "Wats"]),
    ("dict-without-unit", "accelerator.rated_power", {"value": 700},
     "accelerator.rated_power", ['"value" and "unit"']),
    # NaN and infinity
    ("nan", "accelerator.rated_power", "nan W", "accelerator.rated_power", ["NaN"]),
    ("nan-dict", "accelerator.rated_power", {"value": NAN, "unit": "W"},
     "accelerator.rated_power", ["NaN"]),
    ("nan-fraction", "utilisation", NAN, "utilisation", ["NaN"]),
    ("inf", "accelerator.rated_power", "inf W", "accelerator.rated_power", ["infinity"]),
    ("minus-inf", "accelerator.rated_power", "-inf W", "accelerator.rated_power",
     ["infinity"]),
    ("overflow-to-inf", "accelerator.rated_power", "1e400 W", "accelerator.rated_power",
     ["infinity"]),
    ("inf-dict", "electricity.price", {"value": INF, "unit": "USD/kWh"}, "electricity.price",
     ["infinity"]),
    ("inf-fraction", "utilisation", INF, "utilisation", ["infinity"]),
    # negatives
    ("negative-power", "accelerator.rated_power", "-700 W", "accelerator.rated_power",
     ["must not be negative", "-700"]),
    ("negative-price", "electricity.price", "-0.1 USD/kWh", "electricity.price",
     ["must not be negative"]),
    ("negative-salvage", "financing.salvage", -0.1, "financing.salvage",
     ["must not be negative", "-0.1"]),
    ("negative-cost-of-capital", "financing.cost_of_capital", -0.05,
     "financing.cost_of_capital", ["must not be negative"]),
    # out of range
    ("utilisation-above-1", "utilisation", 1.5, "utilisation", ["at most 1", "1.5"]),
    ("utilisation-150-percent", "utilisation", "150 %", "utilisation", ["at most 1", "1.5"]),
    ("idle-power-above-1", "idle_power", 2, "idle_power", ["at most 1"]),
    ("pue-below-1", "facility.pue", 0.9, "facility.pue", ["at least 1", "0.9"]),
    ("gross-margin-of-1", "pricing.gross_margin", 1, "pricing.gross_margin", ["below 1"]),
    # zero where only positive makes sense
    ("zero-throughput", "operating_point.throughput", "0 token/s",
     "operating_point.throughput", ["greater than zero"]),
    ("zero-throughput-per-kw", "operating_point.throughput_per_kw", "0 token/s/kW",
     "operating_point.throughput_per_kw", ["greater than zero"]),
    ("zero-power", "accelerator.rated_power", "0 W", "accelerator.rated_power",
     ["greater than zero"]),
    ("zero-utilisation", "utilisation", 0, "utilisation", ["greater than zero"]),
    ("zero-life", "financing.life", "0 year", "financing.life", ["greater than zero"]),
    ("zero-accelerators-per-node", "node.accelerators", 0, "node.accelerators",
     ["must be at least 1"]),
    # a number without its unit, a boolean for a number
    ("bare-number-power", "accelerator.rated_power", 700, "accelerator.rated_power",
     ["a unit is required"]),
    ("bare-number-life", "financing.life", 5, "financing.life", ["a unit is required"]),
    ("string-without-unit", "accelerator.rated_power", "700", "accelerator.rated_power",
     ["no unit"]),
    ("bool-fraction", "utilisation", True, "utilisation", ["boolean"]),
    ("bool-quantity", "accelerator.rated_power", True, "accelerator.rated_power",
     ["boolean"]),
    ("bool-in-dict", "accelerator.rated_power", {"value": True, "unit": "W"},
     "accelerator.rated_power", ['"value" must be a number', "bool"]),
    ("bool-count", "node.accelerators", True, "node.accelerators", ["whole number"]),
    # enums
    ("bad-boundary", "power.boundary", "wall", "power.boundary",
     ["'wall'", "'chip'", "'node'", "'rack'", "'facility'"]),
    ("bad-basis", "power.basis", "metered", "power.basis", ["'metered'", "'rated'",
                                                           "'measured'"]),
    ("bad-token-kind", "operating_point.token_kind", "both", "operating_point.token_kind",
     ["'both'", "'mixed'"]),
    # cross-field rules
    ("measured-basis-without-measured-power", "power.basis", "measured",
     "accelerator.measured_power", ["required", "measured"]),
    # the catalog point already gives throughput_per_kw, so this gives both
    ("throughput-and-throughput-per-kw", "operating_point.throughput", "16000 token/s",
     "operating_point.throughput", ["exactly one", "throughput_per_kw"]),
]

VALUE_IDS = [c[0] for c in VALUE_CASES]


@pytest.mark.parametrize("case_id,key,value,path,fragments", VALUE_CASES, ids=VALUE_IDS)
def test_bad_value_api(case_id, key, value, path, fragments):
    got_path, message = api_error(overrides=[(key, value)])
    assert got_path == path, message
    for f in fragments:
        assert f in message, f"{f!r} not in {message!r}"


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
@pytest.mark.parametrize("case_id,key,value,path,fragments", VALUE_CASES, ids=VALUE_IDS)
def test_bad_value_cli_set(case_id, key, value, path, fragments, as_json, base_file):
    args = ["price", str(base_file), "--set", f"{key}={toml_literal(value)}"]
    line = cli_error(args + (["--json"] if as_json else []), base_file.parent)
    assert f"{path}: " in line
    for f in fragments:
        assert f in line, f"{f!r} not in {line!r}"


def _nested(key: str, value) -> dict:
    """BASE in table form (catalog references kept) with one dotted key set inside it."""
    data = {"accelerator": {"catalog": "gb300"},
            "operating_point": {"catalog": "deepseek-r1/gb300/peak"}}
    node = data
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return data


@pytest.mark.parametrize("case_id,key,value,path,fragments", VALUE_CASES, ids=VALUE_IDS)
def test_bad_value_in_file(case_id, key, value, path, fragments, tmp_path):
    """The same bad value written inside the file's table (JSON, which can hold NaN/inf)."""
    data = _nested(key, value)
    got_path, message = api_error(data)
    assert got_path == path, message
    f = tmp_path / "scenario.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    line = cli_error(["price", str(f), "--json"], tmp_path)
    assert f"{path}: " in line
    for frag in fragments:
        assert frag in line, f"{frag!r} not in {line!r}"


def test_wrong_dimension_message_in_full():
    """The case from the brief, message pinned: it names the expected dimension and the unit."""
    path, message = api_error(overrides=[("accelerator.rated_power", "5 kg")])
    assert path == "accelerator.rated_power"
    assert message == "power expected (e.g. 'W'), got kilogram"


def test_hosting_given_as_energy_price_is_rejected():
    path, message = api_error(overrides=[("facility.hosting", "100 USD/kWh")])
    assert path == "facility.hosting"
    assert "USD/kW/month" in message


def test_electricity_price_given_per_kw_month_is_rejected():
    # same dimension as USD/kWh, but a capacity rate: the unit must divide by an energy
    path, message = api_error(overrides=[("electricity.price", "0.1 USD/kW/month")])
    assert path == "electricity.price"
    assert "per energy" in message and "USD/kWh" in message


def test_hosting_per_kw_year_is_accepted():
    # 1,800 USD/kW/year is 150 USD/kW/month: any power and time units may be used
    from conftest import price_data
    r = price_data(BASE, [("facility.hosting", "1800 USD/kW/year")])
    assert r.scenario.facility.hosting == pytest.approx(150.0)


def test_memory_bandwidth_given_as_frequency_is_rejected():
    path, message = api_error(overrides=[("accelerator.memory_bandwidth", "5 Hz")])
    assert path == "accelerator.memory_bandwidth"
    assert message == "bandwidth expected (e.g. 'TB/s'), got hertz"


def test_memory_given_as_percentage_is_rejected():
    path, message = api_error(overrides=[("accelerator.memory", "50 %")])
    assert path == "accelerator.memory"
    assert message.startswith("data size expected")


# -- throughput given twice or not at all -----------------------------------------------------

@pytest.mark.parametrize("operating_point", [
    {"throughput": "16000 token/s", "throughput_per_kw": "11781 token/s/kW"},
    {"interactivity": "169 token/s/user"},
    {},
], ids=["both", "neither", "empty-table"])
def test_throughput_exactly_one(operating_point, tmp_path):
    data = {"accelerator": "gb300", "operating_point": operating_point}
    path, message = api_error(data)
    assert path == "operating_point.throughput"
    assert "exactly one" in message and "throughput_per_kw" in message
    f = tmp_path / "scenario.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    line = cli_error(["price", str(f), "--json"], tmp_path)
    assert "operating_point.throughput: " in line and "exactly one" in line


# -- catalog names ----------------------------------------------------------------------------

@pytest.mark.parametrize("section,name,known", [
    ("accelerator", "gb301", ["gb300", "jalapeno", "h100"]),
    ("operating_point", "deepseek-r1/gb301/peak", ["deepseek-r1/gb300/peak"]),
    ("electricity", "eia-2099", ["eia-2026-05-us-industrial"]),
])
def test_unknown_catalog_name(section, name, known, tmp_path):
    data = {**BASE, section: name}
    path, message = api_error(data)
    assert path == section
    assert f"unknown catalog entry {name!r}" in message
    assert "known:" in message
    for k in known:
        assert k in message
    f = tmp_path / "scenario.toml"
    f.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in data.items()) + "\n",
                 encoding="utf-8")
    line = cli_error(["price", str(f), "--json"], tmp_path)
    # the file and the line the reference is written on
    assert line.startswith(f"costmodel: error: {f} line {list(data).index(section) + 1}: "
                           f"{section}: unknown catalog entry")
    for k in known:
        assert k in line


def test_unknown_catalog_name_in_table_form():
    data = {**BASE, "accelerator": {"catalog": "gb301", "price": "1 USD"}}
    path, message = api_error(data)
    assert path == "accelerator" and "gb300" in message


def test_catalog_reference_must_be_a_string():
    data = {**BASE, "accelerator": {"catalog": 5}}
    path, message = api_error(data)
    assert path == "accelerator.catalog"
    assert "string" in message


def test_unknown_catalog_name_via_set(base_file):
    path, message = api_error(overrides=[("accelerator", "gb301")])
    assert path == "accelerator"
    assert "unknown catalog entry" in message and "gb300" in message
    line = cli_error(["price", str(base_file), "--set", "accelerator=gb301"])
    assert "gb300" in line


def test_catalog_name_via_set_replaces_the_section(base_file):
    # --set accelerator=h100 swaps the whole accelerator for the catalog's H100 (700 W rated)
    from conftest import price_file
    r = price_file(base_file, ["accelerator=h100"])
    assert r.scenario.accelerator.rated_power == 700
    assert r.disclosure()["sources"]["accelerator.rated_power"].startswith(
        "catalog accelerator 'h100'")


# -- unknown keys -----------------------------------------------------------------------------

@pytest.mark.parametrize("key,value,hint", [
    ("accelerator.tdp", "700W", ""),  # no key of the accelerator is close
    ("nosuch", "1", ""),
    ("power.boundary.x", "1", "; did you mean power.boundary?"),  # below a leaf
    ("utilisation.x", "1", "; did you mean utilisation?"),
    ("facility.PUE", "1.2", "; did you mean facility.pue?"),  # keys are case-sensitive
], ids=["accelerator.tdp", "nosuch", "below-enum", "below-fraction", "wrong-case"])
def test_unknown_set_key(key, value, hint, base_file):
    path, message = api_error(overrides=[parse_override(f"{key}={value}")])
    assert path == key
    assert message == "unknown key in --set"
    line = cli_error(["price", str(base_file), "--set", f"{key}={value}", "--json"],
                     base_file.parent)
    assert line == f"costmodel: error: --set {key}: unknown key{hint}"


@pytest.mark.parametrize("text", ["facility", "set", "=1.2", " = 1.2"],
                         ids=["no-equals-section", "no-equals-word", "empty-key",
                              "blank-key"])
def test_malformed_set(text, base_file):
    with pytest.raises(InputError) as info:
        parse_override(text)
    assert len(info.value.errors) == 1
    path, message = info.value.errors[0]
    assert path == "--set"
    assert "expected dotted.key=VALUE" in message and repr(text) in message
    for as_json in ([], ["--json"]):
        line = cli_error(["price", str(base_file), "--set", text, *as_json], base_file.parent)
        assert line.startswith("costmodel: error: --set: expected dotted.key=VALUE")


@pytest.mark.parametrize("toml_text,path,where", [
    (BASE_TOML + "[facility]\npue = 1.2\nbogus = 1\n", "facility.bogus", "line 5"),
    (BASE_TOML + "bogus = 1\n", "bogus", "line 3"),
    ('operating_point = "deepseek-r1/gb300/peak"\n'
     '[accelerator]\ncatalog = "gb300"\ntdp = "700 W"\n', "accelerator.tdp", "line 4"),
    (BASE_TOML + "[power]\nboundary = \"chip\"\nbase = \"rated\"\n", "power.base",
     "line 5"),
], ids=["facility.bogus", "top-level", "catalog-table", "power.base"])
def test_unknown_key_in_file(toml_text, path, where, tmp_path):
    import tomllib
    data = tomllib.loads(toml_text)
    got_path, message = api_error(data)
    assert (got_path, message) == (path, "unknown key")
    f = tmp_path / "scenario.toml"
    f.write_text(toml_text, encoding="utf-8")
    hint = "; did you mean basis?" if path == "power.base" else ""
    for as_json in ([], ["--json"]):
        line = cli_error(["price", str(f), *as_json], tmp_path)
        assert line == f"costmodel: error: {f} {where}: {path}: unknown key{hint}"


def test_section_given_as_plain_value():
    path, message = api_error({**BASE, "facility": 5})
    assert path == "facility"
    assert "must be a table" in message


def test_missing_required_section():
    path, message = api_error({"operating_point": "deepseek-r1/gb300/peak"})
    assert (path, message) == ("accelerator", "required")


# -- files that cannot be read ----------------------------------------------------------------

def _file_error(f: Path) -> tuple[str, str]:
    with pytest.raises(InputError) as info:
        load_scenario_file(f)
    assert len(info.value.errors) == 1
    return info.value.errors[0]


@pytest.mark.parametrize("name,content,fragments", [
    ("bad.toml", BASE_TOML + "utilisation = \n", ["malformed TOML", "line 3"]),
    ("bad.toml", BASE_TOML + "[power\nboundary = \"chip\"\n", ["malformed TOML"]),
    ("dup.toml", BASE_TOML + 'accelerator = "h100"\n', ["malformed TOML"]),  # key twice
    ("bad.json", '{"accelerator": "gb300",}', ["malformed JSON", "line 1"]),
    ("bad.json", '{"accelerator": "gb300"', ["malformed JSON"]),
    ("list.json", "[1, 2]", ["must be a table/object"]),
], ids=["toml-missing-value", "toml-unclosed-table", "toml-duplicate-key", "json-trailing-comma",
        "json-truncated", "json-not-an-object"])
def test_malformed_file(name, content, fragments, tmp_path):
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    path, message = _file_error(f)
    assert path == ""
    assert name in message  # the file stands in for the field path
    for frag in fragments:
        assert frag in message
    for as_json in ([], ["--json"]):
        line = cli_error(["price", str(f), *as_json], tmp_path)
        assert name in line
        for frag in fragments:
            assert frag in line


def test_missing_file(tmp_path):
    f = tmp_path / "nosuch.toml"
    _, message = _file_error(f)
    assert "cannot read" in message and "nosuch.toml" in message
    for as_json in ([], ["--json"]):
        line = cli_error(["price", str(f), *as_json], tmp_path)
        assert "cannot read" in line and "nosuch.toml" in line
    assert not f.exists()


def test_non_utf8_file(tmp_path):
    f = tmp_path / "latin1.toml"
    f.write_bytes(BASE_TOML.encode() + 'name = "Jalapeño"\n'.encode("latin-1"))
    _, message = _file_error(f)
    assert "latin1.toml" in message and "not UTF-8" in message
    for as_json in ([], ["--json"]):
        line = cli_error(["price", str(f), *as_json], tmp_path)
        assert "latin1.toml" in line and "not UTF-8" in line


def test_directory_instead_of_file(tmp_path):
    d = tmp_path / "scenarios"
    d.mkdir()
    for as_json in ([], ["--json"]):
        line = cli_error(["price", str(d), *as_json], tmp_path)
        assert "scenarios" in line and "cannot read" in line


def test_compare_with_one_bad_file(base_file, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE_TOML + "[facility]\npue = 0.9\n", encoding="utf-8")
    line = cli_error(["compare", str(base_file), str(bad), "--json"], tmp_path)
    assert "bad.toml" in line and "facility.pue: must be at least 1" in line


# -- the real console script: exit status through the process boundary ------------------------

def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("costmodel")
    return [str(script)] if script.exists() else [sys.executable, "-m", "costmodel.cli"]


@pytest.mark.parametrize("extra,path", [
    (["--set", "accelerator.rated_power=5 kg"], "accelerator.rated_power"),
    (["--set", "operating_point.throughput=0 token/s"], "operating_point.throughput"),
    (["--set", "nosuch=1"], "nosuch"),
])
def test_console_script_exit_code(extra, path, base_file):
    proc = subprocess.run([*_console_script(), "price", str(base_file), "--json", *extra],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"costmodel: error: --set {path}: ")
