"""Every page at 1280 px and at a phone's 390 px in Chromium (Playwright, see
browser_support): nothing is wider than the screen and no figure, table, chart or form is
cut by its box (``scrollWidth <= clientWidth`` for the document and for every element that
shows something), except the wide tables that scroll sideways in their own box on purpose
(their wrapper says so: ``data-scrolls``). A figure such as the Task page's "0.2472 USD"
cut to "0.2472 U", or the Compare chart cut at the screen's edge, fails here.
"""
from __future__ import annotations

import json
import urllib.request

import browser_support
import pytest
from browser_support import DESKTOP, PHONE, api, require_browser

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

SCENARIO = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
CURVES = "sys=fixture:curve-gpt-oss-120b-h100&sys=fixture:curve-gpt-oss-120b-b200"
PAGES = [
    "/",  # Price, priced
    "/?electricity_kind=tariff&tariff=illustrative-tou-peak-16-21&load=daytime-chat",
    "/?currency=EUR",  # nothing priced: the list of errors
    "/compare",
    f"/compare?{CURVES}&sys=fixture:curve-gpt-oss-120b-mi300x&at=matched",
    f"/compare?{CURVES}&at=named&interactivity=400",  # out of reach: the explanation
    "/task",
    "/quotes",
    "/quotes?quotes=example-quotes&demand=none&scenario=fixture%3Apublished%2F"
    "deepseek-r1_gb300_matched",
    "/sensitivity?sa_draws=1000",
    "/plan",
    "/plan?pl_budget=10%20MW&pl_deployment=rack",
    "/saved",
    "/saved/{id}",
    "/saved/{id}/revisions/1",
    "/saved/{id}/diff?a=1&b=2",
    "/saved/new?accelerator=gb300",
    "/signin",
    "/no-such-page",
]

# Elements whose contents overflow them, or that reach past the viewport: those inside a
# wrapper that scrolls on purpose, form controls (a long value scrolls inside its box) and
# what is hidden from sight (clipped headings and a phone's table heads, closed details)
# are not counted.
OVERFLOWING = r"""
() => {
  const vw = document.documentElement.clientWidth;
  const skip = new Set(['input', 'select', 'textarea', 'option', 'svg', 'path', 'text', 'g',
                        'line', 'circle', 'rect', 'tspan', 'title', 'desc', 'polyline']);
  const clipped = (el) => {  // hidden from sight, read by screen readers (clip: rect(0 0 0 0))
    for (let a = el; a; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.position === 'absolute' && (cs.clip !== 'auto' || cs.clipPath !== 'none')) {
        return true;
      }
    }
    return false;
  };
  const out = [];
  if (document.documentElement.scrollWidth > vw) {
    out.push(`document: ${document.documentElement.scrollWidth} px wide in ${vw}`);
  }
  for (const el of document.body.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (skip.has(tag) || el.closest('[data-scrolls] > *')) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || clipped(el)) continue;
    const name = `${tag}${el.id ? '#' + el.id : ''}.${String(el.className).split(' ')[0]}`;
    const words = el.textContent.trim().replace(/\s+/g, ' ').slice(0, 40);
    if (!el.hasAttribute('data-scrolls') && el.scrollWidth > el.clientWidth + 1 &&
        el.clientWidth > 0) {
      out.push(`${name} cuts its contents (${el.scrollWidth} > ${el.clientWidth}): ${words}`);
    }
    if (box.right > vw + 1) out.push(`${name} reaches ${Math.round(box.right)} px: ${words}`);
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def saved_id(live_server):
    """A saved scenario with two revisions (its page, a revision, the diff)."""
    editor = live_server.keys["editor"]
    made = api(live_server, "/api/v1/scenarios", {"name": "layout check",
                                                  "scenario": SCENARIO}, editor)
    sid = made["scenario_id"]
    ask = urllib.request.Request(
        f"{live_server.url}/api/v1/scenarios/{sid}/revisions",
        data=json.dumps({"scenario": {**SCENARIO, "utilisation": 0.6}}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {editor}",
                 "If-Match": "*"})
    with urllib.request.urlopen(ask) as answer:
        assert json.load(answer)["number"] == 2
    return sid


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_no_page_is_cut_at_either_width(page, live_server, saved_id, viewport):
    page.set_viewport_size(viewport)
    cut = {}
    for path in PAGES:
        page.goto(path.format(id=saved_id))
        found = page.evaluate(OVERFLOWING)
        if found:
            cut[path] = found[:5]
    assert not cut, cut


def test_the_check_sees_a_cut_figure(page, live_server):
    """The check itself: a figure squeezed into a box too narrow for it is reported."""
    page.set_viewport_size(PHONE)
    page.goto("/task")
    page.evaluate("""() => { const v = document.querySelector('.task-table td.num span');
        v.style.display = 'block'; v.style.width = '40px'; v.style.overflow = 'hidden';
        v.style.whiteSpace = 'nowrap'; }""")
    assert any("cuts its contents" in x for x in page.evaluate(OVERFLOWING))
