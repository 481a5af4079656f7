"""Emissions in the workbook: live formulas on the model's sheets that LibreOffice recalculates
to the engine's grams, before and after a factor or a footprint is edited in the file; an
hourly factor's block on the Tariff sheet weighed by the load shape like the tariff's rates.

Skipped where LibreOffice is not installed, unless COSTMODEL_REQUIRE_LIBREOFFICE is set."""
from __future__ import annotations

import pytest
from conftest import require_libreoffice, workbook_systems
from openpyxl import load_workbook
from test_workbook_recalc import _assert_matches_engine

from costmodel.render.workbook.export import build_workbook, save_workbook
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import recalculate

pytestmark = pytest.mark.libreoffice

require_libreoffice()

HOURLY = "[" + ", ".join(["100"] * 12 + ["300"] * 12) + "]"
SCENARIO = f"""
name = "emissions"
utilisation = 0.5
idle_power = 0.2
[accelerator]
rated_power = "1000 W"
price = "30000 USD"
embodied = {{ value = 1500, unit = "kgCO2e", source = "illustrative assumption" }}
[node]
embodied = "2400 kgCO2e"
[operating_point]
throughput = "1000 token/s"
[electricity]
price = "0.1 USD/kWh"
carbon_hourly = {{ value = {HOURLY}, unit = "gCO2e/kWh" }}
market_carbon = "illustrative-supplier-factor"
[load]
hourly = [{", ".join(["0"] * 12 + ["1"] * 12)}]
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("emissions")
    path = folder / "emissions.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    systems, _ = workbook_systems([path])
    return save_workbook(build_workbook(systems), folder / "emissions.xlsx"), path, systems


def test_the_hand_derived_grams_are_the_engines(exported):
    _, _, systems = exported
    v = systems[0].result.values
    # 0.6 kWh an hour at (12 x 0.2 x 100 + 12 x 300) / 14.4 = 266.67 g/kWh, over 1.8 Mtok
    assert v["emissions_per_mtok"] == pytest.approx(0.6 * 3840 / 14.4 / 1.8)  # 88.89
    assert v["emissions_market_per_mtok"] == pytest.approx(0.6 * 250 / 1.8)  # 83.33
    embodied = (1.5e6 + 2.4e6 / 8) / (5 * 8760) / 1.8  # 22.83
    assert v["embodied_per_mtok"] == pytest.approx(embodied)
    assert v["emissions_market_total_per_mtok"] == pytest.approx(0.6 * 250 / 1.8 + embodied)


def test_recalculated_the_grams_are_the_engines(exported, tmp_path):
    path, _, systems = exported
    recalculated = recalculate(path, tmp_path)
    _assert_matches_engine(recalculated, [s.result for s in systems])
    out = load_workbook(recalculated, data_only=True)
    assert named_cells(out, "emissions_per_mtok")[0].value == pytest.approx(88.888888889)


def test_an_edited_factor_and_footprint_recalculate_to_the_engine(exported, tmp_path):
    path, scenario, _ = exported
    wb = load_workbook(path)
    named_cells(wb, "electricity_market_carbon_intensity")[0].value = 120
    named_cells(wb, "accelerator_embodied")[0].value = 3e6
    wb.save(tmp_path / "edited.xlsx")
    recalculated = recalculate(tmp_path / "edited.xlsx", tmp_path / "out")
    want, _ = workbook_systems([scenario], overrides=[
        "electricity.market_carbon_intensity=120 gCO2e/kWh", "accelerator.embodied=3e6 gCO2e"])
    _assert_matches_engine(recalculated, [w.result for w in want])
    out = load_workbook(recalculated, data_only=True)
    embodied = (3e6 + 2.4e6 / 8) / (5 * 8760) / 1.8
    assert named_cells(out, "emissions_market_total_per_mtok")[0].value == pytest.approx(
        0.6 * 120 / 1.8 + embodied)


# ---- an edited hourly block, read back by reprice ------------------------------------------------

def _edit_hours(path, out, name, hours, value):
    wb = load_workbook(path)
    cells = named_cells(wb, name)
    for h in hours:
        cells[h].value = value
    wb.save(out)
    return out


def test_reprice_reads_back_an_edited_hourly_factor(exported, tmp_path):
    import json

    from click.testing import CliRunner

    from costmodel import app
    from costmodel.cli import main
    path, scenario, _ = exported
    # 12:00-18:00 at 500 g/kWh instead of 300: the factor per kWh drawn is
    # (12 x 0.2 x 100 + 6 x 500 + 6 x 300) / 14.4 = 350 g/kWh; 0.6 kWh x 350 / 1.8 Mtok
    edited = _edit_hours(path, tmp_path / "edited.xlsx", "electricity_carbon_hourly",
                         range(12, 18), 500)
    read = app.reprice(edited, name="edited.xlsx")
    (result,) = read.results
    e = result.scenario.electricity
    assert e.carbon_hourly == [100.0] * 12 + [500.0] * 6 + [300.0] * 6
    assert result.values["grid_factor_location"] == pytest.approx(350)
    assert result.values["emissions_per_mtok"] == pytest.approx(0.6 * 350 / 1.8)  # 116.67
    # the market factor (a catalog entry) was not edited: as exported, its citation kept
    assert result.values["emissions_market_per_mtok"] == pytest.approx(0.6 * 250 / 1.8)
    assert "illustrative" in e.market_carbon_source
    # the edited factor cites the cells it was read from, not what it was exported with
    assert e.carbon_source.startswith("edited in workbook edited.xlsx, cells Tariff!")
    assert result.provenance["electricity.carbon_hourly"] == e.carbon_source
    # the engine given those hours by hand says the same, to the last bit
    hours = "[" + ", ".join(["100"] * 12 + ["500"] * 6 + ["300"] * 6) + "]"
    want, _ = workbook_systems([scenario], overrides=[
        f"electricity.carbon_hourly={{ value = {hours}, unit = \"gCO2e/kWh\" }}"])
    for name in ("emissions_per_mtok", "emissions_total_per_mtok", "grid_factor_location"):
        assert result.values[name] == want[0].result.values[name], name
    # and LibreOffice, recalculating the edited file, shows it
    out = load_workbook(recalculate(edited, tmp_path / "out"), data_only=True)
    assert named_cells(out, "emissions_per_mtok")[0].value == pytest.approx(0.6 * 350 / 1.8)
    # the command line: the edited figure beside the exported one
    r = CliRunner().invoke(main, ["reprice", str(edited), "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    answer = json.loads(r.stdout)
    assert json.dumps(answer).count("116.66666") >= 1


def test_a_factor_by_hour_has_one_day_on_a_weekend_block(tmp_path):
    """A load with weekend days makes the block 48 columns (weekdays, then 'we'): editing
    the weekday hours alone is read as the day's; weekday and weekend edited differently is
    one readable refusal naming the block."""
    from costmodel import app
    from costmodel.model.errors import InputError
    weekend = ", ".join(["1"] * 24)
    path = tmp_path / "weekend.toml"
    path.write_text(SCENARIO.replace("utilisation = 0.5\n", "") + f"weekend = [{weekend}]\n",
                    encoding="utf-8")
    systems, _ = workbook_systems([path])
    book = save_workbook(build_workbook(systems), tmp_path / "weekend.xlsx")
    assert len(named_cells(load_workbook(book), "electricity_carbon_hourly")) == 48
    one = _edit_hours(book, tmp_path / "one.xlsx", "electricity_carbon_hourly", [0], 160)
    (result,) = app.reprice(one).results
    assert result.scenario.electricity.carbon_hourly == [160.0] + [100.0] * 11 + [300.0] * 12
    both = _edit_hours(one, tmp_path / "both.xlsx", "electricity_carbon_hourly", [24], 170)
    with pytest.raises(InputError) as info:
        app.reprice(both)
    (where, message), = info.value.errors
    assert where.startswith("Tariff!") and "electricity_carbon_hourly" in where
    assert "one day's 24 values" in message
