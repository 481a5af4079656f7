"""The declared calculation's expressions rendered as spreadsheet formulas.

The same expression trees the numpy evaluator runs (:mod:`costmodel.model.declaration`) are printed
here as Excel/OpenFormula text over defined names, so the workbook and the engine cannot drift
apart:

- ``a ** b`` -> ``a^b``; unary minus is parenthesised (``-2^2`` is 4 in a spreadsheet);
- ``where(c, a, b)`` -> ``IF(c,a,b)``; ``==`` -> ``=``, ``!=`` -> ``<>``;
- ``choose(level, a, b, ...)`` -> ``CHOOSE(MATCH(level,level_levels,0),a,b,...)``, where
  ``level_levels`` names the list of the categorical input's levels in the workbook.

Spreadsheet IF and CHOOSE evaluate only the branch they take, as the engine's results mean:
an absent optional input only matters where it is used.

An absent optional input is an empty cell (NaN in the engine), never an error value a reader
takes for a fault. A blank cell computes as 0 in a spreadsheet, so a formula never reads an
optional input bare:

- where a step reads it (or a step that may itself be empty, :data:`MAY_BE_EMPTY`) outside
  any ``choose`` option, the step is empty when it is: ``IF(x="","",...)`` (no carbon
  intensity: no emissions; the engine's NaN). Such a step's cell shows a dash;
- inside a ``choose`` option (an input a switch selects) it reads ``IF(x="",NA(),x)``: a
  switch turned to an input left empty gives ``#N/A``, as the engine refuses that scenario,
  never a figure computed with 0;
- the literal ``empty`` (an option that states nothing: no product carbon footprint) is
  ``""``, so the step is an empty cell and those that read it outside a switch are too.

Profiles (:mod:`costmodel.model.profile`) sit in blocks of cells, so a formula that reads one is
written for its cell (:func:`cell_formula`): a name is what a resolver says it is at that
cell (the block's cell in the same month and hour, the block's column or row inside a
reduction); ``sum_month(a * b)``, ``sum_hour(a * b)`` and ``sum_period(a * b)`` ->
``SUMPRODUCT(a*b)`` over the ranges, ``max_hour(a)`` -> ``MAX(a)`` (over a block's row, for
each demand period's cell); a reduction over a profile the system does not have
is ``NA()``.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...model.declaration import Algebra, Collect, Node, fold, reads_empty
from ...model.steps import MODEL

__all__ = ["to_formula", "levels_name", "Cell", "cell_formula", "NOT_AVAILABLE",
           "MAY_BE_EMPTY", "live_formula", "ratio_formula"]

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
    """Spreadsheet formula text for a scalar step's expression, without the leading ``=``:
    empty where a name it reads outside a switch is empty, every other optional input
    guarded (see the module docstring)."""
    empty = _empty_reads(node)
    return _empty_unless(empty, fold(node, _Formulas(MAY_BE_EMPTY - set(empty)))[0])


def live_formula(name: str, ref: str | None = None) -> str:
    """``=name`` for a cell that shows an input or step elsewhere (``ref``: how the cell names
    it, default ``name``): an optional input's blank shows as empty, not as 0."""
    ref = ref or name
    if name in MAY_BE_EMPTY and name in MODEL.inputs:
        return f'={_empty_unless([ref], ref)}'
    return f"={ref}"


def ratio_formula(name: str, ref: str, first: str) -> str:
    """``ref / first`` (``name`` in a system's column over the first system's), empty where
    either is empty."""
    text = f"{ref}/{first}"
    return "=" + (_empty_unless([ref, first], text) if name in MAY_BE_EMPTY else text)


def _operand(part: Formula, needed: int) -> str:
    """An operand's text, bracketed if its operator binds less tightly than ``needed``."""
    text, precedence = part
    return f"({text})" if precedence < needed else text


class _Unguarded(Collect):
    """The names an expression reads outside every ``choose`` option (the options are what a
    switch selects; a ``where`` takes either side, so both count)."""

    def name(self, id: str) -> frozenset:
        return frozenset((id,))

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return frozenset()


_UNGUARDED = _Unguarded()


def _may_be_empty() -> frozenset[str]:
    """The optional scalar inputs, the scalar steps that read one of these (or such a
    step) outside a ``choose`` option, and those with an option ``empty`` (no footprint
    stated: no embodied figure): whatever a valid scenario may leave without a value."""
    empty = {n for n, i in MODEL.inputs.items() if i.optional and not i.axes}
    for name, step in MODEL.steps.items():
        if not step.axes and (fold(step.tree, _UNGUARDED) & empty or reads_empty(step.tree)):
            empty.add(name)
    return frozenset(empty)


MAY_BE_EMPTY = _may_be_empty()
"""Names whose cell may be empty: optional inputs (blank) and the steps that are empty when
one is (the engine's NaN)."""


def _guarded(text: str) -> str:
    """An optional input read where a switch selects it: ``#N/A`` when it is empty."""
    return f'IF({text}="",NA(),{text})'


def _empty_unless(names: list[str], text: str) -> str:
    """``text`` wrapped to be empty when any of ``names`` (each as written) is empty."""
    for name in reversed(names):
        text = f'IF({name}="","",{text})'
    return text


def _empty_reads(node: Node) -> list[str]:
    """The may-be-empty names an expression reads outside every ``choose`` option."""
    return sorted(fold(node, _UNGUARDED) & MAY_BE_EMPTY)


class _Formulas(Algebra[Formula]):
    def __init__(self, guard: frozenset[str] = frozenset()):
        self.guard = guard  # names read as IF(x="",NA(),x)

    def name(self, id: str) -> Formula:
        return (_guarded(id) if id in self.guard else id), _ATOM

    def num(self, value: float) -> Formula:
        if math.isnan(value):  # the literal empty: an empty cell's text, as a blank input
            return '""', _ATOM
        return str(int(value)), _ATOM

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
_UNAVAILABLE = "\0NA\0"  # a profile the system does not have, until the formula is whole


@dataclass(frozen=True)
class Cell:
    """Where a formula is written: system ``system`` (0-based); in a profile's block, its
    row (``month``: a month, or a demand period) and hour column (None off the block); the
    axes an enclosing reduction sums."""
    system: int
    month: int | None = None
    hour: int | None = None
    reduced: frozenset[str] = frozenset()


Resolve = Callable[[str, Cell], str]  # a name at a cell -> its text in the formula
_AtCell = Callable[[Cell], Formula]


class _CellFormulas(Algebra[_AtCell]):
    """:class:`_Formulas` for a given cell: each part is a function of the cell, so a
    reduction can tell the names inside it which axes it sums."""

    def __init__(self, resolve: Resolve, guard: frozenset[str]):
        self.resolve, self.guard = resolve, guard

    def name(self, id: str) -> _AtCell:
        def at(cell: Cell) -> Formula:
            text = self.resolve(id, cell)
            if text == NOT_AVAILABLE:
                return _UNAVAILABLE, _ATOM
            return (_guarded(text) if id in self.guard else text), _ATOM
        return at

    def num(self, value: float) -> _AtCell:
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
            if _UNAVAILABLE in text:
                return _UNAVAILABLE, _ATOM
            return _FORMULA.reduce(op, axis, (text, _ATOM))
        return at


def cell_formula(node: Node, resolve: Resolve, cell: Cell, *, scalar: bool = True) -> str:
    """Spreadsheet formula text (without ``=``) for an expression written at ``cell``, each
    name as ``resolve`` gives it there. ``scalar``: a scalar step, empty where a name it
    reads outside a switch is (as :func:`to_formula`); a profile's cell (``scalar=False``,
    summed by other formulas, so never empty text) reads every optional input guarded."""
    empty = _empty_reads(node) if scalar else []
    text = fold(node, _CellFormulas(resolve, MAY_BE_EMPTY - set(empty)))(cell)[0]
    text = text.replace(_UNAVAILABLE, NOT_AVAILABLE)
    return _empty_unless([resolve(n, cell) for n in empty], text)
