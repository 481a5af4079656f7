"""Money per power and month (a demand charge, a hosting rate) has its own display rule: two
decimals, as a tariff states it ("15.00 USD/kW/month"), four below 1 (as money per kWh), on
every face that prints one: the rule itself (words, symbols, the workbook's number format),
the command line's report, the workbook's Tariff and Inputs sheets, and the one-page PDF. (The
web page's disclosure: tests/web/test_web_tariff.py and test_web_tariff_browser.py.)"""
from __future__ import annotations

import re
from io import BytesIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from costmodel.cli import main
from costmodel.render.display import excel_format, format_quantity
from costmodel.render.report import words
from costmodel.render.workbook.names import named_cells

# the catalog's SCE GS-2 TOU B: 13.2 USD/kW every month, 5.3 and 18.11 in its periods
SCENARIO = '''name = "gb300 on SCE GS-2 TOU B"
accelerator = "gb300"
operating_point = "deepseek-r1/gb300/peak"
electricity = { tariff = "urdb-2015-sce-gs2-tou-b" }
'''
POWER_MONEY = "[>=1]#,##0.00;#,##0.0000"


@pytest.mark.parametrize("value,shown", [
    (15, "15.00 USD/kW/month"), (13.2, "13.20 USD/kW/month"), (18.11, "18.11 USD/kW/month"),
    (150, "150.00 USD/kW/month"), (1234.5, "1,234.50 USD/kW/month"),
    (0.35, "0.3500 USD/kW/month"), (0, "0 USD/kW/month")])
def test_the_rule(value, shown):
    assert format_quantity(value, "USD/kW/month") == shown
    assert words(value, "USD/kW/month") == shown.replace("USD/kW/month",
                                                         "USD per kW per month")
    # the hosting rate and a demand charge by name follow the unit's rule
    assert format_quantity(value, "USD/kW/month", "facility_hosting") == shown


def test_the_workbooks_number_format_rounds_alike():
    assert excel_format("electricity_tariff_demand_charge", "USD/kW/month") == POWER_MONEY
    assert excel_format("facility_hosting", "USD/kW/month") == POWER_MONEY


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sce")
    path = folder / "sce.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    runner = CliRunner()
    report = runner.invoke(main, ["price", str(path)], catch_exceptions=False)
    assert report.exit_code == 0, report.output
    book = runner.invoke(main, ["workbook", str(path), "-o", str(folder / "sce.xlsx")],
                         catch_exceptions=False)
    assert book.exit_code == 0, book.output
    plan = runner.invoke(main, ["plan", str(path), "--demand", "2.5e6 token/s", "--pdf",
                                str(folder / "plan.pdf")], catch_exceptions=False)
    assert plan.exit_code == 0, plan.output
    return report.output, folder


def test_the_command_lines_report(made):
    said = " ".join(made[0].split())
    assert "demand charge 13.20 USD per kW per month on the month's busiest hour" in said
    assert ("period 2 demand charge 18.11 USD per kW per month on the busiest hour of "
            "weekdays 12:00-18:00 in Jun-Sep") in said
    assert not re.search(r"\d\.\d{3} USD per kW per month", said)  # never three places


def test_the_workbooks_cells(made):
    wb = load_workbook(made[1] / "sce.xlsx")
    charges = named_cells(wb, "electricity_tariff_demand_charge")  # 12 months
    periods = named_cells(wb, "electricity_tariff_demand_period_charge")  # 2 periods
    assert [c.value for c in periods] == [5.3, 18.11]
    assert {c.number_format for c in [*charges, *periods]} == {POWER_MONEY}
    (hosting,) = named_cells(wb, "facility_hosting")
    assert hosting.number_format == POWER_MONEY
    # a period's hours are 0 or 1, shown as whole numbers
    assert {c.number_format for c in named_cells(wb, "electricity_tariff_demand_period_hours")} \
        == {"#,##0"}


def test_the_one_page_pdf(made):
    from pypdf import PdfReader
    reader = PdfReader(BytesIO(Path(made[1] / "plan.pdf").read_bytes()))
    text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
    assert "demand charge 13.20 USD per kW per month" in text
    assert "18.11 USD per kW per month" in text
