"""The decision's declared arithmetic (:mod:`costmodel.decisions.decision_calculation`) as
spreadsheet formulas, each carrying the value the engine computes.

A :class:`Formula` is a formula's text and its value together: arithmetic on formulas (and on
the literals 0 and 1 the declaration uses) builds both, so running a declared function over
formulas writes its spreadsheet rendering and computes the engine's figure in one pass, with
the engine's operations in the engine's order. :class:`Formulas` is the algebra
(MAX, MIN, ROUNDUP(ROUND(x,9),0), IF, SQRT, a defined name for a constant); its ``place``
says where a value worth its own cell goes (None: written inline where it is read), its
``known`` the cells already written (read, not computed again).
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...decisions.decision_calculation import CONSTANTS, FLOATS, Floats

__all__ = ["Formula", "Formulas", "Compiled", "literal", "value_of"]

_ATOM, _COMPARE = 4, 0
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
_APPLY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


@dataclass(frozen=True)
class Formula:
    """Formula text (no ``=``), the precedence of its outermost operator, and its value."""
    text: str
    value: Any
    precedence: int = _ATOM

    def _op(self, op: str, other: Any, swapped: bool = False) -> Any:
        other = other if other.__class__ is Formula else literal(other)
        a, b = (other, self) if swapped else (self, other)
        # the literals 0 and 1, as _is tells them (a bracketed "1" is not one)
        one_a = a.precedence == _ATOM and a.text == "1"
        one_b = b.precedence == _ATOM and b.text == "1"
        if op == "*" and (one_a or one_b):  # x * 1 is x, exactly
            return b if one_a else a
        zero_b = b.precedence == _ATOM and b.text == "0"
        if zero_b and op in "+-":  # x + 0 and x - 0 are x, exactly
            return a
        if op == "*" and (zero_b or (a.precedence == _ATOM and a.text == "0")):
            return literal(0.0)  # a share times no discount
        p = _PRECEDENCE[op]
        left = f"({a.text})" if a.precedence < p else a.text
        right = f"({b.text})" if b.precedence < (p + 1 if op in "-/" else p) else b.text
        return Formula(f"{left}{op}{right}", _APPLY[op](a.value, b.value), p)

    def __add__(self, other: Any) -> Any:
        return self._op("+", other)

    def __radd__(self, other: Any) -> Any:
        return self._op("+", other, True)

    def __sub__(self, other: Any) -> Any:
        return self._op("-", other)

    def __rsub__(self, other: Any) -> Any:
        return self._op("-", other, True)

    def __mul__(self, other: Any) -> Any:
        return self._op("*", other)

    def __rmul__(self, other: Any) -> Any:
        return self._op("*", other, True)

    def __truediv__(self, other: Any) -> Any:
        return self._op("/", other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._op("/", other, True)

    def __bool__(self) -> bool:  # a formula's truth is the sheet's, never Python's
        raise TypeError("a formula has no truth value in Python: use the algebra's where()")


def _is(f: Formula, x: float) -> bool:
    return f.precedence == _ATOM and f.text == _LITERALS.get(x)


_LITERALS = {0.0: "0", 1.0: "1"}


def literal(x: Any) -> Formula:
    """A formula, or one of the literals the declaration may use (0, 1) as one."""
    if isinstance(x, Formula):
        return x
    if isinstance(x, bool) or float(x) not in _LITERALS:
        raise ValueError(f"the literal {x!r} in a declared formula: name the constant")
    return Formula(_LITERALS[float(x)], float(x))


def value_of(x: Any) -> Any:
    return x.value if isinstance(x, Formula) else x


def _operand(f: Formula, needed: int) -> str:
    return f"({f.text})" if f.precedence < needed else f.text


def _call(name: str, *args: Formula, value: Any) -> Formula:
    return Formula(f"{name}({','.join(a.text for a in args)})", value)


class Formulas:
    """The algebra of :mod:`costmodel.decisions.decision_calculation` over :class:`Formula`;
    ``place(label, formula)`` writes a cell and returns the formula reading it, or None to
    leave the value inline."""

    def __init__(self, place: Callable[[str, Formula], Formula | None] | None = None,
                 known: dict[str, Formula] | None = None):
        self.place, self.known = place, known or {}

    def max(self, a: Any, b: Any) -> Formula:
        a, b = literal(a), literal(b)
        return _call("MAX", a, b, value=FLOATS.max(a.value, b.value))

    def min(self, a: Any, b: Any) -> Formula:
        a, b = literal(a), literal(b)
        return _call("MIN", a, b, value=FLOATS.min(a.value, b.value))

    def whole_up(self, x: Formula, what: str = "the count") -> Formula:
        # the engine's: noise below 1e-9 dropped, then the ceiling
        return Formula(f"ROUNDUP(ROUND({x.text},9),0)", FLOATS.whole_up(x.value, what))

    def le(self, a: Any, b: Any) -> Formula:
        a, b = literal(a), literal(b)
        return Formula(f"{_operand(a, 1)}<={_operand(b, 1)}", a.value <= b.value, _COMPARE)

    def where(self, condition: Formula, a: Any, b: Any) -> Formula:
        a, b = literal(a), literal(b)
        return _call("IF", condition, a, b, value=a.value if condition.value else b.value)

    def sqrt(self, x: Formula) -> Formula:
        return _call("SQRT", x, value=math.sqrt(x.value))

    def const(self, name: str) -> Formula:
        return Formula(name, CONSTANTS[name])

    def cell(self, label: str, x: Any) -> Any:
        if label in self.known:  # written already: read from its cell
            return self.known[label]
        x = x() if callable(x) else x
        if self.place is None or not isinstance(x, Formula):
            return x
        placed = self.place(label, x)
        return x if placed is None else placed


class _Code:
    """Python expression text over ``s`` (a scale) and the constants ``c[i]`` (``consts``,
    shared by one compilation), built by the operators the declaration uses, each bracketed
    as it is evaluated."""
    __slots__ = ("consts", "text")

    def __init__(self, text: str, consts: list[Any]):
        self.text, self.consts = text, consts

    def _op(self, op: str, other: Any, swapped: bool = False) -> _Code:
        a, b = (other, self) if swapped else (self, other)
        return _Code(f"({_py(a, self.consts)}{op}{_py(b, self.consts)})", self.consts)

    def __add__(self, other: Any) -> _Code:
        return self._op("+", other)

    def __radd__(self, other: Any) -> _Code:
        return self._op("+", other, True)

    def __sub__(self, other: Any) -> _Code:
        return self._op("-", other)

    def __rsub__(self, other: Any) -> _Code:
        return self._op("-", other, True)

    def __mul__(self, other: Any) -> _Code:
        return self._op("*", other)

    def __rmul__(self, other: Any) -> _Code:
        return self._op("*", other, True)

    def __truediv__(self, other: Any) -> _Code:
        return self._op("/", other)

    def __rtruediv__(self, other: Any) -> _Code:
        return self._op("/", other, True)

    def __bool__(self) -> bool:
        raise TypeError("a compiled value has no truth value in Python: use where()")


def _py(x: Any, consts: list[Any]) -> str:
    if isinstance(x, _Code):
        return x.text
    consts.append(x)  # by reference: every float exactly, infinities too
    return f"c[{len(consts) - 1}]"


def _where(condition: Any, a: Any, b: Any) -> Any:
    return a if condition else b  # both sides evaluated first, as the engine's where


class Compiled(Floats):
    """The engine's algebra (:data:`FLOATS`) over floats and one variable, the scale: what
    does not depend on the scale is computed once, as the engine computes it; the rest is
    Python code, compiled once, performing the engine's operations in the engine's order on
    each scale (a declared bill at 14,000 scales costs a call each, not a walk of the
    declaration). ``known``: the values of the cells the formula rendering reads."""

    def __init__(self, known: dict[str, Formula] | None = None):
        self.known = {label: f.value for label, f in (known or {}).items()}
        self.consts: list[Any] = []

    def _call(self, name: str, *args: Any) -> Any:
        """``name(args)`` as code where an argument is code; None where none is."""
        if not any(isinstance(a, _Code) for a in args):
            return None
        return _Code(f"{name}({','.join(_py(a, self.consts) for a in args)})", self.consts)

    def max(self, a: Any, b: Any) -> Any:
        code = self._call("max", a, b)
        return max(a, b) if code is None else code

    def min(self, a: Any, b: Any) -> Any:
        code = self._call("min", a, b)
        return min(a, b) if code is None else code

    def whole_up(self, x: Any, what: str = "the count") -> Any:
        code = self._call("whole_up", x, what)
        return FLOATS.whole_up(x, what) if code is None else code

    def le(self, a: Any, b: Any) -> Any:
        code = self._call("le", a, b)
        return a <= b if code is None else code

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        code = self._call("where", condition, a, b)
        return FLOATS.where(condition, a, b) if code is None else code

    def sqrt(self, x: Any) -> Any:
        code = self._call("sqrt", x)
        return math.sqrt(x) if code is None else code

    def cell(self, label: str, x: Any) -> Any:
        if label in self.known:
            return self.known[label]
        return x() if callable(x) else x

    def function(self, build: Callable[[Any, Any], Any]) -> Callable[[float], Any]:
        """``build(algebra, scale)`` as a function of the scale (an algebra compiles one)."""
        body = _py(build(self, _Code("s", self.consts)), self.consts)
        namespace = {"c": self.consts, "max": max, "min": min, "sqrt": math.sqrt,
                     "where": _where, "le": operator.le, "whole_up": FLOATS.whole_up}
        return eval(f"lambda s: {body}", namespace)
