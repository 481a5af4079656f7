"""Distributions of one input for Monte Carlo: ``uniform(low, high)``, ``triangular(low,
mode, high)``, ``normal(mean, sd)`` and ``lognormal(median, gsd)``.

Parameters are quantities in the input's dimension (``"0.05 USD/kWh"``, plain numbers for
fractions), except shape parameters. The lognormal is parameterised by its **median** (a
quantity in the input's unit) and its **geometric standard deviation** ``gsd`` (a plain
number > 1): ``ln X ~ Normal(ln median, ln gsd)``, so P16 ~ median / gsd and P84 ~ median x
gsd.

A distribution as written holds the parameters as given; :meth:`Distribution.in_unit` gives
the same distribution in magnitudes of an input's unit, which can :meth:`~Distribution.draw`
and tell its :meth:`~Distribution.share_outside` a range.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from ...model.results import quantity_json
from ...model.units import UnitInputError, parse_quantity
from .inputs import SensitivityError, Var, split_key

__all__ = ["Distribution", "Uniform", "Triangular", "Normal", "LogNormal",
           "parse_distribution", "distribution_from_text"]


@dataclass(frozen=True)
class Distribution:
    """A distribution of one input; subclasses hold its parameters as dataclass fields."""
    kind: ClassVar[str]
    shape_params: ClassVar[tuple[str, ...]] = ()  # plain numbers, not in the input's unit
    # the text as first written, kept by in_unit() for messages and JSON
    written: str | None = field(default=None, kw_only=True, repr=False, compare=False)

    @classmethod
    def params(cls) -> tuple[str, ...]:
        """Names of the parameters, in the order they are written."""
        return tuple(f.name for f in fields(cls) if not f.kw_only)  # type: ignore[arg-type]

    @property
    def text(self) -> str:
        """``uniform(0.05 USD/kWh, 0.15 USD/kWh)``: the distribution as written."""
        if self.written is not None:
            return self.written
        return f"{self.kind}({', '.join(str(getattr(self, p)) for p in self.params())})"

    def __str__(self) -> str:
        return self.text

    def in_unit(self, var: Var) -> Distribution:
        """This distribution with every parameter a magnitude [``var.unit``] (shape
        parameters plain numbers); SensitivityError naming the key if a parameter is not a
        quantity of the input's dimension or the parameters do not make a distribution."""
        values: dict[str, float] = {}
        for name in self.params():
            raw, where = getattr(self, name), f"{self.kind} {name}"
            if name in self.shape_params:
                try:
                    values[name] = parse_quantity(raw, "dimensionless")
                except UnitInputError as exc:
                    raise SensitivityError(var.key, f"{where}: {exc}") from None
            else:
                values[name] = var.parse(raw, where, check=False)
        resolved = replace(self, written=self.text, **values)
        problem = resolved.problem()
        if problem:
            raise SensitivityError(var.key, f"{self}: {problem}")
        return resolved

    # the methods below need magnitudes: call them on in_unit()'s result
    def problem(self) -> str | None:
        """Why the parameters do not make a distribution, or None."""
        raise NotImplementedError

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent draws [unit]."""
        raise NotImplementedError

    def cdf(self, x: float) -> float:
        """P(X <= x), ``x`` [unit]."""
        raise NotImplementedError

    def share_outside(self, low: float, high: float | None) -> float:
        """Probability of a draw below ``low`` or above ``high`` [unit] (None: no upper
        bound)."""
        share = self.cdf(low)
        if high is not None:
            share += 1 - self.cdf(high)
        return max(0.0, share)

    def to_json(self, unit: str) -> dict[str, Any]:
        """``{"kind", "text", parameter: {"value", "unit"} (shape parameters: numbers)}``."""
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        for name in self.params():
            value = getattr(self, name)
            out[name] = value if name in self.shape_params else quantity_json(value, unit)
        return out


def _normal_cdf(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


@dataclass(frozen=True)
class Uniform(Distribution):
    low: Any
    high: Any
    kind: ClassVar[str] = "uniform"

    def problem(self) -> str | None:
        return None if self.low < self.high else "low must be below high"

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, n)

    def cdf(self, x: float) -> float:
        return min(1.0, max(0.0, (x - self.low) / (self.high - self.low)))


@dataclass(frozen=True)
class Triangular(Distribution):
    low: Any
    mode: Any
    high: Any
    kind: ClassVar[str] = "triangular"

    def problem(self) -> str | None:
        if not self.low < self.high:
            return "low must be below high"
        if not self.low <= self.mode <= self.high:
            return "mode must lie between low and high"
        return None

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.triangular(self.low, self.mode, self.high, n)

    def cdf(self, x: float) -> float:
        a, c, b = self.low, self.mode, self.high
        if x <= a:
            return 0.0
        if x >= b:
            return 1.0
        if x <= c:
            return (x - a) ** 2 / ((b - a) * (c - a))
        return 1 - (b - x) ** 2 / ((b - a) * (b - c))


@dataclass(frozen=True)
class Normal(Distribution):
    mean: Any
    sd: Any
    kind: ClassVar[str] = "normal"

    def problem(self) -> str | None:
        return None if self.sd > 0 else "sd must be greater than zero"

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.normal(self.mean, self.sd, n)

    def cdf(self, x: float) -> float:
        return _normal_cdf((x - self.mean) / self.sd)


@dataclass(frozen=True)
class LogNormal(Distribution):
    """``ln X ~ Normal(ln median, ln gsd)``: ``median`` in the input's unit, ``gsd`` (the
    geometric standard deviation) a plain number above 1."""
    median: Any
    gsd: Any
    kind: ClassVar[str] = "lognormal"
    shape_params: ClassVar[tuple[str, ...]] = ("gsd",)

    def problem(self) -> str | None:
        if not self.median > 0:
            return "median must be greater than zero"
        return None if self.gsd > 1 else "gsd (geometric standard deviation) must be above 1"

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.lognormal(math.log(self.median), math.log(self.gsd), n)

    def cdf(self, x: float) -> float:
        if x <= 0:
            return 0.0
        return _normal_cdf(math.log(x / self.median) / math.log(self.gsd))


_KINDS: dict[str, type[Distribution]] = {c.kind: c for c in (Uniform, Triangular, Normal,
                                                              LogNormal)}
_USAGE = ("uniform(low, high), triangular(low, mode, high), normal(mean, sd) or "
          "lognormal(median, gsd)")
_CALL = re.compile(r"\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)


def distribution_from_text(text: str, key: str) -> Distribution:
    """``"uniform(0.05 USD/kWh, 0.15 USD/kWh)"`` -> Uniform(...); errors name ``key``."""
    m = _CALL.fullmatch(text)
    if not m:
        raise SensitivityError(key, f"expected a distribution such as {_USAGE}, got {text!r}")
    kind, body = m.group(1).lower(), m.group(2)
    cls = _KINDS.get(kind)
    if cls is None:
        raise SensitivityError(key, f"unknown distribution {m.group(1)!r}; use {_USAGE}")
    args = [a.strip() for a in body.split(",")]
    names = cls.params()
    if len(args) != len(names) or not all(args):
        raise SensitivityError(key, f"{kind} takes {len(names)} parameters "
                                    f"({', '.join(names)}), got {text.strip()!r}")
    return cls(*args)


def parse_distribution(text: str) -> tuple[str, Distribution]:
    """``"electricity.price=uniform(0.05 USD/kWh, 0.15 USD/kWh)"`` -> (key, Uniform(...))."""
    key, rhs = split_key(text, "--dist", "key=DISTRIBUTION, e.g. "
                                         "'electricity.price=uniform(0.05 USD/kWh, "
                                         "0.15 USD/kWh)'")
    return key, distribution_from_text(rhs, key)
