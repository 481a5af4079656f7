"""Sign-in, the Saved-scenarios pages and the Quotes page in a real browser (Playwright driving
Debian's Chromium, see browser_support): upload quotes and download the workbook, sign in by
keyboard and save two revisions as an editor, be refused as a viewer. Each page is saved as
a screenshot at 1280 px and 390 px in out/screenshots/ (git-ignored).

Expected figures are the API's, asked through the live server, rounded as the page rounds.
"""
from __future__ import annotations

import json
import re
import tomllib
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import urlencode

import browser_support
import openpyxl
from browser_support import at_widths, require_browser

from costmodel.render import display
from costmodel.web.scenario_form import DEFAULTS

require_browser()
# the shared fixtures, bound here so pytest finds them in this module
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
FIXTURE = ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_matched.toml"


def api(live, path: str, body: dict | None = None, token: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(live.url + path, headers=headers,
                                 data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


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


def test_upload_quotes_see_the_ranking_and_download_the_workbook(page, live_server, tmp_path):
    page.goto("/quotes")
    at_widths(page, "quotes-form")
    page.set_input_files("#f-quote-file", str(EXAMPLE))
    page.get_by_role("button", name="Rank the quotes").click()
    page.wait_for_selector(".ranking-table")
    names = page.locator("tr.quote-row .quote-name").all_inner_texts()
    prices = page.locator("tr.quote-row .quote-price").all_inner_texts()
    ranked = api(live_server, "/api/v1/quotes/compare", {
        "quotes": tomllib.loads(EXAMPLE.read_text())["quote"],
        "scenarios": [{"scenario": tomllib.loads(FIXTURE.read_text())}]})["scenarios"][0]["ranked"]
    assert names == [c["quote"] for c in ranked] == ["vendor-a-tokens", "vendor-b-reserved",
                                                     "vendor-c-no-point"]
    assert prices == [display.format_quantity(c["price_per_mtok"]["value"], "USD/Mtok",
                                              "price_per_mtok_total") for c in ranked]
    assert prices[0] == "0.7322 USD/Mtok"  # (8,192 x 0.55 + 1,024 x 2.19) / 9,216
    at_widths(page, "quotes-ranked")

    with page.expect_download() as got:
        page.get_by_role("button", name="Download the workbook (.xlsx)").click()
    path = tmp_path / got.value.suggested_filename
    got.value.save_as(path)
    book = openpyxl.load_workbook(path)
    assert "Quotes" in book.sheetnames
    assert page.js_errors == []


def test_quotes_for_the_buyers_demand_and_the_one_page_summary(page, live_server, tmp_path):
    from io import BytesIO

    from pypdf import PdfReader
    offers = tmp_path / "offers.toml"
    offers.write_text(
        '[demand]\nvolume = "50000 Mtok/month"\ninteractivity = "100 token/s/user"\n\n'
        '[[quote]]\nname = "h100-capacity"\nvendor = "Cloud X"\ndate = "2026-11-20"\n'
        'form = "per_accelerator_hour"\nhourly_price = "2.10 USD/h"\naccelerators = 64\n'
        'hardware = "h100"\n\n'
        '[[quote]]\nname = "api-tokens"\nvendor = "API Y"\nform = "per_mtok"\n'
        'price_input = "0.60 USD/Mtok"\nprice_output = "0.60 USD/Mtok"\n'
        '[quote.operating_point]\ninteractivity = "100 token/s/user"\n')
    page.goto("/quotes")
    page.set_input_files("#f-quote-file", str(offers))
    page.select_option("#f-scenario", "fixture:curve-gpt-oss-120b-h100")
    page.get_by_role("button", name="Rank the quotes").click()
    page.wait_for_selector(".recommendation")
    names = page.locator("tr.quote-row .quote-name").all_inner_texts()
    # the file's demand: the H100 offer sized on the H100 scenario's throughput
    assert set(names) == {"gpt-oss-120b h100 (illustrative curve)", "api-tokens",
                          "h100-capacity"}
    assert page.locator(".recommendation").inner_text().startswith("Take ")
    at_widths(page, "quotes-decision")
    with page.expect_download() as got:
        page.get_by_role("button", name="Download the one-page summary (PDF)").click()
    path = tmp_path / got.value.suggested_filename
    got.value.save_as(path)
    reader = PdfReader(BytesIO(path.read_bytes()))
    assert len(reader.pages) == 1
    assert page.js_errors == []


def test_a_bad_quote_file_is_marked_at_the_field(page, live_server, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[quote]]\nname = "x"\nvendor = "v"\nform = "per_mtok"\n'
                   'price_input = "1 W"\nprice_output = "1 USD/Mtok"\n')
    page.goto("/quotes")
    page.set_input_files("#f-quote-file", str(bad))
    page.get_by_role("button", name="Rank the quotes").click()
    error = page.locator(".field.invalid .field-error").first
    assert error.inner_text().startswith("quote[0].price_input: ")
    assert page.locator("#f-quote-file").get_attribute("aria-invalid") == "true"
    assert page.locator(".ranking-table").count() == 0


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


def test_a_typed_quote_is_ranked_by_keyboard(page, live_server):
    """Every quote field has a label; Enter in a field ranks the typed quote (the main
    button comes first in the form, before "the example instead")."""
    page.goto("/quotes")
    page.locator("details summary").focus()
    page.keyboard.press("Enter")  # opens "Or type one quote"
    for label, value in (("Name", "typed-offer"), ("Vendor", "Vendor T"),
                         ("Price per million input tokens", "0.5"),
                         ("Price per million output tokens", "2"),
                         ("Guaranteed interactivity", "169")):
        page.get_by_label(label, exact=False).first.fill(value)
    page.get_by_label("Form of price").select_option("per_mtok")
    page.get_by_label("Guaranteed interactivity", exact=False).press("Enter")
    page.wait_for_selector(".ranking-table")
    # (8,192 x 0.5 + 1,024 x 2) / 9,216 = 0.6667 USD/Mtok
    assert page.locator("tr.quote-row .quote-name").all_inner_texts() == ["typed-offer"]
    assert page.locator("tr.quote-row .quote-price").all_inner_texts() == ["0.6667 USD/Mtok"]
