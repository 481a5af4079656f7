"""The inputs an analysis can move, named by dotted scenario key, and their valid ranges.

Valid ranges are the scenario's own (:class:`~costmodel.model.inputs.QuantityField` bounds, see
:func:`~costmodel.model.inputs.quantity_field`): nothing is negative; utilisation, efficiencies and
throughputs are above zero; fractions are at most 1 (the gross margin below 1); PUE is at
least 1; node and rack counts are whole numbers >= 1. Categorical inputs (``power.boundary``
...) are not varied: they are set with ``--set``.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.inputs import InputError, QuantityField, quantity_field
from ...model.steps import MODEL
from ...model.units import UnitInputError, parse_quantity

__all__ = ["SensitivityError", "Var", "VARS", "var_for", "split_key"]


class SensitivityError(InputError):
    """A sensitivity request that cannot be run; ``errors`` = [(key or option, message)]."""

    def __init__(self, where: str, message: str):
        super().__init__([(where, message)])


# node.accelerators and rack.nodes are whole-number fields, not quantities
_COUNT = QuantityField("dimensionless", minimum=1.0)
# Inputs that are part of another figure's unit rather than a decision: a published
# token/s/kW was divided by this power, and it moves with the power it names.
_UNIT_OF = {"operating_point.normalised_by": "operating_point.throughput_per_kw"}


@dataclass(frozen=True)
class Var:
    """A numeric input of the declaration and its valid range [unit]."""
    key: str  # dotted scenario key, e.g. "electricity.price"
    name: str  # the declaration's input name, e.g. "electricity_price"
    unit: str  # canonical unit of the magnitudes below and of the evaluator's input
    bounds: QuantityField
    count: bool = False  # a whole number >= 1
    unit_of: str | None = None  # the figure whose unit this input is part of, if any

    @property
    def lower(self) -> float:
        return self.bounds.lowest

    @property
    def lower_strict(self) -> bool:
        return self.bounds.lowest_excluded

    @property
    def upper(self) -> float | None:
        return self.bounds.maximum

    @property
    def upper_strict(self) -> bool:
        return self.bounds.below_maximum

    def show(self, value: float) -> str:
        return f"{value:g}" if self.unit == "dimensionless" else f"{value:g} {self.unit}"

    def rule_low(self) -> str:
        if self.count:
            return "must be a whole number of at least 1"
        if self.lower_strict:
            return "must be greater than zero"
        return "must not be negative" if self.lower == 0 else f"must be at least {self.lower:g}"

    def rule_high(self) -> str:
        assert self.upper is not None
        return f"must be {'below' if self.upper_strict else 'at most'} {self.upper:g}"

    def rules(self) -> str:
        """The whole valid range in words, e.g. ``utilisation must be greater than zero and
        at most 1``."""
        rule = self.rule_low()
        if self.upper is not None:
            rule += " and " + self.rule_high().removeprefix("must be ")
        return f"{self.key} {rule}"

    def violation(self, value: float) -> str | None:
        """Why ``value`` [unit] is outside the valid range, or None."""
        if self.count and (value != math.floor(value) or value < 1):
            return f"{self.rule_low()}, got {value:g}"
        if value < self.lower or (self.lower_strict and value == self.lower):
            return f"{self.rule_low()}, got {self.show(value)}"
        if self.upper is not None and (value > self.upper
                                       or (self.upper_strict and value == self.upper)):
            return f"{self.rule_high()}, got {self.show(value)}"
        return None

    def valid(self, x: np.ndarray) -> np.ndarray:
        """Which of the values ``x`` [unit] lie in the valid range (counts aside)."""
        ok = x > self.lower if self.lower_strict else x >= self.lower
        if self.upper is not None:
            ok &= x < self.upper if self.upper_strict else x <= self.upper
        return ok

    def parse(self, raw: Any, where: str, *, check: bool = True) -> float:
        """A quantity given for this input -> magnitude [unit]; SensitivityError if not."""
        try:
            value = parse_quantity(raw, self.unit, allow_negative=True, per=self.bounds.per)
        except UnitInputError as exc:
            raise SensitivityError(self.key, f"{where}: {exc}") from None
        if check:
            problem = self.violation(value)
            if problem:
                raise SensitivityError(self.key, f"{where}: {problem}")
        return value


def _make_var(key: str, name: str, unit: str) -> Var:
    bounds = quantity_field(key)
    if bounds is None:
        return Var(key, name, unit, _COUNT, count=True)
    return Var(key, name, unit, bounds, unit_of=_UNIT_OF.get(key))


# a profile (a tariff's rates by hour, a load shape) moves through the tariff's scale and
# shift, or the utilisation; it is not one number to vary
VARS: dict[str, Var] = {i.key: _make_var(i.key, i.name, i.unit) for i in MODEL.inputs.values()
                        if not i.axes}
_BY_NAME = {v.name: v for v in VARS.values()}
_ENUMS = {e.key: e for e in MODEL.enums.values()} | {e.name: e for e in MODEL.enums.values()}


def var_for(key: str) -> Var:
    """The numeric input named by a dotted key (or its input name); SensitivityError naming
    the key if it is categorical or unknown."""
    key = key.strip()
    if key in VARS:
        return VARS[key]
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key in _ENUMS:
        e = _ENUMS[key]
        raise SensitivityError(e.key, f"is categorical ({', '.join(e.levels)}); it cannot "
                                      f"be varied here: set it with --set")
    close = difflib.get_close_matches(key, list(VARS), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise SensitivityError(key or "(empty key)", f"not a numeric input of the calculation{hint}")


def split_key(text: str, what: str, example: str) -> tuple[str, str]:
    """``"key=VALUE"`` text (a command-line option) -> (key, value text)."""
    key, sep, rhs = str(text).partition("=")
    if not sep or not key.strip() or not rhs.strip():
        raise SensitivityError(what, f"expected {example}, got {text!r}")
    return key.strip(), rhs.strip()
