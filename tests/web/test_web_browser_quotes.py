"""The Quotes page in a real browser (Playwright driving Debian's Chromium, see
browser_support): a first visit shows the decision of the negotiators' example as the API
decides it, with its mark on the recommended offer only; the view's link, opened in another
browser, shows the same figures (after a change of demand, and for an uploaded file carried
in it); without a demand the ranking is by unit price with no mark; the workbook and the
one-page summary download; a bad file and a typed quote by keyboard. Each view is saved as a
screenshot at 1280 px and 390 px in out/screenshots/ (git-ignored).

Expected figures are the API's, asked through the live server, rounded as the page rounds.
"""
from __future__ import annotations

import tomllib
from io import BytesIO
from pathlib import Path

import browser_support
import openpyxl
from browser_support import DESKTOP, api, at_widths, require_browser

from costmodel.render import display

require_browser()
# the shared fixtures, bound here so pytest finds them in this module
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
NEGOTIATION = ROOT / "fixtures" / "quotes" / "negotiation.toml"
FIXTURE = ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_matched.toml"
MATCHED = "fixture:published/deepseek-r1_gb300_matched"




def curve_scenario(name: str) -> dict:
    """A curve fixture scenario as the API takes it (a stored curve by id)."""
    scenario = tomllib.loads((ROOT / "fixtures" / "scenarios" / f"{name}.toml").read_text())
    scenario["operating_point"].pop("curve")
    scenario["operating_point"]["curve"] = scenario["operating_point"].pop("curve_id")
    return scenario


def on_screen(pg) -> dict:
    """The figures of the view as a person reads them: each ranked row's cells (its mark
    included), the recommendation, the headings of the answer."""
    pg.wait_for_selector(".ranking-table")
    return {"rows": pg.locator("tr.quote-row").all_inner_texts(),
            "recommendation": pg.locator(".recommendation").all_inner_texts(),
            "headings": pg.locator("section.ranking h2").all_inner_texts(),
            "uses": pg.locator("dl.uses").inner_text()}


def in_another_browser(browser, live, link: str) -> dict:
    """``link`` opened in a fresh browser context (no cookies, no history): its figures."""
    context = browser.new_context(viewport=DESKTOP, base_url=live.url, locale="en-US")
    try:
        other = context.new_page()
        assert other.goto(link).status == 200
        return on_screen(other)
    finally:
        context.close()


def view_link(pg) -> str:
    return pg.get_by_test_id("view-link").get_attribute("href")


def test_the_first_visit_shows_the_decision_and_its_link_reproduces_it(page, live_server,
                                                                      browser):
    page.goto("/quotes")
    shown = on_screen(page)
    data = tomllib.loads(NEGOTIATION.read_text())
    decided = api(live_server, "/api/v1/quotes/decide", {
        "quotes": data["quote"], "demand": data["demand"],
        "scenarios": [{"scenario": curve_scenario("curve-gpt-oss-120b-b200")},
                      {"scenario": curve_scenario("curve-gpt-oss-120b-h100")}]})
    names = page.locator("tr.quote-row .quote-name").all_inner_texts()
    monthly = page.locator("tr.quote-row .monthly").all_inner_texts()
    assert names == [p["offer"] for p in decided["ranked"]]
    assert monthly == [display.format_quantity(p["monthly_cost"]["value"], "USD")
                       for p in decided["ranked"]]
    assert monthly[0] == "5,477 USD"  # as docs/negotiators.md prints it
    # the mark belongs to the decision: on the recommended offer, and no other
    marked = page.locator("tr.quote-row.recommended")
    assert marked.count() == 1 and page.locator(".mark").count() == 1
    assert marked.locator(".quote-name").inner_text() == decided["recommendation"]["offer"]
    assert " ".join(shown["recommendation"][0].split()) == decided["recommendation"]["text"]
    # what it uses, said on the page
    assert "fixtures/quotes/negotiation.toml" in shown["uses"]
    assert "50,000 Mtok/month (mixed tokens), peak 30,000 token/s" in shown["uses"]
    at_widths(page, "quotes-first-view")
    # the link of this view, opened in another browser: the same figures
    assert view_link(page).startswith("/quotes?quotes=negotiation&demand=buyer&scenario=")
    assert in_another_browser(browser, live_server, view_link(page)) == shown

    # a change of demand, made in the form: the address and the view's link reproduce it
    page.fill("#f-d_volume", "8000")
    page.fill("#f-d_peak", "9000")
    page.select_option("#f-scenario3", "fixture:curve-gpt-oss-120b-mi300x")
    page.get_by_role("button", name="Show", exact=True).click()
    page.wait_for_url("**/quotes?*d_volume=8000*")
    changed = on_screen(page)
    assert changed != shown and "8,000 Mtok/month" in changed["uses"]
    assert len(changed["rows"]) == 5 and page.locator(".mark").count() == 1
    assert in_another_browser(browser, live_server, view_link(page)) == changed
    assert in_another_browser(browser, live_server, page.url) == changed
    assert page.js_errors == []


def test_a_load_shape_typed_over_the_files_demand(page, live_server):
    # 12 busy hours at the peak, 12 at 0.4 of it: a mean of 0.7, the example builds' own
    # utilisation; the file's 50,000 Mtok a month (19,026 token/s) then peaks at
    # 19,026 / 0.7 = 27,180 token/s (the file's own peak gives way to the shape's)
    shape = [0.4] * 8 + [1.0] * 12 + [0.4] * 4
    page.goto("/quotes")
    page.fill("#f-d_load", " ".join(f"{x:g}" for x in shape))
    page.get_by_role("button", name="Show", exact=True).click()
    page.wait_for_url("**/quotes?*d_load=*")
    shown = on_screen(page)
    data = tomllib.loads(NEGOTIATION.read_text())
    demand = {**data["demand"], "load": {"hourly": shape}}
    demand.pop("peak")
    decided = api(live_server, "/api/v1/quotes/decide", {
        "quotes": data["quote"], "demand": demand,
        "scenarios": [{"scenario": curve_scenario("curve-gpt-oss-120b-b200")},
                      {"scenario": curve_scenario("curve-gpt-oss-120b-h100")}]})
    assert abs(decided["demand"]["peak"]["value"] / (50_000e6 / (730 * 3600) / 0.7) - 1) \
        < 1e-12
    assert page.locator("tr.quote-row .monthly").all_inner_texts() == [
        display.format_quantity(p["monthly_cost"]["value"], "USD") for p in decided["ranked"]]
    assert "peak 27,180 token/s" in shown["uses"]
    assert "the busiest hour is the peak, the average 0.7 of it" in shown["uses"]
    at_widths(page, "quotes-load-shape")
    assert page.js_errors == []


def test_without_a_demand_the_ranking_is_by_unit_price_with_no_mark(page, live_server):
    page.goto("/quotes")
    page.get_by_label("No demand: rank by unit price", exact=False).check()
    page.get_by_role("button", name="Show", exact=True).click()
    page.wait_for_url("**/quotes?*demand=none*")
    shown = on_screen(page)
    assert shown["headings"] == [
        "Ranked by unit price at each offer's own volume and term, against gpt-oss-120b b200 "
        "(illustrative curve)",
        "Ranked by unit price at each offer's own volume and term, against gpt-oss-120b h100 "
        "(illustrative curve)"]
    assert page.locator(".mark, tr.recommended, .recommendation").count() == 0
    assert shown["recommendation"] == []
    assert "None: no demand was asked for" in shown["uses"]
    at_widths(page, "quotes-by-unit-price")
    assert page.js_errors == []


def test_upload_quotes_see_the_ranking_and_download_the_workbook(page, live_server, tmp_path,
                                                                 browser):
    page.goto("/quotes")
    # the own build first (an upload is ranked with the view's own builds and demand)
    page.select_option("#f-scenario1", MATCHED)
    page.select_option("#f-scenario2", "")
    page.get_by_role("button", name="Show", exact=True).click()
    page.wait_for_url("**/quotes?*deepseek-r1_gb300_matched*")
    page.set_input_files("#f-quote-file", str(EXAMPLE))
    page.get_by_role("button", name="Upload and rank").click()
    page.wait_for_url("**/quotes?quotes=file*")
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
    assert page.locator(".mark").count() == 0  # unit prices at different volumes
    at_widths(page, "quotes-ranked")
    # the uploaded file is in the link: another browser sees the same ranking
    assert in_another_browser(browser, live_server, view_link(page)) == on_screen(page)

    with page.expect_download() as got:
        page.get_by_role("link", name="Download the workbook (.xlsx)").click()
    path = tmp_path / got.value.suggested_filename
    got.value.save_as(path)
    book = openpyxl.load_workbook(path)
    assert "Quotes" in book.sheetnames
    assert page.js_errors == []


def test_quotes_for_the_buyers_demand_and_the_one_page_summary(page, live_server, tmp_path):
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
    page.goto("/quotes?scenario=fixture:curve-gpt-oss-120b-h100")
    page.set_input_files("#f-quote-file", str(offers))
    page.get_by_role("button", name="Upload and rank").click()
    page.wait_for_selector(".recommendation")
    names = page.locator("tr.quote-row .quote-name").all_inner_texts()
    # the file's demand: the H100 offer sized on the H100 scenario's throughput
    assert set(names) == {"gpt-oss-120b h100 (illustrative curve)", "api-tokens",
                          "h100-capacity"}
    assert page.locator(".recommendation").inner_text().startswith("Take ")
    assert "From the [demand] table of offers.toml" in page.locator("dl.uses").inner_text()
    at_widths(page, "quotes-decision")
    with page.expect_download() as got:
        page.get_by_role("link", name="Download the one-page summary (PDF)").click()
    path = tmp_path / got.value.suggested_filename
    got.value.save_as(path)
    reader = PdfReader(BytesIO(path.read_bytes()))
    assert len(reader.pages) == 1
    # the decision as a workbook: its Decision sheet recommends what the page does
    with page.expect_download() as got:
        page.get_by_role("link", name="Download the decision as a workbook (.xlsx)").click()
    book = tmp_path / got.value.suggested_filename
    got.value.save_as(book)
    assert book.name.startswith("decision_") and book.suffix == ".xlsx"
    wb = openpyxl.load_workbook(book, data_only=True)
    (sheet, ref), = wb.defined_names["decision_offer"].destinations
    assert page.locator(".recommendation").inner_text().startswith(
        f"Take {wb[sheet][ref.replace('$', '')].value} ")
    assert page.js_errors == []


def test_a_bad_quote_file_is_marked_at_the_field(page, live_server, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[quote]]\nname = "x"\nvendor = "v"\nform = "per_mtok"\n'
                   'price_input = "1 W"\nprice_output = "1 USD/Mtok"\n')
    page.goto("/quotes")
    page.set_input_files("#f-quote-file", str(bad))
    page.get_by_role("button", name="Upload and rank").click()
    error = page.locator(".field.invalid .field-error").first
    assert error.inner_text().startswith("quote[0].price_input: ")
    assert page.locator("#f-quote-file").get_attribute("aria-invalid") == "true"
    assert page.locator(".ranking-table").count() == 0
    at_widths(page, "quotes-bad-file")


def test_a_typed_quote_is_ranked_by_keyboard(page, live_server):
    """Every quote field has a label; Enter in a field shows the view the form describes."""
    page.goto(f"/quotes?scenario={MATCHED}")
    page.locator("details summary").focus()
    page.keyboard.press("Enter")  # opens "Type one quote"
    for label, value in (("Name", "typed-offer"), ("Vendor", "Vendor T"),
                         ("Price per million input tokens", "0.5"),
                         ("Price per million output tokens", "2"),
                         ("Guaranteed interactivity", "169")):
        page.get_by_label(label, exact=False).first.fill(value)
    page.get_by_label("Form of price").select_option("per_mtok")
    page.get_by_label("The quote typed below").focus()
    page.keyboard.press("Space")
    page.get_by_label("Guaranteed interactivity", exact=False).press("Enter")
    page.wait_for_url("**/quotes?quotes=typed*")
    # (8,192 x 0.5 + 1,024 x 2) / 9,216 = 0.6667 USD/Mtok
    assert page.locator("tr.quote-row .quote-name").all_inner_texts() == ["typed-offer"]
    assert page.locator("tr.quote-row .quote-price").all_inner_texts() == ["0.6667 USD/Mtok"]
