"""The Tariff sheet recalculated by LibreOffice: rates, load and charges by the hour give the
engine's figures to 1e-9, also after a rate and a load cell are edited in the workbook (and the
edited workbook, read back, prices to what LibreOffice shows); a tariff's demand periods (a
time-of-use demand charge on the busiest hour within its hours) likewise, also after a
period's charge and hours are edited, checked by hand.

Skipped where LibreOffice is not installed, unless COSTMODEL_REQUIRE_LIBREOFFICE is set.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import require_libreoffice
from openpyxl import load_workbook

from costmodel import app
from costmodel.app.build import build_scenario
from costmodel.app.pricing import price_loaded, render_workbook
from costmodel.model.steps import MODEL
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import recalculate
from costmodel.render.workbook.tariff_sheet import PROFILE_STEPS

pytestmark = pytest.mark.libreoffice

require_libreoffice()

PEAK = [0.09] * 16 + [0.22] * 5 + [0.09] * 3
TOU = {"name": "tou", "accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
       "operating_point": {"throughput": "2000 token/s"}, "idle_power": 0.25,
       "facility": {"pue": 1.4},
       "electricity": {"tariff": {
           "name": "test TOU", "source": "illustrative assumption for the test",
           "hourly": {"value": PEAK, "unit": "USD/kWh"},
           "weekend": {"value": [0.08] * 24, "unit": "USD/kWh"},
           "demand_charge": "15 USD/kW/month", "fixed_charge": "500 USD/month",
           "seasons": [{"name": "summer", "months": [6, 7, 8, 9],
                        "hourly": {"value": [0.10] * 16 + [0.32] * 5 + [0.10] * 3,
                                   "unit": "USD/kWh"},
                        "demand_charge": "20 USD/kW/month"}]}},
       "load": {"hourly": [0.9] * 6 + [0.5] * 10 + [0.2] * 5 + [0.9] * 3,
                "weekend": [0.4] * 24}}
FLAT = {"name": "flat", "accelerator": {"rated_power": "700 W", "price": "25000 USD"},
        "operating_point": {"throughput": "1500 token/s"}}
NIGHTS = {**FLAT, "name": "night load, flat price",
          "load": {"hourly": [1.0] * 8 + [0.2] * 16}}


def _priced(data: dict):
    return price_loaded(build_scenario(data))


def _export(systems, path):
    path.write_bytes(render_workbook(systems).content)
    return path


def _assert_like_engine(recalculated, results) -> None:
    wb = load_workbook(recalculated, data_only=True)
    n = len(results)
    for name in MODEL.scalar_steps:
        for cell, r in zip(named_cells(wb, name), results, strict=True):
            want = r.values[name]
            if np.isnan(want):  # no value: empty (a dash), never an error value
                assert cell.value in (None, ""), (name, cell.value)
            else:
                assert cell.value == pytest.approx(want, rel=1e-9, abs=1e-300), (name,
                                                                                 cell.coordinate)
    # the profile steps' blocks, cell by cell
    from costmodel.model.evaluate import Evaluator
    for i, r in enumerate(results):
        inputs = r.scenario.to_inputs()
        if not isinstance(inputs["hour_weight"], np.ndarray):
            continue
        profiles = Evaluator(MODEL, outputs=PROFILE_STEPS)(inputs)
        for name in PROFILE_STEPS:
            label = name if n == 1 else f"{name}_s{i + 1}"
            if label not in wb.defined_names:
                continue
            cells = [c.value for c in named_cells(wb, label)]
            want = np.asarray(profiles[name], dtype=float)
            # a block of several rows (months, demand periods) row by row; else one row
            want = want.ravel() if want.ndim == 2 and want.shape[0] > 1 else \
                np.broadcast_to(want, (1, len(cells)))[0]
            assert cells == pytest.approx(list(want), rel=1e-9), (label, cells[:3])


@pytest.fixture(scope="module")
def three():
    return [_priced(TOU), _priced(FLAT), _priced(NIGHTS)]


def test_the_tariff_sheet_recalculates_to_the_engine(three, tmp_path):
    path = _export(three, tmp_path / "tou.xlsx")
    assert "Tariff" in load_workbook(path).sheetnames
    _assert_like_engine(recalculate(path, tmp_path / "out"), [p.result for p in three])


def test_one_system_names_its_blocks_plainly(tmp_path):
    one = [_priced(TOU)]
    path = _export(one, tmp_path / "one.xlsx")
    wb = load_workbook(path)
    (served,) = named_cells(wb, "utilisation_served")
    assert served.value == ("=CHOOSE(MATCH(load_basis,load_basis_levels,0),utilisation,"
                            "SUMPRODUCT(hour_weight*load_hourly))")
    _assert_like_engine(recalculate(path, tmp_path / "out"), [p.result for p in one])


def test_an_edited_rate_and_load_recompute_like_the_engine(three, tmp_path):
    path = _export(three, tmp_path / "tou.xlsx")
    wb = load_workbook(path)
    rates = named_cells(wb, "electricity_tariff_rates_s1")  # 12 months x 48 hours, by row
    july_17 = 6 * 48 + 17  # July, weekday 17:00
    assert rates[july_17].value == pytest.approx(0.32)
    rates[july_17].value = 0.95
    load = named_cells(wb, "load_hourly_s1")
    load[3].value = 0.1  # weekday 03:00
    night = named_cells(wb, "load_hourly_s3")
    assert len(night) == 24  # a flat price and no weekend row: one day of 24 hours
    night[6].value = 0.6  # system 3, 06:00
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "out")
    read = app.reprice(edited)
    # the edits matter, and the read-back scenario holds them
    assert read.results[0].values["cost_per_mtok_total"] != pytest.approx(
        three[0].result.values["cost_per_mtok_total"], rel=1e-6)
    tariff = read.results[0].scenario.electricity.tariff
    july = next(s for s in tariff.seasons if 7 in s.months)
    # the weekday cell edited; the weekend one (the season's own weekday rates) stands
    assert july.hourly[17] == 0.95 and july.weekend[17] == 0.32
    assert read.results[0].scenario.load.hourly[3] == 0.1
    assert read.results[2].scenario.load.hourly[6] == 0.6
    _assert_like_engine(recalculated, read.results)
    # and by hand: the July weekday 17:00 rate weighs 31/365 of the year in that hour
    before = three[0].result.scenario.to_inputs()
    after = read.results[0].scenario.to_inputs()
    from costmodel.model.evaluate import Evaluator
    rate = Evaluator(MODEL, outputs=["tariff_rate_by_hour"])
    moved = rate(after)["tariff_rate_by_hour"][0, 17] - rate(before)["tariff_rate_by_hour"][0, 17]
    assert moved == pytest.approx((0.95 - 0.32) * 31 / 365, rel=1e-12)


# ---- demand periods: an on-peak demand charge beside the all-hours one -----------------------

HOURS_A_YEAR = 8760
# 3 kW at the facility meter (an all-in 2,000 W x PUE 1.5), 1,000 token/s, no idle power;
# energy at a flat 0.10 USD/kWh; 10 USD/kW-month on the month's busiest hour, and 20 on the
# busiest weekday hour within 12:00-18:00 (none at weekends)
TWO = {"name": "two demand charges",
       "accelerator": {"rated_power": "1000 W", "price": "30000 USD", "all_in_power": "2000 W"},
       "operating_point": {"throughput": "1000 token/s"}, "idle_power": 0,
       "facility": {"pue": 1.5},
       "electricity": {"tariff": {
           "name": "two demand charges", "source": "illustrative assumption for the test",
           "hourly": {"value": [0.10] * 24, "unit": "USD/kWh"},
           "demand_charge": "10 USD/kW/month",
           "demand_periods": [{"name": "on-peak", "demand_charge": "20 USD/kW/month",
                               "hours": list(range(12, 18)), "weekend_hours": []}]}},
       # busiest (0.9) at night, 00:00-06:00; 0.5 the rest of the day
       "load": {"hourly": [0.9] * 6 + [0.5] * 18}}


def test_demand_periods_recalculate_to_the_engine_and_by_hand(tmp_path):
    from sources.test_openei import SCE
    from sources.test_openei import load as load_json

    from costmodel.sources.openei import read_openei
    sce = {**TWO, "name": "SCE GS-2 TOU B", "load": {"hourly": [1.0] * 8 + [0.6] * 4
                                                     + [0.3] * 6 + [0.6] * 5 + [1.0]},
           "electricity": {"tariff": read_openei(load_json(SCE))}}
    systems = [_priced(TWO), _priced(sce), _priced(FLAT)]
    path = _export(systems, tmp_path / "periods.xlsx")
    wb = load_workbook(path)
    # each period's peak is the MAX of its row of the demand_period_load_factor block (its
    # hours' mask times the power drawn each hour: weekdays, then weekend days)
    (row,) = {c.row for c in named_cells(wb, "demand_period_load_factor_s1")}
    (peak,) = named_cells(wb, "demand_period_peak_load_factor_s1")
    assert peak.value == f"=MAX(Tariff!$B${row}:$AW${row})"
    assert len(named_cells(wb, "demand_period_peak_load_factor_s2")) == 2  # SCE's 2 periods
    recalculated = recalculate(path, tmp_path / "out")
    _assert_like_engine(recalculated, [p.result for p in systems])
    # by hand: the all-hours charge bills the night's 0.9, the on-peak one 0.5:
    # 3 kW x (10 x 0.9 + 20 x 0.5) = 57 USD a month, x 12 / 8,760 h
    (cell,) = named_cells(load_workbook(recalculated, data_only=True),
                          "demand_charge_per_hour_s1")
    assert cell.value == pytest.approx(57 * 12 / HOURS_A_YEAR, rel=1e-9)


def test_an_edited_period_charge_and_hour_recompute_like_the_engine(tmp_path):
    path = _export([_priced(TWO)], tmp_path / "two.xlsx")
    wb = load_workbook(path)
    (charge,) = named_cells(wb, "electricity_tariff_demand_period_charge")
    assert charge.value == 20
    charge.value = 30
    hours = named_cells(wb, "electricity_tariff_demand_period_hours")  # 48: weekdays, weekend
    assert len(hours) == 48 and [c.value for c in hours[12:18]] == [1] * 6
    hours[5].value = 1  # 05:00-06:00 joins the period: its 0.9 is now the period's peak
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "out")
    read = app.reprice(edited)
    (period,) = read.results[0].scenario.electricity.tariff.demand_periods
    assert (period.name, period.demand_charge, period.hours, period.weekend_hours) == \
        ("on-peak", 30.0, [5, 12, 13, 14, 15, 16, 17], [])
    _assert_like_engine(recalculated, read.results)
    # by hand: 3 kW x (10 x 0.9 + 30 x 0.9) = 108 USD a month, x 12 / 8,760 h; per Mtok
    # over 0.6 x 3.6 Mtok an hour ((6 x 0.9 + 18 x 0.5) / 24 = 0.6 serving)
    (cell,) = named_cells(load_workbook(recalculated, data_only=True), "demand_charge_per_hour")
    assert cell.value == pytest.approx(108 * 12 / HOURS_A_YEAR, rel=1e-9)
    assert read.results[0].values["demand_charge_per_hour"] == pytest.approx(
        108 * 12 / HOURS_A_YEAR, rel=1e-12)
    before = _priced(TWO).result.values["cost_per_mtok_energy"]
    assert read.results[0].values["cost_per_mtok_energy"] - before == pytest.approx(
        (108 - 57) * 12 / HOURS_A_YEAR / (0.6 * 3.6), rel=1e-9)


def test_a_period_written_into_a_tariff_without_one_is_read_back(tmp_path):
    plain = {**TWO, "electricity": {"tariff": {k: v for k, v in TWO["electricity"]["tariff"]
                                               .items() if k != "demand_periods"}}}
    path = _export([_priced(plain)], tmp_path / "plain.xlsx")
    wb = load_workbook(path)
    (charge,) = named_cells(wb, "electricity_tariff_demand_period_charge")
    hours = named_cells(wb, "electricity_tariff_demand_period_hours")
    assert charge.value == 0 and len(hours) == 24 and {c.value for c in hours} == {0}
    charge.value = 20  # the row that billed nothing, given a charge and 12:00-18:00
    for c in hours[12:18]:
        c.value = 1
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    read = app.reprice(edited)
    (period,) = read.results[0].scenario.electricity.tariff.demand_periods
    assert (period.name, period.demand_charge, period.hours, period.weekend_hours,
            period.months) == ("period 1", 20.0, list(range(12, 18)), None, None)
    # every day alike (no weekend hours in a one-day profile): 3 x (10 x 0.9 + 20 x 0.5)
    assert read.results[0].values["demand_charge_per_hour"] == pytest.approx(
        57 * 12 / HOURS_A_YEAR, rel=1e-12)
    _assert_like_engine(recalculate(edited, tmp_path / "out"), read.results)


def test_an_hour_of_a_period_is_in_it_or_not(tmp_path):
    from costmodel.model.errors import InputError
    path = _export([_priced(TWO)], tmp_path / "two.xlsx")
    wb = load_workbook(path)
    hours = named_cells(wb, "electricity_tariff_demand_period_hours")
    hours[3].value = 0.5
    wb.save(tmp_path / "bad.xlsx")
    with pytest.raises(InputError) as info:
        app.reprice(tmp_path / "bad.xlsx")
    ((where, message),) = info.value.errors
    assert where.startswith("Tariff!") and "electricity_tariff_demand_period_hours" in where
    assert message == "an hour of a demand period is 1 (in the period) or 0 (not), got 0.5"
