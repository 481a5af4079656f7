"""The input-range mini-language of tornado ranges and grid axes.

- a range: ``LOW..HIGH`` (``"0.05..0.15 USD/kWh"``), or a pair of quantities
  ``["0.05 USD/kWh", "0.15 USD/kWh"]``;
- an axis: ``V1,V2,...`` (``"0.05,0.1,0.15 USD/kWh"``), ``LOW..HIGH:N`` (N evenly spaced
  values, default 5), or a sequence of quantities;
- bare numbers borrow the unit written last (``0.05..0.15 USD/kWh`` is two prices);
- on the command line each is prefixed by its key: ``electricity.price=0.05..0.15 USD/kWh``
  (:func:`parse_range`, :func:`parse_axis`).

Values are quantities in any unit of the input's dimension, converted to its canonical unit;
a value outside the input's valid range is an error.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .inputs import SensitivityError, Var, split_key

__all__ = ["parse_range", "parse_axis", "range_values", "axis_values"]

_NUMBER = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_NUMBER_UNIT = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*(.*?)\s*$")
DEFAULT_POINTS = "5"  # values of a LOW..HIGH axis without :N


def _borrow_unit(items: list[str]) -> list[str]:
    """``["0.05", "0.15 USD/kWh"]`` -> both in USD/kWh: bare numbers take the last item's
    unit."""
    m = _NUMBER_UNIT.fullmatch(items[-1]) if items else None
    unit = m.group(1) if m else ""
    if not unit:
        return items
    return [f"{i.strip()} {unit}" if _NUMBER.fullmatch(i) else i for i in items]


def parse_range(text: str) -> tuple[str, str]:
    """``"electricity.price=0.05 USD/kWh..0.15 USD/kWh"`` -> (key, ``"LOW..HIGH"``)."""
    key, rhs = split_key(text, "--range", "key=LOW..HIGH, e.g. "
                                          "'electricity.price=0.05 USD/kWh..0.15 USD/kWh'")
    if ".." not in rhs:
        raise SensitivityError(key, f"range: expected LOW..HIGH, got {rhs!r}")
    return key, rhs


def parse_axis(text: str) -> tuple[str, str]:
    """``"utilisation=0.5..1:6"`` or ``"electricity.price=0.05,0.1,0.15 USD/kWh"`` ->
    (key, values text)."""
    return split_key(text, "axis", "key=V1,V2,... or key=LOW..HIGH:N")


def _low_high(var: Var, low_raw: Any, high_raw: Any, what: str) -> tuple[float, float]:
    low, high = var.parse(low_raw, f"{what} low"), var.parse(high_raw, f"{what} high")
    if not low < high:
        raise SensitivityError(var.key, f"{what}: low {var.show(low)} must be below high "
                                        f"{var.show(high)}")
    return low, high


def range_values(var: Var, raw: Any) -> tuple[float, float]:
    """(low, high) [unit] from ``"LOW..HIGH [unit]"`` or a pair of quantities."""
    if isinstance(raw, str):
        low_text, sep, high_text = raw.partition("..")
        if not sep:
            raise SensitivityError(var.key, f"range: expected LOW..HIGH, got {raw!r}")
        low_raw, high_raw = _borrow_unit([low_text, high_text])
    else:
        try:
            if isinstance(raw, Mapping):  # one quantity, not a pair
                raise TypeError
            low_raw, high_raw = raw
        except (TypeError, ValueError):
            raise SensitivityError(var.key, f"range: expected 'LOW..HIGH' or [low, high], "
                                            f"got {raw!r}") from None
    return _low_high(var, low_raw, high_raw, "range")


def axis_values(var: Var, raw: Any) -> np.ndarray:
    """Values of a grid axis [unit] from ``"LOW..HIGH:N"``, ``"V1,V2"`` or a sequence."""
    if isinstance(raw, str):
        text = raw.strip()
        if ".." in text:
            return _spaced(var, text)
        items = _borrow_unit([t for t in text.split(",")])
    else:
        items = list(raw)
    if not items or any(isinstance(i, str) and not i.strip() for i in items):
        raise SensitivityError(var.key, f"grid: expected V1,V2,... or LOW..HIGH:N, got {raw!r}")
    return np.array([var.parse(i, "grid value") for i in items], dtype=float)


def _spaced(var: Var, text: str) -> np.ndarray:
    """``"LOW..HIGH:N"``: N evenly spaced values [unit]; a count's must be whole."""
    body, count = text, DEFAULT_POINTS
    head, colon, tail = text.rpartition(":")
    if colon:
        body, count = head, tail.strip()
    if not re.fullmatch(r"\d+", count) or int(count) < 2:
        raise SensitivityError(var.key, f"grid: the count after ':' must be a whole number "
                                        f"of at least 2, got {count!r}")
    low_text, _, high_text = body.partition("..")
    low, high = _low_high(var, *_borrow_unit([low_text, high_text]), "grid")
    values = np.linspace(low, high, int(count))
    if var.count:
        if not np.array_equal(values, np.round(values)):
            raise SensitivityError(var.key, f"grid: {text} does not give whole numbers; "
                                            f"choose the count so it does")
        values = np.round(values)
    return values
