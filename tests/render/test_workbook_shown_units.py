"""Errors from a workbook speak the sheet's units (issue 37): a cell formatted as a percentage
is refused with its bounds and value as it shows them ("must be at most 100 %, got 7,000 %"
where the engine keeps the fraction and would say "at most 1, got 70"); a unit shown beside a
cell is said with the figure ("50 years"); a percent cell reformatted as General shows the
fraction, and is refused as a fraction. On the Inputs sheet and on a decision's Decision
sheet, through the reader, the API and the CLI.
"""
from __future__ import annotations

import io
import tomllib

import pytest
from click.testing import CliRunner
from conftest import ROOT, SCENARIOS, auth, workbook_systems
from openpyxl import load_workbook

from costmodel import app
from costmodel.cli import CONTEXT, main, specs_for
from costmodel.decisions.demand import validate_demand
from costmodel.model.errors import InputError
from costmodel.render.workbook.export import build_workbook
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.reader import shown_number
from costmodel.sources.quote_file import read_quotes

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@pytest.fixture(scope="module")
def sample() -> bytes:
    systems, _ = workbook_systems([SCENARIOS / "sample-tco.toml"])
    buf = io.BytesIO()
    build_workbook(systems).save(buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def decision() -> tuple[bytes, list[str]]:
    """A decision's workbook (two own builds, an API offer, a capacity offer) and the kind of
    each option, in the order of the Decision sheet's columns."""
    quotes = ROOT / "fixtures" / "quotes" / "negotiation.toml"
    req = app.DecisionRequest(read_quotes(str(quotes)), specs_for(
        tuple(str(ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml")
              for hw in ("b200", "h100")), ()),
        validate_demand(tomllib.loads(quotes.read_text())["demand"]), None)
    answer = app.quotes_decide(CONTEXT, req)
    return (app.render_decision_workbook(answer).content,
            [p.option.kind for p in answer.decision.ranked])


def edit(data: bytes, name: str, value: float, index: int = 0,
         number_format: str | None = None) -> tuple[bytes, str]:
    """The workbook with cell ``index`` of defined name ``name`` set to ``value`` (and its
    number format), and that cell as ``Sheet!A1``."""
    wb = load_workbook(io.BytesIO(data))
    cell = named_cells(wb, name)[index]
    cell.value = value
    if number_format is not None:
        cell.number_format = number_format
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue(), f"{cell.parent.title}!{cell.coordinate}"


def refusal(data: bytes) -> tuple[str, str]:
    with pytest.raises(InputError) as caught:
        app.reprice(data, ctx=CONTEXT)
    (error,) = caught.value.errors
    return error


@pytest.mark.parametrize("name,value,says", [
    # the issue's: 70 typed in a cell showing 70.0 % is 7,000 %
    ("utilisation", 70, "must be at most 100 %, got 7,000 %"),
    ("utilisation", 0, "must be greater than zero, got 0 %"),
    ("utilisation", 1e-7, "must be at least 0.0001 %, got 1e-05 %"),
    ("utilisation", -0.2, "must not be negative, got -20 %"),
    # a rate a year: its unit beside it is %/year
    ("financing_cost_of_capital", 3, "must be at most 100 %/year, got 300 %/year "
                                     "(scenario key financing.cost_of_capital)"),
    ("pricing_gross_margin", 1, "must be below 100 %, got 100 % "
                                "(scenario key pricing.gross_margin)"),
    # a unit shown beside the cell is said with the figure
    ("financing_life", 60, "must be at most 50 years, got 60 years "
                           "(scenario key financing.life)"),
    ("facility_pue", 0.8, "must be at least 1, got 0.8 (scenario key facility.pue)"),
])
def test_an_inputs_refusal_says_the_cell_as_it_shows(sample, name, value, says):
    data, cell = edit(sample, name, value)
    assert refusal(data) == (f"{cell} ({name})", says)


def test_a_percent_cell_reformatted_as_general_is_said_as_a_fraction(sample):
    data, cell = edit(sample, "utilisation", 70, number_format="General")
    assert refusal(data) == (f"{cell} (utilisation)", "must be at most 1, got 70")
    data, cell = edit(sample, "utilisation", 70, number_format="0.00%")
    assert refusal(data) == (f"{cell} (utilisation)", "must be at most 100 %, got 7,000 %")


@pytest.mark.parametrize("name,kind,value,says", [
    ("decision_batch_share", None, 1.5, "must be at most 100 %, got 150 %"),
    ("decision_cached_share", None, -0.1, "must not be negative, got -10 %"),
    ("decision_load_factor", None, 1.2, "must be at most 100 %, got 120 %"),
    ("decision_volume", None, 0, "must be greater than zero, got 0 Mtok/month"),
    ("option_availability", "capacity", 99, "must be at most 100 %, got 9,900 %"),
    ("option_term", "capacity", 0, "must be greater than zero, got 0 months"),
    ("option_batch_discount", "per_mtok", 2, "must be at most 100 %, got 200 %"),
])
def test_a_decision_refusal_says_the_cell_as_it_shows(decision, name, kind, value, says):
    data, kinds = decision
    assert sorted(kinds) == ["capacity", "own", "own", "per_mtok"]
    data, cell = edit(data, name, value, 0 if kind is None else kinds.index(kind))
    where, message = refusal(data)
    assert where.startswith(f"{cell} ({name}") and message == says


def test_the_api_and_the_cli_say_it_as_the_sheet_does(sample, client, tokens, tmp_path):
    data, cell = edit(sample, "utilisation", 70)
    resp = client.post("/api/v1/workbook/reprice", data=data, content_type=XLSX,
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 422
    assert resp.get_json()["errors"] == [{"path": f"{cell} (utilisation)",
                                          "message": "must be at most 100 %, got 7,000 %"}]
    path = tmp_path / "edited.xlsx"
    path.write_bytes(data)
    run = CliRunner().invoke(main, ["reprice", str(path)])
    assert run.exit_code == 2
    assert run.stderr.splitlines() == [f"costmodel: error: {cell} (utilisation): must be at "
                                       f"most 100 %, got 7,000 %"]


@pytest.mark.parametrize("value,number_format,name,unit,shown", [
    (70, "0.0%", "utilisation", "dimensionless", "7,000 %"),
    (0.7, "0.0%", "utilisation", "dimensionless", "70 %"),
    (0.7, "General", "utilisation", "dimensionless", "0.7"),
    (0.7, '0.0"%"', "utilisation", "dimensionless", "0.7"),  # a quoted % is text
    (0.7, "0.0\\%", "utilisation", "dimensionless", "0.7"),  # so is an escaped one
    (0.1, "[>=1]0%;0.0%", "financing_cost_of_capital", "dimensionless", "10 %/year"),
    (1, "0.0", "financing_life", "year", "1 year"),
    (1234567.5, "#,##0", "electricity_price", "USD/kWh", "1.23457e+06 USD/kWh"),
    (12345.5, "#,##0", "accelerator_capex", "USD", "12,345.5 USD"),
])
def test_shown_number(value, number_format, name, unit, shown):
    assert shown_number(value, number_format, name, unit) == shown
