"""Workbook export and import, checked in-process (the LibreOffice recalculation checks are in
test_workbook_recalc.py)."""
from __future__ import annotations

import io
import math
import re
import zipfile
from pathlib import Path

import pytest
from conftest import (
    CURVE_SCENARIOS,
    SCENARIOS,
    price_file,
    workbook_systems,
)
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter, range_boundaries

from costmodel.app import reprice
from costmodel.model.inputs import InputError
from costmodel.model.steps import MODEL
from costmodel.render.workbook.excel_formula import MAY_BE_EMPTY, to_formula
from costmodel.render.workbook.export import build_workbook, save_workbook, suffixed
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.reader import MAX_BYTES, read_workbook
from costmodel.render.workbook.tariff_sheet import reads_profiles

SCALAR_INPUTS = [n for n, i in MODEL.inputs.items() if not i.axes]  # profiles: Tariff sheet
SAMPLE = SCENARIOS / "sample-tco.toml"


@pytest.fixture(scope="module")
def single(tmp_path_factory) -> Path:
    systems, _ = workbook_systems([SAMPLE])
    return save_workbook(build_workbook(systems), tmp_path_factory.mktemp("wb") / "one.xlsx")


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> Path:
    systems, _ = workbook_systems(CURVE_SCENARIOS, matched=True)
    return save_workbook(build_workbook(systems), tmp_path_factory.mktemp("wb") / "three.xlsx")


def test_sheets_and_names(single, three):
    wb = load_workbook(single)
    assert wb.sheetnames[:5] == ["Summary", "Cover", "Inputs", "Calculations", "Results"]
    assert "Curves" not in wb.sheetnames  # no curve in the sample
    for name in [*SCALAR_INPUTS, *MODEL.enums, *MODEL.constants, *MODEL.scalar_steps]:
        assert name in wb.defined_names, name
    assert named_cells(wb, "electricity_price")[0].value == pytest.approx(0.0871)
    assert named_cells(wb, "facility_pue")[0].value == 1.2
    assert named_cells(wb, "power_boundary")[0].value == "facility"
    wb3 = load_workbook(three)
    assert "Curves" in wb3.sheetnames
    assert len(named_cells(wb3, "cost_per_mtok_total")) == 3  # one row across the systems
    assert len(named_cells(wb3, suffixed("cost_per_mtok_total", 2))) == 1


def test_calculations_are_the_declaration_and_consistent_along_rows(three):
    wb = load_workbook(three)
    for step in map(MODEL.steps.get, MODEL.scalar_steps):
        cells = named_cells(wb, step.name)
        if reads_profiles(step.name):  # each system's own names (no profile here: NA())
            formulas = {c.value.replace(f"_s{i}", "") for i, c in enumerate(cells, 1)}
            assert formulas == {"=" + to_formula(step.tree).replace(
                "SUMPRODUCT(hour_weight*load_hourly)", "NA()")} if \
                step.name == "utilisation_served" else len(formulas) == 1, step.name
            continue
        formulas = {c.value for c in cells}
        assert formulas == {"=" + to_formula(step.tree)}, step.name  # the same in every column


def test_no_literal_numbers_in_formulas(three):
    wb = load_workbook(three)
    number = re.compile(r"(?<![A-Za-z_\d.])(\d+\.?\d*(?:[eE][+-]?\d+)?)(?![A-Za-z_\d])")
    for ws in (wb["Calculations"], wb["Results"], wb["Cover"]):
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("="):
                    literals = [m for m in number.findall(c.value) if m not in ("0", "1")]
                    assert not literals, (ws.title, c.coordinate, c.value)


def test_inputs_are_styled_and_validated(single):
    wb = load_workbook(single)
    ws = wb["Inputs"]
    cell = named_cells(wb, "electricity_price")[0]
    assert cell.font.color.rgb.endswith("0000FF")
    lists = [dv for dv in ws.data_validations.dataValidation if dv.type == "list"]
    boundary = named_cells(wb, "power_boundary")[0].coordinate
    assert any(boundary in str(dv.sqref) and dv.formula1 == "power_boundary_levels"
               for dv in lists)
    fractions = [dv for dv in ws.data_validations.dataValidation
                 if dv.type == "decimal" and dv.operator in (None, "between")  # the default
                 and dv.formula1 == "0" and dv.formula2 == "1"]
    assert any(named_cells(wb, "utilisation")[0].coordinate in str(dv.sqref) for dv in fractions)
    levels = named_cells(wb, "power_boundary_levels")
    assert [c.value for c in levels] == ["chip", "node", "rack", "facility"]


def test_user_text_never_becomes_a_formula(tmp_path):
    data = {"name": "=HYPERLINK(\"http://x\",\"y\")", "accelerator": "gb300",
            "operating_point": {"throughput": "1000 token/s", "note": "=1+1",
                                "label": "@SUM(A1)"}}
    from costmodel.app.build import build_scenario
    from costmodel.model.chain import price
    from costmodel.render.workbook.export import WorkbookSystem
    loaded = build_scenario(data)
    path = save_workbook(build_workbook([WorkbookSystem(price(loaded.scenario,
                                                              loaded.provenance))]),
                         tmp_path / "x.xlsx")
    with zipfile.ZipFile(path) as z:
        sheets = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
        strings = z.read("xl/sharedStrings.xml")
    assert b"HYPERLINK" in strings  # it is there, as text ...
    assert not re.search(rb"<f>[^<]*(HYPERLINK|1\+1|SUM)", sheets)  # ... never as a formula
    wb = load_workbook(path)
    found = [c for ws in wb for row in ws.iter_rows() for c in row
             if c.value == '=HYPERLINK("http://x","y")']
    assert found and all(c.data_type == "s" for c in found)


def test_round_trip_without_edits_reprices_to_the_engine(three):
    imported = reprice(three)  # read back, then priced by the application layer
    assert imported.changes == [] and imported.warnings == []
    systems, _ = workbook_systems(CURVE_SCENARIOS, matched=True)
    for got, want in zip(imported.results, systems, strict=True):
        for name in MODEL.scalar_steps:
            a, b = got.values[name], want.result.values[name]
            assert a == pytest.approx(b, rel=1e-12, nan_ok=True), name


def _edit(path: Path, out: Path, edits: dict[str, list]) -> Path:
    wb = load_workbook(path)
    for name, values in edits.items():
        for cell, v in zip(named_cells(wb, name), values, strict=True):
            if v is not None:
                cell.value = v
    wb.save(out)
    return out


def test_edited_workbook_reprices_like_the_engine(single, tmp_path):
    edited = _edit(single, tmp_path / "edited.xlsx", {
        "electricity_price": [0.12], "facility_pue": [1.5], "power_boundary": ["rack"],
        "utilisation": [0.55]})
    imported = reprice(edited)
    changed = {c.name: (c.before, c.after) for c in imported.changes}
    assert changed == {"electricity_price": (pytest.approx(0.0871), 0.12),
                       "facility_pue": (1.2, 1.5), "power_boundary": ("facility", "rack"),
                       "utilisation": (0.7, 0.55)}
    want = price_file(SAMPLE, ["electricity.price=0.12 USD/kWh", "facility.pue=1.5",
                               "power.boundary=rack", "utilisation=0.55"])
    got = imported.results[0]
    for name in MODEL.scalar_steps:
        assert got.values[name] == pytest.approx(want.values[name], rel=1e-12, nan_ok=True)
    assert got.disclosure()["boundary"] == "rack"
    assert "edited in workbook" in got.disclosure()["sources"]["electricity.price"]


def test_edited_formula_is_reported(single, tmp_path):
    wb = load_workbook(single)
    named_cells(wb, "load_factor")[0].value = "=utilisation"
    wb.save(tmp_path / "f.xlsx")
    imported = read_workbook(tmp_path / "f.xlsx")
    assert any("load_factor" in w and "was edited" in w for w in imported.warnings)


@pytest.mark.parametrize("edit,where,fragment", [
    ({"electricity_price": ["cheap"]}, "Inputs!D", "expected a number, got 'cheap'"),
    ({"electricity_price": [True]}, "Inputs!D", "expected a number"),
    ({"power_boundary": ["wall"]}, "power_boundary", "expected one of chip, node, rack"),
    ({"node_accelerators": [2.5]}, "node_accelerators", "whole number"),
    ({"utilisation": [1.7]}, "utilisation", "at most 100 %, got 170 %"),  # as shown
    ({"facility_pue": [0.8]}, "facility.pue", "at least 1"),
    ({"electricity_price": [None]}, "", ""),  # unchanged: not an error
    ({"electricity_price": ["=1/0"]}, "electricity_price", "not a formula"),
])
def test_bad_values_are_rejected_with_the_cell(single, tmp_path, edit, where, fragment):
    path = _edit(single, tmp_path / "bad.xlsx", edit)
    if not fragment:
        assert read_workbook(path).changes == []
        return
    with pytest.raises(InputError) as info:
        read_workbook(path)
    text = str(info.value)
    assert where in text and fragment in text


def test_structure_problems_are_rejected(single, tmp_path):
    wb = load_workbook(single)
    wb["Inputs"].title = "Assumptions"
    wb.save(tmp_path / "renamed.xlsx")
    with pytest.raises(InputError, match="sheet 'Inputs' is missing"):
        read_workbook(tmp_path / "renamed.xlsx")
    wb = load_workbook(single)
    del wb.defined_names["facility_pue"]
    wb.save(tmp_path / "noname.xlsx")
    with pytest.raises(InputError, match="defined name 'facility_pue' is missing"):
        read_workbook(tmp_path / "noname.xlsx")
    wb = load_workbook(single)
    c = named_cells(wb, "accelerator_rated_power")[0]
    wb["Inputs"].cell(c.row, 3).value = "kW"
    wb.save(tmp_path / "unit.xlsx")
    with pytest.raises(InputError, match="unit of accelerator_rated_power was changed from 'W'"):
        read_workbook(tmp_path / "unit.xlsx")


def _repack(src: Path, extra: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(item, zin.read(item.filename))
        for name, data in extra.items():
            zout.writestr(name, data)
    return buf.getvalue()


def test_hostile_packages_are_rejected(single):
    with pytest.raises(InputError, match="limit is 20 MiB"):
        read_workbook(b"PK" + b"\0" * (MAX_BYTES + 1))
    with pytest.raises(InputError, match=r"not an \.xlsx"):
        read_workbook(b"just text")
    bomb = _repack(single, {"xl/media/zeros.bin.txt": b"\0" * (50 * 2**20)})
    with pytest.raises(InputError, match="zip bomb"):
        read_workbook(bomb)
    with pytest.raises(InputError, match="macros"):
        read_workbook(_repack(single, {"xl/vbaProject.bin": b"\xd0\xcf\x11\xe0"}))
    with pytest.raises(InputError, match="external links"):
        read_workbook(_repack(single, {"xl/externalLinks/externalLink1.xml": b"<x/>"}))
    xxe = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
           b"<r>&e;</r>")
    with pytest.raises(InputError, match="document type declarations"):
        read_workbook(_repack(single, {"customXml/item1.xml": xxe}))


# ---- the written file: cached values, number formats, print setup --------------------------

def build_cases(folder: Path) -> dict:
    """The five test workbooks: case -> (path, systems, quotes rows, sensitivity results)."""
    from conftest import PUBLISHED, ROOT

    from costmodel.decisions import sensitivity as core
    from costmodel.decisions.quotes import compare_quote
    from costmodel.sources.quote_file import read_quotes
    out = {}
    single, _ = workbook_systems([SAMPLE])
    three, _ = workbook_systems(CURVE_SCENARIOS, matched=True)
    curve, _ = workbook_systems([SCENARIOS / "curve-gpt-oss-120b-b200.toml"])
    deal, _ = workbook_systems([PUBLISHED / "deepseek-r1_gb300_matched.toml",
                                PUBLISHED / "deepseek-r1_jalapeno_matched.toml"])
    quotes = read_quotes(ROOT / "fixtures" / "quotes" / "example-quotes.toml")
    rows = [(q, [compare_quote(q, s.result) for s in deal]) for q in quotes]
    scenario = single[0].result.scenario
    analyses = [core.tornado(scenario),
                core.grid(scenario, "electricity.price=0.05..0.15 USD/kWh:5",
                          "utilisation=0.3..0.9:4"),
                core.monte_carlo(scenario, {"electricity.price":
                                            "uniform(0.05 USD/kWh, 0.15 USD/kWh)"},
                                 draws=20_000, seed=7)]
    for case, systems, kw in [("single", single, {}), ("three-matched", three, {}),
                              ("curve", curve, {}), ("quotes", deal, {"quotes": rows}),
                              ("sensitivity", single, {"sensitivity": analyses})]:
        path = save_workbook(build_workbook(systems, **kw), folder / f"{case}.xlsx")
        out[case] = (path, systems, kw.get("quotes", ()), kw.get("sensitivity", ()))
    return out


CASES = ["single", "three-matched", "curve", "quotes", "sensitivity"]
VISIBLE = ("Summary", "Cover", "Inputs", "Calculations", "Results", "Curves", "Quotes",
           "Sensitivity", "Sources")


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict:
    return build_cases(tmp_path_factory.mktemp("cases"))


def same(got, want) -> bool:
    """A cell's value against the engine's: numbers to 1e-9, NaN as an empty cell (an absent
    input, or a formula giving empty text, shown as a dash): never an error value."""
    if isinstance(want, float) and math.isnan(want):
        return got in (None, "")
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return isinstance(got, (int, float)) and got == pytest.approx(want, rel=1e-9,
                                                                       abs=1e-300)
    return got == want


def engine_value(name: str, system) -> object:
    """What ``=name`` is for a system: a step as priced, an input as given."""
    from costmodel.render.workbook.cover import live_value
    return live_value(system, name)


def quote_values(comparison) -> dict:
    """The engine's figures of a quote comparison, by the Quotes sheet's row keys."""
    from costmodel.render.workbook.quotes_sheet import FREE_OFFER
    c = comparison
    return {"price": c.price_per_mtok, "cost": c.own_cost_per_mtok,
            "margin": FREE_OFFER if c.implied_margin is None else c.implied_margin,
            "volume": c.volume, "quote_total": c.quote_total,
            "own_total": c.own_total, "quote_pv": c.quote_pv, "own_pv": c.own_pv,
            "saving_pv": c.saving_pv,
            "break_even": ("none up to 100%" if c.break_even_utilisation is None
                           else c.break_even_utilisation)}


def quote_rows(ws, quotes) -> list[tuple[int, dict[str, int]]]:
    """(quote index, row key -> row) of each quote's block on the Quotes sheet."""
    from costmodel.render.workbook.quotes_sheet import LABELS
    by_label = {v: k for k, v in LABELS.items()}
    blocks: list[tuple[int, dict[str, int]]] = []
    names = [q.name for q, _ in quotes]
    for row in ws.iter_rows(min_col=1, max_col=1):
        value = row[0].value
        if isinstance(value, str) and value.startswith("quote ") and value[6:] in names:
            blocks.append((names.index(value[6:]), {}))
        elif blocks and value in by_label:
            blocks[-1][1][by_label[value]] = row[0].row
    return blocks


def check_against_engine(values_book, formulas_book, systems, quotes=(),
                         analyses=()) -> int:
    """Every figure the engine has, read from ``values_book`` (cached or recalculated):
    steps and inputs by their names, every ``=name`` and ratio on the other sheets, the
    quotes' figures and the sensitivity results. Returns the cells checked."""
    from costmodel.render.workbook.layout import FIRST_COL
    from costmodel.render.workbook.results_sheet import ratio
    checked = 0
    for name in [*MODEL.scalar_steps, *SCALAR_INPUTS, *MODEL.enums]:
        for cell, s in zip(named_cells(values_book, name), systems, strict=True):
            assert same(cell.value, engine_value(name, s)), (name, cell.value)
            checked += 1
    plain = re.compile(r"=([a-z_]+)$")
    ratio_of = re.compile(r"=([a-z_]+)/\1_s1$")
    for title in ("Summary", "Cover", "Results"):
        for row in formulas_book[title].iter_rows():
            for c in row:
                i = c.column - FIRST_COL
                if not isinstance(c.value, str) or not 0 <= i < len(systems):
                    continue
                got = values_book[title][c.coordinate].value
                if m := plain.match(c.value):
                    assert same(got, engine_value(m[1], systems[i])), (title, c.coordinate)
                elif m := ratio_of.match(c.value):
                    want = ratio(systems[i].result.values[m[1]],
                                 systems[0].result.values[m[1]])
                    assert same(got, want) or got == want, (title, c.coordinate, got)
                else:
                    continue
                checked += 1
    if quotes:
        ws = values_book["Quotes"]
        blocks = quote_rows(formulas_book["Quotes"], quotes)
        assert len(blocks) == len(quotes)
        for q, rows in blocks:
            for i, comparison in enumerate(quotes[q][1]):
                for key, want in quote_values(comparison).items():
                    if key in rows:
                        got = ws.cell(rows[key], FIRST_COL + i).value
                        assert same(got, want), (quotes[q][0].name, key, got, want)
                        checked += 1
            assert ("break_even" in rows) == (quotes[q][0].form == "per_mtok")
    for analysis in analyses:
        checked += check_sensitivity(values_book["Sensitivity"], analysis)
    return checked


def check_sensitivity(ws, analysis) -> int:
    from costmodel.decisions.sensitivity import Grid, MonteCarlo, Tornado
    cells = [(c.row, c.column, c.value) for row in ws.iter_rows() for c in row
             if c.value is not None]
    numbers = [v for _, _, v in cells if isinstance(v, (int, float))]
    if isinstance(analysis, Tornado):
        want = [x for bar in analysis.bars for x in
                (bar.low, bar.high, bar.output_low - analysis.base,
                 bar.output_high - analysis.base, bar.swing)]
    elif isinstance(analysis, Grid):
        want = [float(v) for v in analysis.values.ravel()]
    else:
        assert isinstance(analysis, MonteCarlo)
        want = [analysis.p10, analysis.p50, analysis.p90, analysis.mean, *analysis.counts]
    for v in want:
        assert any(same(n, float(v)) for n in numbers), v
    return len(want)


@pytest.mark.parametrize("case", CASES)
def test_cached_values_are_the_engines(cases, case):
    # opened without recalculation (previews, pandas, openpyxl data_only), every result reads
    path, systems, quotes, analyses = cases[case]
    values = load_workbook(path, data_only=True)
    checked = check_against_engine(values, load_workbook(path),
                                   [s for s in systems], quotes, analyses)
    assert checked > len(MODEL.scalar_steps) * len(systems)
    # and no formula cell lacks its cached result (but where it is empty text: a formula
    # that is empty where the engine has no value, IF(x="","",...))
    formulas = load_workbook(path)
    for title in VISIBLE:
        if title not in formulas.sheetnames:
            continue
        for row in formulas[title].iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("=") and c.data_type == "f":
                    assert values[title][c.coordinate].value is not None or \
                        '=""' in c.value or c.value[1:] in MAY_BE_EMPTY, (title, c.coordinate)


@pytest.mark.parametrize("case", CASES)
def test_no_figure_has_the_general_format(cases, case):
    path = cases[case][0]
    values = load_workbook(path, data_only=True)
    figures = 0
    for title in VISIBLE:
        if title not in values.sheetnames:
            continue
        for row in values[title].iter_rows():
            for c in row:
                if isinstance(c.value, (int, float)) and not isinstance(c.value, bool):
                    assert c.number_format != "General", (title, c.coordinate, c.value)
                    figures += 1
    assert figures > 100


def test_number_formats_follow_the_display_rules(cases):
    from costmodel.render.display import excel_format
    wb = load_workbook(cases["single"][0])
    cost_of_capital = named_cells(wb, "financing_cost_of_capital")[0]
    assert cost_of_capital.number_format == "0.0%"  # 10.0%
    unit = wb["Inputs"].cell(cost_of_capital.row, 3)
    assert unit.value == "dimensionless"  # what the formulas assume; the reader checks it
    assert unit.number_format == ';;;"%/year"'  # ... shown as the unit the value is shown in
    assert named_cells(wb, "cost_per_mtok_total")[0].number_format == \
        excel_format("cost_per_mtok_total", "USD/Mtok") == \
        "[>=1]#,##0.00;[>=0.01]#,##0.0000;#,##0.000000"
    assert named_cells(wb, "power_per_accelerator")[0].number_format == \
        "[>=100]#,##0;#,##0.0"
    assert named_cells(wb, "utilisation")[0].number_format == "0.0%"
    assert named_cells(wb, "accelerator_price")[0].number_format == "#,##0"
    # the Calculations and Results sheets write the unit as it is shown
    calc = wb["Calculations"]
    crf = named_cells(wb, "capital_recovery_factor")[0]
    assert calc.cell(crf.row, 3).value == "%/year" and crf.number_format == "0.0%"


def test_rows_are_sized_for_the_wider_of_arial_and_dejavu():
    from costmodel.render.workbook.sheet import _lines, text_width
    # a line 10 units wide holds 54 pt of Arial; DejaVu's columns widen with its digit (636
    # against 556 thousandths of an em), 61.77 pt. 24 i's: 24 x 2.22 = 53.28 pt in Arial (one
    # line), 24 x 2.78 = 66.72 pt in DejaVu Sans (two)
    assert _lines("i" * 24, 10) == 2
    assert _lines("i" * 20, 10) == 1  # 55.6 pt in DejaVu Sans
    # "0000" is 4 digits in either font; "iiii" 8.88 pt of Arial, 11.12 pt of DejaVu Sans,
    # over DejaVu's 6.177 pt a unit: 1.80 units
    assert text_width("0000") == pytest.approx(4 * 5.56 / 5.4)
    assert text_width("iiii") == pytest.approx(11.12 / 6.1767, rel=1e-3)


@pytest.mark.parametrize("case", CASES)
def test_print_setup(cases, case):
    from costmodel.render.workbook.print_setup import MIN_SCALE, page_scale
    from costmodel.render.workbook.sheet import Sheet
    wb = load_workbook(cases[case][0])
    for title in VISIBLE:
        if title not in wb.sheetnames:
            continue
        ws = wb[title]
        setup = ws.page_setup
        assert setup.orientation == "landscape", title
        assert ws.print_area, title
        fitted = ws.sheet_properties.pageSetUpPr is not None and \
            ws.sheet_properties.pageSetUpPr.fitToPage
        if fitted:
            # fitted to the width only where the columns fit at 70 % or more
            probe = Sheet.__new__(Sheet)
            probe.widths = {i: (ws.column_dimensions[get_column_letter(i)].width or 8.43)
                            for i in range(1, ws.max_column + 1)}
            area = ws.print_area if isinstance(ws.print_area, str) else ws.print_area[0]
            last = range_boundaries(area.split("!")[-1].replace("$", ""))[2]
            assert page_scale(probe, 1, last, stored=True) >= MIN_SCALE, title
            assert setup.fitToWidth in (None, 1), title
        else:
            assert setup.scale is not None and setup.scale >= 70, title
        if title != "Summary":
            assert ws.print_title_rows, title
    summary = wb["Summary"]  # one page: fitted, 1 page high (the attribute's default)
    assert summary.sheet_properties.pageSetUpPr.fitToPage
    assert summary.page_setup.fitToHeight in (None, 1)
    for title in ("Inputs", "Calculations", "Results"):
        assert wb[title].freeze_panes == "D5"  # names and units stay in view


def test_summary_comes_first_with_the_answer(cases):
    path, systems, _, _ = cases["three-matched"]
    wb = load_workbook(path, data_only=True)
    assert wb.sheetnames[0] == "Summary" and wb.active.title == "Summary"
    ws = wb["Summary"]
    header = [c.value for c in ws[4]][3:6]
    assert header == [s.result.name for s in systems]  # whole names
    answer = [c.value for c in ws[5]][3:6]
    assert answer == [pytest.approx(s.result.values["cost_per_mtok_total"], rel=1e-12)
                      for s in systems]
    with zipfile.ZipFile(path) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
        assert len(charts) == 2 + len(systems)  # Summary, Results, one per curve
        curve = z.read(charts[-1]).decode()
    # every series of the curve chart shows: markers for the points, a larger diamond for
    # the chosen point, a line for the frontier
    assert '<c:symbol val="circle"/>' in curve and '<c:symbol val="diamond"/>' in curve
    assert '<c:size val="12"/>' in curve and curve.count("<c:ser>") == 3


@pytest.mark.parametrize("hardware", ["X!A1", "Sheet1!$A$1"])
def test_a_curve_id_like_a_cell_reference_titles_its_chart_as_text(tmp_path, hardware):
    # XlsxWriter takes a title such as "X!A1/..." for a reference to cell A1 of sheet X
    # (LibreOffice then shows "Chart Title"): the curve's id must stay the chart's text
    from dataclasses import replace
    from xml.sax.saxutils import escape
    systems, _ = workbook_systems([SCENARIOS / "curve-gpt-oss-120b-b200.toml"])
    s = systems[0]
    curve = s.curve.curve
    curve = replace(curve, key=replace(curve.key, hardware=hardware))
    systems = [replace(s, curve=replace(s.curve, curve=curve))]
    assert curve.key.id.startswith(f"{hardware}/gpt-oss-120b/")
    path = save_workbook(build_workbook(systems), tmp_path / "ref.xlsx")
    with zipfile.ZipFile(path) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
        xml = next(x for x in (z.read(n).decode() for n in charts)
                   if escape(curve.key.id) in x)
    title = re.search(r"<c:title>(.*?)</c:title>", xml, flags=re.S)[1]
    assert "<c:rich>" in title and f"<a:t>{escape(curve.key.id)}</a:t>" in title
    assert "<c:strRef>" not in title and "<c:f>" not in title


def test_chart_text_helpers_keep_every_name_literal(tmp_path):
    import xlsxwriter

    from costmodel.render.workbook.chart_text import add_series, set_axis, set_title
    wb = xlsxwriter.Workbook(tmp_path / "c.xlsx")
    ws = wb.add_worksheet("Data")
    ws.write_column(0, 0, [1, 2, 3])
    chart = wb.add_chart({"type": "line"})
    add_series(chart, {"name": "S!B2", "values": ["Data", 0, 0, 2, 0]})
    add_series(chart, {"name": "plain", "values": ["Data", 0, 0, 2, 0]})
    set_title(chart, {"name": "T!C3 title"})
    set_axis(chart, "x", {"name": "=X!$D$4"})
    set_axis(chart, "y", {"name": "y"})
    ws.insert_chart(4, 2, chart)
    wb.close()
    with zipfile.ZipFile(tmp_path / "c.xlsx") as z:
        xml = z.read("xl/charts/chart1.xml").decode()
    assert "<c:strRef>" not in xml
    for text in ("S!B2", "plain", "T!C3 title", "=X!$D$4", "y"):
        assert f"<a:t>{text}</a:t>" in xml or f"<c:v>{text}</c:v>" in xml, text


# ---- what a finance reader sees: words first, no error values, unused inputs said so ---------

ERROR_VALUES = ("#N/A", "#VALUE!", "#REF!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!")


def error_cells(book, titles=VISIBLE) -> list[tuple[str, str, str]]:
    """(sheet, cell, value) of every error value the visible sheets show."""
    return [(ws.title, c.coordinate, c.value) for ws in book if ws.title in titles
            for row in ws.iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(ERROR_VALUES)]


@pytest.mark.parametrize("case", CASES)
def test_no_error_value_in_a_workbook_from_a_valid_scenario(cases, case):
    path = cases[case][0]
    assert error_cells(load_workbook(path, data_only=True)) == []
    with zipfile.ZipFile(path) as z:  # nor any cell typed as an error
        sheets = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert b't="e"' not in sheets


def test_rows_lead_with_words_and_keep_their_names(cases):
    from costmodel.render.workbook.layout import NAME_COL, UNIT_COL, row_label
    wb = load_workbook(cases["three-matched"][0])
    for sheet, name in (("Inputs", "accelerator_rated_power"), ("Inputs", "power_boundary"),
                        ("Calculations", "cost_per_mtok_total"),
                        ("Results", "cost_per_mtok_total")):
        cell = named_cells(wb, name)[0] if sheet != "Results" else next(
            r[0] for r in wb["Results"].iter_rows(min_col=NAME_COL, max_col=NAME_COL)
            if r[0].value == name)
        words = wb[sheet].cell(cell.row, 1).value
        assert words[0].isupper() and "_" not in words.split("(")[0], (sheet, words)
        code = wb[sheet].cell(cell.row, NAME_COL).value
        assert code == name or code.startswith(f"{name} = "), (sheet, code)
    assert wb["Inputs"].cell(named_cells(wb, "accelerator_rated_power")[0].row, 1).value == \
        row_label("accelerator_rated_power") == "Rated power of one accelerator package (TDP)"
    step = named_cells(wb, "cost_per_mtok_total")[0]
    assert wb["Calculations"].cell(step.row, NAME_COL).value == \
        f"cost_per_mtok_total = {MODEL.steps['cost_per_mtok_total'].expression}"
    assert wb["Inputs"].cell(named_cells(wb, "facility_pue")[0].row, UNIT_COL).value == \
        "dimensionless"


def test_unused_inputs_are_empty_cells_said_to_be_unused(single):
    from costmodel.render.workbook.layout import FIRST_COL
    wb = load_workbook(single)
    ws = wb["Inputs"]
    section = next(c.row for c in ws["A"] if isinstance(c.value, str)
                   and c.value.startswith("Not used in this scenario"))
    for name in ("accelerator_hourly_price", "accelerator_measured_power",
                 "electricity_tariff_fixed_charge", "electricity_site_basis"):
        cell = named_cells(wb, name)[0]
        assert cell.row > section, name  # grouped under "Not used in this scenario"
        if name in MODEL.inputs:
            assert cell.value is None, name  # empty: no #N/A for a reader to take as a fault
        note = ws.cell(cell.row, FIRST_COL + 1).value
        assert note.startswith("not used in this scenario"), (name, note)
    used = named_cells(wb, "electricity_price")[0]
    assert used.row < section and used.value == pytest.approx(0.0871)
    assert "EIA Electric Power Monthly" in ws.cell(used.row, FIRST_COL + 1).value  # source


def test_a_comparison_cites_its_sources_by_number_listed_under_the_inputs(three):
    from costmodel.render.workbook.layout import FIRST_COL
    wb = load_workbook(three)
    ws = wb["Inputs"]
    cited = ws.cell(named_cells(wb, "accelerator_rated_power")[0].row, FIRST_COL + 3).value
    numbers = re.findall(r"\[(\d+)\]", cited)
    assert len(numbers) == 3 and len(set(numbers)) == 3, cited  # one source per system
    listed = {m[1]: m[2] for c in ws["A"] if isinstance(c.value, str)
              for m in [re.match(r"\[(\d+)\] (.*)", c.value)] if m}
    systems, _ = workbook_systems(CURVE_SCENARIOS, matched=True)
    assert [listed[k] for k in numbers] == [s.result.provenance["accelerator.rated_power"]
                                            for s in systems]


def test_used_inputs_follow_the_switches():
    from costmodel.render.workbook.model_sheets import used_inputs
    (tco,), _ = workbook_systems([SAMPLE])
    (tou,), _ = workbook_systems([SCENARIOS / "sample-tou.toml"])
    assert {"electricity_price", "power_boundary", "accelerator_price",
            "operating_point_throughput_per_kw"} <= used_inputs(tco)
    assert not {"accelerator_hourly_price", "accelerator_measured_power",
                "electricity_tariff_fixed_charge", "operating_point_throughput",
                "money_rate"} & used_inputs(tco)
    assert "electricity_price" not in used_inputs(tou)  # a tariff instead
    assert {"electricity_tariff_fixed_charge", "electricity_tariff_scale",
            "money_rate"} <= used_inputs(tou)  # the tariff's, and EUR shown


def test_formulas_never_compute_with_an_empty_input():
    # an input a switch selects reads #N/A when empty (the engine refuses that scenario),
    # never 0; a step reading an input no switch guards is empty when it is (no value)
    capex = to_formula(MODEL.steps["capex_per_hour"].tree)
    assert 'IF(accelerator_hourly_price="",NA(),accelerator_hourly_price)' in capex
    # the factor is read outside its flat/hourly switch: no factor, no emissions (a dash)
    assert to_formula(MODEL.steps["grid_factor_location"].tree).startswith(
        'IF(electricity_carbon_intensity="","",electricity_carbon_intensity+CHOOSE(')
    assert to_formula(MODEL.steps["emissions_per_hour"].tree) == (
        'IF(grid_factor_location="","",average_power*grid_factor_location/'
        'watts_per_kilowatt)')
    assert to_formula(MODEL.steps["emissions_per_mtok"].tree).startswith(
        'IF(emissions_per_hour="","",')
    # a product carbon footprint is selected by its switch; none given: no embodied figure
    # (an empty cell, not 0), and the totals count 0 for it
    embodied = to_formula(MODEL.steps["embodied_per_accelerator"].tree)
    assert 'IF(accelerator_embodied="",NA(),accelerator_embodied)' in embodied
    assert embodied.startswith('CHOOSE(MATCH(embodied_basis,embodied_basis_levels,0),"",')
    assert to_formula(MODEL.steps["emissions_total_per_hour"].tree).endswith(
        "emissions_per_hour+CHOOSE(MATCH(embodied_basis,embodied_basis_levels,0),0,"
        'IF(embodied_per_hour="",NA(),embodied_per_hour),'
        'IF(embodied_per_hour="",NA(),embodied_per_hour),'
        'IF(embodied_per_hour="",NA(),embodied_per_hour)))')
    emissions = {f"{e}_per_{p}" for e in ("emissions", "emissions_market", "emissions_total",
                                          "emissions_market_total", "embodied")
                 for p in ("hour", "mtok")}
    assert MAY_BE_EMPTY & set(MODEL.steps) == {"bandwidth_per_watt", "grid_factor_location",
                                               "grid_factor_market",
                                               "embodied_per_accelerator", *emissions}
    for name in MODEL.inputs:  # no optional input is read bare
        if not MODEL.inputs[name].optional or MODEL.inputs[name].axes:
            continue
        for step in MODEL.scalar_steps:
            text = to_formula(MODEL.steps[step].tree)
            if text.startswith(f'IF({name}="","",'):
                continue  # the whole step is empty when the input is
            rest = text.replace(f'IF({name}="",NA(),{name})', "guarded")
            assert not re.search(rf"\b{name}\b", rest), (step, name, text)


def test_the_dash_format_keeps_the_figures_format():
    from costmodel.render.workbook.sheet import with_dash
    assert with_dash("#,##0") == '#,##0;-#,##0;#,##0;"\u2013"'
    assert with_dash("[>=100]#,##0;#,##0.0") == \
        '[>=100]#,##0;[<100]#,##0.0;#,##0.0;"\u2013"'
    assert with_dash("[>=1]#,##0.00;[>=0.01]#,##0.0000;#,##0.000000") == \
        '[>=1]#,##0.00;[>=0.01]#,##0.0000;#,##0.000000;"\u2013"'


def test_a_comparisons_summary_holds_the_ratios(three):
    wb = load_workbook(three)
    formulas = [c.value for row in wb["Summary"].iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    from costmodel.render.workbook.summary import RATIOS
    for name in RATIOS:  # (their values: test_cached_values_are_the_engines)
        assert f"={name}/{name}_s1" in formulas, name
    assert RATIOS[0] == "cost_per_mtok_total"
