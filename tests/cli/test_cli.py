"""The ``costmodel`` command: price, compare, catalog, steps.

Every expected number is hand arithmetic from published figures and the documented defaults,
written out below; none is pasted from a run of the code. The text output is checked against
the engine's values (hand-derived or from ``--json``) rounded by ``costmodel.render.display``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel.cli import main
from costmodel.render.display import format_number, format_ratio

ROOT = Path(__file__).resolve().parents[2]
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

# Facility power per accelerator from the defaults in costmodel/model/inputs.py:
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


def flat(text: str) -> str:
    """The text with every run of spaces and line breaks as one space: wrapped lines and
    aligned columns read as sentences."""
    return " ".join(text.split())


def line_of(text: str, start: str) -> str:
    """The first line that starts with ``start`` once indented."""
    return next(x for x in text.splitlines() if x.strip().startswith(start))


def test_price_table_output():
    out = run(["price", GB300_PEAK]).stdout
    total = price_json(GB300_PEAK)["cost_per_mtok"]["total"]["value"]
    lines = out.splitlines()
    # the answer comes first and is marked; the breakdown follows
    answer = [x for x in lines if x.startswith("=> ")]
    assert [x.split("  ")[0] for x in answer] == [
        "=> Cost per million tokens", "=> Price per million tokens",
        "=> Price per million input tokens", "=> Price per million output tokens"]
    assert lines.index(answer[0]) < lines.index(line_of(out, "Energy cost per million tokens"))
    # the cost as display rounds it: 4 decimals below 1 USD/Mtok, in words with its unit
    assert flat(answer[0]) == f"=> Cost per million tokens {format_number(total, 'USD/Mtok')} " \
                              f"USD per million tokens"
    # the energy line: 0.0871 / 42,411,600 x 1e6 = 0.00205368... USD/Mtok: 6 decimals below
    # 0.01 USD/Mtok, and its share of the total cost as a percentage
    assert format_number(ENERGY_PER_MTOK, "USD/Mtok") == "0.002054"
    assert flat(line_of(out, "Energy cost per million tokens")) == (
        f"Energy cost per million tokens 0.002054 USD per million tokens "
        f"{ENERGY_PER_MTOK / total:.1%} of cost")
    assert f"{ENERGY_PER_MTOK:.8f}".rstrip("0") not in out  # no six significant figures
    # labels in words, the disclosure in plain words, fractions as percentages
    assert "cost per mtok" not in out and "1/year" not in out
    assert "Power counted at the chip boundary (the accelerator package alone), from rated " \
           "(TDP) power" in flat(out)
    assert "Utilisation 100.0% of hours serving; idle power 30.0% of operating power" in flat(out)
    assert "cost of capital 10.0% a year, salvage 10.0% of capex, maintenance 3.0% of capex " \
           "a year" in flat(out)
    assert max(map(len, lines)) <= 120
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_price_table_of_the_sample_scenario():
    from costmodel import app
    sample = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
    result = app.price(app.LocalContext(), app.ScenarioSpec(app.FileScenario(sample))).result
    out = run(["price", sample]).stdout
    for name, words in [("cost_per_mtok_total", "Cost per million tokens"),
                        ("price_per_mtok_input", "Price per million input tokens"),
                        ("price_per_mtok_output", "Price per million output tokens")]:
        shown = format_number(result.value(name), "USD/Mtok", name)
        assert flat(line_of(out, f"=> {words} ")) == \
            f"=> {words} {shown} USD per million tokens"
    # between 0.01 and 1 USD/Mtok a cost is shown to 4 decimals (not 6 significant figures)
    total = result.value("cost_per_mtok_total")
    assert 0.01 <= total < 1
    assert format_number(total, "USD/Mtok") == f"{total:.4f}"
    assert f"{total:.6g}" not in out
    # whole money with thousands separators; power in watts
    capex = format_number(result.value("capex_per_accelerator"), "USD")
    assert capex == f"{result.value('capex_per_accelerator'):,.0f}"
    assert flat(line_of(out, "Capital cost per accelerator")) == \
        f"Capital cost per accelerator {capex} USD"
    assert "Utilisation 70.0% of hours serving" in flat(out)


def test_price_table_output_follows_set():
    out = flat(run(["price", GB300_PEAK, "--set", "power.boundary=facility"]).stdout)
    assert "at the facility boundary" in out
    assert "at the chip boundary" not in out
    assert f"Power {format_number(FACILITY_W, 'W')} watts per accelerator" in out


def test_every_headline_figure_is_in_one_section():
    from costmodel.model.results import HEADLINE
    from costmodel.render.report import SECTIONS
    shown = [n for _, names in SECTIONS for n in names]
    assert sorted(shown) == sorted(HEADLINE) and len(shown) == len(set(shown))


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
    d = json.loads(run(["compare", GB300_MATCHED, JALAPENO_MATCHED, "--json"]).stdout)
    # 12,258 / 118 = 103.8813...: two decimals at this size
    assert format_ratio(MATCHED_RATIO) == "103.88x"
    assert line_of(out, "Throughput per kW").endswith(" 103.88x")
    # the cost ratio is below 0.1x: three decimals
    costs = [s["cost_per_mtok"]["total"]["value"] for s in d["scenarios"]]
    cost = costs[1] / costs[0]
    assert format_ratio(cost) == f"{cost:.3f}x" and cost < 0.1
    assert line_of(out, "=> Cost per million tokens").endswith(f" {cost:.3f}x")
    assert "[1] deepseek-r1 gb300 matched (NVIDIA GB300" in out
    assert "[2] deepseek-r1 jalapeno matched (OpenAI Jalape" in out


DEEPSEEK = sorted(PUBLISHED.glob("deepseek-r1_*.toml"))


def test_compare_four_systems_fits_120_columns_and_says_shared_things_once():
    assert len(DEEPSEEK) == 4
    out = run(["compare", *DEEPSEEK]).stdout
    d = json.loads(run(["compare", *DEEPSEEK, "--json"]).stdout)
    assert max(len(x) for x in out.splitlines()) <= 120
    # systems as columns, ratios to [1] after them
    header = next(x for x in out.splitlines() if "[2]/[1]" in x)
    assert header.split() == ["[1]", "[2]", "[3]", "[4]", "[2]/[1]", "[3]/[1]", "[4]/[1]"]
    cost = line_of(out, "=> Cost per million tokens").split()
    costs = [s["cost_per_mtok"]["total"]["value"] for s in d["scenarios"]]
    values = [format_number(x, "USD/Mtok") for x in costs]
    ratios = [format_ratio(x / costs[0]) for x in costs[1:]]
    assert cost[-7:] == values + ratios
    # GB300 peak over matched: 11,781 / 118 token/s/kW more throughput, so 118/11,781 the cost
    assert ratios[0] == format_ratio(118 / 11781) == "0.010x"
    # what every system shares is said once; what differs, once per system
    assert out.count("Electricity ") == 1 and out.count("Defaults used") == 1
    assert out.count("Financing ") == 1 and out.count("DeepSeek R1 670B") == 1
    assert out.count("cost of capital 10.0% a year") == 1
    assert out.count("Operating point ") == 4
    assert "published point 'deepseek-r1/jalapeno/peak'" in out
    assert "1/year" not in out and "0.0100161x" not in out


def test_compare_six_systems_as_rows():
    files = [*DEEPSEEK, PUBLISHED / "gpt-oss-120b_gb200_peak.toml",
             PUBLISHED / "kimi-k2.5_jalapeno_matched.toml"]
    out = run(["compare", *files]).stdout
    d = json.loads(run(["compare", *files, "--json"]).stdout)
    assert max(len(x) for x in out.splitlines()) <= 120
    # systems as rows: [6] starts a row with its value and its ratio to [1]
    costs = [s["cost_per_mtok"]["total"]["value"] for s in d["scenarios"]]
    ratio = costs[5] / costs[0]
    cost = format_number(costs[5], "USD/Mtok")
    assert line_of(out, "[6]  ").split()[1:3] == [cost, f"({format_ratio(ratio)})"]
    assert out.count("Electricity ") == 1


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
