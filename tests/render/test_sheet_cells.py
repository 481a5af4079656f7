"""Cells written as finished XML (costmodel.render.workbook.sheet: what makes a large sheet
fast, issue 42) are the cells XlsxWriter writes: the same elements, attributes and cached
results, whatever the value (a figure, a yes/no, text that needs escaping, empty text, an
error), and rows written whole read back as the cells they hold."""
from __future__ import annotations

import io
import math
import re
import zipfile

import pytest
from openpyxl import load_workbook

from costmodel.render.workbook.sheet import Book, formula_xml, number_xml, xml_text

VALUES = [1.5, 0.1, -2.25e-7, 1e300, 3, True, False, "A & B < C > D", "", math.nan,
          math.inf]
FORMULAS = ['IF(A1>0,"x & y",B1)', "MAX(A1,0)*B1-C1/2", 'A1&"<>"']


def _sheet_xml(book: Book) -> str:
    data = book.close()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode()
    return re.search(r"<sheetData>.*</sheetData>", xml).group(0)


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_formula_as_xml_is_xlsxwriters_cell(formula):
    fast, slow = Book(), Book()
    for book, plain in ((fast, None), (slow, False)):
        s = book.add_sheet("S")
        for row, value in enumerate(VALUES, 1):
            s.formula(row, 2, "=" + formula, value, "calc", "0.00", plain=plain)
            s.formula(row, 3, formula, value, "result", "0.00",
                      empty=isinstance(value, float) and math.isnan(value), plain=plain)
    assert _sheet_xml(fast) == _sheet_xml(slow)


def test_a_number_as_xml_is_xlsxwriters_cell():
    fast, slow = Book(), Book()
    s = fast.add_sheet("S")
    t = slow.add_sheet("S")
    for row, value in enumerate((1.5, 0.1, -2.25e-7, 1e300, 3, 123456789012345678), 1):
        s.number(row, 1, value, "input", "#,##0")
        t.ws.write_number(row - 1, 0, value, slow.format("input", "#,##0"))
    assert _sheet_xml(fast) == _sheet_xml(slow)


def test_rows_written_whole_read_back_as_their_cells():
    book = Book()
    s = book.add_sheet("S")
    s.text(1, 1, "above", "label")
    xf = s.xf("calc", "0.00")
    rows = {r: number_xml(f"A{r}", xf, r) + formula_xml(f"B{r}", xf, xml_text(f'A{r}*2&"<"'),
                                                        f"{2 * r}<", escaped=True)
            for r in range(2, 6)}
    s.put_rows(2, 5, 1, 2, rows)
    s.height(3, 30.0)  # a row written whole keeps a height of its own
    s.number(6, 1, 7.0)
    data = book.close()
    ws = load_workbook(io.BytesIO(data))["S"]
    assert [[c.value for c in row] for row in ws.iter_rows(min_row=1, max_row=6)] == [
        ["above", None], [2, '=A2*2&"<"'], [3, '=A3*2&"<"'], [4, '=A4*2&"<"'],
        [5, '=A5*2&"<"'], [7, None]]
    assert ws.row_dimensions[3].height == 30.0
    assert ws["B2"].number_format == "0.00"
    cached = load_workbook(io.BytesIO(data), data_only=True)["S"]
    assert [cached.cell(r, 2).value for r in range(2, 6)] == ["4<", "6<", "8<", "10<"]


def test_a_row_written_whole_and_cell_by_cell_is_refused():
    book = Book()
    s = book.add_sheet("S")
    s.put_rows(2, 2, 1, 1, {2: number_xml("A2", s.xf("calc"), 1.0)})
    s.number(2, 3, 2.0)
    with pytest.raises(ValueError, match="written whole and cell by cell"):
        book.close()


def test_text_as_xml_is_xlsxwriters_cell_and_leaves_the_rest_to_the_sheet():
    fast, slow = Book(), Book()
    s, t = fast.add_sheet("S"), slow.add_sheet("S")
    xf = s.xf("plain")
    for row, text in enumerate(("tenant & co <x>", "t2", "tenant & co <x>"), 1):
        s.put_row(row, 1, 1, s.string_xml(f"A{row}", xf, text))
        t.text(row, 1, text)
    assert _sheet_xml(fast) == _sheet_xml(slow)
    assert s.string_xml("A9", xf, "") is None  # nothing to write
    assert s.string_xml("A9", xf, "x" * 16_384) is None  # the sheet's own checks
