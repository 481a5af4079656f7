"""A tariff and a load shape on the Price page in a real browser (Playwright driving Debian's
Chromium, see browser_support): pay by a catalog tariff, type a load shape, ask the what-if,
price, and see the chart of rate and load by hour; a bad load row marked at its field; a
tariff with time-of-use demand charges (the catalog's SCE GS-2 TOU B), each said as money per
kW per month with two decimals, with its hours and months. Screenshots at 1280 px and 390 px
in out/screenshots/ (git-ignored).

Expected figures are the API's for the same scenario, rounded as the page rounds them.
"""
from __future__ import annotations

import json
import urllib.request

import browser_support
from browser_support import at_widths, require_browser

from costmodel.render import display
from costmodel.web.scenario_form import scenario_form

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

TOU = "illustrative-tou-peak-16-21"
NIGHT = "0.9 0.9 0.9 0.9 0.9 0.9 0.6 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.2 0.2 0.2 0.2 " \
        "0.2 0.6 0.9 0.9"
WEEKEND = ", ".join(["0.4"] * 24)


def api(live, path: str, body: dict) -> dict:
    req = urllib.request.Request(live.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def test_price_on_a_tariff_with_a_load_shape(page, live_server):
    page.goto("/")
    page.check("input[name=electricity_kind][value=tariff]")
    page.select_option("#f-tariff", TOU)
    page.select_option("#f-load", "custom")
    page.fill("#f-load_hourly", NIGHT)
    page.fill("#f-load_weekend", WEEKEND)
    page.fill("#f-flexible_share", "30")
    page.click("button[type=submit]")
    page.wait_for_url("**tariff=illustrative*")
    values = {"electricity_kind": "tariff", "tariff": TOU, "load": "custom",
              "load_hourly": NIGHT, "load_weekend": WEEKEND}
    answer = api(live_server, "/api/v1/price", scenario_form(values).price_request())
    for name in ("price_per_mtok_total", "cost_per_mtok_total", "cost_per_mtok_energy"):
        q = answer["steps"][name]
        shown = display.format_quantity(q["value"], q["unit"], name)
        assert shown in page.locator(f'[data-figure="{name}"]').first.inner_text()
    chart = page.locator("svg.chart.hourly")
    assert chart.is_visible()
    assert chart.get_attribute("role") == "img"
    assert "16:00-21:00" in page.locator("#hourly-d").text_content()
    assert page.get_by_test_id("what-if").inner_text().startswith(
        "What if 30.0% of the load moved to the cheapest hours")
    assert "Tariff Illustrative TOU" in page.locator("dl.disclosure").inner_text()
    # the table of values opens, and holds the weekday peak hour's rate
    page.get_by_text("The 48 hours' values").click()
    row = page.locator('tr[data-hour="17"]').inner_text()
    assert "0.2534" in row and "0.0833" in row
    # the form keeps what was typed
    assert page.input_value("#f-load_hourly") == NIGHT
    assert page.is_checked("input[name=electricity_kind][value=tariff]")
    at_widths(page, "price-tariff")
    # the chart scrolls in its own box on a phone; the page itself does not
    page.set_viewport_size(browser_support.PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not page.js_errors


def test_a_bad_load_row_is_marked_at_its_field(page, live_server):
    page.goto("/?electricity_kind=tariff&tariff=" + TOU)
    page.fill("#f-load_hourly", NIGHT.replace("0.6", "1.6", 1))
    page.click("button[type=submit]")
    page.wait_for_url("**load_hourly=*")
    error = page.locator("#load_hourly-error")
    assert error.inner_text().strip() == \
        "hour 06:00-07:00: 1.6 is above 1 (a fraction of the hour serving: 0 to 1)"
    assert page.get_attribute("#f-load_hourly", "aria-invalid") == "true"
    assert page.locator("[data-figure]").count() == 0  # nothing priced
    assert page.locator("svg.chart.hourly").count() == 0
    at_widths(page, "price-tariff-bad-load")


SCE = "urdb-2015-sce-gs2-tou-b"
NIGHT_HEAVY = "1, 1, 1, 1, 1, 1, 1, 1, 0.6, 0.6, 0.6, 0.6, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, " \
              "0.6, 0.6, 0.6, 0.6, 0.6, 1"


def test_a_time_of_use_demand_tariff(page, live_server):
    page.goto("/")
    page.check("input[name=electricity_kind][value=tariff]")
    page.select_option("#f-tariff", SCE)
    page.fill("#f-load_hourly", NIGHT_HEAVY)
    page.click("button[type=submit]")
    page.wait_for_url(f"**tariff={SCE}*")
    values = {"electricity_kind": "tariff", "tariff": SCE, "load_hourly": NIGHT_HEAVY}
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
