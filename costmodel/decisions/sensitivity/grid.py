"""Grid: the output over the product of two lists of input values, in one evaluator call.

A value outside an input's valid range is an error (see :mod:`.ranges` for the axis
syntax).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.inputs import Scenario
from ...model.results import quantity_json
from .base import DEFAULT_OUTPUT, Base
from .inputs import SensitivityError, var_for
from .ranges import axis_values, parse_axis

__all__ = ["grid", "Grid", "GridAxis", "MAX_GRID_CELLS"]

MAX_GRID_CELLS = 10_000_000


@dataclass(frozen=True)
class GridAxis:
    key: str
    unit: str
    values: np.ndarray  # [unit]

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "unit": self.unit, "values": [float(v) for v in self.values]}


@dataclass(frozen=True)
class Grid:
    """``values[i, j]`` is the output at ``y.values[i]`` and ``x.values[j]`` [unit]."""
    output: str
    unit: str
    base: float
    x: GridAxis
    y: GridAxis
    values: np.ndarray

    def to_json(self) -> dict[str, Any]:
        return {"output": self.output, "unit": self.unit,
                "base": quantity_json(self.base, self.unit),
                "x": self.x.to_json(), "y": self.y.to_json(),
                "values": [[float(v) if math.isfinite(v) else None for v in row]
                           for row in self.values]}


def grid(scenario: Scenario, x: tuple[str, Any] | str, y: tuple[str, Any] | str, *,
         output: str = DEFAULT_OUTPUT) -> Grid:
    """The output over every pair of values of two inputs, in one evaluator call.

    ``x``/``y``: ``(key, values)`` where values is a sequence of quantities, ``"V1,V2,..."``
    (bare numbers take the last value's unit) or ``"LOW..HIGH:N"`` (N evenly spaced values,
    default 5); or the whole ``"key=values"`` text.
    """
    b = Base(scenario, output)
    axes = []
    for spec in (x, y):
        key, raw = parse_axis(spec) if isinstance(spec, str) else spec
        var = var_for(key)
        b.check_live(var)
        axes.append((var, axis_values(var, raw)))
    (xv, xs), (yv, ys) = axes
    if xv.key == yv.key:
        raise SensitivityError(xv.key, "grid: x and y must be different inputs")
    if xs.size * ys.size > MAX_GRID_CELLS:
        raise SensitivityError("grid", f"{xs.size} x {ys.size} cells is more than "
                                       f"{MAX_GRID_CELLS:,}")
    gx, gy = np.meshgrid(xs, ys)  # shape (len(y), len(x))
    n = gx.size
    out = b.evaluate({xv.name: gx.ravel(), yv.name: gy.ravel()}, n)
    return Grid(b.output, b.unit, b.value, GridAxis(xv.key, xv.unit, xs),
                GridAxis(yv.key, yv.unit, ys), out.reshape(gx.shape).copy())
