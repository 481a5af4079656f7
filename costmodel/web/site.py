"""The web pages' blueprint and the template filters every page uses (figures rounded by
:mod:`costmodel.render.display`). The pages (:mod:`.pages`, :mod:`.saved`, ...) register their
routes on it; :mod:`costmodel.web` imports them all."""
from __future__ import annotations

from flask import Blueprint, Response

from ..render import display
from ..resources import templates_dir
from .labels import label_of
from .scenario_form import ENGINE_DEFAULTS

__all__ = ["blueprint"]

blueprint = Blueprint("web", __name__, static_folder=str(templates_dir() / "web" / "static"),
                      static_url_path="/assets")


@blueprint.get("/favicon.ico")
def favicon() -> Response:
    # every browser asks for it, whatever a page links: else a 404 in each one's console
    return blueprint.send_static_file("favicon.ico")


@blueprint.app_template_filter("qty")
def _qty(value: float | None, unit: str, name: str | None = None) -> str:
    """A figure and its display unit, rounded by the display rules."""
    return display.format_quantity(value, unit, name)


@blueprint.app_template_global("shown")
def _shown(result, name: str) -> str:
    """A result's figure as its answer shows it (money in the currency results are shown in:
    :meth:`costmodel.model.results.Result.shown`), rounded by the display rules."""
    if display.not_stated(name, result.embodied_stated):  # no footprint: not 0, not a dash
        return display.NOT_STATED
    value, unit = result.shown(name)
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


@blueprint.app_template_global("figure_label")
def _figure_label(results, name: str) -> str:
    """A figure's label for a result (or the results of one row): a total with embodied
    emissions reads as operational only where none states a footprint."""
    results = results if isinstance(results, list | tuple) else [results]
    return display.figure_label(name, any(r.embodied_stated for r in results))


# the words every face says for a term's money and for a figure that is not there
TERM_WORDS = {"nominal": display.NOMINAL_TERM, "pv": display.present_value_words,
              "no_value": display.NO_VALUE, "no_break_even": display.NO_BREAK_EVEN,
              "capacity_break_even": display.CAPACITY_BREAK_EVEN,
              "free_margin": display.FREE_MARGIN}
blueprint.add_app_template_global(TERM_WORDS, "term_words")


@blueprint.app_template_global("field_label")
def _field_label(where: str) -> str:
    """The words on a form field's label (:func:`costmodel.web.labels.label_of`)."""
    return label_of(where)


@blueprint.app_template_global("engine_default")
def _engine_default(field: str) -> str:
    """What leaving a form field blank means, in its unit (the scenario model's default)."""
    return ENGINE_DEFAULTS[field]


@blueprint.app_template_global("unit_words")
def _unit_words(unit: str) -> str:
    return display.unit_words(unit)


@blueprint.app_template_global("display_unit")
def _display_unit(name: str | None, unit: str) -> str:
    return display.display_unit(name, unit)
