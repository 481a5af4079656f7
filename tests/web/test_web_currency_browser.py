"""A currency chosen on the web pages, in a real browser (Playwright driving Debian's Chromium,
see browser_support): the Price page answers in EUR at the rate typed with its date and
source, and says so in the disclosure in the words the command line uses; its downloads (the
JSON the API answers, the workbook) carry the choice; a code that is no currency is marked
beside its field; the Compare page shows every system in EUR at the same rate.

The rate is the sample TOU scenario's (fixtures/scenarios/sample-tou.toml: 0.92 EUR/USD, dated
2026-11-30, an illustrative assumption). Screenshots at 1280 px and 390 px in
out/screenshots/ (git-ignored).
"""
from __future__ import annotations

import re
import tomllib
from urllib.parse import parse_qs, urlparse

import browser_support
import openpyxl
import pytest
from browser_support import api, at_widths, require_browser

from costmodel.render import display
from costmodel.render.report import money_text
from costmodel.resources import fixtures_dir

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

SAMPLE = tomllib.loads((fixtures_dir() / "scenarios" / "sample-tou.toml").read_text())
FX = SAMPLE["money"]["fx"]["EUR"]  # rate = "0.92 EUR/USD", date = "2026-11-30", source = ...
EUR_PER_USD = 0.92
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
# GB300 at DeepSeek R1's published peak is 0.08212709 USD per million tokens on every face
# (docs/getting-started.md: 0.0821), half of it cost (gross margin 50 %): 0.04106355; at
# 0.92 EUR/USD the price is 0.08212709 x 0.92 = 0.07555692 EUR/Mtok, shown as 0.0756, the
# cost 0.04106355 x 0.92 = 0.03777846 EUR/Mtok, shown as 0.0378; an accelerator-hour costs
# 2.438199 USD x 0.92 = 2.243143 EUR, shown as 2.243
PRICE_USD, COST_USD, HOUR_USD = 0.08212709, 0.04106355, 2.438199


def choose_euros(page) -> None:
    page.fill("#f-currency", "eur")  # any case: read as EUR
    page.fill("#f-fx_rate", "0.92")
    page.fill("#f-fx_date", FX["date"])
    page.fill("#f-fx_source", FX["source"])


def test_the_price_page_answers_in_euros_with_its_rate(page, live_server, tmp_path):
    dollars = api(live_server, "/api/v1/price", {"scenario": GB300})["steps"]
    assert dollars["price_per_mtok_total"]["value"] == pytest.approx(PRICE_USD, abs=5e-9)
    assert dollars["cost_per_mtok_total"]["value"] == pytest.approx(COST_USD, abs=5e-9)
    assert dollars["cost_per_hour"]["value"] == pytest.approx(HOUR_USD, abs=5e-7)
    page.goto("/")
    choose_euros(page)
    page.click("button[type=submit]")
    page.wait_for_url("**currency=eur*")
    figure = page.locator('[data-figure="price_per_mtok_total"]').first.inner_text()
    assert "0.0756 EUR/Mtok" in figure
    assert display.format_quantity(PRICE_USD * EUR_PER_USD, "EUR/Mtok",
                                   "price_per_mtok_total") == "0.0756 EUR/Mtok"
    assert "0.0378 EUR/Mtok" in page.locator('[data-figure="cost_per_mtok_total"]').first \
        .inner_text()
    assert "2.243 EUR/h" in page.locator('[data-figure="cost_per_hour"]').inner_text()
    assert "EUR per million mixed" in page.locator(".units-note").first.inner_text()
    # a request's price: 0.08212709 x 9,216 / 10^6 x 0.92 = 0.000696 EUR
    assert "0.000696 EUR" in page.locator('[data-figure="price_per_request"]').inner_text()
    # the disclosure: the rate, its date and source, in the command line's words
    money = page.locator("dl.disclosure dt", has_text="Money").locator(
        "xpath=following-sibling::dd[1]")
    said = money.inner_text()
    assert said == "Calculated in USD, shown in EUR at 0.92 EUR/USD (2026-11-30; " \
                   f"{FX['source']})."
    assert said[:1].lower() + said[1:-1] == money_text(
        {"currency": "EUR", "rate": {"value": 0.92, "unit": "EUR/USD", "date": FX["date"],
                                     "source": FX["source"]}})
    assert page.input_value("#f-currency") == "EUR"
    at_widths(page, "price-in-euros")

    # the downloads carry the choice: the JSON is the API's answer in EUR ...
    href = page.get_attribute("[data-testid=download-json]", "href")
    assert parse_qs(urlparse(href).query)["currency"] == ["EUR"]
    answer = api(live_server, href)
    assert answer["price_per_mtok"]["total"] == {
        "value": pytest.approx(PRICE_USD * EUR_PER_USD, abs=5e-9), "unit": "EUR/Mtok"}
    assert answer["disclosure"]["money"]["rate"] == {"value": 0.92, "unit": "EUR/USD",
                                                     "date": FX["date"], "source": FX["source"]}
    # ... the workbook holds the rate as an input cell under its live EUR figures ...
    with page.expect_download() as info:
        page.click("[data-testid=download-xlsx]")
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    wb = openpyxl.load_workbook(path)
    sheet, cell = next(iter(wb.defined_names["money_rate"].destinations))
    assert wb[sheet][cell.replace("$", "")].value == pytest.approx(0.92)
    # ... and the API call to copy states the same money table
    curl = page.get_by_test_id("curl").inner_text()
    assert '"money":{"currency":"EUR","fx":{"EUR":{"rate":"0.92 EUR/USD","date":"2026-11-30"' \
        in curl
    assert not page.js_errors


@pytest.mark.parametrize("field,typed,says", [
    ("currency", "EUX", "'EUX' is not an ISO 4217 currency code (e.g. EUR, GBP, JPY; blank "
                        "for USD)"),
    ("fx_date", "30 Nov", "a date as YYYY-MM-DD (or YYYY-MM), got '30 Nov'"),
])
def test_a_bad_money_field_is_marked_beside_it(page, live_server, field, typed, says):
    page.goto("/")
    choose_euros(page)
    page.fill(f"#f-{field}", typed)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{field}={typed.split()[0]}*")
    assert page.locator(f"#{field}-error").inner_text().strip() == says
    assert page.get_attribute(f"#f-{field}", "aria-invalid") == "true"
    assert page.locator("[data-figure]").count() == 0  # nothing priced
    at_widths(page, f"price-bad-{field}")


def test_the_compare_page_shows_every_system_in_euros(page, live_server):
    page.goto("/compare?sys=fixture:published/deepseek-r1_gb300_peak&sys=fixture:sample-tco&at=own")
    usd = {name: float(page.locator(f'tr[data-figure="price_per_mtok_total"] '
                                    f'td[data-system="{name}"] .v').inner_text())
           for name in page.locator('tr[data-figure="price_per_mtok_total"] td')
           .evaluate_all("cells => cells.map(c => c.dataset.system)")}
    choose_euros(page)
    page.click("button[type=submit]")
    page.wait_for_url("**currency=eur*")
    row = page.locator('tr[data-figure="price_per_mtok_total"]')
    assert "EUR per million tokens" in row.locator("th").inner_text()
    answer = api(live_server, "/compare.json?" + page.url.split("?", 1)[1])
    for system in answer["scenarios"]:
        name = system["scenario"]
        eur = system["price_per_mtok"]["total"]
        assert eur["unit"] == "EUR/Mtok"
        shown = row.locator(f'td[data-system="{name}"] .v').inner_text()
        assert shown == display.format_number(eur["value"], "USD/Mtok", "price_per_mtok_total")
        # each system's USD figure (as the page showed it before) x 0.92, to its rounding
        assert float(shown) == pytest.approx(usd[name] * EUR_PER_USD, rel=2e-3)
    assert re.search(r"shown in EUR at 0\.92 EUR/USD \(2026-11-30;",
                     page.get_by_test_id("money-note").inner_text())
    at_widths(page, "compare-in-euros")
    assert not page.js_errors


def test_a_currency_without_its_rate_says_what_is_missing_by_its_label(page, live_server):
    """EUR chosen and nothing else: each blank field is named by its label and says what to
    type; nothing is priced."""
    page.goto("/")
    page.fill("#f-currency", "EUR")
    page.click("button[type=submit]")
    page.wait_for_url("**currency=EUR*")
    listed = page.locator(".not-priced li").all_inner_texts()
    assert listed == [
        "Exchange rate: figures in EUR need the rate they are converted at: type how many EUR "
        "one USD buys (a bare number is EUR/USD)",
        "Date of the rate: type the date of the EUR rate (YYYY-MM-DD), so the figures say "
        "when it held",
        "Source of the rate: type where the EUR rate comes from (e.g. a central bank's "
        "reference rate of the day)"]
    assert page.locator("#fx_rate-error").inner_text().startswith("figures in EUR need")
    assert page.locator("[data-figure]").count() == 0  # nothing priced
