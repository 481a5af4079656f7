"""``POST /api/v1/chargeback``: the hand-derived cases through the API (records inline and a
CSV's text), the workbook and the FOCUS CSV by Accept, problem+json with field paths for bad
input, the documented example answering, and the route holding a heavy slot."""
from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from chargeback_support import (
    CACHED,
    CACHED_CENTS,
    RESERVED,
    RESERVED_CENTS,
    TWO_TENANTS,
    TWO_TENANTS_CENTS,
    cents_of,
    fleet,
)
from conftest import auth
from openpyxl import load_workbook

from costmodel.api.chargeback import EXAMPLE
from costmodel.http.limits import HEAVY

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def post(client, tokens, body, **headers):
    return client.post(f"{API}/chargeback", json=body,
                       headers={**auth(tokens["viewer"]), **headers})


def rows(text: str) -> list[dict]:
    return [{k: (v if k in ("time", "tenant", "model") else float(v)) for k, v in r.items()}
            for r in csv.DictReader(io.StringIO(text))]


@pytest.mark.parametrize("idle", ["separate", "usage", "even"])
def test_the_two_tenant_month_inline(client, tokens, idle):
    r = post(client, tokens, {"fleet": fleet(), "records": rows(TWO_TENANTS), "idle": idle})
    assert r.status_code == 200, r.get_json()
    assert cents_of(r.get_json()) == TWO_TENANTS_CENTS[idle]
    assert r.get_json()["check"]["conserved"] is True


def test_the_reserved_and_cached_cases_from_a_csv_text(client, tokens):
    r = post(client, tokens, {"fleet": fleet(reserved={"R": {"share": 0.5}}), "csv": RESERVED})
    assert cents_of(r.get_json()) == RESERVED_CENTS
    r = post(client, tokens, {"fleet": fleet(cached_weight=0.25), "csv": CACHED})
    assert cents_of(r.get_json()) == CACHED_CENTS


def test_the_workbook_and_the_focus_csv_by_accept(client, tokens):
    body = {"fleet": fleet(), "csv": TWO_TENANTS, "idle": "even"}
    r = post(client, tokens, body, Accept=XLSX)
    assert r.status_code == 200 and r.mimetype == XLSX
    wb = load_workbook(io.BytesIO(r.data), data_only=True)
    assert wb.defined_names.get("chargeback_check") is not None
    r = post(client, tokens, body, Accept="text/csv")
    assert r.status_code == 200 and r.mimetype == "text/csv"
    focus = list(csv.DictReader(io.StringIO(r.data.decode())))
    assert sum(Decimal(x["BilledCost"]) for x in focus) == Decimal("2880.00")
    by = {}
    for x in focus:
        by[x["SubAccountId"]] = by.get(x["SubAccountId"], 0) + Decimal(x["BilledCost"])
    assert by == {"A": Decimal("1717.78"), "B": Decimal("1162.22"), "": Decimal("0.00")}


def test_bad_input_is_a_problem_with_the_field_path(client, tokens):
    bad = rows(TWO_TENANTS)
    bad[1]["output_tokens"] = "lots"
    r = post(client, tokens, {"fleet": fleet(), "records": bad})
    assert r.status_code == 422 and r.mimetype == "application/problem+json"
    assert r.get_json()["errors"][0]["path"] == "records[1].output_tokens"
    r = post(client, tokens, {"fleet": fleet(), "records": rows(TWO_TENANTS), "by": "team"})
    assert r.status_code == 422 and r.get_json()["errors"][0]["path"] == "by"
    r = post(client, tokens, {"fleet": fleet(), "records": rows(TWO_TENANTS),
                              "period": "2027-01"})
    assert r.status_code == 422 and r.get_json()["errors"][0]["path"] == "period"
    data = fleet()
    data["pools"][0]["scenario"] = "/etc/passwd"  # the service reads no file paths
    r = post(client, tokens, {"fleet": data, "csv": TWO_TENANTS})
    assert r.status_code == 422
    assert r.get_json()["errors"][0]["path"] == "fleet.pools[0].scenario"
    for name in ("fixture:../../etc/passwd", "fixture:/etc/passwd", "fixture:no-such",
                 "fixture:sample-tco/../../pyproject"):
        data["pools"][0]["scenario"] = name  # a shipped example's name, never a path
        r = post(client, tokens, {"fleet": data, "csv": TWO_TENANTS})
        assert r.status_code == 422, name
        assert r.get_json()["errors"][0]["path"] == "fleet.pools[0].scenario"
    r = post(client, tokens, {"fleet": fleet(), "csv": TWO_TENANTS, "records": []})
    assert r.status_code == 422


def test_a_shipped_scenario_by_name_prices_as_its_file(client, tokens):
    """``fixture:sample-tco`` in a posted fleet is fixtures/scenarios/sample-tco.toml: the
    pool costs what the same file costs on the command line."""
    from conftest import ROOT

    from costmodel.app.chargeback import ChargebackRequest, chargeback
    from costmodel.cli.common import CONTEXT
    from costmodel.sources.usage import read_usage_bytes
    data = fleet()
    data["pools"][0]["scenario"] = "fixture:sample-tco"
    r = post(client, tokens, {"fleet": data, "csv": TWO_TENANTS})
    assert r.status_code == 200, r.get_json()
    data["pools"][0]["scenario"] = "sample-tco.toml"  # the file, as the command line reads it
    by_file = chargeback(CONTEXT, ChargebackRequest(
        data, read_usage_bytes(TWO_TENANTS.encode(), "usage.csv"),
        base=ROOT / "fixtures" / "scenarios")).to_json()
    assert cents_of(r.get_json()) == cents_of(by_file)
    assert r.get_json()["total"]["value"] > 1000  # the sample's rack, not the hand scenario


def test_the_documented_example_answers(client, tokens):
    r = post(client, tokens, EXAMPLE)
    assert r.status_code == 200
    assert cents_of(r.get_json()) == TWO_TENANTS_CENTS["usage"]
    spec = client.get(f"{API}/openapi.json").get_json()
    assert "/api/v1/chargeback" in spec["paths"]


def test_the_route_holds_a_heavy_slot():
    assert ("POST", "/api/v1/chargeback") in HEAVY


def test_a_record_value_is_one_line_of_text(client, tokens):
    """Inline records are read as the CSV reader reads a file: a line break in a column's
    value or name would end the record, so it is refused at its path (the document says so:
    schemathesis found a tenant with a line break refused as unreadable CSV)."""
    for bad in ({"tenant": "A\nB"}, {"team\r": "x"}, {"tenant": "A\tB"}):
        records = rows(TWO_TENANTS)
        records[0] = {**records[0], **bad}
        r = post(client, tokens, {"fleet": fleet(), "records": records})
        assert r.status_code == 422, bad
        path = r.get_json()["errors"][0]["path"]
        assert path == f"records[0].{next(iter(bad))}", path


def test_a_workbook_over_its_lines_bound_is_a_413_the_json_is_not(client, tokens,
                                                                  monkeypatch):
    # the hand month has three lines (A, B and the pool's idle line): a bound of two refuses
    # its workbook, naming the bound, and still answers its JSON and FOCUS CSV
    from costmodel.app import caps
    monkeypatch.setattr(caps, "MAX_CHARGEBACK_LINES", 2)
    body = {"fleet": fleet(), "csv": TWO_TENANTS, "idle": "even"}
    r = post(client, tokens, body, Accept=XLSX)
    assert r.status_code == 413 and r.mimetype == "application/problem+json"
    assert r.get_json()["type"].endswith("/answer-too-large")
    assert r.get_json()["errors"][0]["path"] == "by"
    assert "a chargeback workbook holds at most 2 lines" in r.get_json()["detail"]
    assert "this period has 3" in r.get_json()["detail"]
    assert post(client, tokens, body).status_code == 200
    assert post(client, tokens, body, Accept="text/csv").status_code == 200
    monkeypatch.setattr(caps, "MAX_CHARGEBACK_LINES", 3)  # at the bound: built
    r = post(client, tokens, body, Accept=XLSX)
    assert r.status_code == 200 and r.mimetype == XLSX


def test_the_workbooks_lines_bound_is_stated_in_the_document(client):
    from costmodel.app.caps import MAX_CHARGEBACK_LINES
    op = client.get(f"{API}/openapi.json").get_json()["paths"][f"{API}/chargeback"]["post"]
    assert f"at most {MAX_CHARGEBACK_LINES:,} lines" in op["description"]
    assert MAX_CHARGEBACK_LINES == 2_000
