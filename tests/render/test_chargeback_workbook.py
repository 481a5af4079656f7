"""The chargeback workbook: the Chargeback sheet's live formulas, rendered from the declared
allocation, hold the engine's figures; LibreOffice recalculates them to the engine (1e-9),
also after a tenant's tokens are edited (the pool's utilisation, its energy and every charge
follow), and the lines' cents add up to the fleet's cost.

The LibreOffice tests are skipped where it is not installed, unless
COSTMODEL_REQUIRE_LIBREOFFICE is set.
"""
from __future__ import annotations

import io

import pytest
from chargeback_support import HEADER, TWO_TENANTS, TWO_TENANTS_CENTS, fleet
from conftest import require_libreoffice
from openpyxl import load_workbook

from costmodel import app
from costmodel.app.chargeback import ChargebackRequest, chargeback, chargeback_workbook
from costmodel.render.workbook.chargeback_sheet import CHARGEBACK_SHEET, LINE_COLUMNS
from costmodel.render.workbook.names import named_cells
from costmodel.resources import fixtures_dir
from costmodel.sources.usage import read_usage_bytes

CTX = app.LocalContext()
ERRORS = ("#N/A", "#VALUE!", "#REF!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!", "Err:")
# two pools: the hand pool (rented) and the sample owned GB300 scenario, whose energy
# follows its utilisation; a reservation and three tenants
USAGE = HEADER + (
    "2026-11-03T10:00:00Z,A,m,1000000000,200000000,1000000000,10\n"
    "2026-11-04T10:00:00Z,B,m,2000000000,0,0,5\n"
    "2026-11-05T10:00:00Z,A,r1,300000000000,50000000000,90000000000,5\n"
    "2026-11-06T10:00:00Z,C,r1,100000000000,0,20000000000,5\n")


def _fleet(idle_weight=0.5):
    data = fleet(cached_weight=idle_weight, models=["m"])
    data["pools"].append({"name": "gb300", "scenario": "sample-tco.toml", "nodes": 18,
                          "models": ["r1"], "reserved": {"R": {"accelerators": 8}}})
    return data


def _ledger(usage: str, idle: str):
    return chargeback(CTX, ChargebackRequest(_fleet(), read_usage_bytes(usage.encode(), "u"),
                                             base=fixtures_dir() / "scenarios", idle=idle))


def value(wb, name):
    (cell,) = named_cells(wb, name)
    return cell.value


def lines_of(wb):
    """(tenant, pool, line total, cents) of every line row."""
    ws = wb[CHARGEBACK_SHEET]
    out = []
    for row in ws.iter_rows(min_row=1):
        cents = row[LINE_COLUMNS["cents"] - 1].value
        total = row[LINE_COLUMNS["total"] - 1].value
        pool = row[LINE_COLUMNS["pool"] - 1].value
        if isinstance(cents, (int, float)) and isinstance(total, (int, float)):
            tenant = row[0].value
            out.append((None if str(tenant).startswith("(idle") else tenant, pool, total,
                        round(cents)))
    return out


def engine_kg(led, line, basis):
    """The engine's kgCO2e of a line by basis (None: its pool has no factor)."""
    p = next(x for x in led.pools if x.name == line.pool)
    c = p.emissions.get(basis)
    if c is None:
        return None
    grams = c.idle_line if line.tenant is None else c.uses[led.tenants.index(line.tenant)].total
    return float(grams) / 1000


def kg_of(wb):
    """(location, market) kgCO2e of every line row ("" or None: empty)."""
    ws = wb[CHARGEBACK_SHEET]
    return [(row[LINE_COLUMNS["kg_location"] - 1].value,
             row[LINE_COLUMNS["kg_market"] - 1].value) for row in ws.iter_rows(min_row=1)
            if isinstance(row[LINE_COLUMNS["cents"] - 1].value, (int, float))
            and isinstance(row[LINE_COLUMNS["total"] - 1].value, (int, float))]


def assert_book_is(wb, led):
    got = lines_of(wb)
    assert len(got) == len(led.lines)
    for (tenant, pool, total, cents), line in zip(got, led.lines, strict=True):
        assert (tenant, pool) == (line.tenant, line.pool)
        assert total == pytest.approx(line.amount, rel=1e-9, abs=1e-9)
        assert cents == line.cents
    # emissions charged as the cost is: the gb300 pool's grid factor (sample-tco.toml, 370
    # g/kWh, no footprint); the hand pool has none (empty cells, the engine's null)
    kgs = kg_of(wb)
    assert any(k[0] for k in kgs)
    for (location, market), line in zip(kgs, led.lines, strict=True):
        for got_kg, basis in ((location, "location"), (market, "market")):
            want = engine_kg(led, line, basis)
            if want is None:
                assert got_kg in (None, ""), (line, basis)
            else:
                assert got_kg == pytest.approx(want, rel=1e-9, abs=1e-9), (line, basis)
    for i, p in enumerate(led.pools):
        kg = value(wb, f"pool_kg_location_s{i + 1}")
        if "location" in p.emissions:
            assert kg == pytest.approx(float(p.emissions["location"].cost) / 1000, rel=1e-9)
        else:
            assert kg in (None, "")
    assert value(wb, "chargeback_fleet_kg_location") in (None, "")  # the hand pool: none
    for i, p in enumerate(led.pools):
        assert value(wb, f"pool_utilisation_s{i + 1}") == pytest.approx(
            float(p.charge.utilisation), rel=1e-9)
        assert value(wb, f"pool_cost_s{i + 1}") == pytest.approx(float(p.charge.cost),
                                                                  rel=1e-9)
    assert value(wb, "chargeback_fleet_cost") == pytest.approx(led.total, rel=1e-9)
    assert value(wb, "chargeback_cents_total") == led.total_cents
    assert value(wb, "chargeback_check") == "conserved"


def error_cells(wb):
    # the Chargeback sheet and the Inputs it writes to (the Summary's ratios to the hand
    # pool's energy, which is 0, are a division by 0 in any comparison with it)
    return [(s, c.coordinate, c.value) for s in (CHARGEBACK_SHEET, "Inputs", "Calculations")
            for row in wb[s].iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(ERRORS)]


@pytest.fixture(scope="module", params=["separate", "even"])
def book(request, tmp_path_factory):
    led = _ledger(USAGE, request.param)
    path = tmp_path_factory.mktemp("chargeback") / "chargeback.xlsx"
    path.write_bytes(chargeback_workbook(led).content)
    return led, path, request.param


def test_the_cached_values_are_the_engines(book):
    led, path, _ = book
    assert_book_is(load_workbook(path, data_only=True), led)


def test_the_hand_month_in_the_workbook():
    led = chargeback(CTX, ChargebackRequest(fleet(), read_usage_bytes(TWO_TENANTS.encode(),
                                                                       "u"), idle="usage"))
    wb = load_workbook(io.BytesIO(chargeback_workbook(led).content), data_only=True)
    cents = {t: c for t, _, _, c in lines_of(wb) if t is not None}
    assert cents == {"A": TWO_TENANTS_CENTS["usage"]["A"], "B": TWO_TENANTS_CENTS["usage"]["B"]}
    # the formulas: a line's usage reads the pool's rate; the pool's utilisation on Inputs
    # reads the measured one
    f = load_workbook(io.BytesIO(chargeback_workbook(led).content))
    assert f["Inputs"][named_cells(f, "utilisation")[0].coordinate].value == \
        "=MAX(pool_utilisation,0.000001)"


@pytest.mark.libreoffice
def test_libreoffice_recalculates_the_ledger_to_the_engine(book, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    led, path, _ = book
    bare = tmp_path / "bare.xlsx"
    load_workbook(path).save(bare)  # no cached values: LibreOffice's own figures
    wb = load_workbook(recalculate(bare, tmp_path / "out"), data_only=True)
    assert_book_is(wb, led)
    assert error_cells(wb) == []


@pytest.mark.libreoffice
def test_an_edited_tenants_tokens_recompute_like_the_engine(book, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    led, path, idle = book
    wb = load_workbook(path)
    ws = wb[CHARGEBACK_SHEET]
    # C's new input tokens on gb300: 100e9 -> 250e9
    row = next(r for r in ws.iter_rows() if r[0].value == "C" and r[1].value == "gb300")
    row[LINE_COLUMNS["input"] - 1].value = 250e9
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                        data_only=True)
    want = _ledger(USAGE.replace("C,r1,100000000000", "C,r1,250000000000"), idle)
    assert float(want.pools[1].charge.utilisation) > float(led.pools[1].charge.utilisation)
    assert want.pools[1].terms.energy > led.pools[1].terms.energy  # energy followed the load
    assert_book_is(out, want)
    assert error_cells(out) == []


def test_the_example_fleets_pools_print_whole(tmp_path):
    """The shipped example (fixtures/chargeback): the owned pool's capacity, 72 accelerators
    x 720 h x 79,168,320 equivalents an hour = 4,104,085,708,800, prints as a number, not as
    the "###" of a column too narrow for it (a pool's column was 13 characters)."""
    require_libreoffice()
    from pypdf import PdfReader

    from costmodel.app.chargeback import read_fleet, usage_from_file
    from costmodel.render.workbook.recalc import to_pdf
    folder = fixtures_dir() / "chargeback"
    records = usage_from_file((folder / "usage.csv").read_bytes(), "usage.csv", "usage")
    data, base = read_fleet(folder / "fleet.toml")
    ledger = chargeback(CTX, ChargebackRequest(data, records, idle="separate", base=base))
    path = tmp_path / "chargeback.xlsx"
    path.write_bytes(chargeback_workbook(ledger).content)
    first = PdfReader(io.BytesIO(to_pdf(path))).pages[0].extract_text()
    assert 72 * 720 * 79_168_320 == 4_104_085_708_800
    assert "4,104,085,708,800" in first
    assert "###" not in first
