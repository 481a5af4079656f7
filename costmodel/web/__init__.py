"""The web pages for finance teams and negotiators: parse a form -> the application layer
(:mod:`costmodel.app`) -> render a Jinja2 template, so a page gives the numbers the CLI and
the API give, from the same code.

Pages are server-rendered (templates in the top-level ``templates/web/``, static assets in
``templates/web/static/``, both carried by the wheel as ``costmodel.templates``); charts are
SVG drawn here; nothing is fetched from another host. Figures are rounded by
:mod:`costmodel.render.display`, the rules the terminal and the workbook's number formats follow.
"""
from __future__ import annotations

from .site import blueprint

__all__ = ["blueprint"]

# the pages register their routes on the blueprint when imported
from . import (  # noqa: F401
    chargeback_page,
    errors,
    pages,
    plan_page,
    quotes_page,
    saved,
    sensitivity_page,
    session,
    task_page,
)
