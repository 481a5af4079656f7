"""The Tariff sheet recalculated by LibreOffice: rates, load and charges by the hour give the
engine's figures to 1e-9, also after a rate and a load cell are edited in the workbook (and the
edited workbook, read back, prices to what LibreOffice shows).

Skipped where LibreOffice is not installed, unless COSTMODEL_REQUIRE_LIBREOFFICE is set.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import require_libreoffice
from openpyxl import load_workbook

from costmodel import app
from costmodel.app.pricing import price_loaded, render_workbook
from costmodel.model.steps import MODEL
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import recalculate
from costmodel.render.workbook.tariff_sheet import PROFILE_STEPS
from costmodel.sources.scenario_file import build_scenario

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
            want = np.broadcast_to(profiles[name], (1, len(cells)))[0]
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
