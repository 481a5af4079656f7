"""A new user's first day on the Price and Plan pages in a real browser (Playwright driving
Debian's Chromium, see browser_support): a percent field's bound said in percent, the price
and cost per request beside the per-million figures, saving from beside the result (or what
saving needs), a stale save form refused by its CSRF token, and the Plan page's workbook.
Each page is saved as a screenshot at 1280 px and 390 px in out/screenshots/ (git-ignored).

Expected figures are the API's, asked through the live server, rounded as the page rounds.
"""
from __future__ import annotations

import re
import uuid
from urllib.parse import urlencode

import browser_support
import openpyxl
import pytest
from browser_support import api, at_widths, require_browser

from costmodel.render import display
from costmodel.web.scenario_form import scenario_form

require_browser()
# the shared fixtures, bound here so pytest finds them in this module
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page




def saved_named(live, name: str) -> int:
    return api(live, "/api/v1/scenarios?" + urlencode({"q": name}))["total"]


def sign_in_from(pg, token: str) -> None:
    """Follow the page's own "sign in" link, paste the key, Enter: back where it was."""
    before = pg.url
    pg.locator('[data-testid="save-hint"] a').click()
    pg.wait_for_url(re.compile(r".*/signin\?next="))
    pg.get_by_label("API key").fill(token)
    pg.get_by_label("API key").press("Enter")
    pg.wait_for_url(before)


def test_a_percent_field_is_answered_in_percent(page, live_server):
    page.goto("/")
    page.fill("#f-utilisation", "170")
    page.press("#f-utilisation", "Enter")
    page.wait_for_url("**utilisation=170*")
    assert page.locator("#utilisation-error").inner_text().strip() == \
        "must be at most 100 %, got 170 %"
    assert page.get_attribute("#f-utilisation", "aria-invalid") == "true"
    assert "Utilisation: must be at most 100 %, got 170 %" in \
        page.locator(".not-priced").inner_text()
    at_widths(page, "price-percent-bound")
    assert not page.js_errors


def test_per_request_beside_the_per_million_figures(page, live_server):
    values = {"accelerator": "gb300", "point": "deepseek-r1/gb300/peak"}  # 8k in, 1k out
    page.goto("/?" + urlencode(values))
    answer = api(live_server, "/api/v1/price", scenario_form(values).price_request())
    for name in ("price_per_request", "cost_per_request"):
        q = answer["steps"][name]
        shown = page.locator(f'[data-figure="{name}"] .figure-value').inner_text()
        assert shown == display.format_quantity(q["value"], q["unit"], name)
    # by hand: the price per million tokens x (8,192 + 1,024) tokens / 1e6
    price = answer["steps"]["price_per_mtok_total"]["value"]
    assert answer["steps"]["price_per_request"]["value"] == pytest.approx(price * 9216 / 1e6)
    note = page.get_by_test_id("per-request-denominator").inner_text()
    assert "8,192 input + 1,024 output tokens = 9,216 tokens" in note
    # seen beside the answer: the first screen at 1280 px shows the per-request figures
    box = page.locator('[data-figure="price_per_request"]').bounding_box()
    assert box is not None and box["y"] + box["height"] < 900


# reported Content-Security-Policy violations (none: the save forms post to this site)
WATCH = """window.__csp = []; document.addEventListener("securitypolicyviolation",
    e => window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline")));"""


def test_signed_out_the_hint_then_an_editor_saves_from_beside_the_result(page, live_server):
    page.add_init_script(WATCH)
    page.goto("/?" + urlencode({"utilisation": "60"}))
    hint = page.get_by_test_id("save-hint")
    assert hint.inner_text() == ("To save this scenario, sign in with an API key that can "
                                 "write (an editor's).")
    assert page.locator('[data-testid="save-new"]').count() == 0
    at_widths(page, "price-signed-out")

    sign_in_from(page, live_server.keys["editor"])  # back on the same Price page
    name = f"browser price save {uuid.uuid4().hex[:6]}"
    field = page.get_by_label("Save as a new scenario named")
    assert field.input_value() == scenario_form({"utilisation": "60"}).mapping["name"]
    at_widths(page, "price-save-editor")
    price = page.locator('[data-figure="price_per_mtok_total"] .figure-value').inner_text()
    assert page.evaluate("window.__csp") == []
    field.fill(name)
    page.get_by_test_id("save-new").get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(r".*/saved/\d+/revisions/1\?saved=1$"))
    assert page.locator(".notice.ok").inner_text() == "Saved as revision 1."
    sid = int(re.search(r"/saved/(\d+)/", page.url)[1])
    rev = api(live_server, f"/api/v1/scenarios/{sid}/revisions/1")
    assert rev["scenario"] == scenario_form({"utilisation": "60"}).mapping
    assert display.format_quantity(rev["result"]["price_per_mtok"]["total"]["value"],
                                   "USD/Mtok", "price_per_mtok_total") == price

    # edit it in Price, change an input, and save the next revision from beside the result
    page.get_by_role("link", name="Edit in Price").click()
    page.wait_for_url(re.compile(rf".*from_saved={sid}&based_on=1$"))
    assert f"Opened from saved scenario #{sid} {name}" in \
        page.get_by_test_id("save-origin").inner_text()
    page.fill("#f-utilisation", "50")
    page.press("#f-utilisation", "Enter")  # prices again, keeping where it came from
    page.wait_for_url(re.compile(rf".*utilisation=50.*from_saved={sid}&based_on=1"))
    at_widths(page, "price-save-from-saved")
    assert page.evaluate("window.__csp") == []
    page.get_by_role("button", name=f"Save as revision 2 of #{sid}").click()
    page.wait_for_url(re.compile(rf".*/saved/{sid}/revisions/2\?saved=1$"))
    rev2 = api(live_server, f"/api/v1/scenarios/{sid}/revisions/2")
    assert rev2["scenario"]["utilisation"] == "50 %"
    assert saved_named(live_server, name) == 1
    assert not page.js_errors


def test_a_read_only_key_is_told_what_saving_needs(page, live_server):
    page.goto("/")
    sign_in_from(page, live_server.keys["viewer"])
    hint = page.get_by_test_id("save-hint").inner_text()
    assert hint.startswith("Saving needs a key that can write (an editor's); you are signed "
                           "in with “browser-viewer”, a viewer's key.")
    assert page.locator('[data-testid="save-new"]').count() == 0
    at_widths(page, "price-read-only")


def test_a_save_form_from_before_the_session_changed_is_refused(page, live_server):
    page.goto("/")
    sign_in_from(page, live_server.keys["editor"])
    name = f"browser stale {uuid.uuid4().hex[:6]}"
    page.get_by_label("Save as a new scenario named").fill(name)
    # in another tab of the same browser: sign out and in again (a new session and token)
    other = page.context.new_page()
    other.goto(live_server.url + "/saved")
    other.get_by_role("button", name="Sign out").click()
    other.wait_for_url(re.compile(r".*/signin\?signed_out=1$"))
    other.get_by_label("API key").fill(live_server.keys["editor"])
    other.get_by_label("API key").press("Enter")
    other.wait_for_url(re.compile(r".*/saved$"))
    # the first tab's form carries the old session's token: refused, nothing saved
    with page.expect_response("**/saved/new") as answer:
        page.get_by_test_id("save-new").get_by_role("button", name="Save").click()
    assert answer.value.status == 400
    assert "its security token does not match this browser's session" in \
        page.locator(".refused").inner_text()
    assert saved_named(live_server, name) == 0
    at_widths(page, "price-save-refused-csrf")


def test_the_plan_page_offers_its_workbook(page, live_server, tmp_path):
    page.goto("/plan?" + urlencode({"pl_demand": "2.5e6"}))
    note = page.get_by_test_id("plan-xlsx-note").inner_text()
    assert "It has no plan sheet" in note
    at_widths(page, "plan-workbook")
    with page.expect_download() as info:
        page.get_by_test_id("download-xlsx").click()
    download = info.value
    assert re.fullmatch(r"plan_[\w.,-]+\.xlsx", download.suggested_filename)
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    wb = openpyxl.load_workbook(path)
    plan = api(live_server, "/plan.json?" + urlencode({"pl_demand": "2.5e6"}))
    sheet, cell = next(iter(wb.defined_names["utilisation"].destinations))
    assert wb[sheet][cell.replace("$", "")].value == pytest.approx(
        plan["disclosure"]["plan"]["resulting_utilisation"])
    shown = page.locator('[data-figure="accelerators"]').inner_text()
    assert shown == f"{plan['accelerators']:,}"
    assert not page.js_errors
