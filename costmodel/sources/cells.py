"""Text cells of files meant to be opened in a spreadsheet (CSV): a cell that starts like a
formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading apostrophe,
the spreadsheet's own mark for "this is text", so ``=HYPERLINK(...)`` from a curve's source
is shown, never evaluated. A number stays a number: ``-5`` and ``-1.5e-3`` are left as they
are. A text that already starts with apostrophes before such a character gets one more, so
reading the file back (:func:`unneutralise_cell`, one apostrophe off) gives every text back
exactly.

(The workbooks need no such mark: every text cell is written as a string cell, which a
spreadsheet never evaluates; see :meth:`costmodel.render.workbook.sheet.Sheet.text`.)
"""
from __future__ import annotations

__all__ = ["FORMULA_LEADS", "neutralise_cell", "unneutralise_cell"]

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _formula_like(text: str) -> bool:
    """Whether ``text``, after any apostrophes, starts like a formula (and is no number)."""
    rest = text.lstrip("'")
    return rest.startswith(FORMULA_LEADS) and not _is_number(rest)


def neutralise_cell(text: str) -> str:
    """``text`` safe to open in a spreadsheet: ``'`` before a formula-leading character,
    except in a number (``-5`` stays ``-5``)."""
    return "'" + text if _formula_like(text) else text


def unneutralise_cell(text: str) -> str:
    """What :func:`neutralise_cell` was given: its apostrophe removed."""
    return text[1:] if text.startswith("'") and _formula_like(text) else text
