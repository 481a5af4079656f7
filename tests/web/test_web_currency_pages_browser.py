"""The Currency section of the Task, Plan, Quotes and Sensitivity pages in a real browser
(Playwright driving Debian's Chromium, see browser_support): each page, answered in USD first,
answers in EUR once a rate of 0.92 EUR/USD (dated, with its source) is typed, every money
figure 0.92 x the USD one to its rounding, the rate said beside the figures and the JSON
download the API's answer in EUR. Screenshots at 1280 px and 390 px in out/screenshots/
(git-ignored).
"""
from __future__ import annotations

import re

import browser_support
import pytest
from browser_support import api, at_widths, require_browser

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

EUR_PER_USD = 0.92
DATE, SOURCE = "2026-11-30", "illustrative assumption for the test"
SAID = f"shown in EUR at 0.92 EUR/USD ({DATE}; {SOURCE})"


def choose_euros(page) -> None:
    page.fill("#f-currency", "eur")  # any case: read as EUR
    page.fill("#f-fx_rate", "0.92")
    page.fill("#f-fx_date", DATE)
    page.fill("#f-fx_source", SOURCE)


def number(text: str) -> float:
    return float(re.search(r"-?[\d,]*\.?\d+(?:e-?\d+)?", text).group(0).replace(",", ""))


def submit(page, button: str) -> None:
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_url("**currency=eur*")  # as typed; read as EUR


def test_the_task_page_in_euros(page, live_server):
    page.goto("/task")
    cells = 'tr[data-figure="cost_per_task"] td .v'
    usd = [number(t) for t in page.locator(cells).all_inner_texts()]
    choose_euros(page)
    submit(page, "Price the task")
    eur = page.locator(cells).all_inner_texts()
    assert all(t.endswith(" EUR") for t in eur)
    for shown, was in zip(map(number, eur), usd, strict=True):
        assert shown == pytest.approx(was * EUR_PER_USD, rel=5e-3)  # each to its rounding
    assert SAID in page.get_by_test_id("money-note").inner_text()
    answer = api(live_server, "/task.json?" + page.url.split("?", 1)[1])
    assert answer["systems"][0]["price_per_task"]["unit"] == "EUR"
    at_widths(page, "task-in-euros")
    assert not page.js_errors


def test_the_plan_page_in_euros(page, live_server):
    page.goto("/plan?pl_demand=2.5e6")
    month = '[data-figure="cost_per_month"]'
    usd = page.locator(month).inner_text()
    assert usd.endswith(" USD")
    choose_euros(page)
    submit(page, "Plan")
    eur = page.locator(month).inner_text()
    assert eur.endswith(" EUR")
    assert number(eur) == pytest.approx(number(usd) * EUR_PER_USD, rel=5e-3)
    assert SAID in page.get_by_test_id("money-note").inner_text()
    answer = api(live_server, "/plan.json?" + page.url.split("?", 1)[1])
    assert answer["cost_per_month"]["unit"] == "EUR/month"
    assert answer["disclosure"]["money"]["rate"]["value"] == 0.92
    at_widths(page, "plan-in-euros")
    assert not page.js_errors


def test_the_sensitivity_page_in_euros(page, live_server):
    page.goto("/sensitivity?sa_draws=100")
    base = ".scenario-name strong"
    usd = page.locator(base).inner_text()
    assert usd.endswith("USD/Mtok")
    choose_euros(page)
    submit(page, "Analyse")
    eur = page.locator(base).inner_text()
    assert eur.endswith("EUR/Mtok")
    assert number(eur) == pytest.approx(number(usd) * EUR_PER_USD, rel=5e-3)
    assert SAID in page.get_by_test_id("money-note").inner_text()
    at_widths(page, "sensitivity-in-euros")
    assert not page.js_errors


def test_the_quotes_page_in_euros(page, live_server):
    page.goto("/quotes")
    cells = "td.monthly"
    usd = [number(t) for t in page.locator(cells).all_inner_texts()]
    assert usd
    choose_euros(page)
    submit(page, "Show")
    eur = page.locator(cells).all_inner_texts()
    assert all(t.endswith(" EUR") for t in eur)
    for shown, was in zip(map(number, eur), usd, strict=True):
        assert shown == pytest.approx(was * EUR_PER_USD, rel=5e-3)
    note = page.get_by_test_id("money-note").inner_text()
    assert SAID in note and "quote prices are stated in USD" in note
    at_widths(page, "quotes-in-euros")
    assert not page.js_errors


def test_a_bad_code_is_beside_its_field_on_the_task_page(page, live_server):
    page.goto("/task")
    choose_euros(page)
    page.fill("#f-currency", "EUX")
    page.get_by_role("button", name="Price the task", exact=True).click()
    page.wait_for_url("**currency=EUX*")
    assert page.locator("#currency-error").inner_text().strip().startswith(
        "'EUX' is not an ISO 4217 currency code")
    assert page.get_attribute("#f-currency", "aria-invalid") == "true"
    assert page.locator('[data-figure="cheapest"]').count() == 0
