"""The vocabulary of a declared calculation: inputs, named constants and steps.

A step is ``name = expression`` with a unit. Expressions are a deliberately small language so
that every interpreter (the numpy evaluator, the pint unit check, the workbook renderer, the
name analyses) reads the same text the same way:

- names of inputs, constants and earlier steps;
- ``+ - * / **``, unary ``-``, parentheses;
- the literals ``0`` and ``1`` only (every other number is a named constant, so a workbook
  formula never hides a conversion factor), and ``empty``: no value (the engine's NaN, an
  empty cell in a workbook), for an option of a ``choose`` whose level states nothing (no
  product carbon footprint: no embodied figure, never 0);
- comparisons ``== != < <= > >=`` inside ``where``;
- ``where(condition, if_true, if_false)``;
- ``choose(enum_input, option_0, option_1, ...)``: one option per level of a categorical input,
  in the order the levels are declared;
- reductions over a profile axis, ``sum_month(x)``, ``sum_hour(x)``, ``max_hour(x)`` and
  ``sum_period(x)``.

Profiles. An input may be a vector along the axes ``month`` (the months of a tariff's year:
1, or 12 when rates change by month), ``period`` (a tariff's demand periods, each billed on
its own busiest hour) and ``hour`` (the hours of a typical day: 24, or 48 for a weekday then a
weekend day). Months and periods are both rows (:data:`ROWS`: an array's first dimension), so
a value runs by month or by period, never both. Arithmetic broadcasts a scalar over a vector
and a vector over the other axis; a step's axes are the union of its operands' and are
checked here. A reduction removes its axis: ``sum_month`` takes an operand with a month axis;
``sum_hour`` one with the hour axis and no rows; ``max_hour`` one with the hour axis and no
month axis (by period, it is each period's maximum: a value by period); ``sum_period`` one
with the period axis and no hour axis. The operand of a sum is a product of names (a
spreadsheet's ``SUMPRODUCT``), that of ``max_hour`` one name (``MAX``). Weights are inputs
like any other, so every reduction is a plain sum or maximum.

Each interpreter is an :class:`Algebra` (one method per construct) that :func:`fold` applies
to the parsed tree bottom-up; ``fold`` is the only walk over an expression.

:meth:`Declaration.check_units` evaluates every step once with pint quantities and fails if a
step's dimension differs from its declared unit, or if the expression would need a hidden
conversion factor to land in that unit. A declaration that passed is remembered in the
user's cache folder by a digest of its text, of this checker and of the unit definitions
(:func:`checked_once`), so a command line does not pay the check on every start (issue 37).
"""
from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from .. import resources
from . import units
from .units import ureg

__all__ = ["Input", "Enum", "Constant", "Step", "Declaration", "DeclarationError",
           "Name", "Num", "BinOp", "Neg", "Compare", "Where", "Choose", "Reduce", "Node",
           "Algebra", "Collect", "ChosenNames", "EMPTY", "reads_empty", "literal_source",
           "fold", "names_in", "parse_expression", "AXES",
           "REDUCTIONS", "ROWS", "factors", "compile_node", "NUMPY", "SCALAR"]


class DeclarationError(ValueError):
    """The declaration itself is wrong (a programming error, caught at import time)."""


# ---- expression tree -------------------------------------------------------------------

@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Num:
    value: float  # only 0, 1 or EMPTY


EMPTY = math.nan  # the literal ``empty``: no value


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / **
    left: Node
    right: Node


@dataclass(frozen=True)
class Neg:
    operand: Node


@dataclass(frozen=True)
class Compare:
    op: str  # one of == != < <= > >=
    left: Node
    right: Node


@dataclass(frozen=True)
class Where:
    condition: Compare
    if_true: Node
    if_false: Node


@dataclass(frozen=True)
class Choose:
    selector: str  # name of an Enum input
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Reduce:
    op: str  # "sum" or "max"
    axis: str  # "month" or "hour"
    operand: Node


Node = Name | Num | BinOp | Neg | Compare | Where | Choose | Reduce

AXES = ("month", "period", "hour")  # a profile's axes, in the order an array holds them
ROWS = ("month", "period")  # the axes of an array's first dimension (at most one a value)
# function name -> (operation, axis it removes)
REDUCTIONS = {"sum_month": ("sum", "month"), "sum_hour": ("sum", "hour"),
              "max_hour": ("max", "hour"), "sum_period": ("sum", "period")}

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def parse_expression(text: str) -> Node:
    """Parse expression text into the tree above; reject anything outside the language."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise DeclarationError(f"cannot parse {text!r}: {exc.msg}") from exc
    return _convert(tree, text)


def _convert(n: ast.AST, text: str) -> Node:
    if isinstance(n, ast.Name):
        return Num(EMPTY) if n.id == "empty" else Name(n.id)
    if isinstance(n, ast.Constant) and type(n.value) is int and n.value in (0, 1):
        return Num(n.value)
    if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
        return BinOp(_BINOPS[type(n.op)], _convert(n.left, text), _convert(n.right, text))
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return Neg(_convert(n.operand, text))
    if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _CMPOPS:
        return Compare(_CMPOPS[type(n.ops[0])], _convert(n.left, text),
                       _convert(n.comparators[0], text))
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
        args = n.args
        if n.func.id == "where" and len(args) == 3:
            cond = _convert(args[0], text)
            if not isinstance(cond, Compare):
                raise DeclarationError(f"where() needs a comparison first in {text!r}")
            return Where(cond, _convert(args[1], text), _convert(args[2], text))
        if n.func.id == "choose" and len(args) >= 2 and isinstance(args[0], ast.Name):
            return Choose(args[0].id, tuple(_convert(a, text) for a in args[1:]))
        if n.func.id in REDUCTIONS and len(args) == 1:
            op, axis = REDUCTIONS[n.func.id]
            return Reduce(op, axis, _convert(args[0], text))
    if isinstance(n, ast.Constant):
        raise DeclarationError(
            f"literal {n.value!r} in {text!r}: only 0 and 1 may appear; name the constant")
    raise DeclarationError(f"unsupported construct {ast.dump(n)[:60]} in {text!r}")


# ---- the one walk: every interpreter is an algebra folded over the tree ----------------

T = TypeVar("T")


class Algebra(Generic[T]):
    """What one interpreter makes of each construct, given what it made of the children.

    :func:`fold` calls these bottom-up, so an interpreter never walks the tree itself: the
    evaluator's closures, the pint unit check, the workbook formulas and the name analyses
    are each one subclass.
    """

    def name(self, id: str) -> T:
        raise NotImplementedError

    def num(self, value: int) -> T:
        raise NotImplementedError

    def neg(self, x: T) -> T:
        raise NotImplementedError

    def binop(self, op: str, a: T, b: T) -> T:
        raise NotImplementedError

    def compare(self, op: str, a: T, b: T) -> T:
        raise NotImplementedError

    def where(self, condition: T, if_true: T, if_false: T) -> T:
        raise NotImplementedError

    def choose(self, selector: str, options: tuple[T, ...]) -> T:
        raise NotImplementedError

    def reduce(self, op: str, axis: str, x: T) -> T:
        raise NotImplementedError


def fold(node: Node, algebra: Algebra[T]) -> T:
    """Interpret ``node`` with ``algebra``, children first (left to right)."""
    if isinstance(node, Name):
        return algebra.name(node.id)
    if isinstance(node, Num):
        return algebra.num(node.value)
    if isinstance(node, Neg):
        return algebra.neg(fold(node.operand, algebra))
    if isinstance(node, BinOp):
        return algebra.binop(node.op, fold(node.left, algebra), fold(node.right, algebra))
    if isinstance(node, Compare):
        return algebra.compare(node.op, fold(node.left, algebra), fold(node.right, algebra))
    if isinstance(node, Where):
        return algebra.where(fold(node.condition, algebra), fold(node.if_true, algebra),
                             fold(node.if_false, algebra))
    if isinstance(node, Choose):
        return algebra.choose(node.selector, tuple(fold(o, algebra) for o in node.options))
    if isinstance(node, Reduce):
        return algebra.reduce(node.op, node.axis, fold(node.operand, algebra))
    raise TypeError(node)


class Collect(Algebra[frozenset]):
    """A set gathered from every part of an expression: what a name contributes (nothing by
    default); operators and branches pass on the union of their children's sets."""

    def name(self, id: str) -> frozenset:
        return frozenset()

    def num(self, value: int) -> frozenset:
        return frozenset()

    def neg(self, x: frozenset) -> frozenset:
        return x

    def binop(self, op: str, a: frozenset, b: frozenset) -> frozenset:
        return a | b

    def compare(self, op: str, a: frozenset, b: frozenset) -> frozenset:
        return a | b

    def where(self, condition: frozenset, if_true: frozenset,
              if_false: frozenset) -> frozenset:
        return condition | if_true | if_false

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return frozenset().union(*options)

    def reduce(self, op: str, axis: str, x: frozenset) -> frozenset:
        return x


class _ReadsEmpty(Collect):
    """Whether an expression has the literal ``empty`` anywhere (as a one-element set)."""

    def num(self, value: float) -> frozenset:
        return frozenset((True,)) if math.isnan(value) else frozenset()


def literal_source(value: float) -> str:
    """A literal as Python source: 0.0, 1.0, or the literal ``empty`` (NaN)."""
    return "float('nan')" if math.isnan(value) else repr(float(value))


def reads_empty(node: Node) -> bool:
    """Whether ``node`` may give no value by itself: it has the literal ``empty``."""
    return bool(fold(node, _ReadsEmpty()))


class _Names(Collect):
    def name(self, id: str) -> frozenset:
        return frozenset((id,))

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return frozenset((selector,)).union(*options)


class ChosenNames(Collect):
    """The names an expression reads with its categorical inputs at given levels (enum name
    -> level index): a ``choose`` follows only its selected option (the others are never
    computed); both sides of a ``where`` count."""

    def __init__(self, levels: Mapping[str, Any]):
        self.levels = levels

    def name(self, id: str) -> frozenset:
        return frozenset((id,))

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return options[int(self.levels[selector])]


class _Choices(Collect):
    """Every ``choose`` as (selector, number of options), to check against the enums."""

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return frozenset(((selector, len(options)),)).union(*options)


class _Reductions(Algebra[tuple]):
    """Every reduction in an expression as (operation, operand tree); the operand's tree is
    rebuilt from its parts so its shape (a product of names) can be checked."""

    def name(self, id: str) -> tuple:
        return ((), Name(id))

    def num(self, value: int) -> tuple:
        return ((), Num(value))

    def neg(self, x: tuple) -> tuple:
        return (x[0], Neg(x[1]))

    def binop(self, op: str, a: tuple, b: tuple) -> tuple:
        return (a[0] + b[0], BinOp(op, a[1], b[1]))

    def compare(self, op: str, a: tuple, b: tuple) -> tuple:
        return (a[0] + b[0], Compare(op, a[1], b[1]))

    def where(self, condition: tuple, if_true: tuple, if_false: tuple) -> tuple:
        return (condition[0] + if_true[0] + if_false[0],
                Where(condition[1], if_true[1], if_false[1]))

    def choose(self, selector: str, options: tuple) -> tuple:
        return (sum((o[0] for o in options), ()),
                Choose(selector, tuple(o[1] for o in options)))

    def reduce(self, op: str, axis: str, x: tuple) -> tuple:
        return (x[0] + ((op, x[1]),), Reduce(op, axis, x[1]))


_NAMES, _CHOICES = _Names(), _Choices()


def names_in(node: Node) -> set[str]:
    """Every name an expression reads (including ``choose`` selectors)."""
    return set(fold(node, _NAMES))


def factors(node: Node) -> list[str] | None:
    """The names of a product of names (``a * b * c``), or None if it is anything else."""
    if isinstance(node, Name):
        return [node.id]
    if isinstance(node, BinOp) and node.op == "*":
        left, right = factors(node.left), factors(node.right)
        if left is not None and right is not None:
            return left + right
    return None


class _Axes(Collect):
    """The profile axes an expression's value runs along (empty: a scalar), refusing a
    reduction whose operand has not the shape it needs."""

    def __init__(self, axes_of: Mapping[str, frozenset]):
        self.axes_of = axes_of

    def name(self, id: str) -> frozenset:
        return self.axes_of.get(id, frozenset())

    @staticmethod
    def _one_row_axis(axes: frozenset) -> frozenset:
        if axes.issuperset(ROWS):
            raise DeclarationError("a value by month and by period (both are rows)")
        return axes

    def binop(self, op: str, a: frozenset, b: frozenset) -> frozenset:
        return self._one_row_axis(a | b)

    def where(self, condition: frozenset, if_true: frozenset,
              if_false: frozenset) -> frozenset:
        return self._one_row_axis(condition | if_true | if_false)

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return self._one_row_axis(frozenset().union(*options))

    def compare(self, op: str, a: frozenset, b: frozenset) -> frozenset:
        if a or b:
            raise DeclarationError("a comparison of profiles (where() decides per scenario)")
        return a

    def reduce(self, op: str, axis: str, x: frozenset) -> frozenset:
        if axis not in x:
            raise DeclarationError(f"{op}_{axis}() of a value without the {axis} axis")
        if axis == "hour" and "month" in x:
            raise DeclarationError(f"{op}_hour() of a value that still runs by month")
        if axis == "hour" and op == "sum" and "period" in x:
            raise DeclarationError("sum_hour() of a value that still runs by period")
        if axis == "period" and "hour" in x:
            raise DeclarationError("sum_period() of a value that still runs by hour")
        return x - {axis}


# ---- declared items --------------------------------------------------------------------

@dataclass(frozen=True)
class Input:
    """A numeric input [unit], named like the scenario key with dots as underscores."""
    name: str
    unit: str
    description: str
    key: str  # dotted scenario key, e.g. "electricity.price"
    optional: bool = False  # may be absent; steps that read it then give no value
    axes: tuple[str, ...] = ()  # a profile's axes (AXES order); () for a scalar


@dataclass(frozen=True)
class Enum:
    """A categorical input; the evaluator receives the index of the level (0-based)."""
    name: str
    levels: tuple[str, ...]
    description: str
    key: str


@dataclass(frozen=True)
class Constant:
    """A named conversion constant [unit], so no formula carries a bare number."""
    name: str
    value: float
    unit: str
    description: str


@dataclass(frozen=True)
class Step:
    """A derived quantity: ``name = expression`` [unit].

    ``group``/``member`` place it in the nested JSON result (``cost_per_mtok.energy``);
    a step without a group appears at the top level under its own name.
    """
    name: str
    unit: str
    expression: str
    description: str
    group: str | None = None
    member: str | None = None
    tree: Node = field(init=False, compare=False, repr=False)
    axes: tuple[str, ...] = field(init=False, compare=False, default=())  # set by Declaration

    def __post_init__(self) -> None:
        object.__setattr__(self, "tree", parse_expression(self.expression))


class Declaration:
    """An ordered, checked set of inputs, constants and steps."""

    def __init__(self, inputs: Iterable[Input], enums: Iterable[Enum],
                 constants: Iterable[Constant], steps: Iterable[Step]):
        self.inputs = {i.name: i for i in inputs}
        self.enums = {e.name: e for e in enums}
        self.constants = {c.name: c for c in constants}
        self.steps: dict[str, Step] = {}
        for s in steps:
            if s.name in self.steps:
                raise DeclarationError(f"step {s.name} declared twice")
            self.steps[s.name] = s
        self._check_names()
        self._check_axes()
        checked_once(self)
        # the steps with one value per scenario (a profile's steps are not results), and
        # the inputs that are profiles (vectors along AXES)
        self.scalar_steps = [n for n, s in self.steps.items() if not s.axes]
        self.profile_inputs = [n for n, i in self.inputs.items() if i.axes]

    # names ---------------------------------------------------------------------------
    def _check_names(self) -> None:
        seen: set[str] = set()
        for group in (self.inputs, self.enums, self.constants, self.steps):
            clash = seen & set(group)
            if clash:
                raise DeclarationError(f"names declared twice: {sorted(clash)}")
            seen |= set(group)
        known = set(self.inputs) | set(self.enums) | set(self.constants)
        for s in self.steps.values():
            for n in names_in(s.tree):
                if n not in known:
                    raise DeclarationError(
                        f"step {s.name} reads {n!r}, which is not an input, constant or "
                        f"earlier step")
            for selector, count in sorted(fold(s.tree, _CHOICES)):
                enum = self.enums.get(selector)
                if enum is None:
                    raise DeclarationError(f"step {s.name}: choose() on {selector!r}, "
                                           f"which is not a categorical input")
                if count != len(enum.levels):
                    raise DeclarationError(
                        f"step {s.name}: choose({enum.name}) needs {len(enum.levels)} "
                        f"options ({', '.join(enum.levels)}), got {count}")
            known.add(s.name)

    def _check_axes(self) -> None:
        """Every step's axes, and the shapes reductions need (see the module docstring)."""
        axes_of = {n: frozenset(i.axes) for n, i in self.inputs.items() if i.axes}
        for i in self.inputs.values():
            if not set(i.axes) <= set(AXES):
                raise DeclarationError(f"input {i.name}: axes {i.axes} not in {AXES}")
        reductions = _Reductions()
        for s in self.steps.values():
            try:
                axes = fold(s.tree, _Axes(axes_of))
            except DeclarationError as exc:
                raise DeclarationError(f"step {s.name}: {exc}") from exc
            for op, operand in fold(s.tree, reductions)[0]:
                shape = factors(operand)
                if shape is None or (op == "max" and len(shape) != 1):
                    raise DeclarationError(
                        f"step {s.name}: the operand of a reduction is "
                        f"{'one name' if op == 'max' else 'a product of names'}")
            object.__setattr__(s, "axes", tuple(a for a in AXES if a in axes))
            if axes:
                axes_of[s.name] = axes

    def dependencies(self, targets: Iterable[str]) -> list[str]:
        """The steps needed for ``targets``, in declaration order."""
        needed: set[str] = set()
        stack = list(targets)
        while stack:
            name = stack.pop()
            if name in needed:
                continue
            if name not in self.steps:
                if name in self.inputs or name in self.enums or name in self.constants:
                    continue
                raise KeyError(f"unknown step {name!r}")
            needed.add(name)
            stack.extend(names_in(self.steps[name].tree))
        return [n for n in self.steps if n in needed]

    def reached(self, roots: Iterable[str], names: Collect) -> set[str]:
        """Every name ``roots`` read, through the steps they read in turn, each step's names
        as ``names`` collects them (:class:`ChosenNames`: only the options chosen); the roots
        themselves included."""
        seen: set[str] = set()
        stack = list(roots)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in self.steps:
                stack.extend(fold(self.steps[name].tree, names))
        return seen

    def inputs_read(self, steps: Iterable[str]) -> set[str]:
        """Names of inputs and enums that the given steps read directly."""
        out: set[str] = set()
        for s in steps:
            out |= {n for n in names_in(self.steps[s].tree)
                    if n in self.inputs or n in self.enums}
        return out

    # units ---------------------------------------------------------------------------
    def content(self) -> str:
        """What the unit check depends on in the declaration: every input, enum, constant and
        step (frozen dataclasses: their repr is their content)."""
        return repr((list(self.inputs.values()), list(self.enums.values()),
                     list(self.constants.values()), list(self.steps.values())))

    def check_units(self) -> None:
        """Evaluate every step with pint and with plain floats; both must agree. Twice: with
        every categorical input at its first level, and at its last, so the branches of a
        ``choose`` are each computed (the others are checked for the same unit and scale).

        Each input gets a distinct awkward sample magnitude in its declared unit, so a hidden
        conversion factor (say W where kW was meant) cannot agree by accident.
        """
        for last in (False, True):
            self._check_units_at({e.name: len(e.levels) - 1 if last else 0
                                  for e in self.enums.values()})

    def _check_units_at(self, levels: Mapping[str, int]) -> None:
        env_q: dict[str, object] = {}
        env_m: dict[str, object] = {}
        for k, i in enumerate(self.inputs.values()):
            m = 0.3 + 0.137 * (k + 1)
            env_q[i.name] = ureg.Quantity(m, i.unit)
            env_m[i.name] = m
        for e in self.enums.values():
            env_q[e.name] = levels[e.name]
            env_m[e.name] = levels[e.name]
        for c in self.constants.values():
            env_q[c.name] = ureg.Quantity(c.value, c.unit)
            env_m[c.name] = c.value
        for s in self.steps.values():
            try:
                q = fold(s.tree, _PintCheck(env_q))
                unit = ureg.Unit(s.unit)
                if not isinstance(q, ureg.Quantity):
                    # the literal 0 (a branch that charges nothing) or empty (one that
                    # states nothing) fits any unit
                    q = ureg.Quantity(q, unit if q == 0 or math.isnan(q) else "")
                if q.dimensionality != ureg.Quantity(1, unit).dimensionality:
                    raise DeclarationError(f"gives {q.units:~} ({q.dimensionality}), "
                                           f"declared {s.unit}")
                expected = q.to(unit).magnitude
            except DeclarationError as exc:
                raise DeclarationError(f"step {s.name}: {exc}") from exc
            except Exception as exc:  # pint's DimensionalityError and friends
                raise DeclarationError(f"step {s.name}: {exc}") from exc
            got = float(compile_node(s.tree)(env_m))
            if math.isnan(got) and math.isnan(expected):
                pass  # empty at these levels (its dimension checked): the other levels scale it
            elif not math.isclose(expected, got, rel_tol=1e-9):
                raise DeclarationError(
                    f"step {s.name}: the expression in declared units needs a hidden factor "
                    f"{expected / got:.6g}; name a conversion constant instead")
            env_q[s.name] = ureg.Quantity(got, unit)
            env_m[s.name] = got


def _same_scale(options: list, where: str) -> None:
    """Branches of where/choose must be interchangeable without conversion (0 and
    ``empty`` fit any)."""
    quantities = [o for o in options
                  if not (isinstance(o, (int, float)) and (o == 0 or math.isnan(o)))]
    if not quantities:
        return
    first = quantities[0] if isinstance(quantities[0], ureg.Quantity) else ureg.Quantity(
        quantities[0])
    for o in quantities[1:]:
        o = o if isinstance(o, ureg.Quantity) else ureg.Quantity(o)
        if o.dimensionality != first.dimensionality:
            raise DeclarationError(f"{where} branches differ in dimension: "
                                   f"{first.units:~} vs {o.units:~}")
        if not math.isclose(ureg.Quantity(1, o.units).to(first.units).magnitude, 1.0,
                            rel_tol=1e-12):
            raise DeclarationError(f"{where} branches differ in scale: "
                                   f"{first.units:~} vs {o.units:~}")


_ARITHMETIC: dict[str, Callable] = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                                    "/": operator.truediv, "**": operator.pow}
_COMPARE: dict[str, Callable] = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                                 "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _magnitude(x) -> float:
    return float(x.magnitude) if isinstance(x, ureg.Quantity) else float(x)


class _PintCheck(Algebra[object]):
    """Evaluates with pint quantities [each name's declared unit] and refuses operands that
    would need a conversion to meet: in a sum or difference, a comparison, or the branches
    of ``where``/``choose`` (the workbook and numpy evaluate magnitudes, not units)."""

    def __init__(self, env: Mapping[str, object]):
        self.env = env

    def name(self, id: str):
        return self.env[id]

    def num(self, value: int):
        return value

    def neg(self, x):
        return -x

    def binop(self, op: str, a, b):
        if op in "+-":
            _same_scale([a, b], f"'{op}'")
        return _ARITHMETIC[op](a, b)

    def compare(self, op: str, a, b):
        _same_scale([a, b], "comparison")
        return _COMPARE[op](_magnitude(a), _magnitude(b))

    def where(self, condition, if_true, if_false):
        _same_scale([if_true, if_false], "where()")
        return if_true if condition else if_false

    def choose(self, selector: str, options: tuple):
        _same_scale(list(options), f"choose({selector})")
        return options[self.env[selector]]

    def reduce(self, op: str, axis: str, x):
        # the sample profile has one slot: a sum of weights x values keeps the values' unit
        return x


def checked_once(declaration: Declaration) -> None:
    """Run :meth:`Declaration.check_units` unless this very declaration passed it before on
    this machine, with this checker, these unit definitions and this pint
    (:func:`costmodel.resources.once_per_content` keeps the mark in the cache folder)."""
    import pint
    resources.once_per_content("units-checked", f"{pint.__version__}\n{declaration.content()}",
                     (__name__, units.__name__), declaration.check_units)


# the numpy interpreter of one expression (evaluate.Evaluator compiles whole declarations;
# the unit check above runs it on plain floats) ---------------------------------------------
Env = Mapping[str, object]
Closure = Callable[[Env], object]
_CMP: dict[str, Callable] = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                             "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _sum_month(x):
    """Sum along the month axis: of a profile by month and hour, keeping the month axis
    (length 1) so the hours stay where they are; of one by month alone (its hour axis has
    length 1, never an hour profile's 24 or 48), a scalar."""
    if type(x) is float or np.ndim(x) < 2:  # (a float: the scalar path, cheaply)
        return x
    return x.sum(axis=(0, 1)) if x.shape[1] == 1 else x.sum(axis=0, keepdims=True)


def _sum_hour(x):
    """Sum of a profile without months (shape (1, hours[, n])) over its slots."""
    return x if type(x) is float or np.ndim(x) < 2 else x.sum(axis=(0, 1))


def _max_hour(x):
    """Maximum over the slots of a profile by hour (shape (1, hours[, n])): a scalar; of one
    by period and hour (periods, hours[, n]), each period's maximum (periods, 1[, n]) (one
    period: a scalar, which broadcasts alike)."""
    if type(x) is float or np.ndim(x) < 2:
        return x
    return x.max(axis=(0, 1)) if x.shape[0] == 1 else x.max(axis=1, keepdims=True)


def _sum_period(x):
    """Sum of a profile by period (shape (periods, 1[, n])) over its periods."""
    return x if type(x) is float or np.ndim(x) < 2 else x.sum(axis=(0, 1))


REDUCE: dict[tuple[str, str], Callable] = {("sum", "month"): _sum_month,
                                           ("sum", "hour"): _sum_hour,
                                           ("max", "hour"): _max_hour,
                                           ("sum", "period"): _sum_period}


class _Ops(Algebra[Closure]):
    """Compiles an expression into a closure ``env -> value``; subclasses say how arithmetic
    and branches run. Each closure binds its callables as locals, so a call does no lookups
    beyond the env."""
    binary: dict[str, Callable]
    negative: Callable

    def name(self, id: str) -> Closure:
        return lambda env: env[id]  # a _LazyEnv computes a step the first time it is read

    def num(self, value: int) -> Closure:
        constant = float(value)
        return lambda env: constant

    def neg(self, x: Closure) -> Closure:
        negative = self.negative
        return lambda env: negative(x(env))

    def binop(self, op: str, a: Closure, b: Closure) -> Closure:
        f = self.binary[op]
        return lambda env: f(a(env), b(env))

    def compare(self, op: str, a: Closure, b: Closure) -> Closure:
        f = _CMP[op]
        return lambda env: f(a(env), b(env))

    def reduce(self, op: str, axis: str, x: Closure) -> Closure:
        f = REDUCE[op, axis]
        return lambda env: f(x(env))


class _NumpyOps(_Ops):
    """Arrays: numpy ufuncs; ``where`` computes both branches and picks per element."""
    binary: ClassVar[dict[str, Callable]] = {
        "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "**": np.power}
    negative = staticmethod(np.negative)

    def where(self, condition: Closure, if_true: Closure, if_false: Closure) -> Closure:
        return lambda env: np.where(condition(env), if_true(env), if_false(env))

    def choose(self, selector: str, options: tuple[Closure, ...]) -> Closure:
        def choose(env):
            index = env[selector]
            if np.ndim(index) == 0:  # the common case: one level for the whole batch
                return options[int(index)](env)
            return np.choose(index, np.broadcast_arrays(*[o(env) for o in options]))
        return choose


class _ScalarOps(_Ops):
    """A batch of one in plain floats: only the branch taken is computed, so a division by
    zero in an untaken branch never happens; elsewhere it raises and the caller uses NUMPY."""
    binary: ClassVar[dict[str, Callable]] = {
        "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "**": operator.pow}
    negative = staticmethod(operator.neg)

    def where(self, condition: Closure, if_true: Closure, if_false: Closure) -> Closure:
        return lambda env: if_true(env) if condition(env) else if_false(env)

    def choose(self, selector: str, options: tuple[Closure, ...]) -> Closure:
        return lambda env: options[int(env[selector])](env)


NUMPY, SCALAR = _NumpyOps(), _ScalarOps()


def compile_node(node: Node, ops: _Ops = NUMPY) -> Closure:
    """Turn an expression tree into a closure ``env -> value`` [the step's declared unit],
    once."""
    return fold(node, ops)
