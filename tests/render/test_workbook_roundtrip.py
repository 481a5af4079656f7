"""Workbooks saved by real editors read back (issue 12, reading): each kind of workbook the
application writes (one scenario, three systems matched, curve-based, quotes, sensitivity),
opened and saved by LibreOffice (recalculated or not) or by openpyxl, reprices to the
engine's figures; an input edited and saved by LibreOffice reprices to the engine's figures
for that input; every refusal names the sheet and the cell.

The LibreOffice tests are skipped where LibreOffice is not installed, unless
COSTMODEL_REQUIRE_LIBREOFFICE is set (as .ci/run sets it): then they fail instead.
"""
from __future__ import annotations

import io
import math
import re
import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CURVE_SCENARIOS, PUBLISHED, ROOT, SCENARIOS, auth, require_libreoffice
from openpyxl import load_workbook

from costmodel import app
from costmodel.cli import main
from costmodel.model.errors import InputError, NonFiniteResult
from costmodel.model.results import Result
from costmodel.model.steps import MODEL
from costmodel.render.workbook.excel_formula import to_formula
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import save_with_libreoffice
from costmodel.sources.quote_file import read_quotes

CTX = app.LocalContext()
SAMPLE = SCENARIOS / "sample-tco.toml"
CURVE = SCENARIOS / "curve-gpt-oss-120b-b200.toml"
QUOTED = [PUBLISHED / "deepseek-r1_gb300_matched.toml",
          PUBLISHED / "deepseek-r1_jalapeno_matched.toml"]
QUOTES = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
# the edit made before LibreOffice saves: a number and a list choice, in every system's column
EDIT = {"electricity_price": 0.1234, "power_boundary": "rack"}
EDIT_AS_SET = ["electricity.price=0.1234 USD/kWh", "power.boundary=rack"]


def _specs(files: Sequence[Path], overrides: Sequence[str] = ()) -> list[app.ScenarioSpec]:
    return [app.ScenarioSpec(app.FileScenario(Path(f)), app.overrides_from_text(list(overrides)))
            for f in files]


def _compared(files: Sequence[Path], reading: app.Reading
              ) -> Callable[[Sequence[str]], tuple[bytes, list[Result]]]:
    """A kind built like `costmodel workbook`: the workbook, and the engine's results priced
    on their own (not read from the workbook)."""
    def build(overrides: Sequence[str]) -> tuple[bytes, list[Result]]:
        book = app.workbook(CTX, _specs(files, overrides), reading)
        engine = app.compare(CTX, _specs(files, overrides), reading)
        return book.content, [p.result for p in engine.systems]
    return build


def _quotes(overrides: Sequence[str]) -> tuple[bytes, list[Result]]:
    ranking = app.quotes_compare(CTX, read_quotes(QUOTES), _specs(QUOTED, overrides))
    return app.quotes_workbook(ranking).content, [p.result for p in ranking.systems]


def _sensitivity(overrides: Sequence[str]) -> tuple[bytes, list[Result]]:
    analysis = app.tornado(CTX, _specs([SAMPLE], overrides)[0])
    return app.analysis_workbook(analysis).content, [analysis.priced.result]


KINDS: dict[str, Callable[[Sequence[str]], tuple[bytes, list[Result]]]] = {
    "single": _compared([SAMPLE], app.OWN_POINT),
    "three-matched": _compared(CURVE_SCENARIOS, app.MATCHED),
    "curve": _compared([CURVE], app.OWN_POINT),
    "quotes": _quotes,
    "sensitivity": _sensitivity,
}


@dataclass(frozen=True)
class Kind:
    path: Path  # the workbook as the application wrote it
    results: list[Result]  # the engine's
    edited: Path  # with EDIT made by openpyxl
    edited_results: list[Result]  # the engine's, with EDIT_AS_SET


def _edit(path: Path, out: Path, edits: dict[str, object]) -> Path:
    wb = load_workbook(path)
    for name, value in edits.items():
        for cell in named_cells(wb, name):
            cell.value = value
    wb.save(out)
    return out


@pytest.fixture(scope="module")
def kinds(tmp_path_factory) -> dict[str, Kind]:
    folder = tmp_path_factory.mktemp("kinds")
    out = {}
    for kind, build in KINDS.items():
        content, results = build(())
        path = folder / f"{kind}.xlsx"
        path.write_bytes(content)
        _, edited_results = build(EDIT_AS_SET)
        out[kind] = Kind(path, results, _edit(path, folder / f"{kind}-edited.xlsx", EDIT),
                         edited_results)
    return out


def _need_libreoffice() -> None:
    require_libreoffice(module=False)


def _saved_by_libreoffice(path: Path) -> bool:
    with zipfile.ZipFile(path) as z:
        return b"LibreOffice" in z.read("docProps/app.xml")


@pytest.fixture(scope="module")
def libreoffice(kinds, tmp_path_factory) -> dict[tuple[str, bool], Path]:
    """Every kind opened and saved by LibreOffice, recalculated (True) and not (False), and
    every edited kind saved recalculated: three LibreOffice runs in all."""
    _need_libreoffice()
    out: dict[tuple[str, bool], Path] = {}
    for recalc in (True, False):
        folder = tmp_path_factory.mktemp(f"lo-{'recalc' if recalc else 'kept'}")
        saved = save_with_libreoffice([k.path for k in kinds.values()], folder, recalc=recalc)
        out.update({(kind, recalc): p for kind, p in zip(kinds, saved, strict=True)})
    saved = save_with_libreoffice([k.edited for k in kinds.values()],
                                  tmp_path_factory.mktemp("lo-edited"))
    out.update({(f"{kind}-edited", True): p for kind, p in zip(kinds, saved, strict=True)})
    return out


def _assert_prices_like(imported: app.WorkbookImport, results: list[Result]) -> None:
    assert len(imported.results) == len(results)
    for got, want in zip(imported.results, results, strict=True):
        assert got.name == want.name
        for name in MODEL.scalar_steps:
            assert got.values[name] == pytest.approx(want.values[name], rel=1e-9,
                                                     nan_ok=True), (got.name, name)


# ---- LibreOffice ------------------------------------------------------------------------------

@pytest.mark.libreoffice
@pytest.mark.parametrize("recalc", [True, False], ids=["recalculated", "not-recalculated"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_saved_by_libreoffice_reprices_like_the_engine(kinds, libreoffice, kind, recalc):
    saved = libreoffice[(kind, recalc)]
    assert _saved_by_libreoffice(saved)  # LibreOffice wrote this file, not the export
    imported = app.reprice(saved)
    _assert_prices_like(imported, kinds[kind].results)
    # numbers LibreOffice rounded to 15 digits, the #N/A placeholders it wrote as formulas,
    # its shared strings: none of it is an edit, and no calculation reads as edited by hand
    assert imported.changes == []
    assert imported.warnings == []


@pytest.mark.libreoffice
def test_libreoffice_writes_what_the_reader_must_accept(libreoffice):
    """What this file's tests depend on: LibreOffice keeps an absent optional input's empty
    cell empty (the export writes no error value; #N/A as an editor may write it is read in
    test_absent_optional_input_in_any_editors_spelling), and saves numbers to 15
    significant digits."""
    saved = load_workbook(libreoffice[("single", True)])
    assert named_cells(saved, "accelerator_measured_power")[0].value is None
    three = load_workbook(libreoffice[("three-matched", False)])
    written = [c.value for c in named_cells(three, "electricity_price")]
    assert written == [0.0871] * 3  # the engine's 0.08710000000000001 USD/kWh, as saved


@pytest.mark.libreoffice
@pytest.mark.parametrize("kind", list(KINDS))
def test_edited_then_saved_by_libreoffice_reprices_like_the_engine(kinds, libreoffice, kind):
    saved = libreoffice[(f"{kind}-edited", True)]
    k = kinds[kind]
    # the edit matters: the engine's answer moved
    assert k.edited_results[0].values["cost_per_mtok_total"] != pytest.approx(
        k.results[0].values["cost_per_mtok_total"], rel=1e-6)
    imported = app.reprice(saved)
    _assert_prices_like(imported, k.edited_results)
    assert sorted((c.system, c.name, c.after) for c in imported.changes) == sorted(
        (r.name, name, value) for r in k.results for name, value in EDIT.items())
    assert imported.warnings == []
    # what LibreOffice shows is what was priced
    shown = load_workbook(saved, data_only=True)
    for cell, result in zip(named_cells(shown, "cost_per_mtok_total"), imported.results,
                            strict=True):
        assert cell.value == pytest.approx(result.values["cost_per_mtok_total"], rel=1e-9)
    sources = imported.results[0].disclosure()["sources"]
    assert sources["electricity.price"].startswith("edited in workbook")


@pytest.mark.libreoffice
def test_refusal_after_libreoffice_names_the_sheet_and_cell(kinds, tmp_path):
    _need_libreoffice()
    bad = _edit(kinds["three-matched"].path, tmp_path / "bad.xlsx", {})
    wb = load_workbook(bad)
    cell = named_cells(wb, "utilisation_s2")[0]
    cell.value = 1.5
    wb.save(bad)
    (saved,) = save_with_libreoffice([bad], tmp_path / "lo")
    with pytest.raises(InputError) as info:
        app.reprice(saved)
    assert str(info.value) == (f"Inputs!{cell.coordinate} (utilisation, system 2): "
                               f"must be at most 100 %, got 150 %")
    run = CliRunner().invoke(main, ["reprice", str(saved)])
    assert run.exit_code == 2
    assert f"Inputs!{cell.coordinate} (utilisation, system 2): must be at most 100 %" in run.output


@pytest.mark.libreoffice
@pytest.mark.parametrize("kind", ["three-matched", "quotes"])
def test_libreoffice_then_openpyxl_reprices_like_the_engine(kinds, libreoffice, kind):
    imported = app.reprice(_resaved(libreoffice[(kind, True)]))
    _assert_prices_like(imported, kinds[kind].results)
    assert imported.changes == [] and imported.warnings == []


# ---- openpyxl and hand edits (no LibreOffice) -------------------------------------------------

def _resaved(path: Path) -> bytes:
    buf = io.BytesIO()
    load_workbook(path).save(buf)
    return buf.getvalue()


@pytest.mark.parametrize("kind", list(KINDS))
def test_openpyxl_round_trip_reprices_like_the_engine(kinds, kind):
    imported = app.reprice(_resaved(kinds[kind].path))
    _assert_prices_like(imported, kinds[kind].results)
    assert imported.changes == [] and imported.warnings == []


def test_reading_says_nothing_on_stderr(kinds):
    """openpyxl is handed only the sheets read, each other one an empty stand-in: the print
    areas and titles each sheet holds still find their sheet (else a warning per sheet)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kind in ("single", "three-matched"):
            assert len(app.reprice(kinds[kind].path).results) == len(kinds[kind].results)


@pytest.mark.parametrize("placeholder", [None, "#N/A", "=NA()", "=#N/A", "=na( )"])
def test_absent_optional_input_in_any_editors_spelling(kinds, tmp_path, placeholder):
    # the sample's absent inputs (no measured power, no hourly price...): the export's
    # placeholder, as an editor may save it
    given = kinds["single"].results[0].scenario.to_inputs()
    absent = [n for n, i in MODEL.inputs.items() if not i.axes and math.isnan(given[n])]
    assert "accelerator_measured_power" in absent and len(absent) >= 3
    path = _edit(kinds["single"].path, tmp_path / "na.xlsx", dict.fromkeys(absent, placeholder))
    imported = app.reprice(path)
    _assert_prices_like(imported, kinds["single"].results)
    assert imported.changes == []


def _refusal(path: Path) -> str:
    with pytest.raises(InputError) as info:
        app.reprice(path)
    return str(info.value)


def _coordinate(path: Path, name: str) -> str:
    return f"Inputs!{named_cells(load_workbook(path), name)[0].coordinate}"


@pytest.mark.parametrize("name,value,message", [
    ("facility_pue", "=NA()", "required, but the cell is empty or #N/A"),
    ("facility_pue", None, "required, but the cell is empty or #N/A"),
    ("electricity_price", "0.1234", "a number stored as text ('0.1234'): enter it as a "
                                    "number (whether a formula computes with text depends on "
                                    "the spreadsheet and its locale)"),
    ("electricity_price", "=0.1*2", "an input must be a value, not a formula"),
    ("electricity_price", True, "expected a number, got True"),
    ("utilisation", 1.5, "must be at most 100 %, got 150 %"),  # as the cell shows it
    ("facility_pue", 0.8, "must be at least 1, got 0.8 (scenario key facility.pue)"),
    ("node_accelerators", 2.5, "expected a whole number, got 2.5"),
    ("power_boundary", "=Lists!A3", "expected one of chip, node, rack, facility, got a formula"),
])
def test_every_refusal_names_the_sheet_and_cell(kinds, tmp_path, name, value, message):
    path = _edit(kinds["single"].path, tmp_path / "bad.xlsx", {name: value})
    assert _refusal(path) == f"{_coordinate(path, name)} ({name}): {message}"


def test_the_api_names_the_cell(kinds, tmp_path, client, tokens):
    path = _edit(kinds["three-matched"].path, tmp_path / "bad.xlsx", {})
    wb = load_workbook(path)
    cell = named_cells(wb, "utilisation_s2")[0]
    cell.value = 1.5
    wb.save(path)
    resp = client.post("/api/v1/workbook/reprice", data=path.read_bytes(), headers=auth(
        tokens["viewer"]), content_type="application/vnd.openxmlformats-officedocument."
                                         "spreadsheetml.sheet")
    assert resp.status_code == 422
    assert resp.get_json()["errors"] == [{"path": f"Inputs!{cell.coordinate} (utilisation, "
                                                  f"system 2)",
                                          "message": "must be at most 100 %, got 150 %"}]


def test_rent_without_an_hourly_price_names_both_cells(kinds, tmp_path):
    path = _edit(kinds["single"].path, tmp_path / "rent.xlsx", {"accelerator_cost_basis": "rent"})
    hourly, basis = (_coordinate(path, n) for n in ("accelerator_hourly_price",
                                                    "accelerator_cost_basis"))
    assert _refusal(path) == (f"{hourly} (accelerator_hourly_price): {basis} says rent but the "
                              f"hourly price is empty")


def test_overflow_names_the_cell(kinds, tmp_path):
    # (a throughput of 1e-308 token/s is refused by its bound first: issue 22, section 6)
    path = _edit(kinds["curve"].path, tmp_path / "huge.xlsx", {"electricity_price": 1e308})
    with pytest.raises(NonFiniteResult) as info:
        app.reprice(path)
    (where, message), = info.value.errors
    assert where == f"{_coordinate(path, 'electricity_price')} (electricity_price)"
    assert message.startswith("1e+308 USD/kWh overflows the calculation")
    path = _edit(kinds["curve"].path, tmp_path / "tiny.xlsx",
                 {"operating_point_throughput": 1e-308})
    assert _refusal(path).endswith("must be at least 1e-06 token/s, got 1e-308 token/s "
                                   "(scenario key operating_point.throughput)")


def test_a_calculation_respelled_is_no_edit_and_a_changed_one_is(kinds, tmp_path):
    wb = load_workbook(kinds["single"].path)
    cell = named_cells(wb, "cost_per_mtok_total")[0]
    formula = cell.value
    assert formula == "=" + to_formula(MODEL.steps["cost_per_mtok_total"].tree)
    respelled = re.sub(r"([*/+-])", r" \1 ", formula).upper()
    assert respelled != formula
    cell.value = respelled
    wb.save(tmp_path / "respelled.xlsx")
    assert app.reprice(tmp_path / "respelled.xlsx").warnings == []
    cell.value = formula + "*2"
    wb.save(tmp_path / "changed.xlsx")
    (warning,) = app.reprice(tmp_path / "changed.xlsx").warnings
    assert warning.startswith(f"Calculations!{cell.coordinate} (cost_per_mtok_total) was "
                              f"edited")


def test_numbers_as_an_editor_saves_them_are_not_edits(kinds, tmp_path):
    """15 significant digits (what LibreOffice and Excel keep) of the exported value is the
    exported value; a change in the 10th digit is an edit."""
    three = kinds["three-matched"]
    wb = load_workbook(three.path)
    exported = [c.value for c in named_cells(wb, "operating_point_throughput")]
    assert any(float(f"{v:.15g}") != v for v in exported)  # the rounding loses something
    for cell, v in zip(named_cells(wb, "operating_point_throughput"), exported, strict=True):
        cell.value = float(f"{v:.15g}")
    wb.save(tmp_path / "rounded.xlsx")
    imported = app.reprice(tmp_path / "rounded.xlsx")
    assert imported.changes == []
    for got, want in zip(imported.results, three.results, strict=True):
        assert got.values["cost_per_mtok_total"] == want.values["cost_per_mtok_total"]
    cell = named_cells(wb, "operating_point_throughput_s2")[0]
    cell.value = exported[1] * (1 + 1e-9)
    wb.save(tmp_path / "moved.xlsx")
    (change,) = app.reprice(tmp_path / "moved.xlsx").changes
    assert (change.name, change.system) == ("operating_point_throughput", three.results[1].name)
    assert math.isclose(change.after, exported[1] * (1 + 1e-9), rel_tol=1e-15)


# ---- a second recalculation engine: the formulas package --------------------------------------

def _system_spelling(path: Path, out: Path) -> Path:
    """The workbook with every formula in system *i*'s column reading the single-cell
    ``_s<i>`` names instead of the names spanning a row of systems: the implicit intersection
    spelled out, for an engine that does not intersect (formulas 1.3.4 takes a multi-cell
    name's first cell)."""
    from openpyxl.formula.tokenizer import Token, Tokenizer
    wb = load_workbook(path)
    names = set(wb.defined_names)
    first = [named_cells(wb, n)[0].column for n in names if n.endswith("_s1")]
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type != "f" or not first:
                    continue
                system = c.column - first[0] + 1
                tokens = Tokenizer(c.value).items
                for t in tokens:
                    if t.type == Token.OPERAND and t.subtype == Token.RANGE \
                            and f"{t.value}_s{system}" in names:
                        t.value = f"{t.value}_s{system}"
                c.value = "=" + "".join(t.value for t in tokens)
    wb.save(out)
    return out


@pytest.mark.parametrize("edited", [False, True], ids=["as-exported", "edited"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_formulas_package_recalculates_like_the_engine(kinds, tmp_path, kind, edited):
    formulas = pytest.importorskip("formulas", reason="the formulas package (the test extra) "
                                   "is not installed: the second engine is not checked")
    k = kinds[kind]
    path, results = (k.edited, k.edited_results) if edited else (k.path, k.results)
    spelled = _system_spelling(path, tmp_path / "spelled.xlsx")
    solution = formulas.ExcelModel().loads(str(spelled)).finish().calculate()
    wb = load_workbook(spelled)
    for name in MODEL.scalar_steps:
        for cell, result in zip(named_cells(wb, name), results, strict=True):
            got = solution[f"'[spelled.xlsx]{cell.parent.title.upper()}'!{cell.coordinate}"]
            got, want = got.value[0, 0], result.values[name]
            if math.isnan(want):  # the engine has no value: the spreadsheet shows an error
                assert not isinstance(got, (int, float)), (name, got)
            else:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-300), (name, cell.coordinate)
