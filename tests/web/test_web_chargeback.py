"""The Chargeback page: the hand-derived month uploaded gives the CLI's and the API's figures
(the table, the check, the chart), the workbook and the FOCUS CSV download from the same
form, a POST without the CSRF token is refused, and a bad file is a 422 in words."""
from __future__ import annotations

import io
import json
import re
from decimal import Decimal

import pytest
from chargeback_support import TWO_TENANTS, TWO_TENANTS_CENTS, fleet


def _csrf(client, path: str) -> str:
    r = client.get(path)
    assert r.status_code == 200
    return re.search(r'name="csrf_token" value="([^"]+)"', r.text).group(1)


def _post(web, idle="even", usage=TWO_TENANTS, fmt="html", token=None):
    token = token if token is not None else _csrf(web, "/chargeback")
    return web.post("/chargeback", content_type="multipart/form-data", data={
        "csrf_token": token, "by": "tenant", "idle": idle, "period": "", "format": fmt,
        "usage": (io.BytesIO(usage.encode()), "usage.csv"),
        "fleet": (io.BytesIO(json.dumps(fleet()).encode()), "fleet.json")})


@pytest.mark.parametrize("idle", ["separate", "usage", "even"])
def test_the_hand_month_on_the_page(web, idle):
    r = _post(web, idle)
    assert r.status_code == 200, r.text
    charges = re.findall(r'data-figure="charge">([\d,.]+)<', r.text)
    want = TWO_TENANTS_CENTS[idle]
    assert [Decimal(c.replace(",", "")) for c in charges] == \
        [Decimal(want["A"]) / 100, Decimal(want["B"]) / 100]
    idle_line = re.search(r'data-figure="idle">([\d,.]+)<', r.text).group(1)
    assert Decimal(idle_line.replace(",", "")) == Decimal(want["idle"]) / 100
    assert "conserved to the cent" in r.text and 'data-testid="chart"' in r.text


def test_the_workbook_and_the_focus_csv_download(web):
    r = _post(web, fmt="xlsx")
    assert r.status_code == 200 and r.data[:2] == b"PK"
    r = _post(web, fmt="csv")
    assert r.status_code == 200 and r.mimetype == "text/csv"
    assert sum(Decimal(line.split(",")[25]) for line in r.data.decode().splitlines()[1:]) \
        == Decimal("2880.00")


def test_without_the_csrf_token_it_is_refused(web):
    assert _post(web, token="").status_code == 400


def test_a_bad_row_is_a_422_naming_the_line_and_column(web):
    r = _post(web, usage=TWO_TENANTS.replace("1000000000,0,1000000000", "1000000000,0,x"))
    assert r.status_code == 422
    assert "usage.csv line 2, column output_tokens: cannot read &#39;x&#39; as a number" in r.text


def test_a_workbook_over_its_lines_bound_is_a_413_page(web, monkeypatch):
    from costmodel.app import caps
    monkeypatch.setattr(caps, "MAX_CHARGEBACK_LINES", 2)  # the hand month has three lines
    r = _post(web, fmt="xlsx")
    assert r.status_code == 413 and r.data[:2] != b"PK"
    assert "a chargeback workbook holds at most 2 lines" in r.text
    assert _post(web).status_code == 200  # the page itself answers


def test_the_page_charges_emissions_as_cost(web):
    """The hand pool of tests/decisions/test_chargeback_emissions.py (500 gCO2e/kWh, a
    2,000 kg footprint): 573.42 kg in the month, a separate idle line keeping the unused
    capacity's grams; no market factor, so that column is a dash."""
    from chargeback_support import EMISSIONS_CAPACITY as CAPACITY
    from chargeback_support import EMISSIONS_SCENARIO as SCENARIO
    from chargeback_support import EMISSIONS_TOTAL_KG as TOTAL_KG
    from chargeback_support import EMISSIONS_U as U
    data = fleet()
    data["pools"][0]["scenario"] = SCENARIO
    token = _csrf(web, "/chargeback")
    r = web.post("/chargeback", content_type="multipart/form-data", data={
        "csrf_token": token, "by": "tenant", "idle": "separate", "period": "", "format": "html",
        "usage": (io.BytesIO(TWO_TENANTS.encode()), "usage.csv"),
        "fleet": (io.BytesIO(json.dumps(data).encode()), "fleet.json")})
    assert r.status_code == 200, r.text

    def kg(figure):
        return [float(v.replace(",", "")) for v in
                re.findall(rf'data-figure="{figure}">([\d,.]+)<', r.text)]
    assert kg("location") == [pytest.approx(TOTAL_KG * 4e9 / CAPACITY, abs=0.05),
                              pytest.approx(TOTAL_KG * 2e9 / CAPACITY, abs=0.05)]
    assert kg("idle-location") == [pytest.approx(TOTAL_KG * (1 - U), abs=0.05)]
    assert kg("total-location") == [pytest.approx(573.4, abs=0.05)]
    assert re.findall(r'data-figure="(?:market|total-market)">([^<]*)<', r.text) == \
        ["-", "-", "-"]
    assert 'data-testid="emissions-rule"' in r.text and "kgCO2e" in r.text
