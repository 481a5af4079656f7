"""Sensitivity and uncertainty: tornado, two-input grids and Monte Carlo over the declared
calculation.

Every analysis starts from a validated scenario's canonical inputs
(:meth:`Scenario.to_inputs`), moves the named inputs, and runs the chosen output step (default
``cost_per_mtok_total``) through ONE vectorized :class:`~costmodel.evaluate.Evaluator` call
(Monte Carlo: one call per chunk of :data:`CHUNK_SIZE` draws). Inputs are named by their dotted
scenario key (``electricity.price``); values are quantities in any unit of the input's
dimension (``"0.05 USD/kWh"``, ``"8.71 cent/kWh"``, ``0.7`` or ``"70 %"`` for fractions) and
are converted once to the input's canonical unit. Categorical inputs (``power.boundary``...)
are not varied here: set them with ``--set``.

Valid ranges are the scenario's own (:func:`costmodel.inputs.quantity_field`): nothing is
negative; utilisation, efficiencies and throughputs are above zero; fractions are at most 1
(the gross margin below 1); PUE is at least 1; node and rack counts are whole numbers >= 1.

- **Tornado**: each input alone to base x (1 -/+ swing), or across a range given for it;
  a default end that leaves the valid range is clipped to the bound (or, for a strict bound,
  kept at the base) and the bar's ``note`` says so. A range given explicitly must be valid.
- **Grid**: the output over the product of two lists of values; a value outside the valid
  range is an error.
- **Monte Carlo**: distributions ``uniform(low, high)``, ``triangular(low, mode, high)``,
  ``normal(mean, sd)`` and ``lognormal(median, gsd)``. The lognormal is parameterised by its
  **median** (a quantity in the input's unit) and its **geometric standard deviation** ``gsd``
  (a plain number > 1): ``ln X ~ Normal(ln median, ln gsd)``, so P16 ~ median / gsd and
  P84 ~ median x gsd.

  Out-of-range policy: a distribution is refused up front when more than
  :data:`OUTSIDE_TOLERANCE` (10^-6) of its probability lies outside the input's valid range
  (a normal electricity price that can go negative, a uniform utilisation up to 1.2), with an
  error naming the key and the share; ``truncate=True`` (``--truncate``) accepts it as the
  truncated distribution instead. In every case a draw outside the valid range is never
  evaluated: it is drawn again from the same distribution (rejection sampling), and the
  result reports how many draws each input had redrawn. Counts cannot take a distribution.

  Reproducibility: ``numpy.random.default_rng(seed)`` spawns one child stream per varied
  input, in the order given, so the same seed, distributions (same order) and draws give the
  same numbers, and the draws do not depend on the chunk size (unless draws were redrawn).
  Without a seed one is chosen at random and reported. All outputs are kept (8 bytes per
  draw: 80 MB for 10^7) so P10/P50/P90 are exact order statistics over every chunk
  (``numpy.percentile``, linear interpolation).

A key whose value the output does not read in this scenario (``accelerator.measured_power``
on the rated basis, ``electricity.carbon_intensity`` for a cost) is an error when named.
Where a per-kW throughput's ``normalised_by`` was left to its default (the accelerator's
rated power), varying ``accelerator.rated_power`` moves it too, as re-pricing the scenario
with ``--set accelerator.rated_power=...`` would.

Errors are :class:`SensitivityError` (an :class:`~costmodel.inputs.InputError`): one
readable line naming the key and what is wrong.
"""
from __future__ import annotations

import difflib
import math
import re
import secrets
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Callable, ClassVar, Iterable, Mapping

import numpy as np

from .declaration import BinOp, Choose, Compare, Name, Neg, Node, Num, Where
from .evaluate import Evaluator
from .inputs import InputError, Scenario, quantity_field
from .model import MODEL
from .results import quantity_json
from .units import UnitInputError, parse_quantity

__all__ = [
    "DEFAULT_OUTPUT", "CHUNK_SIZE", "MAX_DRAWS", "OUTSIDE_TOLERANCE", "SensitivityError",
    "tornado", "Tornado", "TornadoBar",
    "grid", "Grid", "GridAxis",
    "monte_carlo", "sample_inputs", "MonteCarlo",
    "Distribution", "Uniform", "Triangular", "Normal", "LogNormal",
    "parse_distribution", "parse_range", "parse_axis", "numeric_keys", "describe_input",
]

DEFAULT_OUTPUT = "cost_per_mtok_total"
CHUNK_SIZE = 1_000_000  # draws evaluated per Evaluator call
MAX_DRAWS = 100_000_000  # 800 MB of kept outputs
MAX_GRID_CELLS = 10_000_000
OUTSIDE_TOLERANCE = 1e-6  # share of a distribution allowed outside the valid range untruncated
MIN_INSIDE = 0.01  # a truncated distribution must keep at least this share of its draws
MAX_REDRAW_ROUNDS = 1000


class SensitivityError(InputError):
    """A sensitivity request that cannot be run; ``errors`` = [(key or option, message)]."""

    def __init__(self, where: str, message: str):
        super().__init__([(where, message)])


# ---- the inputs that can move ---------------------------------------------------------------

@dataclass(frozen=True)
class _Var:
    """A numeric input of the declaration and its valid range [unit]."""
    key: str
    name: str
    unit: str
    per: tuple[str, ...]
    lower: float
    lower_strict: bool
    upper: float | None
    upper_strict: bool
    count: bool

    def show(self, value: float) -> str:
        return _show(value, self.unit)

    def rule_low(self) -> str:
        if self.count:
            return "must be a whole number of at least 1"
        if self.lower_strict:
            return "must be greater than zero"
        return "must not be negative" if self.lower == 0 else f"must be at least {self.lower:g}"

    def rule_high(self) -> str:
        assert self.upper is not None
        return f"must be {'below' if self.upper_strict else 'at most'} {self.upper:g}"

    def violation(self, value: float) -> str | None:
        """Why ``value`` is outside the valid range, or None."""
        if self.count and (value != math.floor(value) or value < 1):
            return f"{self.rule_low()}, got {value:g}"
        if value < self.lower or (self.lower_strict and value == self.lower):
            return f"{self.rule_low()}, got {self.show(value)}"
        if self.upper is not None and (value > self.upper
                                       or (self.upper_strict and value == self.upper)):
            return f"{self.rule_high()}, got {self.show(value)}"
        return None

    def valid(self, x: np.ndarray) -> np.ndarray:
        ok = x > self.lower if self.lower_strict else x >= self.lower
        if self.upper is not None:
            ok &= x < self.upper if self.upper_strict else x <= self.upper
        return ok

    def parse(self, raw: Any, where: str, *, check: bool = True) -> float:
        """A quantity given for this input -> magnitude [unit]; SensitivityError if not."""
        try:
            value = parse_quantity(raw, self.unit, allow_negative=True, per=self.per)
        except UnitInputError as exc:
            raise SensitivityError(self.key, f"{where}: {exc}") from None
        if check:
            problem = self.violation(value)
            if problem:
                raise SensitivityError(self.key, f"{where}: {problem}")
        return value


def _show(value: float, unit: str) -> str:
    return f"{value:g}" if unit == "dimensionless" else f"{value:g} {unit}"


def _make_var(key: str, name: str, unit: str) -> _Var:
    meta = quantity_field(key)
    if meta is None:  # node.accelerators, rack.nodes: whole numbers >= 1
        return _Var(key, name, unit, (), 1.0, False, None, False, True)
    if meta.minimum is not None:
        lower, strict = meta.minimum, False
    else:
        lower, strict = 0.0, meta.positive
    return _Var(key, name, unit, meta.per, lower, strict, meta.maximum, meta.below_maximum,
                False)


_VARS: dict[str, _Var] = {i.key: _make_var(i.key, i.name, i.unit) for i in MODEL.inputs.values()}
_BY_NAME = {v.name: v for v in _VARS.values()}
_ENUMS = {e.key: e for e in MODEL.enums.values()} | {e.name: e for e in MODEL.enums.values()}


def numeric_keys() -> list[str]:
    """Dotted keys of every numeric input, in declaration order."""
    return list(_VARS)


def _var(key: str) -> _Var:
    key = key.strip()
    if key in _VARS:
        return _VARS[key]
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key in _ENUMS:
        e = _ENUMS[key]
        raise SensitivityError(e.key, f"is categorical ({', '.join(e.levels)}); it cannot "
                                      f"be varied here: set it with --set")
    close = difflib.get_close_matches(key, list(_VARS), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise SensitivityError(key or "(empty key)", f"not a numeric input of the calculation{hint}")


def _output(name: str) -> tuple[str, str]:
    """An output step by name (``cost_per_mtok_total``) or dotted (``cost_per_mtok.total``)."""
    name = name.strip()
    if name in MODEL.steps:
        return name, MODEL.steps[name].unit
    for s in MODEL.steps.values():
        if s.group and f"{s.group}.{s.member}" == name:
            return s.name, s.unit
    close = difflib.get_close_matches(name, list(MODEL.steps), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise SensitivityError("output", f"unknown output {name!r}{hint} (see `costmodel steps`)")


@lru_cache(maxsize=None)
def _evaluator(output: str) -> Evaluator:
    return Evaluator(MODEL, outputs=[output])


def _live_inputs(output: str, base: Mapping[str, Any]) -> set[str]:
    """Inputs the output reads given the scenario's categorical choices (a ``choose`` follows
    only its selected option; both sides of a ``where`` count)."""
    live: set[str] = set()
    seen: set[str] = set()

    def walk(node: Node) -> None:
        if isinstance(node, Name):
            if node.id in MODEL.inputs:
                live.add(node.id)
            elif node.id in MODEL.steps and node.id not in seen:
                seen.add(node.id)
                walk(MODEL.steps[node.id].tree)
        elif isinstance(node, (BinOp, Compare)):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, Neg):
            walk(node.operand)
        elif isinstance(node, Where):
            walk(node.condition)
            walk(node.if_true)
            walk(node.if_false)
        elif isinstance(node, Choose):
            walk(node.options[int(base[node.selector])])
        else:
            assert isinstance(node, Num)

    walk(Name(output))
    return live


class _Base:
    """The base scenario's inputs, its output, and what may move."""

    def __init__(self, scenario: Scenario, output: str):
        self.output, self.unit = _output(output)
        self.inputs = scenario.to_inputs()
        self.live = _live_inputs(self.output, self.inputs)
        op = scenario.operating_point
        # a per-kW figure normalised by the default (rated power) follows the rated power
        self.links: dict[str, tuple[str, ...]] = {}
        if op.throughput_per_kw is not None and op.normalised_by is None:
            self.links["accelerator_rated_power"] = ("operating_point_normalised_by",)
        self.value = float(_evaluator(self.output)(self.inputs)[self.output])

    def check_live(self, var: _Var) -> None:
        if var.name not in self.live:
            raise SensitivityError(var.key, f"does not affect {self.output} in this scenario")

    def base_of(self, var: _Var) -> float:
        return float(self.inputs[var.name])

    def env(self, varied: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """The base inputs with ``varied`` (input name -> array) and their links."""
        env = dict(self.inputs)
        for name, values in varied.items():
            for linked in self.links.get(name, ()):
                if linked not in varied:
                    env[linked] = values
        env.update(varied)
        return env

    def evaluate(self, varied: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        out = _evaluator(self.output)(self.env(varied))[self.output]
        return np.broadcast_to(np.asarray(out, dtype=float), (n,))


# ---- parsing helpers --------------------------------------------------------------------------

_NUMBER = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_NUMBER_UNIT = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*(.*?)\s*$")


def _borrow_unit(items: list[str]) -> list[str]:
    """``["0.05", "0.15 USD/kWh"]`` -> both in USD/kWh: bare numbers take the last item's
    unit (a convenience of range and list syntax)."""
    m = _NUMBER_UNIT.fullmatch(items[-1]) if items else None
    unit = m.group(1) if m else ""
    if not unit:
        return items
    return [f"{i.strip()} {unit}" if _NUMBER.fullmatch(i) else i for i in items]


def _split_key(text: str, what: str, example: str) -> tuple[str, str]:
    key, sep, rhs = str(text).partition("=")
    if not sep or not key.strip() or not rhs.strip():
        raise SensitivityError(what, f"expected {example}, got {text!r}")
    return key.strip(), rhs.strip()


def parse_range(text: str) -> tuple[str, str]:
    """``"electricity.price=0.05 USD/kWh..0.15 USD/kWh"`` -> (key, ``"LOW..HIGH"``)."""
    key, rhs = _split_key(text, "--range", "key=LOW..HIGH, e.g. "
                                           "'electricity.price=0.05 USD/kWh..0.15 USD/kWh'")
    if ".." not in rhs:
        raise SensitivityError(key, f"range: expected LOW..HIGH, got {rhs!r}")
    return key, rhs


def parse_axis(text: str) -> tuple[str, str]:
    """``"utilisation=0.5..1:6"`` or ``"electricity.price=0.05,0.1,0.15 USD/kWh"`` ->
    (key, values text)."""
    key, rhs = _split_key(text, "axis", "key=V1,V2,... or key=LOW..HIGH:N")
    return key, rhs


def _range_values(var: _Var, raw: Any) -> tuple[float, float]:
    if isinstance(raw, str):
        low_text, sep, high_text = raw.partition("..")
        if not sep:
            raise SensitivityError(var.key, f"range: expected LOW..HIGH, got {raw!r}")
        low_raw, high_raw = _borrow_unit([low_text, high_text])
    else:
        try:
            low_raw, high_raw = raw
        except (TypeError, ValueError):
            raise SensitivityError(var.key, f"range: expected (low, high), got {raw!r}") \
                from None
    low, high = var.parse(low_raw, "range low"), var.parse(high_raw, "range high")
    if not low < high:
        raise SensitivityError(var.key, f"range: low {var.show(low)} must be below high "
                                        f"{var.show(high)}")
    return low, high


def _axis_values(var: _Var, raw: Any) -> np.ndarray:
    """Values of a grid axis [unit] from ``"LOW..HIGH:N"``, ``"V1,V2"`` or a sequence."""
    if isinstance(raw, str):
        text = raw.strip()
        if ".." in text:
            body, count = text, "5"
            head, colon, tail = text.rpartition(":")
            if colon:
                body, count = head, tail.strip()
            if not re.fullmatch(r"\d+", count) or int(count) < 2:
                raise SensitivityError(var.key, f"grid: the count after ':' must be a whole "
                                                f"number of at least 2, got {count!r}")
            low_text, _, high_text = body.partition("..")
            low_raw, high_raw = _borrow_unit([low_text, high_text])
            low, high = var.parse(low_raw, "grid low"), var.parse(high_raw, "grid high")
            if not low < high:
                raise SensitivityError(var.key, f"grid: low {var.show(low)} must be below "
                                                f"high {var.show(high)}")
            values = np.linspace(low, high, int(count))
            if var.count:
                if not np.array_equal(values, np.round(values)):
                    raise SensitivityError(var.key, f"grid: {text} does not give whole "
                                                    f"numbers; choose the count so it does")
                values = np.round(values)
            return values
        items = _borrow_unit([t for t in text.split(",")])
    else:
        items = list(raw)
    if not items or any(isinstance(i, str) and not i.strip() for i in items):
        raise SensitivityError(var.key, f"grid: expected V1,V2,... or LOW..HIGH:N, got {raw!r}")
    return np.array([var.parse(i, "grid value") for i in items], dtype=float)


# ---- tornado ----------------------------------------------------------------------------------

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


def _default_ends(var: _Var, base: float, swing: float) -> tuple[float, float, str | None]:
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


def tornado(scenario: Scenario, *, inputs: Iterable[str] | None = None,
            ranges: Mapping[str, Any] | None = None, output: str = DEFAULT_OUTPUT,
            default_swing: float = 0.20) -> Tornado:
    """Move each input alone across its range and rank the inputs by the output's swing.

    ``inputs``: dotted keys (default: every numeric input the output reads in this scenario
    whose base value is present and nonzero, counts excluded); ``ranges``: key -> ``"LOW..HIGH"``
    or ``(low, high)`` quantities in the input's dimension (a key given a range is included
    even if not in ``inputs``); others move to base x (1 -/+ ``default_swing``).
    One evaluator call computes every bar.
    """
    if isinstance(default_swing, bool) or not isinstance(default_swing, (int, float)) \
            or not 0 < default_swing <= 1:
        raise SensitivityError("swing", f"must be a fraction in (0, 1], got {default_swing!r}")
    b = _Base(scenario, output)
    if not math.isfinite(b.value):
        raise SensitivityError("output", f"{b.output} has no value in this scenario (an input "
                                         f"it needs is absent)")
    given = {}
    for key, raw in (ranges or {}).items():
        var = _var(key)
        given[var.key] = _range_values(var, raw)
    if inputs is None:
        chosen = [v for v in _VARS.values()
                  if not v.count and v.name in b.live and math.isfinite(b.base_of(v))
                  and b.base_of(v) != 0]
    else:
        chosen = [_var(k) for k in inputs]
    chosen += [_VARS[k] for k in given]
    order: dict[str, _Var] = {}
    for v in chosen:
        order.setdefault(v.key, v)
    if not order:
        raise SensitivityError("inputs", "nothing to vary")
    rows: list[tuple[_Var, float, float, float, str | None]] = []
    for var in order.values():
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


# ---- grid -------------------------------------------------------------------------------------

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
    b = _Base(scenario, output)
    axes = []
    for spec in (x, y):
        key, raw = parse_axis(spec) if isinstance(spec, str) else spec
        var = _var(key)
        b.check_live(var)
        axes.append((var, _axis_values(var, raw)))
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


# ---- distributions ----------------------------------------------------------------------------

class Distribution:
    """A distribution of one input. Parameters are quantities in the input's dimension
    (``"0.05 USD/kWh"``, or plain numbers for fractions), except the lognormal's ``gsd``."""
    kind: ClassVar[str]
    shape_params: ClassVar[tuple[str, ...]] = ()  # plain numbers, not in the input's unit

    def __str__(self) -> str:
        args = ", ".join(str(getattr(self, f.name)) for f in fields(self))  # type: ignore
        return f"{self.kind}({args})"

    def _resolve(self, var: _Var) -> "_Resolved":
        values: dict[str, float] = {}
        for f in fields(self):  # type: ignore[arg-type]
            raw = getattr(self, f.name)
            where = f"{self.kind} {f.name}"
            if f.name in self.shape_params:
                try:
                    values[f.name] = parse_quantity(raw, "dimensionless")
                except UnitInputError as exc:
                    raise SensitivityError(var.key, f"{where}: {exc}") from None
            else:
                values[f.name] = var.parse(raw, where, check=False)
        problem = self._check(values, var)
        if problem:
            raise SensitivityError(var.key, f"{self}: {problem}")
        return _Resolved(self, var, values)

    def _check(self, p: dict[str, float], var: _Var) -> str | None:
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(Distribution):
    low: Any
    high: Any
    kind: ClassVar[str] = "uniform"

    def _check(self, p, var):
        return None if p["low"] < p["high"] else "low must be below high"


@dataclass(frozen=True)
class Triangular(Distribution):
    low: Any
    mode: Any
    high: Any
    kind: ClassVar[str] = "triangular"

    def _check(self, p, var):
        if not p["low"] < p["high"]:
            return "low must be below high"
        if not p["low"] <= p["mode"] <= p["high"]:
            return "mode must lie between low and high"
        return None


@dataclass(frozen=True)
class Normal(Distribution):
    mean: Any
    sd: Any
    kind: ClassVar[str] = "normal"

    def _check(self, p, var):
        return None if p["sd"] > 0 else "sd must be greater than zero"


@dataclass(frozen=True)
class LogNormal(Distribution):
    """``ln X ~ Normal(ln median, ln gsd)``: ``median`` in the input's unit, ``gsd`` (the
    geometric standard deviation) a plain number above 1."""
    median: Any
    gsd: Any
    kind: ClassVar[str] = "lognormal"
    shape_params: ClassVar[tuple[str, ...]] = ("gsd",)

    def _check(self, p, var):
        if not p["median"] > 0:
            return "median must be greater than zero"
        return None if p["gsd"] > 1 else "gsd (geometric standard deviation) must be above 1"


_KINDS: dict[str, type[Distribution]] = {c.kind: c for c in (Uniform, Triangular, Normal,
                                                              LogNormal)}
_USAGE = ("uniform(low, high), triangular(low, mode, high), normal(mean, sd) or "
          "lognormal(median, gsd)")
_CALL = re.compile(r"\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)


def _distribution(text: str, key: str) -> Distribution:
    m = _CALL.fullmatch(text)
    if not m:
        raise SensitivityError(key, f"expected a distribution such as {_USAGE}, got {text!r}")
    kind, body = m.group(1).lower(), m.group(2)
    cls = _KINDS.get(kind)
    if cls is None:
        raise SensitivityError(key, f"unknown distribution {m.group(1)!r}; use {_USAGE}")
    args = [a.strip() for a in body.split(",")]
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    if len(args) != len(names) or not all(args):
        raise SensitivityError(key, f"{kind} takes {len(names)} parameters "
                                    f"({', '.join(names)}), got {text.strip()!r}")
    return cls(*args)


def parse_distribution(text: str) -> tuple[str, Distribution]:
    """``"electricity.price=uniform(0.05 USD/kWh, 0.15 USD/kWh)"`` -> (key, Uniform(...))."""
    key, rhs = _split_key(text, "--dist", "key=DISTRIBUTION, e.g. "
                                          "'electricity.price=uniform(0.05 USD/kWh, "
                                          "0.15 USD/kWh)'")
    return key, _distribution(rhs, key)


def _normal_cdf(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


class _Resolved:
    """A distribution in canonical magnitudes [the input's unit]: sampling and its CDF."""

    def __init__(self, spec: Distribution, var: _Var, p: dict[str, float]):
        self.spec, self.var, self.p = spec, var, p

    def cdf(self, x: float) -> float:
        p, kind = self.p, self.spec.kind
        if kind == "uniform":
            return min(1.0, max(0.0, (x - p["low"]) / (p["high"] - p["low"])))
        if kind == "triangular":
            a, c, b = p["low"], p["mode"], p["high"]
            if x <= a:
                return 0.0
            if x >= b:
                return 1.0
            if x <= c:
                return (x - a) ** 2 / ((b - a) * (c - a))
            return 1 - (b - x) ** 2 / ((b - a) * (b - c))
        if kind == "normal":
            return _normal_cdf((x - p["mean"]) / p["sd"])
        if x <= 0:  # lognormal
            return 0.0
        return _normal_cdf(math.log(x / p["median"]) / math.log(p["gsd"]))

    def outside(self) -> float:
        """Probability of a draw outside the input's valid range."""
        var = self.var
        share = self.cdf(var.lower)
        if var.upper is not None:
            share += 1 - self.cdf(var.upper)
        return max(0.0, share)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        p, kind = self.p, self.spec.kind
        if kind == "uniform":
            return rng.uniform(p["low"], p["high"], n)
        if kind == "triangular":
            return rng.triangular(p["low"], p["mode"], p["high"], n)
        if kind == "normal":
            return rng.normal(p["mean"], p["sd"], n)
        return rng.lognormal(math.log(p["median"]), math.log(p["gsd"]), n)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.spec.kind, "text": str(self.spec)}
        for name, value in self.p.items():
            out[name] = value if name in self.spec.shape_params else \
                quantity_json(value, self.var.unit)
        return out


class _Sampler:
    """Validated distributions with one random stream each; draws chunk after chunk."""

    def __init__(self, b: _Base, distributions: Mapping[str, Distribution | str],
                 seed: int | None, truncate: bool):
        if not distributions:
            raise SensitivityError("--dist", "give at least one distribution")
        if seed is None:
            seed = secrets.randbits(32)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise SensitivityError("seed", f"must be a whole number >= 0, got {seed!r}")
        self.seed = int(seed)
        self.items: list[_Resolved] = []
        seen: set[str] = set()
        for key, spec in distributions.items():
            var = _var(key)
            if var.key in seen:
                raise SensitivityError(var.key, "given more than one distribution")
            seen.add(var.key)
            if var.count:
                raise SensitivityError(var.key, "is a whole-number count; a continuous "
                                                "distribution cannot vary it (use a grid)")
            b.check_live(var)
            if isinstance(spec, str):
                spec = _distribution(spec, var.key)
            if not isinstance(spec, Distribution):
                raise SensitivityError(var.key, f"expected a distribution, got {spec!r}")
            resolved = spec._resolve(var)
            share = resolved.outside()
            if share > OUTSIDE_TOLERANCE and not truncate:
                raise SensitivityError(var.key, f"{spec} puts {_share(share)} of its draws "
                                                f"outside the valid range ({_rules(var)}); "
                                                f"narrow it, or accept truncation "
                                                f"(--truncate), which draws them again")
            if 1 - share < MIN_INSIDE:
                raise SensitivityError(var.key, f"{spec} puts {_share(share)} of its draws "
                                                f"outside the valid range ({_rules(var)}); "
                                                f"too little is left to truncate")
            self.items.append(resolved)
        self.rngs = np.random.default_rng(self.seed).spawn(len(self.items))
        self.redrawn = {r.var.key: 0 for r in self.items}

    def draw(self, n: int) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for r, rng in zip(self.items, self.rngs, strict=True):
            x = r.sample(rng, n)
            bad = np.flatnonzero(~r.var.valid(x))
            rounds = 0
            while bad.size:
                self.redrawn[r.var.key] += int(bad.size)
                rounds += 1
                if rounds > MAX_REDRAW_ROUNDS:
                    raise SensitivityError(r.var.key, f"{r.spec}: could not draw values inside "
                                                      f"the valid range ({_rules(r.var)})")
                x[bad] = r.sample(rng, bad.size)
                bad = bad[~r.var.valid(x[bad])]
            out[r.var.name] = x
        return out


def _share(p: float) -> str:
    return f"{p:.3g}" if p < 1e-4 else f"{p:.2%}"


def _rules(var: _Var) -> str:
    rule = var.rule_low()
    if var.upper is not None:
        rule += " and " + var.rule_high().removeprefix("must be ")
    return f"{var.key} {rule}"


def sample_inputs(scenario: Scenario, distributions: Mapping[str, Distribution | str], *,
                  draws: int, seed: int | None = None, truncate: bool = False,
                  output: str = DEFAULT_OUTPUT) -> tuple[dict[str, Any], dict[str, int]]:
    """The evaluator inputs of ``draws`` Monte Carlo draws in one batch (the base scenario
    with the varied inputs as arrays [canonical units]) and the redrawn count per key; the
    same draws :func:`monte_carlo` evaluates for this seed when it runs in one chunk."""
    b = _Base(scenario, output)
    sampler = _Sampler(b, distributions, seed, truncate)
    return b.env(sampler.draw(_check_draws(draws))), dict(sampler.redrawn)


def _check_draws(draws: Any) -> int:
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) \
            or not 1 <= draws <= MAX_DRAWS:
        raise SensitivityError("draws", f"must be a whole number from 1 to {MAX_DRAWS:,}, "
                                        f"got {draws!r}")
    return int(draws)


# ---- Monte Carlo ------------------------------------------------------------------------------

@dataclass(frozen=True)
class MonteCarlo:
    """Summary of the output over every draw [unit]; ``edges`` has ``len(counts) + 1``."""
    output: str
    unit: str
    base: float
    draws: int
    seed: int
    p10: float
    p50: float
    p90: float
    mean: float
    std: float
    min: float
    max: float
    edges: np.ndarray
    counts: np.ndarray
    redrawn: dict[str, int]  # per key: draws outside the valid range, drawn again
    nonfinite: int  # outputs that were not finite numbers (left out of the statistics)
    truncate: bool
    distributions: dict[str, dict[str, Any]]  # key -> {"kind", "text", parameters}

    def to_json(self) -> dict[str, Any]:
        q = quantity_json
        return {"output": self.output, "unit": self.unit,
                "p10": q(self.p10, self.unit), "p50": q(self.p50, self.unit),
                "p90": q(self.p90, self.unit), "mean": q(self.mean, self.unit),
                "std": q(self.std, self.unit), "min": q(self.min, self.unit),
                "max": q(self.max, self.unit), "base": q(self.base, self.unit),
                "draws": self.draws, "seed": self.seed, "truncate": self.truncate,
                "redrawn": dict(self.redrawn), "nonfinite": self.nonfinite,
                "distributions": self.distributions,
                "histogram": {"unit": self.unit, "edges": [float(e) for e in self.edges],
                              "counts": [int(c) for c in self.counts]}}


def monte_carlo(scenario: Scenario, distributions: Mapping[str, Distribution | str], *,
                draws: int = 1_000_000, seed: int | None = None,
                output: str = DEFAULT_OUTPUT, bins: int = 50, truncate: bool = False,
                chunk_size: int = CHUNK_SIZE,
                progress: Callable[[int, int], None] | None = None) -> MonteCarlo:
    """Draw the inputs in ``distributions`` (key -> :class:`Distribution` or its text, e.g.
    ``"uniform(0.05 USD/kWh, 0.15 USD/kWh)"``), evaluate the output for every draw and
    summarise: P10/P50/P90, mean, std, min, max and a ``bins``-bin histogram [output unit].

    Evaluated in chunks of ``chunk_size`` draws, one evaluator call each; ``progress(done,
    total)`` is called after every chunk. See the module docstring for the out-of-range
    policy (``truncate``) and reproducibility (``seed``).
    """
    draws = _check_draws(draws)
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= 10_000:
        raise SensitivityError("bins", f"must be a whole number from 1 to 10,000, got {bins!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise SensitivityError("chunk_size", f"must be a whole number >= 1, got {chunk_size!r}")
    b = _Base(scenario, output)
    sampler = _Sampler(b, distributions, seed, truncate)
    outputs = np.empty(draws)
    done = 0
    while done < draws:
        n = min(chunk_size, draws - done)
        outputs[done:done + n] = b.evaluate(sampler.draw(n), n)
        done += n
        if progress is not None:
            progress(done, draws)
    finite = np.isfinite(outputs)
    nonfinite = int(draws - np.count_nonzero(finite))
    values = outputs if nonfinite == 0 else outputs[finite]
    if values.size == 0:
        raise SensitivityError("output", f"{b.output} has no value for any draw in this "
                                         f"scenario (an input it needs is absent)")
    p10, p50, p90 = np.percentile(values, [10, 50, 90])
    counts, edges = np.histogram(values, bins=bins)
    return MonteCarlo(b.output, b.unit, b.value, draws, sampler.seed, float(p10), float(p50),
                      float(p90), float(values.mean()), float(values.std()),
                      float(values.min()), float(values.max()), edges, counts,
                      dict(sampler.redrawn), nonfinite, bool(truncate),
                      {r.var.key: r.to_json() for r in sampler.items})


def describe_input(key: str) -> tuple[str, str]:
    """(dotted key, canonical unit) of a numeric input; SensitivityError if it is not one."""
    var = _var(key)
    return var.key, var.unit

