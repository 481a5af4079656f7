"""The Price page's workbook download in the page's currency: set to EUR with a rate, the
workbook it links to answers on its Summary and Cover in EUR (the same figure the page and
the API show), with the rate beside it; without a currency, in USD."""
from __future__ import annotations

import io
from urllib.parse import urlencode

import pytest
from openpyxl import load_workbook

EUR = {"currency": "EUR", "fx_rate": "0.92", "fx_date": "2026-11-30",
       "fx_source": "illustrative assumption for the test"}
TOU = {"electricity_kind": "tariff", "tariff": "illustrative-tou-peak-16-21",
       "utilisation": "60"}


def _answer(ws) -> dict[str, list]:
    return {row[0].value: [c.value for c in row] for row in ws.iter_rows() if row[0].value}


@pytest.mark.parametrize("money,code", [(EUR, "EUR"), ({}, "USD")])
def test_the_workbook_download_answers_in_the_pages_currency(web, money, code):
    query = urlencode({**TOU, **money})
    book = web.get("/price.xlsx?" + query)
    assert book.status_code == 200 and book.data[:2] == b"PK"
    formulas = load_workbook(io.BytesIO(book.data))
    values = load_workbook(io.BytesIO(book.data), data_only=True)
    page = web.get("/price.json?" + query).get_json()  # the API's answer to the same form
    total = page["cost_per_mtok"]["total"]
    assert total["unit"] == f"{code}/Mtok"
    for sheet, label in (("Summary", "Cost per million tokens"),
                         ("Cover", "cost per million tokens")):
        row, cached = _answer(formulas[sheet])[label], _answer(values[sheet])[label]
        assert row[2] == f"{code}/Mtok", sheet
        assert row[3] == ("=cost_per_mtok_total_shown" if code == "EUR"
                          else "=cost_per_mtok_total"), sheet
        assert cached[3] == pytest.approx(total["value"], rel=1e-12), sheet
    rate = _answer(values["Summary"]).get("Exchange rate (EUR per USD)")
    assert (rate[3] if rate else None) == (0.92 if code == "EUR" else None)
