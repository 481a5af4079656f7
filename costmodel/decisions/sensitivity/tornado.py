"""Tornado: each input moved alone, the others at the base, ranked by the output's swing.

Each input moves to base x (1 -/+ swing), or across a range given for it. A default end that
leaves the valid range is clipped to the bound (or, for a strict bound, kept at the base) and
the bar's ``note`` says so; a range given explicitly must be valid. Only inputs a person
decides get a bar: ``operating_point.normalised_by`` is part of the unit of a published
per-kW figure, not a decision, and is refused when named.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.inputs import Scenario
from ...model.results import quantity_json
from .base import DEFAULT_OUTPUT, Base
from .inputs import VARS, SensitivityError, Var, var_for
from .ranges import range_values

__all__ = ["tornado", "Tornado", "TornadoBar"]


@dataclass(frozen=True)
class TornadoBar:
    """One input moved alone: ``low``/``high`` [unit] and the output there [output unit]."""
    key: str
    unit: str
    base: float
    low: float
    high: float
    output_low: float
    output_high: float
    swing: float  # |output_high - output_low| [output unit]
    note: str | None = None

    def to_json(self, output_unit: str) -> dict[str, Any]:
        return {"key": self.key, "unit": self.unit,
                "base": quantity_json(self.base, self.unit),
                "low": quantity_json(self.low, self.unit),
                "high": quantity_json(self.high, self.unit),
                "output_low": quantity_json(self.output_low, output_unit),
                "output_high": quantity_json(self.output_high, output_unit),
                "swing": quantity_json(self.swing, output_unit),
                "note": self.note}


@dataclass(frozen=True)
class Tornado:
    """Bars ranked by swing, largest first; ``base`` is the output at the base [unit]."""
    output: str
    unit: str
    base: float
    swing: float  # the default relative move, e.g. 0.2
    bars: list[TornadoBar]

    def to_json(self) -> dict[str, Any]:
        return {"output": self.output, "unit": self.unit,
                "base": quantity_json(self.base, self.unit), "default_swing": self.swing,
                "bars": [b.to_json(self.unit) for b in self.bars]}


def _default_ends(var: Var, base: float, swing: float) -> tuple[float, float, str | None]:
    """base x (1 -/+ swing), kept inside the valid range; the note says what was changed."""
    low, high = base * (1 - swing), base * (1 + swing)
    notes = []
    if var.count:
        low, high = max(1.0, float(np.round(low))), float(np.round(high))
        notes.append("rounded to whole numbers")
    if low < var.lower or (var.lower_strict and low <= var.lower):
        if var.lower_strict:
            low = base
            notes.append(f"low kept at the base ({var.rule_low()})")
        else:
            low = var.lower
            notes.append(f"low clipped to {var.show(low)} ({var.rule_low()})")
    if var.upper is not None and (high > var.upper or (var.upper_strict and high >= var.upper)):
        if var.upper_strict:
            high = base
            notes.append(f"high kept at the base ({var.rule_high()})")
        else:
            high = var.upper
            notes.append(f"high clipped to {var.show(high)} ({var.rule_high()})")
    return low, high, "; ".join(notes) or None


def _decided(var: Var) -> Var:
    """``var``, if a person decides it; SensitivityError saying why not otherwise."""
    if var.unit_of is not None:
        raise SensitivityError(var.key, f"is part of the unit of {var.unit_of} (the power the "
                                        f"figure was divided by), not a decision, so it has "
                                        f"no tornado bar")
    return var


def _chosen(b: Base, inputs: Iterable[str] | None, given: Mapping[str, Any]) -> list[Var]:
    """The inputs to move, each once: those named (default: every decided, non-count input
    the output reads whose base value is set and nonzero), then those given a range."""
    if inputs is None:
        chosen = [v for v in VARS.values()
                  if not v.count and v.unit_of is None and v.name in b.live
                  and math.isfinite(b.base_of(v)) and b.base_of(v) != 0]
    else:
        chosen = [_decided(var_for(k)) for k in inputs]
    chosen += [VARS[k] for k in given]
    order: dict[str, Var] = {}
    for v in chosen:
        order.setdefault(v.key, v)
    if not order:
        raise SensitivityError("inputs", "nothing to vary")
    return list(order.values())


def tornado(scenario: Scenario, *, inputs: Iterable[str] | None = None,
            ranges: Mapping[str, Any] | None = None, output: str = DEFAULT_OUTPUT,
            default_swing: float = 0.20) -> Tornado:
    """Move each input alone across its range and rank the inputs by the output's swing.

    ``inputs``: dotted keys (default: every numeric input a person decides that the output
    reads in this scenario, whose base value is present and nonzero, counts excluded);
    ``ranges``: key -> ``"LOW..HIGH [unit]"`` (bare numbers take the unit written last) or a
    pair ``[low, high]`` of quantities in the input's dimension (a key given a range is
    included even if not in ``inputs``); others move to base x (1 -/+ ``default_swing``).
    One evaluator call computes every bar [output unit].
    """
    if isinstance(default_swing, bool) or not isinstance(default_swing, (int, float)) \
            or not 0 < default_swing <= 1:
        raise SensitivityError("swing", f"must be a fraction in (0, 1], got {default_swing!r}")
    b = Base(scenario, output)
    if not math.isfinite(b.value):
        raise SensitivityError("output", f"{b.output} has no value in this scenario (an input "
                                         f"it needs is absent)")
    given: dict[str, tuple[float, float]] = {}
    for key, raw in (ranges or {}).items():
        var = _decided(var_for(key))
        given[var.key] = range_values(var, raw)
    rows: list[tuple[Var, float, float, float, str | None]] = []
    for var in _chosen(b, inputs, given):
        b.check_live(var)
        base = b.base_of(var)
        if var.key in given:
            low, high = given[var.key]
            note = None
        else:
            if not math.isfinite(base):
                raise SensitivityError(var.key, "has no value in the base scenario; give it a "
                                                "range (--range key=LOW..HIGH)")
            if base == 0:
                raise SensitivityError(var.key, f"is 0 in the base scenario, so +/-"
                                                f"{default_swing:.0%} does not move it; give it "
                                                f"a range (--range key=LOW..HIGH)")
            low, high, note = _default_ends(var, base, default_swing)
        rows.append((var, base, low, high, note))
    n = 2 * len(rows)
    varied: dict[str, np.ndarray] = {}
    for i, (var, _, low, high, _) in enumerate(rows):
        # a linked input (a defaulted normalising power) follows in its leader's rows only
        for name in (var.name, *b.links.get(var.name, ())):
            column = varied.setdefault(name, np.full(n, float(b.inputs[name])))
            column[2 * i], column[2 * i + 1] = low, high
    out = b.evaluate(varied, n)
    bars = [TornadoBar(var.key, var.unit, base, low, high, float(out[2 * i]),
                       float(out[2 * i + 1]), float(abs(out[2 * i + 1] - out[2 * i])), note)
            for i, (var, base, low, high, note) in enumerate(rows)]
    bars.sort(key=lambda bar: -bar.swing if math.isfinite(bar.swing) else math.inf)
    return Tornado(b.output, b.unit, b.value, float(default_swing), bars)
