"""Security headers on every answer: no framing, no MIME sniffing, no referrer leaving the
site, and a Content-Security-Policy.

The pages use no script at all: their policy allows styles, images (SVG charts inline, in the
page) and forms from the service itself only. The API's answers (JSON, problem+json, files)
are not for a browser to render: their policy allows nothing. The API docs page (Swagger UI,
served from local assets) runs scripts from the service itself only; its start-up script is a
static file, not inline.
"""
from __future__ import annotations

from flask import Flask, Response
from werkzeug.datastructures import Headers

__all__ = ["install", "PAGE_CSP", "API_CSP", "DOCS_CSP", "COMMON"]

COMMON = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
PAGE_CSP = ("default-src 'self'; script-src 'none'; object-src 'none'; img-src 'self' data:; "
            "style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
API_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
# Swagger UI: its bundle and start-up script from 'self', the spec fetched from 'self', its
# icons as data: images; React sets some element styles (style attributes): 'unsafe-inline'
# for styles only (no script runs from them)
DOCS_CSP = ("default-src 'self'; script-src 'self'; object-src 'none'; "
            "img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


_CSP = "content-security-policy"
_OURS = frozenset(n.lower() for n in COMMON) | {_CSP}
# the headers in the order they are added: common ones, then the policy by kind of answer
_API_HEADERS = [*COMMON.items(), ("Content-Security-Policy", API_CSP)]
_PAGE_HEADERS = [*COMMON.items(), ("Content-Security-Policy", PAGE_CSP)]


def install(app: Flask) -> None:
    @app.after_request
    def _headers(resp: Response) -> Response:
        # Werkzeug's setdefault and mimetype cost about 16 us an answer, a twentieth of a
        # priced request: an answer that sets none of these (all but the docs page) has the
        # fixed list appended to its header list at once (fixed names and values: nothing to
        # check), as the limits append theirs
        items = getattr(resp.headers, "_list", None)
        if type(resp.headers) is Headers and type(items) is list and \
                not any(k.lower() in _OURS for k, _ in items):
            page = (resp.headers.get("Content-Type") or "").startswith("text/html")
            items.extend(_PAGE_HEADERS if page else _API_HEADERS)
            return resp
        for name, value in COMMON.items():
            resp.headers.setdefault(name, value)
        if "Content-Security-Policy" not in resp.headers:
            page = resp.mimetype == "text/html"
            resp.headers["Content-Security-Policy"] = PAGE_CSP if page else API_CSP
        return resp
