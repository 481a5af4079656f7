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

from ..declaration import BinOp, Choose, Compare, Name, Neg, Node, Num, Where

__all__ = ["to_formula", "levels_name"]

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 3}
_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "**": "^"}
_CMP = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def levels_name(enum_name: str) -> str:
    """The defined name of the list of an enum's levels, e.g. ``power_boundary_levels``."""
    return f"{enum_name}_levels"


def to_formula(node: Node) -> str:
    """Spreadsheet formula text for an expression, without the leading ``=``."""
    return _render(node, 0)


def _render(node: Node, parent: int) -> str:
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Num):
        return str(node.value)
    if isinstance(node, Neg):
        return f"(-{_render(node.operand, 4)})"
    if isinstance(node, BinOp):
        p = _PRECEDENCE[node.op]
        # left-associative: the right operand of - and / (and of ^, which spreadsheets
        # evaluate left to right) needs brackets at equal precedence
        left = _render(node.left, p if node.op != "**" else p + 1)
        right = _render(node.right, p + 1 if node.op in ("-", "/", "**") else p)
        text = f"{left}{_OPS[node.op]}{right}"
        return f"({text})" if p < parent else text
    if isinstance(node, Compare):
        return f"{_render(node.left, 1)}{_CMP[node.op]}{_render(node.right, 1)}"
    if isinstance(node, Where):
        return (f"IF({_render(node.condition, 0)},{_render(node.if_true, 0)},"
                f"{_render(node.if_false, 0)})")
    if isinstance(node, Choose):
        options = ",".join(_render(o, 0) for o in node.options)
        return f"CHOOSE(MATCH({node.selector},{levels_name(node.selector)},0),{options})"
    raise TypeError(node)
