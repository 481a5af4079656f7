"""Sign-in and the Saved-scenarios pages in a real browser (Playwright driving Debian's
Chromium, see browser_support): sign in by keyboard and save two revisions as an editor, be
refused as a viewer. Each page is saved as a screenshot at 1280 px and 390 px in
out/screenshots/ (git-ignored). The Quotes page's are in test_web_browser_quotes.py.

Expected figures are the API's, asked through the live server, rounded as the page rounds.
"""
from __future__ import annotations

import re
import uuid
from urllib.parse import urlencode

import browser_support
from browser_support import api, at_widths, require_browser

from costmodel.render import display
from costmodel.web.scenario_form import DEFAULTS

require_browser()
# the shared fixtures, bound here so pytest finds them in this module
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page




def sign_in(pg, token: str) -> None:
    """Sign in by keyboard only: focus the key field from the header link, type, Enter."""
    pg.goto("/saved")
    pg.get_by_role("link", name="Sign in").focus()
    pg.keyboard.press("Enter")
    pg.wait_for_url(re.compile(r".*/signin\?next="))
    pg.get_by_label("API key").focus()
    pg.keyboard.type(token)
    pg.keyboard.press("Enter")
    pg.wait_for_url(re.compile(r"^https?://[^/]+/saved$"))


def test_an_editor_signs_in_by_keyboard_and_saves_two_revisions(page, live_server):
    sign_in(page, live_server.keys["editor"])
    assert "Signed in: browser-editor (editor)" in page.locator("header .who").inner_text()
    name = f"browser save {uuid.uuid4().hex[:6]}"
    page.goto("/saved/new?" + urlencode(DEFAULTS))
    at_widths(page, "saved-new")
    page.get_by_label("Name of a new saved scenario").fill(name)
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r".*/saved/\d+/revisions/1\?saved=1$"))
    sid = int(re.search(r"/saved/(\d+)/", page.url)[1])
    rev = api(live_server, f"/api/v1/scenarios/{sid}/revisions/1")
    for name_, q in (("cost_per_mtok_total", rev["result"]["cost_per_mtok"]["total"]),
                     ("price_per_mtok_total", rev["result"]["price_per_mtok"]["total"])):
        shown = page.locator(f'.answer [data-figure="{name_}"]').inner_text()
        assert shown == display.format_quantity(q["value"], q["unit"], name_)
    assert page.locator(".notice.ok").inner_text() == "Saved as revision 1."
    at_widths(page, "saved-revision")
    # "Edit in Price" opens the Price page on the same scenario: the same cost today
    cost = page.locator('.answer [data-figure="cost_per_mtok_total"]').inner_text()
    page.get_by_role("link", name="Edit in Price").click()
    page.wait_for_url(re.compile(r"^https?://[^/]+/\?"))
    assert cost in page.locator('[data-figure="cost_per_mtok_total"]').first.inner_text()

    # the next revision: the same scenario at 50 % utilisation
    page.goto("/saved/new?" + urlencode({**DEFAULTS, "utilisation": "50", "target": sid}))
    assert page.locator("#f-target").input_value() == str(sid)
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(rf".*/saved/{sid}/revisions/2\?saved=1$"))
    page.get_by_role("link", name="Compare with revision 1").click()
    page.wait_for_url(re.compile(rf".*/saved/{sid}/diff\?a=1&b=2$"))
    rows = page.locator("table.diff tbody tr")
    assert rows.count() == 1
    # revision 1 left it blank (the engine's default): "-"
    assert rows.first.inner_text().split("\t") == ["utilisation", "-", "50 %"]
    at_widths(page, "saved-diff")
    page.goto(f"/saved/{sid}")
    assert page.locator("table.list tbody tr").count() == 2
    at_widths(page, "saved-scenario")
    page.goto("/saved")
    at_widths(page, "saved-list")
    assert page.js_errors == []


def test_a_viewer_is_refused_saving(page, live_server):
    sign_in(page, live_server.keys["viewer"])
    name = f"browser viewer {uuid.uuid4().hex[:6]}"
    page.goto("/saved/new?" + urlencode(DEFAULTS))
    page.get_by_label("Name of a new saved scenario").fill(name)
    with page.expect_response("**/saved/new") as answer:
        page.get_by_role("button", name="Save", exact=True).click()
    assert answer.value.status == 403
    assert page.locator(".refused h1").inner_text() == "Not allowed"
    assert "has the viewer role. Nothing was saved." in page.locator(".refused").inner_text()
    assert api(live_server, "/api/v1/scenarios?" + urlencode({"q": name}))["total"] == 0
    at_widths(page, "saved-refused-viewer")
    # signing out (a POST with the form's token) leaves the browser without a key
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r".*/signin\?signed_out=1$"))
    assert page.get_by_role("link", name="Sign in").count() == 1
    at_widths(page, "signin")
