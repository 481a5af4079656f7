"""Cell styles of the workbook, following financial-modelling practice (FAST): inputs stand out
(blue on pale yellow), constants are grey, calculations black, results bold on green.

Each style is a set of XlsxWriter format properties (over the workbook's Arial 10); a cell's
format is its style plus its number format (:func:`costmodel.render.display.excel_format`),
built once per pair by :class:`costmodel.render.workbook.sheet.Book`. Code names and sources
print smaller and grey beside the words and figures they belong to.
"""
from __future__ import annotations

from typing import Any

__all__ = ["STYLES", "BORDER_COLOUR", "SERIES_COLOURS"]

BORDER_COLOUR = "#BFBFBF"
_BOX = {"border": 1, "border_color": BORDER_COLOUR, "valign": "top"}

STYLES: dict[str, dict[str, Any]] = {
    "plain": {"valign": "top"},
    "title": {"bold": True, "font_size": 13},
    "section": {"bold": True, "font_size": 10.5, "font_color": "#1F3864"},
    "header": {**_BOX, "bold": True, "font_color": "#FFFFFF", "bg_color": "#1F3864",
               "text_wrap": True},
    "label": {"bold": True, "valign": "top"},
    # a title or label wrapped across the columns it heads (the Tariff's hours)
    "section_wrap": {"bold": True, "font_size": 10.5, "font_color": "#1F3864",
                     "text_wrap": True, "valign": "top"},
    "label_wrap": {"bold": True, "text_wrap": True, "valign": "top"},
    "input": {**_BOX, "font_color": "#0000FF", "bg_color": "#FFF2CC"},
    "constant": {**_BOX, "bg_color": "#EDEDED"},
    "calc": {**_BOX},
    "result": {**_BOX, "bold": True, "bg_color": "#E2EFDA"},
    "note": {"italic": True, "font_color": "#595959", "valign": "top"},
    "wrap": {"text_wrap": True, "valign": "top"},
    "note_wrap": {"italic": True, "font_color": "#595959", "text_wrap": True, "valign": "top"},
    # a code name (accelerator_rated_power) beside the words it belongs to
    "name": {"font_size": 8, "font_color": "#595959", "valign": "top"},
    # a name and its declaration (name = expression), wrapped at its spaces
    "code_wrap": {"font_size": 8, "font_color": "#595959", "text_wrap": True,
                  "valign": "top"},
    # a source beside the figure it supports; a note on an input that is not used
    "source": {"font_size": 8, "font_color": "#404040", "text_wrap": True, "valign": "top"},
    "unused": {"font_size": 8, "italic": True, "font_color": "#7F7F7F", "text_wrap": True,
               "valign": "top"},
}

# energy, capital, operating; measured points, frontier, chosen point: distinct in colour and
# readable in grey print
SERIES_COLOURS = {"energy": "#F4B183", "capex": "#2F5597", "opex": "#A9D18E",
                  "measured": "#7F7F7F", "frontier": "#2F5597", "chosen": "#C00000"}
