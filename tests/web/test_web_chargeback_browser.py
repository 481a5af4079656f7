"""The Chargeback page in Chromium (Playwright, see browser_support): the shipped example
month (fixtures/chargeback) uploaded through the form's file pickers gives the command line's
figures, tenant by tenant, and the check says conserved; the page is cut at neither 1280 nor
390 px (the overflow check of test_web_browser_layout); the workbook downloads from the same
form."""
from __future__ import annotations

from decimal import Decimal

import browser_support
import pytest
from browser_support import DESKTOP, PHONE, require_browser
from conftest import ROOT
from test_web_browser_layout import OVERFLOWING

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

EXAMPLE = ROOT / "fixtures" / "chargeback"


def _cli_charges() -> dict[str, Decimal]:
    """The example's charges by tenant, the idle line and the fleet, from the answer the
    command line prints (``costmodel chargeback fixtures/chargeback/usage.csv --fleet
    fixtures/chargeback/fleet.toml --json``), as the page shows them (to the cent)."""
    from costmodel.app.chargeback import ChargebackRequest, chargeback, read_fleet
    from costmodel.cli.common import CONTEXT
    from costmodel.sources.usage import read_usage
    data, base = read_fleet(EXAMPLE / "fleet.toml")
    answer = chargeback(CONTEXT, ChargebackRequest(
        data, read_usage([EXAMPLE / "usage.csv"]), base=base, idle="separate")).to_json()
    out = {t["tenant"]: Decimal(f"{t['charge']['value']:.2f}") for t in answer["tenants"]}
    out["idle"] = Decimal(f"{answer['idle_line']['value']:.2f}")
    out["fleet"] = Decimal(f"{answer['total']['value']:.2f}")
    return out


def _figure(text: str) -> Decimal:
    return Decimal(text.strip().replace(",", ""))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_the_example_month_in_the_browser(page, live_server, viewport):
    page.set_viewport_size(viewport)
    page.goto("/chargeback")
    assert not page.evaluate(OVERFLOWING)
    page.set_input_files("#f-usage", str(EXAMPLE / "usage.csv"))
    page.set_input_files("#f-fleet", str(EXAMPLE / "fleet.toml"))
    page.select_option("#f-idle", "separate")
    page.get_by_test_id("submit").click()
    ledger = page.get_by_test_id("ledger")
    ledger.wait_for()
    rows = ledger.locator("tbody tr")
    shown = {}
    for k in range(rows.count()):
        row = rows.nth(k)
        charge = row.locator('[data-figure="charge"]')
        if charge.count():
            shown[row.locator("th").inner_text().strip()] = _figure(charge.inner_text())
    shown["idle"] = _figure(page.locator('[data-figure="idle"]').inner_text())
    shown["fleet"] = _figure(page.locator('[data-figure="total"]').inner_text())
    want = _cli_charges()
    assert shown == want
    assert sum(v for k, v in want.items() if k != "fleet") == want["fleet"]
    assert "conserved to the cent" in page.get_by_test_id("check").inner_text()
    assert page.evaluate(OVERFLOWING) == []


def test_the_workbook_downloads_from_the_form(page, live_server, tmp_path):
    page.goto("/chargeback")
    page.set_input_files("#f-usage", str(EXAMPLE / "usage.csv"))
    page.set_input_files("#f-fleet", str(EXAMPLE / "fleet.toml"))
    with page.expect_download() as got:
        page.get_by_test_id("download-xlsx").click()
    path = tmp_path / "chargeback.xlsx"
    got.value.save_as(path)
    assert path.read_bytes()[:2] == b"PK"
