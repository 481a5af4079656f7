"""A tariff with time-of-use demand charges picked on the Price page in a real browser
(Playwright driving Chromium, see browser_support): the catalog's SCE GS-2 TOU B, a typed
load; the figures are the API's for the same scenario, and the disclosure says each demand
charge as money per kW per month with two decimals, each period with its hours and months."""
from __future__ import annotations

import browser_support
from browser_support import api, at_widths, require_browser

from costmodel.render import display
from costmodel.web.scenario_form import scenario_form

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

SCE = "urdb-2015-sce-gs2-tou-b"
NIGHT = "1, 1, 1, 1, 1, 1, 1, 1, 0.6, 0.6, 0.6, 0.6, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, " \
        "0.6, 0.6, 0.6, 0.6, 0.6, 1"


def test_a_time_of_use_demand_tariff_on_the_price_page(page, live_server):
    page.goto("/")
    page.check("input[name=electricity_kind][value=tariff]")
    page.select_option("#f-tariff", SCE)
    page.fill("#f-load_hourly", NIGHT)
    page.click("button[type=submit]")
    page.wait_for_url(f"**tariff={SCE}*")
    values = {"electricity_kind": "tariff", "tariff": SCE, "load_hourly": NIGHT}
    answer = api(live_server, "/api/v1/price", scenario_form(values).price_request())
    q = answer["steps"]["cost_per_mtok_energy"]
    energy = page.locator('[data-figure="cost_per_mtok_energy"]').first.inner_text()
    assert display.format_quantity(q["value"], q["unit"], "cost_per_mtok_energy") in energy
    said = " ".join(page.locator("dl.disclosure").last.inner_text().split())
    assert "demand charge 13.20 USD/kW/month on the month's busiest hour" in said
    assert ("period 1 demand charge 5.30 USD/kW/month on the busiest hour of weekdays "
            "08:00-12:00 and 18:00-23:00 in Jun-Sep") in said
    assert ("period 2 demand charge 18.11 USD/kW/month on the busiest hour of weekdays "
            "12:00-18:00 in Jun-Sep") in said
    at_widths(page, "price-demand-periods")
    assert not page.js_errors
