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


def install(app: Flask) -> None:
    @app.after_request
    def _headers(resp: Response) -> Response:
        for name, value in COMMON.items():
            resp.headers.setdefault(name, value)
        if "Content-Security-Policy" not in resp.headers:
            page = resp.mimetype == "text/html"
            resp.headers["Content-Security-Policy"] = PAGE_CSP if page else API_CSP
        return resp
