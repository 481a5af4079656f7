"""The Task page in a real browser (Playwright driving Debian's Chromium, see browser_support):
a first visit prices issue 24's example agent on the three illustrative gpt-oss-120b curves;
a tighter target typed in the form changes the answer (no system meets it, each read at its
fastest point); a bad share is marked at its field; the page fits a phone. Each view is saved
as a screenshot at 1280 px and 390 px in out/screenshots/ (git-ignored).

Expected figures are the engine's (:func:`costmodel.app.price_task`) for the same task, rounded
as the page rounds them.
"""
from __future__ import annotations

import browser_support
from browser_support import at_widths, require_browser

from costmodel import app
from costmodel.decisions.task import validate_task
from costmodel.render import display
from costmodel.web.pages import fixture_scenarios
from costmodel.web.task_page import DEFAULT_SYSTEMS

require_browser()
# the shared fixtures, bound here so pytest finds them in this module
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

EXAMPLE_TASK = {"steps": 40, "context": "8000 token", "growth": "1500 token",
                "output": "300 token", "cached_share": "80 %", "tool_time": "1.2 s",
                "target": "120 s", "percentile": "median"}


def priced(task: dict) -> dict:
    specs = [app.ScenarioSpec(app.InlineScenario(fixture_scenarios()[k][1]))
             for k in DEFAULT_SYSTEMS]
    return app.price_task(app.LocalContext(), app.TaskRequest(
        specs, validate_task(task))).to_json()


def cells(pg, figure: str) -> list[str]:
    return [t.strip() for t in pg.locator(f'tr[data-figure="{figure}"] td').all_inner_texts()]


def shown(q: dict | None, name: str | None = None) -> str:
    return "-" if q is None else display.format_quantity(q["value"], q["unit"], name)


def test_a_tighter_target_changes_the_answer(page, live_server):
    page.goto("/task")
    want = priced(EXAMPLE_TASK)
    assert page.locator('[data-figure="cheapest"]').inner_text() == want["cheapest"]
    assert cells(page, "cost_per_task") == [
        shown(s["cost_per_task"]["total"], "cost_per_task") for s in want["systems"]]
    assert cells(page, "meets_target") == ["no: misses by 1.87 s", "yes",
                                           "no: misses by 16.80 s"]
    assert page.locator("svg.chart.steps g.series").count() == 3
    assert page.locator("svg.chart.steps").is_visible()
    before = cells(page, "latency_total")
    at_widths(page, "task")

    # the user can wait 150 s: typed in the form and sent, as a person does; every system
    # now meets it, each read at a lower (cheaper) interactivity than before
    page.fill("#f-t_target", "150")
    page.press("#f-t_target", "Enter")
    page.wait_for_url("**t_target=150*")
    want = priced({**EXAMPLE_TASK, "target": "150 s"})
    assert cells(page, "meets_target") == ["yes", "yes", "yes"]
    after = cells(page, "latency_total")
    assert after == [shown(s["latency"]["total"]) for s in want["systems"]]
    assert after != before
    assert cells(page, "cost_per_task") == [
        shown(s["cost_per_task"]["total"], "cost_per_task") for s in want["systems"]]
    assert page.locator("#curl-line").inner_text().count('"target":"150 s"') == 1
    at_widths(page, "task-150s")

    # 60 s, which no system meets: said beside the target, with each system's best
    page.fill("#f-t_target", "60")
    page.press("#f-t_target", "Enter")
    page.wait_for_url("**t_target=60*")
    said = page.locator("#t_target-error").inner_text()
    assert said.startswith("no system meets 60 s:") and "121.9 s" in said
    assert not page.js_errors


def test_a_bad_share_is_marked_at_its_field(page, live_server):
    page.goto("/task")
    page.fill("#f-t_cached_share", "150 %")
    page.get_by_role("button", name="Price the task").click()
    page.wait_for_url("**t_cached_share=150*")
    assert page.locator("#t_cached_share-error").inner_text().strip() == \
        "must be at most 100 %, got 150 %"
    assert page.get_attribute("#f-t_cached_share", "aria-invalid") == "true"
    assert page.locator('tr[data-figure="cost_per_task"]').count() == 0  # nothing priced
    page.click('.not-priced a[href="#f-t_cached_share"]')  # the summary leads to the field
    at_widths(page, "task-bad-share")


def test_the_task_page_fits_a_phone(page, live_server):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/task")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
