"""Security headers on every answer: pages, API answers, problems, files, assets and the
docs page (Flask test client; the browser checks that the pages render under their policy
are in test_web_security_browser.py)."""
from __future__ import annotations

import re

import pytest
from conftest import auth

from costmodel.http.security import API_CSP, DOCS_CSP, PAGE_CSP

PAGE_ARGS = {"scenario_id": 1, "number": 1, "filename": "costmodel.css"}


def _routes(app) -> list[str]:
    """A GET of every route the app serves (path parameters filled in)."""
    out = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>",
                      lambda m: str(PAGE_ARGS.get(m[1], "x")), rule.rule)
        out.append(path)
    return sorted(set(out))


def _check(r, csp: str) -> None:
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["Referrer-Policy"] == "same-origin"
    assert r.headers["Content-Security-Policy"] == csp
    assert "frame-ancestors 'none'" in csp


def test_every_get_route_answers_with_the_headers(app, client, tokens):
    paths = _routes(app)
    assert {"/", "/compare", "/quotes", "/saved", "/sensitivity", "/plan", "/healthz",
            "/api/v1/docs", "/api/v1/openapi.json"} <= set(paths)
    for path in paths:
        r = client.get(path, headers={**auth(tokens["viewer"]), "Accept": "text/html"})
        html = r.mimetype == "text/html"
        want = DOCS_CSP if path == "/api/v1/docs" else PAGE_CSP if html else API_CSP
        _check(r, want)
    # the pages are HTML under the page policy: no script at all
    assert "script-src 'none'" in PAGE_CSP and "form-action 'self'" in PAGE_CSP


@pytest.mark.parametrize("method,path,body,status", [
    ("post", "/api/v1/price", {"scenario": {"accelerator": "gb300",
                                            "operating_point": "deepseek-r1/gb300/peak"}}, 200),
    ("post", "/api/v1/price", {"scenario": {"accelerator": "nope"}}, 422),
    ("get", "/api/v1/no/such/thing", None, 404),
    ("get", "/api/v1/scenarios", None, 401),
])
def test_api_answers_and_problems_carry_them(client, tokens, method, path, body, status):
    headers = {} if status == 401 else auth(tokens["viewer"])
    r = getattr(client, method)(path, json=body, headers=headers)
    assert r.status_code == status
    _check(r, API_CSP)


def test_a_page_error_and_a_download_carry_them(web):
    r = web.get("/no/such/page", headers={"Accept": "text/html"})
    assert r.status_code == 404 and r.mimetype == "text/html"
    _check(r, PAGE_CSP)
    r = web.get("/price.xlsx?accelerator=gb300&point=deepseek-r1/gb300/peak")
    assert r.status_code == 200 and r.mimetype.endswith("spreadsheetml.sheet")
    _check(r, API_CSP)
