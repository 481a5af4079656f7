"""The declared calculation's expressions rendered as spreadsheet formulas.

The same expression trees the numpy evaluator runs (:mod:`costmodel.declaration`) are printed
here as Excel/OpenFormula text over defined names, so the workbook and the engine cannot drift
apart:

- ``a ** b`` -> ``a^b``; unary minus is parenthesised (``-2^2`` is 4 in a spreadsheet);
- ``where(c, a, b)`` -> ``IF(c,a,b)``; ``==`` -> ``=``, ``!=`` -> ``<>``;
- ``choose(level, a, b, ...)`` -> ``CHOOSE(MATCH(level,level_levels,0),a,b,...)``, where
  ``level_levels`` names the list of the categorical input's levels in the workbook.

Spreadsheet IF and CHOOSE evaluate only the branch they take, as the engine's results mean:
an absent optional input (``#N/A`` in the workbook, NaN in the engine) only matters where
it is used.
"""
from __future__ import annotations

from ..declaration import Algebra, Node, fold

__all__ = ["to_formula", "levels_name"]

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 3}
_COMPARISON = 0  # binds loosest, as in a spreadsheet
_ATOM = 4  # names, numbers, calls and bracketed text: never need brackets
_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "**": "^"}
_CMP = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

Formula = tuple[str, int]  # (text, precedence of its outermost operator)


def levels_name(enum_name: str) -> str:
    """The defined name of the list of an enum's levels, e.g. ``power_boundary_levels``."""
    return f"{enum_name}_levels"


def to_formula(node: Node) -> str:
    """Spreadsheet formula text for an expression, without the leading ``=``."""
    return fold(node, _FORMULA)[0]


def _operand(part: Formula, needed: int) -> str:
    """An operand's text, bracketed if its operator binds less tightly than ``needed``."""
    text, precedence = part
    return f"({text})" if precedence < needed else text


class _Formulas(Algebra[Formula]):
    def name(self, id: str) -> Formula:
        return id, _ATOM

    def num(self, value: int) -> Formula:
        return str(value), _ATOM

    def neg(self, x: Formula) -> Formula:
        return f"(-{_operand(x, _ATOM)})", _ATOM

    def binop(self, op: str, a: Formula, b: Formula) -> Formula:
        p = _PRECEDENCE[op]
        # left-associative: the right operand of - and / (and of ^, which spreadsheets
        # evaluate left to right) needs brackets at equal precedence
        left = _operand(a, p + 1 if op == "**" else p)
        right = _operand(b, p + 1 if op in ("-", "/", "**") else p)
        return f"{left}{_OPS[op]}{right}", p

    def compare(self, op: str, a: Formula, b: Formula) -> Formula:
        return f"{_operand(a, 1)}{_CMP[op]}{_operand(b, 1)}", _COMPARISON

    def where(self, condition: Formula, if_true: Formula, if_false: Formula) -> Formula:
        return f"IF({condition[0]},{if_true[0]},{if_false[0]})", _ATOM

    def choose(self, selector: str, options: tuple[Formula, ...]) -> Formula:
        texts = ",".join(text for text, _ in options)
        return f"CHOOSE(MATCH({selector},{levels_name(selector)},0),{texts})", _ATOM


_FORMULA = _Formulas()
