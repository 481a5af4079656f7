"""Chart titles, axis titles and series names as literal text.

XlsxWriter reads a name that looks like a cell reference (``X!A1``, ``Sheet1!$A$1``) as a
formula, so a curve whose id looks like one would be titled by whatever that cell holds
(LibreOffice shows "Chart Title"). Every title or name built from data goes through these:
a name that would be taken for a reference is set as a harmless placeholder, then replaced by
its own text in the chart's title, so the chart XML holds it as rich text (``<c:rich>``),
never as ``<c:strRef>``.
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["looks_like_reference", "set_title", "set_axis", "add_series"]

# XlsxWriter's own test (chart.Chart._process_names)
_REFERENCE = re.compile(r"^=?[^!]+!\$?[A-Z]+\$?\d+")
_PLACEHOLDER = "title"


def looks_like_reference(name: Any) -> bool:
    """Whether XlsxWriter would take ``name`` for a cell reference."""
    return isinstance(name, str) and bool(_REFERENCE.match(name))


def _literal(options: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``options`` with a reference-like ``name`` replaced by a placeholder, and that name."""
    name = options.get("name")
    if not looks_like_reference(name):
        return options, None
    return {**options, "name": _PLACEHOLDER}, name


def _restore(title: Any, text: str) -> None:
    """Put ``text`` back as the literal name of a chart or axis title object."""
    title.name = text
    title.formula = None
    title.data_id = None


def set_title(chart: Any, options: dict[str, Any]) -> None:
    """``chart.set_title(options)`` with ``options["name"]`` kept as literal text."""
    options, text = _literal(options)
    chart.set_title(options)
    if text is not None:
        _restore(chart.title, text)


def set_axis(chart: Any, which: str, options: dict[str, Any]) -> None:
    """``chart.set_x_axis``/``set_y_axis`` (``which`` "x" or "y") with the axis name kept as
    literal text."""
    options, text = _literal(options)
    getattr(chart, f"set_{which}_axis")(options)
    if text is not None:
        _restore(getattr(chart, f"{which}_axis")["title"], text)


def add_series(chart: Any, options: dict[str, Any]) -> None:
    """``chart.add_series(options)`` with the series name kept as literal text."""
    options, text = _literal(options)
    chart.add_series(options)
    if text is not None:
        series = chart.series[-1]
        series["name"], series["name_formula"], series["name_id"] = text, None, None
