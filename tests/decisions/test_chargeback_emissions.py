"""Chargeback charges emissions to tenants the way it charges cost: the same reserved
shares, usage and idle rule, each pool's operational grams at its measured utilisation plus
its embodied grams (tests/chargeback_support.py's hand pool, with a grid factor and a
footprint)."""
from __future__ import annotations

import pytest
from chargeback_support import EMISSIONS_CAPACITY as CAPACITY
from chargeback_support import EMISSIONS_PER_HOUR as PER_HOUR
from chargeback_support import EMISSIONS_SCENARIO as SCENARIO
from chargeback_support import EMISSIONS_TOTAL_KG as TOTAL_KG
from chargeback_support import EMISSIONS_U as U
from chargeback_support import TWO_TENANTS, fleet

from costmodel import app
from costmodel.app.chargeback import ChargebackRequest, chargeback
from costmodel.sources.usage import read_usage_bytes

CTX = app.LocalContext()


def ledger(idle: str):
    data = fleet()
    data["pools"][0]["scenario"] = SCENARIO
    return chargeback(CTX, ChargebackRequest(data, read_usage_bytes(TWO_TENANTS.encode(), "u"),
                                             idle=idle)).to_json()


def test_the_pools_emissions_are_the_hand_derived_grams():
    answer = ledger("usage")
    assert answer["emissions"]["location"]["total"]["value"] == pytest.approx(TOTAL_KG)
    assert TOTAL_KG == pytest.approx(573.42, abs=0.01)
    assert answer["emissions"]["market"]["total"]["value"] is None  # no market factor


def test_idle_shared_by_usage_charges_two_thirds_and_one_third():
    tenants = {t["tenant"]: t["emissions"]["location"]["value"] for t in ledger("usage")["tenants"]}
    assert tenants["A"] == pytest.approx(TOTAL_KG * 2 / 3)
    assert tenants["B"] == pytest.approx(TOTAL_KG / 3)


def test_a_separate_idle_line_keeps_the_unused_capacitys_grams():
    answer = ledger("separate")
    tenants = {t["tenant"]: t["emissions"]["location"]["value"] for t in answer["tenants"]}
    assert tenants["A"] == pytest.approx(TOTAL_KG * 4e9 / CAPACITY)
    assert tenants["B"] == pytest.approx(TOTAL_KG * 2e9 / CAPACITY)
    idle = answer["emissions"]["location"]["idle_line"]["value"]
    assert idle == pytest.approx(TOTAL_KG * (1 - U))
    assert tenants["A"] + tenants["B"] + idle == pytest.approx(TOTAL_KG)  # conserved


def _led(idle: str):
    data = fleet()
    data["pools"][0]["scenario"] = SCENARIO
    return chargeback(CTX, ChargebackRequest(data, read_usage_bytes(TWO_TENANTS.encode(), "u"),
                                             idle=idle))


@pytest.mark.parametrize("idle", ["usage", "separate"])
def test_the_focus_csv_carries_the_grams_in_custom_columns(idle):
    import csv
    import io

    from costmodel.app.chargeback import focus_csv
    rows = list(csv.DictReader(io.StringIO(focus_csv(_led(idle)).decode())))
    assert "x_EmissionsLocationKgCO2e" in rows[0] and "x_EmissionsMarketKgCO2e" in rows[0]
    assert all(r["x_EmissionsMarketKgCO2e"] == "" for r in rows)  # no market factor
    kg = {}
    for r in rows:
        kg[r["SubAccountId"]] = kg.get(r["SubAccountId"], 0) + float(
            r["x_EmissionsLocationKgCO2e"])
    assert sum(kg.values()) == pytest.approx(TOTAL_KG, abs=1e-5)  # 573.42 kg, conserved
    if idle == "usage":  # idle shared by usage: A 2/3, B 1/3, no idle line's grams
        assert kg["A"] == pytest.approx(TOTAL_KG * 2 / 3, abs=1e-5)
        assert kg["B"] == pytest.approx(TOTAL_KG / 3, abs=1e-5)
    else:  # the idle line keeps the unused capacity's grams
        assert kg["A"] == pytest.approx(TOTAL_KG * 4e9 / CAPACITY, abs=1e-5)
        assert kg[""] == pytest.approx(TOTAL_KG * (1 - U), abs=1e-5)


def test_the_workbook_charges_the_hand_grams_and_libreoffice_agrees(tmp_path):
    from conftest import require_libreoffice
    from openpyxl import load_workbook

    from costmodel.app.chargeback import chargeback_workbook
    from costmodel.render.workbook.names import named_cells
    path = tmp_path / "chargeback.xlsx"
    path.write_bytes(chargeback_workbook(_led("usage")).content)

    def tenants(wb):
        ws = wb["Chargeback"]
        return {row[0].value: row[9].value for row in ws.iter_rows()
                if row[0].value in ("A", "B") and row[1].value is None}

    def check(wb):
        (fleet_kg,) = named_cells(wb, "chargeback_fleet_kg_location")
        assert fleet_kg.value == pytest.approx(TOTAL_KG, rel=1e-9)
        (market,) = named_cells(wb, "chargeback_fleet_kg_market")
        assert market.value in (None, "")  # no market factor: empty, not 0
        kg = tenants(wb)
        assert kg["A"] == pytest.approx(TOTAL_KG * 2 / 3, rel=1e-9)
        assert kg["B"] == pytest.approx(TOTAL_KG / 3, rel=1e-9)
        (per_hour,) = named_cells(wb, "pool_emissions_location")
        assert per_hour.value == pytest.approx(PER_HOUR, rel=1e-9)  # 398.2 g an hour
    check(load_workbook(path, data_only=True))  # the cached values
    formulas = load_workbook(path)
    (cell,) = named_cells(formulas, "pool_kg_location")
    assert cell.value.startswith("=IF(")  # live
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    bare = tmp_path / "bare.xlsx"
    formulas.save(bare)  # no cached values: LibreOffice's own figures
    check(load_workbook(recalculate(bare, tmp_path / "out"), data_only=True))
