"""The Price, Compare and Sensitivity pages in a real browser (Playwright driving Debian's
Chromium, see browser_support): pick and price, change an input and see the figure move,
compare at matched interactivity, download the workbook and open it, a bad value marked at its
field, and keyboard use. Each page is saved as a screenshot at 1280 px and 390 px in
out/screenshots/ (git-ignored) for a person to look at.

Expected figures are the API's for the same scenario (asked through the live server), rounded
as the page rounds them.
"""
from __future__ import annotations

import json
import urllib.request

import browser_support
import openpyxl
import pytest
from browser_support import api, at_widths, require_browser

from costmodel.render import display
from costmodel.web.pages import fixture_scenarios
from costmodel.web.scenario_form import scenario_form

require_browser()
# the shared fixtures, bound here so pytest finds them in this module
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

H100_CURVE = "curve:h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"




def figure(pg, name: str) -> str:
    return pg.locator(f'[data-figure="{name}"]').first.inner_text()


def test_pick_and_price_then_change_an_input(page, live_server):
    page.goto("/")
    page.select_option("#f-accelerator", "h100")
    page.select_option("#f-system", "hgx-8gpu")
    page.select_option("#f-point", H100_CURVE)
    page.fill("#f-interactivity", "100")
    page.fill("#f-electricity_price", "8 cent/kWh")
    page.click("button[type=submit]")
    page.wait_for_url("**/?*interactivity=100*")
    values = {"accelerator": "h100", "system": "hgx-8gpu", "point": H100_CURVE,
              "interactivity": "100", "electricity_price": "8 cent/kWh"}
    answer = api(live_server, "/api/v1/price", scenario_form(values).price_request())
    for name in ("price_per_mtok_total", "cost_per_mtok_total", "cost_per_mtok_energy",
                 "throughput"):
        q = answer["steps"][name]
        assert display.format_quantity(q["value"], q["unit"], name) in figure(page, name)
    before = figure(page, "price_per_mtok_total")
    at_widths(page, "price")

    # change one input: a higher utilisation spreads capex over more tokens
    page.fill("#f-utilisation", "95")
    page.press("#f-utilisation", "Enter")  # submits the form, as a keyboard user would
    page.wait_for_url("**utilisation=95*")
    after = figure(page, "price_per_mtok_total")
    assert after != before
    answer = api(live_server, "/api/v1/price",
                 scenario_form({**values, "utilisation": "95"}).price_request())
    q = answer["steps"]["price_per_mtok_total"]
    assert display.format_quantity(q["value"], q["unit"], "price_per_mtok_total") in after
    # the URL carries the scenario: back shows the previous figure again
    page.go_back()
    page.wait_for_url("**utilisation=&*")  # blank: the engine's default, as the form began
    assert figure(page, "price_per_mtok_total") == before
    assert not page.js_errors


def test_bad_value_marked_at_its_field(page, live_server):
    page.goto("/")
    page.fill("#f-electricity_price", "8 kg")
    page.click("button[type=submit]")
    page.wait_for_url("**electricity_price=8*")
    form = scenario_form({"electricity_price": "8 kg"})
    req = urllib.request.Request(live_server.url + "/api/v1/price",
                                 data=json.dumps(form.price_request()).encode(),
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req)
    message = json.load(err.value)["errors"][0]["message"]
    error = page.locator("#electricity_price-error")
    assert error.inner_text().strip() == message
    assert page.get_attribute("#f-electricity_price", "aria-invalid") == "true"
    assert page.locator("[data-figure]").count() == 0  # nothing priced
    at_widths(page, "price-bad-value")


def test_compare_at_matched_interactivity(page, live_server):
    page.goto("/compare?sys=&at=own")
    keys = ["fixture:curve-gpt-oss-120b-h100", "fixture:curve-gpt-oss-120b-b200",
            "fixture:curve-gpt-oss-120b-mi300x"]
    for i, key in enumerate(keys):
        page.select_option(f"#sys{i}", key)
    page.check("input[name=at][value=matched]")
    page.click("button[type=submit]")
    page.wait_for_url("**at=matched*")
    answer = api(live_server, "/api/v1/compare", {
        "scenarios": [{"scenario": fixture_scenarios()[k][1]} for k in keys],
        "matched": True})
    row = page.locator('[data-figure="price_per_mtok_total"] td')
    for i, scenario in enumerate(answer["scenarios"]):
        q = scenario["steps"]["price_per_mtok_total"]
        assert display.format_number(q["value"], q["unit"], "price_per_mtok_total") in \
            row.nth(i).inner_text()
    assert page.locator("svg.chart.frontier").is_visible()
    assert "150 token/s/user" in page.locator("#table-h").inner_text()
    at_widths(page, "compare")
    assert not page.js_errors


def test_compare_unreachable_explained(page, live_server):
    page.goto("/compare?sys=fixture:curve-gpt-oss-120b-h100&sys=fixture:curve-gpt-oss-120b-"
              "b200&at=named&interactivity=500")
    text = page.locator(".unreachable").inner_text()
    assert "best reachable interactivity is 180 token/s/user" in text
    page.click("text=180 token/s/user >> nth=-1")  # the offer: what every system reaches
    page.wait_for_url("**interactivity=180*")
    assert page.locator("svg.chart.frontier").is_visible()
    at_widths(page, "compare-unreachable-then-reachable")


def test_download_the_workbook(page, live_server, tmp_path):
    page.goto("/?utilisation=80")
    with page.expect_download() as info:
        page.click("[data-testid=download-xlsx]")
    download = info.value
    assert download.suggested_filename.endswith(".xlsx")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    wb = openpyxl.load_workbook(path)
    sheet, cell = next(iter(wb.defined_names["utilisation"].destinations))
    assert wb[sheet][cell.replace("$", "")].value == pytest.approx(0.8)


def test_sensitivity_page(page, live_server):
    page.goto("/sensitivity?sa_draws=5000")
    assert page.locator("svg.chart.tornado").is_visible()
    assert page.locator("svg.chart.histogram").is_visible()
    at_widths(page, "sensitivity")


def test_plan_page_from_the_price_page(page, live_server):
    page.goto("/")
    page.get_by_role("link", name="Size a fleet for this scenario").click()
    page.fill("#f-pl_demand", "2.5e6")
    page.get_by_role("button", name="Plan").click()
    count = page.locator('[data-figure="accelerators"]').inner_text()
    assert count.replace(",", "").isdigit() and int(count.replace(",", "")) > 0
    at_widths(page, "plan")
    page.fill("#f-pl_demand", "5 W")
    page.get_by_role("button", name="Plan").click()
    assert page.locator("#f-pl_demand").get_attribute("aria-invalid") == "true"
    assert page.js_errors == []


def test_plan_page_whole_racks_with_headroom(page, live_server):
    # a budget in whole racks with 10 % headroom, typed and chosen as a person would: the
    # page's counts are the API's for the same request (its JSON download)
    page.goto("/plan?boundary=facility")
    page.fill("#f-pl_demand", "")
    page.fill("#f-pl_budget", "1 GW")
    page.fill("#f-pl_headroom", "10 %")
    page.select_option("#f-pl_deployment", "rack")
    page.get_by_role("button", name="Plan").click()
    page.wait_for_url("**pl_deployment=rack*")
    j = api(live_server, "/plan.json?" + page.url.split("?", 1)[1])
    pp = j["power_plan"]
    assert (pp["deployment"], pp["headroom"]) == ("rack", 0.1)
    for name, value in (("deployments", pp["deployments"]),
                        ("accelerators_per_gw", pp["per_gw"]["accelerators"]),
                        ("accelerators", j["accelerators"])):
        assert figure(page, name) == f"{value:,}", name
    assert figure(page, "planning_power") == display.format_quantity(
        pp["power_per_deployment"]["planning"]["value"], "W")
    at_widths(page, "plan-power")
    assert page.js_errors == []


def test_keyboard_reaches_the_form_and_the_answer(page, live_server):
    page.goto("/")
    page.keyboard.press("Tab")  # the skip link comes first
    assert page.evaluate("document.activeElement.textContent").strip() == "Skip to content"
    focused = set()
    for _ in range(40):
        page.keyboard.press("Tab")
        focused.add(page.evaluate("document.activeElement.id"))
    assert {"f-accelerator", "f-point"} <= focused


def test_pages_fit_a_phone(page, live_server):
    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/", "/compare", "/sensitivity?sa_draws=1000", "/plan"):
        page.goto(path)
        # nothing wider than the screen but the tables that scroll in their own box
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)
