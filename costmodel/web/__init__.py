"""The web pages for finance teams and negotiators: parse a form -> the application layer
(:mod:`costmodel.app`) -> render a Jinja2 template, so a page gives the numbers the CLI and
the API give, from the same code.

Pages are server-rendered (templates in the top-level ``templates/web/``, static assets in
``templates/web/static/``, both carried by the wheel as ``costmodel.templates``); charts are
SVG drawn here; nothing is fetched from another host. Figures are rounded by
:mod:`costmodel.render.display`, the rules the terminal and the workbook's number formats follow.
"""
from __future__ import annotations

from flask import Blueprint

from ..render import display
from ..resources import templates_dir

__all__ = ["blueprint"]

blueprint = Blueprint("web", __name__, static_folder=str(templates_dir() / "web" / "static"),
                      static_url_path="/assets")


@blueprint.app_template_filter("qty")
def _qty(value: float | None, unit: str, name: str | None = None) -> str:
    """A figure and its display unit, rounded by the display rules."""
    return display.format_quantity(value, unit, name)


@blueprint.app_template_filter("num")
def _num(value: float | None, unit: str = "", name: str | None = None) -> str:
    return display.format_number(value, unit, name)


@blueprint.app_template_filter("ratio")
def _ratio(value: float | None) -> str:
    return display.format_ratio(value)


@blueprint.app_template_filter("pct")
def _pct(value: float | None) -> str:
    return display.format_percent(value)


@blueprint.app_template_global("label")
def _label(name: str) -> str:
    return display.label(name)


@blueprint.app_template_global("unit_words")
def _unit_words(unit: str) -> str:
    return display.unit_words(unit)


@blueprint.app_template_global("display_unit")
def _display_unit(name: str | None, unit: str) -> str:
    return display.display_unit(name, unit)


# the pages register their routes on the blueprint when imported
from . import (  # noqa: E402,F401
    errors,
    pages,
    plan_page,
    quotes_page,
    saved,
    sensitivity_page,
    session,
)
