"""Exported workbooks recalculated by a real spreadsheet engine (LibreOffice headless) give the
engine's numbers, before and after inputs are changed in the file.

Skipped where LibreOffice is not installed, unless COSTMODEL_REQUIRE_LIBREOFFICE is set (as
.ci/run sets it): then a missing LibreOffice fails the run instead of hiding the check.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import CURVE_SCENARIOS, SCENARIOS, require_libreoffice, workbook_systems
from openpyxl import load_workbook

from costmodel.model.steps import MODEL
from costmodel.render.workbook.export import build_workbook, save_workbook
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import recalculate, save_with_libreoffice

pytestmark = pytest.mark.libreoffice

require_libreoffice()

CASES = {
    "single": ([SCENARIOS / "sample-tco.toml"], False),
    "three-matched": (CURVE_SCENARIOS, True),
    "curve": ([SCENARIOS / "curve-gpt-oss-120b-b200.toml"], False),
}
EDITS = {  # name in the workbook -> (new value, the same change as a --set override)
    "electricity_price": (0.1234, "electricity.price=0.1234 USD/kWh"),
    "facility_pue": (1.45, "facility.pue=1.45"),
    "power_boundary": ("node", "power.boundary=node"),
    "utilisation": (0.42, "utilisation=0.42"),
}


def _assert_matches_engine(recalculated: Path, results) -> int:
    """Every calculated cell equals the engine's value to 1e-9; returns cells checked."""
    wb = load_workbook(recalculated, data_only=True)
    checked = 0
    for name in MODEL.scalar_steps:
        for cell, result in zip(named_cells(wb, name), results, strict=True):
            want = result.values[name]
            if math.isnan(want):  # the engine has no value: empty (a dash), not an error
                assert cell.value in (None, ""), (name, cell.value)
            else:
                assert isinstance(cell.value, (int, float)), (name, cell.coordinate, cell.value)
                assert cell.value == pytest.approx(want, rel=1e-9, abs=1e-300), name
            checked += 1
    # the Results sheet and the live Cover items follow the same cells
    res = wb["Results"]
    for row in res.iter_rows(min_row=5, max_row=8):
        name = row[1].value  # the words, then the name
        for cell, result in zip(row[3:3 + len(results)], results, strict=True):
            assert cell.value == pytest.approx(result.values[name], rel=1e-9)
    cover = {row[0].value: [c.value for c in row[3:3 + len(results)]]
             for row in wb["Cover"].iter_rows() if row[0].value}
    assert cover["power boundary"] == [r.disclosure()["boundary"] for r in results]
    assert cover["power basis"] == [r.disclosure()["power_basis"] for r in results]
    return checked


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recalc")
    out = {}
    for case, (files, matched) in CASES.items():
        systems, _ = workbook_systems(files, matched=matched)
        out[case] = (save_workbook(build_workbook(systems), folder / f"{case}.xlsx"),
                     files, matched, systems)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_recalculated_workbook_equals_the_engine(exported, tmp_path, case):
    from test_workbook import error_cells
    path, _, _, systems = exported[case]
    recalculated = recalculate(path, tmp_path)
    checked = _assert_matches_engine(recalculated, [s.result for s in systems])
    assert checked == len(MODEL.scalar_steps) * len(systems)
    # recalculated, no sheet shows an error value (an absent input: a dash, not #N/A)
    assert error_cells(load_workbook(recalculated, data_only=True)) == []


def test_a_switch_turned_to_an_empty_input_gives_na_never_a_figure(exported, tmp_path):
    # the sample owns its accelerators and gives no rental price: renting with the price
    # left empty is no scenario (the engine refuses it), so the workbook shows #N/A rather
    # than a cost computed with a rent of 0
    path = exported["single"][0]
    wb = load_workbook(path)
    assert named_cells(wb, "accelerator_hourly_price")[0].value is None
    named_cells(wb, "accelerator_cost_basis")[0].value = "rent"
    wb.save(tmp_path / "rent.xlsx")
    out = load_workbook(recalculate(tmp_path / "rent.xlsx", tmp_path / "out"), data_only=True)
    for name in ("capex_per_hour", "cost_per_mtok_total"):
        assert named_cells(out, name)[0].value == "#N/A", name


def test_an_input_filled_in_gives_the_figures_it_was_missing(exported, tmp_path):
    # the curves give no carbon intensity: emissions show a dash; typed into the workbook,
    # they are the engine's for that intensity
    path, files, matched, _ = exported["three-matched"]
    wb = load_workbook(path)
    assert all(c.value is None for c in named_cells(wb, "electricity_carbon_intensity"))
    for cell in named_cells(wb, "electricity_carbon_intensity"):
        cell.value = 420
    wb.save(tmp_path / "carbon.xlsx")
    out = load_workbook(recalculate(tmp_path / "carbon.xlsx", tmp_path / "out"),
                        data_only=True)
    want, _ = workbook_systems(files, overrides=["electricity.carbon_intensity=420 gCO2e/kWh"],
                               matched=matched)
    for cell, w in zip(named_cells(out, "emissions_per_mtok"), want, strict=True):
        assert cell.value == pytest.approx(w.result.values["emissions_per_mtok"], rel=1e-9)


@pytest.mark.parametrize("case", list(CASES))
def test_changed_inputs_recompute_like_the_engine(exported, tmp_path, case):
    path, files, matched, systems = exported[case]
    wb = load_workbook(path)
    for name, (value, _) in EDITS.items():
        for cell in named_cells(wb, name):
            cell.value = value
    edited = tmp_path / f"{case}-edited.xlsx"
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "out")
    want, _ = workbook_systems(files, overrides=[s for _, s in EDITS.values()],
                               matched=matched)
    # the edits matter: the engine's answer moved
    assert want[0].result.values["cost_per_mtok_total"] != pytest.approx(
        systems[0].result.values["cost_per_mtok_total"], rel=1e-6)
    _assert_matches_engine(recalculated, [s.result for s in want])


def test_boundary_switch_is_live(exported, tmp_path):
    path, files, _, _ = exported["single"]
    boundaries = ("chip", "rack")
    for boundary in boundaries:
        wb = load_workbook(path)
        named_cells(wb, "power_boundary")[0].value = boundary
        wb.save(tmp_path / f"{boundary}.xlsx")
    # both recalculated in one LibreOffice run
    recalculated = save_with_libreoffice([tmp_path / f"{b}.xlsx" for b in boundaries],
                                         tmp_path / "out")
    got = {}
    for boundary, out in zip(boundaries, recalculated, strict=True):
        want, _ = workbook_systems(files, overrides=[f"power.boundary={boundary}"])
        got[boundary] = named_cells(load_workbook(out, data_only=True),
                                    "power_per_accelerator")[0].value
        assert got[boundary] == pytest.approx(want[0].result.values["power_per_accelerator"],
                                              rel=1e-9)
    # chip boundary of a GB300: its 1,400 W rated package power
    assert got["chip"] == 1400


WRITTEN = ["single", "three-matched", "curve", "quotes", "sensitivity"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    from test_workbook import build_cases
    return build_cases(tmp_path_factory.mktemp("written"))


def _without_cached_values(path: Path, out: Path) -> Path:
    """The workbook's formulas with no cached result (openpyxl writes none), so what
    LibreOffice shows next is its own computation, not the export's cache."""
    wb = load_workbook(path)
    wb.save(out)
    return out


@pytest.mark.parametrize("case", WRITTEN)
def test_every_formula_recomputes_to_its_cached_value(written, tmp_path, case):
    from test_workbook import VISIBLE, check_against_engine
    path, systems, quotes, analyses = written[case]
    bare = _without_cached_values(path, tmp_path / "bare.xlsx")
    recalculated = load_workbook(recalculate(bare, tmp_path / "out"), data_only=True)
    cached = load_workbook(path, data_only=True)
    formulas = load_workbook(path)
    compared = 0
    for title in VISIBLE:
        if title not in formulas.sheetnames:
            continue
        for row in formulas[title].iter_rows():
            for c in row:
                if c.data_type != "f":
                    continue
                want = cached[title][c.coordinate].value
                got = recalculated[title][c.coordinate].value
                if isinstance(want, float):
                    assert got == pytest.approx(want, rel=1e-9, abs=1e-300), \
                        (title, c.coordinate, c.value)
                elif isinstance(want, str) and want.startswith("#"):
                    assert isinstance(got, str) and got.startswith("#"), (title, c.coordinate)
                else:
                    assert got == want, (title, c.coordinate, c.value)
                compared += 1
    assert compared > len(MODEL.scalar_steps) * len(systems)
    # and what LibreOffice computed is the engine's
    check_against_engine(recalculated, formulas, systems, quotes, analyses)


def test_quote_terms_are_live(written, tmp_path):
    # a quote's price changed in the workbook moves its margin, totals and present values
    # as the engine moves them
    from test_workbook import check_against_engine, quote_rows

    from costmodel.decisions.quotes import compare_quote
    path, systems, quotes, _ = written["quotes"]
    wb = load_workbook(path)
    (q, rows), *_ = quote_rows(wb["Quotes"], quotes)
    quote = quotes[q][0]
    assert quote.form == "per_mtok"
    from costmodel.render.workbook.quotes_sheet import LABELS
    by_label = {r[0].value: r[0].row for r in wb["Quotes"].iter_rows(min_col=1, max_col=1)
                if r[0].row > rows["price"] - 12 and r[0].row < rows["price"]}
    wb["Quotes"].cell(by_label[LABELS["price_output"]], 2).value = 0.4
    wb["Quotes"].cell(by_label[LABELS["commitment"]], 2).value = None
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                        data_only=True)
    changed = quote.model_copy(update={"price_output": 0.4, "commitment": None})
    rows_now = [(changed, [compare_quote(changed, s.result) for s in systems]),
                *quotes[1:]]
    assert rows_now[0][1][0].implied_margin != quotes[0][1][0].implied_margin
    check_against_engine(out, wb, systems, rows_now)


def test_free_offers_recalculate_without_a_division_by_zero(tmp_path):
    # a quote priced at 0 in each form: LibreOffice computes its price (0), our cost, the
    # totals and present values as the engine does, and the margin as the text, not #DIV/0!
    from conftest import PUBLISHED
    from decisions.test_quotes import FREE
    from test_workbook import check_against_engine, quote_rows

    from costmodel.decisions.quotes import compare_quote, validate_quote
    from costmodel.render.workbook.quotes_sheet import FREE_OFFER
    systems, _ = workbook_systems([PUBLISHED / "deepseek-r1_gb300_matched.toml",
                                   PUBLISHED / "deepseek-r1_jalapeno_matched.toml"])
    rows = [(q, [compare_quote(q, s.result) for s in systems])
            for q in map(validate_quote, FREE)]
    path = save_workbook(build_workbook(systems, quotes=rows), tmp_path / "free.xlsx")
    out = load_workbook(recalculate(path, tmp_path / "out"), data_only=True)
    formulas = load_workbook(path)
    assert check_against_engine(out, formulas, systems, rows) > 0
    from costmodel.render.workbook.layout import FIRST_COL
    for _, block in quote_rows(formulas["Quotes"], rows):
        for i in range(len(systems)):
            assert out["Quotes"].cell(block["margin"], FIRST_COL + i).value == FREE_OFFER
            assert out["Quotes"].cell(block["price"], FIRST_COL + i).value == 0
