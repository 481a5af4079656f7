"""The Profit sheet (costmodel.app.profit_workbook): each system sold at its market as live
formulas rendered from the profit's declaration. LibreOffice recalculates it to the engine's
figures (1e-9), before and after a market price, a share or a scenario input is edited in
the file.

The LibreOffice tests are skipped where it is not installed, unless
COSTMODEL_REQUIRE_LIBREOFFICE is set (as .ci/run sets it).
"""
from __future__ import annotations

import pytest
from conftest import require_libreoffice
from openpyxl import load_workbook
from profit_support import MARKET, OWNED, PROFIT, RENTED

from costmodel import app
from costmodel.decisions import profit as calc
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.profit_sheet import FIGURE_ROWS, INPUT_ROWS, PROFIT_SHEET

CTX = app.LocalContext()
ERRORS = ("#N/A", "#VALUE!", "#REF!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!", "Err:")
FIGURES = [n for n in FIGURE_ROWS if n is not None and n != "cost_per_hour"]


def request(scenarios, markets):
    return app.ProfitRequest([app.ScenarioSpec(app.InlineScenario(s)) for s in scenarios],
                             [app.MarketSpec(m) for m in markets])


def value(wb, name):
    (cell,) = named_cells(wb, name)
    return cell.value


def assert_sheet_is(wb, answer) -> int:
    """The sheet's figures are the engine's (``answer``'s) to 1e-9; returns how many."""
    n = 0
    for i, s in enumerate(answer.systems):
        for name in (*INPUT_ROWS, *FIGURES):
            got = value(wb, f"{name}_s{i + 1}")
            assert got == pytest.approx(s.value(name), rel=1e-9, abs=1e-300), (s.name, name)
            n += 1
    return n


def error_cells(wb):
    return [(c.coordinate, c.value) for row in wb[PROFIT_SHEET].iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(ERRORS)]


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    req = request([OWNED, RENTED], [MARKET, MARKET])
    path = tmp_path_factory.mktemp("profit") / "profit.xlsx"
    path.write_bytes(app.profit_workbook(CTX, req).content)
    return req, app.profit(CTX, req), path


def test_the_cached_values_are_the_engines(book):
    _, answer, path = book
    wb = load_workbook(path, data_only=True)
    assert wb.sheetnames[:3] == ["Summary", PROFIT_SHEET, "Cover"]
    assert assert_sheet_is(wb, answer) == 2 * (len(INPUT_ROWS) + len(FIGURES))
    assert [value(wb, f"profit_per_hour_s{i}") for i in (1, 2)] == \
        [pytest.approx(PROFIT["owned"]), pytest.approx(PROFIT["rented"])]
    assert value(wb, "watts_per_gigawatt") == 1e9


def test_the_formulas_are_the_declaration(book):
    _, _, path = book
    wb = load_workbook(path)
    assert value(wb, "profit_per_hour_s1") == "=net_revenue_per_hour_s1-cost_per_hour_s1"
    assert value(wb, "profit_per_gw_year_s2") == \
        "=profit_per_hour_s2*hours_per_year*accelerators_per_gw_s2"
    assert value(wb, "accelerators_per_gw_s1") == "=watts_per_gigawatt/power_facility_s1"
    assert value(wb, "market_revenue_per_request_s1") == (
        "=(workload_isl_s1*(1-market_cached_share_s1)*market_price_input_s1+workload_isl_s1*"
        "market_cached_share_s1*market_price_cached_input_s1+workload_osl_s1*"
        "market_price_output_s1)/tokens_per_mtok")
    # every figure's formula, from its step's declaration
    for name in FIGURES:
        assert str(value(wb, f"{name}_s1")).startswith("="), name
    for name in INPUT_ROWS:  # the market: input cells, numbers
        assert isinstance(value(wb, f"{name}_s2"), float | int), name
    assert set(FIGURES) | set(INPUT_ROWS) <= set(calc.PROFIT.steps) | set(calc.PROFIT.inputs)


@pytest.mark.libreoffice
def test_libreoffice_recalculates_the_profit_to_the_engine(book, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    _, answer, path = book
    bare = tmp_path / "bare.xlsx"
    load_workbook(path).save(bare)  # no cached values: LibreOffice's own figures
    wb = load_workbook(recalculate(bare, tmp_path / "out"), data_only=True)
    assert assert_sheet_is(wb, answer) > 30
    assert error_cells(wb) == []


@pytest.mark.libreoffice
def test_an_edited_market_price_recomputes_like_the_engine(book, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    _, before, path = book
    wb = load_workbook(path)
    named_cells(wb, "market_price_output_s2")[0].value = 3.0  # USD/Mtok, was 2
    named_cells(wb, "market_revenue_share_s1")[0].value = 0.25  # was 0.2
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                        data_only=True)
    want = app.profit(CTX, request([OWNED, RENTED], [
        {**MARKET, "revenue_share": 0.25}, {**MARKET, "price_output": "3 USD/Mtok"}]))
    assert assert_sheet_is(out, want) > 30
    # by hand: the rented request is (250 + 50 + 750) / 10^6 = 0.00105 USD, 14,400 an hour:
    # 15.12 USD/h, 12.096 kept, profit 10.031; the owned keeps 11.52 x 0.75 = 8.64: 7.575
    assert value(out, "profit_per_hour_s2") == pytest.approx(10.031, rel=1e-9)
    assert value(out, "profit_per_hour_s1") == pytest.approx(7.575, rel=1e-9)
    assert want.systems[1].value("profit_per_hour") > before.systems[1].value("profit_per_hour")
    assert error_cells(out) == []


@pytest.mark.libreoffice
def test_an_edited_scenario_input_recomputes_the_profit(book, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    _, _, path = book
    wb = load_workbook(path)
    named_cells(wb, "utilisation_s1")[0].value = 1.0  # every hour serving, was half
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                        data_only=True)
    want = app.profit(CTX, request([{**OWNED, "utilisation": 1.0}, RENTED], [MARKET, MARKET]))
    assert assert_sheet_is(out, want) > 30
    # twice the requests: 23.04 USD/h of revenue, 18.432 kept; energy 0.1 USD/h: 17.332
    assert value(out, "profit_per_hour_s1") == pytest.approx(17.332, rel=1e-9)


def test_a_system_in_euros_has_its_figures_in_euros_too(tmp_path):
    euros = {**OWNED, "money": {"currency": "EUR", "fx": {"EUR": {
        "rate": "0.92 EUR/USD", "date": "2026-11-30", "source": "illustrative assumption"}}}}
    req = request([euros], [MARKET])
    wb = load_workbook(__import__("io").BytesIO(app.profit_workbook(CTX, req).content),
                       data_only=True)
    assert value(wb, "profit_per_hour_shown") == pytest.approx(8.151 * 0.92, rel=1e-12)
    assert value(wb, "profit_per_hour") == pytest.approx(8.151, rel=1e-12)
