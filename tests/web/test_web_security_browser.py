"""Every page under its Content-Security-Policy in a real browser (Playwright driving Debian's
Chromium, see browser_support): nothing the page needs is refused (no CSP violation reported,
no "Refused to ..." on the console), and the page still shows its figures, charts and styles;
the API docs page runs Swagger UI from local scripts only.
"""
from __future__ import annotations

import browser_support
import pytest
from browser_support import require_browser

require_browser()
browser, live_server, page = browser_support.browser, browser_support.live_server, \
    browser_support.page

TOU = "illustrative-tou-peak-16-21"
PLAN = "/plan?accelerator=gb300&point=deepseek-r1/gb300/peak&pl_demand=2.5e6"
# path -> what must be on it once rendered
PAGES = {
    "/": '[data-figure="price_per_mtok_total"]',
    "/compare?sys=fixture:curve-gpt-oss-120b-h100&sys=fixture:curve-gpt-oss-120b-b200"
    "&at=matched": "svg.chart.frontier",
    "/quotes": "form",
    "/saved": "main h1",
    "/sensitivity?sa_draws=2000": "svg.chart.tornado",
    PLAN: '[data-figure="accelerators"]',
    f"/?electricity_kind=tariff&tariff={TOU}": '[data-figure="price_per_mtok_total"]',
    "/api/v1/docs": ".swagger-ui .opblock",
}

WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", e => window.__csp.push(
    e.violatedDirective + " " + (e.blockedURI || "inline")));
"""


@pytest.mark.parametrize("path", list(PAGES))
def test_the_page_renders_under_its_csp(page, live_server, path):
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.add_init_script(WATCH)
    response = page.goto(path)
    assert response.status == 200
    csp = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    page.locator(PAGES[path]).first.wait_for(state="visible")
    assert page.evaluate("window.__csp") == []
    assert not [m for m in console if "Refused" in m or "Content Security Policy" in m]
    if path.startswith("/api/"):
        assert "script-src 'self'" in csp
        # Swagger UI drew every operation of the spec, from local scripts
        assert page.locator(".swagger-ui .opblock").count() > 20
    else:
        assert "script-src 'none'" in csp
        # the stylesheet applied: the site header is laid out by costmodel.css
        assert page.evaluate("getComputedStyle(document.body).margin") == "0px"


def test_an_inline_script_would_be_refused(page, live_server):
    # the policy is enforced, not only sent: a script added to a page does not run
    page.add_init_script(WATCH)
    page.goto("/")
    page.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'window.__ran = true'; document.body.appendChild(s); }""")
    assert page.evaluate("window.__ran === undefined")
    assert any(v.startswith("script-src") for v in page.evaluate("window.__csp"))
