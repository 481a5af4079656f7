"""The declared calculation's expressions rendered as spreadsheet formulas.

The same expression trees the numpy evaluator runs (:mod:`costmodel.model.declaration`) are printed
here as Excel/OpenFormula text over defined names, so the workbook and the engine cannot drift
apart:

- ``a ** b`` -> ``a^b``; unary minus is parenthesised (``-2^2`` is 4 in a spreadsheet);
- ``where(c, a, b)`` -> ``IF(c,a,b)``; ``==`` -> ``=``, ``!=`` -> ``<>``;
- ``choose(level, a, b, ...)`` -> ``CHOOSE(MATCH(level,level_levels,0),a,b,...)``, where
  ``level_levels`` names the list of the categorical input's levels in the workbook.

Spreadsheet IF and CHOOSE evaluate only the branch they take, as the engine's results mean:
an absent optional input (``#N/A`` in the workbook, NaN in the engine) only matters where
it is used.

Profiles (:mod:`costmodel.model.profile`) sit in blocks of cells, so a formula that reads one is
written for its cell (:func:`cell_formula`): a name is what a resolver says it is at that
cell (the block's cell in the same month and hour, the block's column or row inside a
reduction); ``sum_month(a * b)`` and ``sum_hour(a * b)`` -> ``SUMPRODUCT(a*b)`` over the
ranges, ``max_hour(a)`` -> ``MAX(a)``; a reduction over a profile the system does not have
is ``NA()``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ...model.declaration import Algebra, Node, fold

__all__ = ["to_formula", "levels_name", "Cell", "cell_formula", "NOT_AVAILABLE"]

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

    def reduce(self, op: str, axis: str, x: Formula) -> Formula:
        # each name the whole block (one system's); cell_formula says where else
        return f"{'SUMPRODUCT' if op == 'sum' else 'MAX'}({x[0]})", _ATOM


_FORMULA = _Formulas()
NOT_AVAILABLE = "NA()"


@dataclass(frozen=True)
class Cell:
    """Where a formula is written: system ``system`` (0-based); in a profile's block, its
    month row and hour column (None off the block); the axes an enclosing reduction sums."""
    system: int
    month: int | None = None
    hour: int | None = None
    reduced: frozenset[str] = frozenset()


Resolve = Callable[[str, Cell], str]  # a name at a cell -> its text in the formula
_AtCell = Callable[[Cell], Formula]


class _CellFormulas(Algebra[_AtCell]):
    """:class:`_Formulas` for a given cell: each part is a function of the cell, so a
    reduction can tell the names inside it which axes it sums."""

    def __init__(self, resolve: Resolve):
        self.resolve = resolve

    def name(self, id: str) -> _AtCell:
        return lambda cell: (self.resolve(id, cell), _ATOM)

    def num(self, value: int) -> _AtCell:
        text = _FORMULA.num(value)
        return lambda cell: text

    def neg(self, x: _AtCell) -> _AtCell:
        return lambda cell: _FORMULA.neg(x(cell))

    def binop(self, op: str, a: _AtCell, b: _AtCell) -> _AtCell:
        return lambda cell: _FORMULA.binop(op, a(cell), b(cell))

    def compare(self, op: str, a: _AtCell, b: _AtCell) -> _AtCell:
        return lambda cell: _FORMULA.compare(op, a(cell), b(cell))

    def where(self, condition: _AtCell, if_true: _AtCell, if_false: _AtCell) -> _AtCell:
        return lambda cell: _FORMULA.where(condition(cell), if_true(cell), if_false(cell))

    def choose(self, selector: str, options: tuple[_AtCell, ...]) -> _AtCell:
        def at(cell: Cell) -> Formula:
            texts = ",".join(o(cell)[0] for o in options)
            level = self.resolve(selector, cell)
            return f"CHOOSE(MATCH({level},{levels_name(selector)},0),{texts})", _ATOM
        return at

    def reduce(self, op: str, axis: str, x: _AtCell) -> _AtCell:
        def at(cell: Cell) -> Formula:
            text = x(replace(cell, reduced=cell.reduced | {axis}))[0]
            if NOT_AVAILABLE in text:
                return NOT_AVAILABLE, _ATOM
            return _FORMULA.reduce(op, axis, (text, _ATOM))
        return at


def cell_formula(node: Node, resolve: Resolve, cell: Cell) -> str:
    """Spreadsheet formula text (without ``=``) for an expression written at ``cell``, each
    name as ``resolve`` gives it there."""
    return fold(node, _CellFormulas(resolve))(cell)[0]
