"""Workbook export and import, checked in-process (the LibreOffice recalculation checks are in
test_workbook_recalc.py)."""
from __future__ import annotations

import io
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

from costmodel.app import reprice
from costmodel.inputs import InputError
from costmodel.model import MODEL
from costmodel.workbook.excel_formula import to_formula
from costmodel.workbook.export import build_workbook, save_workbook, suffixed
from costmodel.workbook.names import named_cells
from costmodel.workbook.reader import MAX_BYTES, read_workbook

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
    assert wb.sheetnames[:4] == ["Cover", "Inputs", "Calculations", "Results"]
    assert "Curves" not in wb.sheetnames  # no curve in the sample
    for name in [*MODEL.inputs, *MODEL.enums, *MODEL.constants, *MODEL.steps]:
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
    for step in MODEL.steps.values():
        cells = named_cells(wb, step.name)
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
                 if dv.type == "decimal" and dv.operator == "between"]
    assert any(named_cells(wb, "utilisation")[0].coordinate in str(dv.sqref) for dv in fractions)
    levels = named_cells(wb, "power_boundary_levels")
    assert [c.value for c in levels] == ["chip", "node", "rack", "facility"]


def test_user_text_never_becomes_a_formula(tmp_path):
    data = {"name": "=HYPERLINK(\"http://x\",\"y\")", "accelerator": "gb300",
            "operating_point": {"throughput": "1000 token/s", "note": "=1+1",
                                "label": "@SUM(A1)"}}
    from costmodel.chain import price
    from costmodel.sources.scenario_file import build_scenario
    from costmodel.workbook.export import WorkbookSystem
    loaded = build_scenario(data)
    path = save_workbook(build_workbook([WorkbookSystem(price(loaded.scenario,
                                                              loaded.provenance))]),
                         tmp_path / "x.xlsx")
    with zipfile.ZipFile(path) as z:
        sheets = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert b"HYPERLINK" in sheets  # it is there, as text ...
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
        for name in MODEL.steps:
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
    for name in MODEL.steps:
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
    ({"utilisation": [1.7]}, "utilisation", "at most 1"),
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
