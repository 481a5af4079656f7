"""Columnar batch pricing: one base scenario, up to a million rows given as columns of
numbers, each column one numeric input in one unit.

A catalog repriced nightly sends columns, not rows: ``electricity.price`` in USD/kWh as an
array of numbers, ``utilisation`` as another. Each column is checked once (a numeric input of
the calculation that the base scenario gives, a unit of its dimension, converted with the
factor ``POST /price`` would use for that unit), its values all at once (numbers, finite,
within the input's valid range), and every row is evaluated in one call of the vectorised
evaluator (:func:`~costmodel.app.engine.price_rows`). A bad column refuses the request
(nothing is priced) with the column named; a row whose figures are not finite or beyond the
bound any result may be is null and listed in ``errors``.

A row means what ``POST /price`` means for the base with the row's values as overrides
(``{"electricity.price": {"value": v, "unit": "USD/kWh"}}``); so that it does, up to
:data:`SAMPLES` rows (the first, the middle, the last) are also priced alone, the ordinary way,
and compared with the vectorised figures (rel :data:`~costmodel.app.batch.REL`): a sample that
does not price alone, or prices otherwise, refuses the columns with its reason (a utilisation
column against a load shape, say).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..decisions.sensitivity.base import DEFAULT_OUTPUT, Base
from ..decisions.sensitivity.inputs import VARS, Var
from ..model.errors import InputError, UnknownKey
from ..model.results import BOUNDED, MAX_COST_PER_MTOK, MUST_BE_FINITE, Result
from ..model.steps import MODEL
from ..model.units import BARE_NUMBER_UNITS, UnitInputError, exchange_rates, parse_quantity
from .batch import REL, RowError, movable, output_step, resolved
from .build import known_key
from .context import Context
from .engine import Priced, price_rows
from .hints import with_hint
from .pricing import price
from .specs import Override, ScenarioSpec

__all__ = ["Column", "ColumnBatch", "price_columns", "MAX_COLUMN_ROWS", "MAX_CELLS",
           "HEAVY_ROWS", "SAMPLES", "MAX_COLUMNS", "MAX_LISTED"]

MAX_COLUMN_ROWS = 1_000_000  # rows of one columnar batch
MAX_COLUMNS = len(VARS)  # every numeric input at most once
# float64 cells of one request, rows x (columns + outputs): 128 MB of arrays, about what the
# evaluator then needs again for its steps
MAX_CELLS = 16_000_000
HEAVY_ROWS = 10_000  # a columnar batch of more rows holds a heavy slot (the row form's bound)
SAMPLES = 3  # rows priced alone to check the vectorised figures: the first, middle and last
# rows without figures listed in ``errors`` (with their reason), the rest counted: an answer
# stays bounded when most of a million rows overflow
MAX_LISTED = 1_000
ALONE_KEYS = frozenset(("money.rate",))  # inputs no column may hold: set in the scenario


@dataclass(frozen=True)
class Column:
    """One column as a request gives it: the input's dotted ``key``, the ``unit`` its values
    are in (as written: ``USD/kWh``, ``%``; empty for a plain number) and ``values`` [unit]:
    a float64 array, or an int64 array (whole numbers: what a count column takes)."""
    key: str
    unit: str
    values: np.ndarray


@dataclass
class ColumnBatch:
    """Figures of every row [each output's unit], NaN where a row has none, and the first
    :data:`MAX_LISTED` such rows' errors; the base's disclosure, shared by every row, and what
    each column replaces in its sources."""
    outputs: list[str]
    steps: list[str]
    units: list[str]
    values: dict[str, np.ndarray]  # by output name as asked
    priced: np.ndarray  # bool, per row
    errors: list[RowError]
    shared: Result
    sources: dict[str, str | None]  # source key -> what the columns make it (None: gone)

    @property
    def rows(self) -> int:
        return len(self.priced)

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON data, in the row form's shape (NaN figures: null, as orjson
        writes them), with ``sources`` for the whole batch in place of each row's
        ``provenance``."""
        return {
            "outputs": self.outputs, "rows": self.rows, "priced": int(self.priced.sum()),
            "columns": {name: {"unit": unit, "values": self.values[name]}
                        for name, unit in zip(self.outputs, self.units, strict=True)},
            "errors": [{"row": e.row, "path": e.path, "message": e.detail, "detail": e.detail}
                       for e in self.errors],
            "errors_unlisted": self.rows - int(self.priced.sum()) - len(self.errors),
            "disclosure": self.shared.disclosure(),
            "sources": self.sources,
        }


def _refuse(key: str, message: str) -> InputError:
    return InputError([(f"columns.{key}", message)])


def _factor(var: Var, unit: str, rates: Mapping[str, float]) -> float:
    """The factor from ``unit`` to the input's canonical unit [var.unit per unit]: the one
    ``POST /price`` multiplies a value in that unit by."""
    if not unit.strip():
        if var.unit not in BARE_NUMBER_UNITS and not var.count:
            raise ValueError(f"needs a unit (e.g. {var.unit!r})")
        return 1.0
    if var.count:
        raise ValueError("a count takes no unit: give whole numbers, unit \"\"")
    with exchange_rates(rates):
        return parse_quantity({"value": 1.0, "unit": unit}, var.unit, allow_negative=True,
                              per=var.bounds.per)


def _out_of_range(var: Var, x: np.ndarray) -> str | None:
    """Why values of ``x`` [var.unit] are outside the input's valid range: the first, and
    how many more; None when every one is valid."""
    bad = ~var.valid(x)
    if var.count:
        bad |= x != np.floor(x)
    if not bad.any():
        return None
    where = np.flatnonzero(bad)
    first = int(where[0])
    rest = len(where) - 1
    more = f" ({rest:,} more row{'s' if rest > 1 else ''} out of range)" if rest else ""
    return f"values[{first}]: {var.violation(float(x[first]))}{more}"


def _converted(var: Var, column: Column, rates: Mapping[str, float]) -> np.ndarray:
    """The column's values in the input's canonical unit [var.unit], each as ``POST /price``
    reads it; InputError at ``columns.<key>`` for a bad unit or value."""
    key, values = column.key, column.values
    try:
        factor = _factor(var, column.unit, rates)
    except (UnitInputError, ValueError) as exc:
        raise _refuse(key, f"unit {column.unit!r}: {exc}") from None
    if var.count:
        if values.dtype.kind not in "iu":
            raise _refuse(key, "must hold whole numbers (integers): a count")
        return values.astype(float)
    x = values.astype(float, copy=False)
    # (a finite sum: every value finite; a sum that overflows: each value is looked at)
    if not math.isfinite(_sum(x)):
        bad = np.flatnonzero(~np.isfinite(x))
        if len(bad):
            first = int(bad[0])
            raise _refuse(key, f"values[{first}]: must be a finite number, got {x[first]}")
    # (a value times its unit's factor: the one multiplication /price makes, the same bits;
    # the evaluator only reads its inputs)
    return x * factor if factor != 1.0 else x


def _sum(x: np.ndarray) -> float:
    """The sum of ``x``; inf or NaN, without a warning, when it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.sum(x))


def _sample_rows(ok: np.ndarray) -> list[int]:
    n = len(ok)
    picked = dict.fromkeys(i for i in (0, n // 2, n - 1) if ok[i])
    return list(picked)[:SAMPLES]


def price_columns(ctx: Context, spec: ScenarioSpec, columns: Sequence[Column],
                  outputs: Sequence[str] = (DEFAULT_OUTPUT,), *,
                  heavy: Callable[[], AbstractContextManager] | None = None) -> ColumnBatch:
    """Price ``spec`` once a row of ``columns`` for ``outputs`` (step names or dotted).
    Raises :class:`InputError` for the request (a bad column at ``columns.<key>``, an unknown
    output, too many rows or cells, a base that does not price alone); a row whose figures are
    not finite or out of bounds is in the batch's ``errors``. ``heavy``: entered (a heavy
    slot) when the batch has more than :data:`HEAVY_ROWS` rows."""
    steps = [output_step(o) for o in outputs]
    if not columns:
        raise InputError([("columns", "give at least one column")])
    n = len(columns[0].values)
    for c in columns:
        if len(c.values) != n:
            raise _refuse(c.key, f"has {len(c.values):,} values where columns.{columns[0].key} "
                                 f"has {n:,}: every column has one value a row")
    if n == 0:
        raise _refuse(columns[0].key, "has no values: give at least one row")
    if n > MAX_COLUMN_ROWS:
        raise InputError([("columns", f"at most {MAX_COLUMN_ROWS:,} rows, got {n:,}")])
    cells = n * (len(columns) + len(steps))
    if cells > MAX_CELLS:
        raise InputError([("columns", f"at most {MAX_CELLS:,} cells (rows x (columns + "
                                      f"outputs)), got {n:,} x {len(columns) + len(steps)} = "
                                      f"{cells:,}")])
    guard = heavy() if heavy is not None and n > HEAVY_ROWS else nullcontext()
    with guard:
        # (a saved revision read once: the base and the sample rows start from the same)
        return _price(ctx, resolved(ctx, spec), columns, list(outputs), steps, n)


def _price(ctx: Context, spec: ScenarioSpec, columns: Sequence[Column], outputs: list[str],
           steps: list[str], n: int) -> ColumnBatch:
    base_priced = price(ctx, spec)  # the base prices alone: its errors are the request's
    scenario = base_priced.result.scenario
    reads_curve = base_priced.curve is not None
    rates = scenario.money.rates
    varied: dict[str, np.ndarray] = {}
    for c in columns:
        var = _column_var(c.key, scenario, reads_curve)
        x = _converted(var, c, rates)
        problem = _out_of_range(var, x)
        if problem is not None:
            raise _refuse(c.key, problem)
        varied[var.name] = x
    evaluated = tuple(dict.fromkeys([*steps, *MUST_BE_FINITE]))
    base = Base(scenario, DEFAULT_OUTPUT)
    out = price_rows(base.env(varied), evaluated)
    figures = {s: np.broadcast_to(np.asarray(out[s], dtype=float), (n,)) for s in evaluated}
    finite, over = _checked(figures, n)
    ok = finite & ~over
    errors = _row_errors(figures, finite, over)
    sample = _check_samples(ctx, spec, columns, steps, figures, ok)
    values = {}
    every = bool(ok.all())
    for o, s in zip(outputs, steps, strict=True):
        v = figures[s]
        if not v.flags.writeable or not every:  # a broadcast scalar made whole, or masked
            v = np.array(v, dtype=float)
            v[~ok] = math.nan
        values[o] = v
    return ColumnBatch(outputs, steps, [MODEL.steps[s].unit for s in steps], values, ok,
                       errors, base_priced.result,
                       _column_sources(base_priced.result, sample, columns))


def _checked(figures: Mapping[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Which rows' figures are finite, and which are beyond the bound any result may be
    (what ``POST /price`` refuses a row for). A column is scanned row by row only when its
    sum is not finite, or its extremes beyond the bound (a sum is finite only if every term
    is): one pass a figure in the common case."""
    finite = np.ones(n, dtype=bool)
    over = np.zeros(n, dtype=bool)
    for s in MUST_BE_FINITE:
        a = figures[s]
        if a.strides == (0,):  # one value for every row
            if not math.isfinite(float(a[0])):
                finite[:] = False
        elif not math.isfinite(_sum(a)):
            finite &= np.isfinite(a)
    for s in BOUNDED:
        a = figures[s]
        if a.strides == (0,):
            if abs(float(a[0])) > MAX_COST_PER_MTOK:
                over[:] = True
        elif not (abs(float(np.nanmax(a, initial=0.0))) <= MAX_COST_PER_MTOK
                  and abs(float(np.nanmin(a, initial=0.0))) <= MAX_COST_PER_MTOK):
            over |= np.abs(a) > MAX_COST_PER_MTOK
    return finite, over


def _column_var(key: str, scenario: Any, reads_curve: bool) -> Var:
    if key in VARS and key not in ALONE_KEYS:
        var = movable(scenario, reads_curve, key)
        if var is not None:
            return var
        if reads_curve and key.startswith("operating_point."):
            raise _refuse(key, "the scenario reads its operating point off a curve: its "
                               "figures cannot be a column")
        raise _refuse(key, "the scenario does not give this input (an optional one it leaves "
                           "out, or a choice it does not make): give it in the scenario, "
                           "then vary it as a column")
    if key in ALONE_KEYS or known_key(key):
        raise _refuse(key, "not a numeric input a column can hold: set it in the scenario "
                           "(a column holds numbers; see `costmodel steps` for the inputs)")
    raise _refuse(key, with_hint(key, UnknownKey("unknown key"), dotted=True))


def _row_errors(figures: Mapping[str, np.ndarray], finite: np.ndarray,
                over: np.ndarray) -> list[RowError]:
    """The first :data:`MAX_LISTED` rows without figures, and why (what ``POST /price``
    refuses each for)."""
    failed = np.flatnonzero(~finite | over)[:MAX_LISTED]
    finite, over = finite[failed], over[failed]
    errors = []
    for i in failed[~finite].tolist():
        step = next(s for s in MUST_BE_FINITE if not math.isfinite(figures[s][i]))
        errors.append(RowError(i, "columns", f"{step} is not a finite number: the inputs are "
                                             f"beyond the range of the calculation"))
    for i in failed[over & finite].tolist():
        step = next(s for s in BOUNDED if abs(figures[s][i]) > MAX_COST_PER_MTOK)
        errors.append(RowError(i, "columns", f"{step} is {figures[step][i]:.3g} "
                                             f"{MODEL.steps[step].unit}, beyond the "
                                             f"{MAX_COST_PER_MTOK:g} USD/Mtok any result may "
                                             f"be"))
    errors.sort(key=lambda e: e.row)
    return errors


def _row_overrides(columns: Sequence[Column], i: int) -> tuple[Override, ...]:
    """Row ``i`` as the overrides of ``POST /price``: each value with its column's unit."""
    out = []
    for c in columns:
        v = c.values[i].item()
        out.append(Override(c.key, v if not c.unit.strip() else {"value": v, "unit": c.unit}))
    return tuple(out)


def _check_samples(ctx: Context, spec: ScenarioSpec, columns: Sequence[Column],
                   steps: Sequence[str], figures: Mapping[str, np.ndarray],
                   ok: np.ndarray) -> Priced | None:
    """Price the sample rows alone: each must price, with the vectorised figures; else the
    columns are refused with the first sample's reason. The first sample, priced."""
    first = None
    for i in _sample_rows(ok):
        row = _row_overrides(columns, i)
        try:
            priced = price(ctx, ScenarioSpec(spec.source, spec.overrides + row, None))
        except InputError as exc:
            keys = {c.key for c in columns}
            raise InputError([(f"columns.{p}" if p in keys else "columns",
                               f"row {i} priced alone: {m}" if p in keys else
                               f"row {i} priced alone: {p + ': ' if p else ''}{m}")
                              for p, m in exc.errors]) from None
        for s in steps:
            a, b = priced.result.values[s], float(figures[s][i])
            same = (math.isnan(a) and math.isnan(b)) or a == b or math.isclose(
                a, b, rel_tol=REL, abs_tol=0.0)
            if not same:  # never seen: the declaration's two evaluations disagree
                raise InputError([("columns", f"row {i}: {s} priced alone is {a!r}, "
                                              f"evaluated with the others {b!r}: these columns "
                                              f"cannot be priced together for this scenario")])
        first = first or priced
    return first


def _column_sources(shared: Result, sample: Priced | None, columns: Sequence[Column]
                    ) -> dict[str, str | None]:
    """What the columns change in the shared disclosure's sources: a source the sample row
    took from its own value is the column's (``columns.electricity.price [USD/kWh]``), a
    citation it replaced is gone (None)."""
    if sample is None:
        return {}
    base = shared.provenance
    mine = sample.result.provenance
    # the sample's own sources name its values; each is the column it came from
    named = {}
    for c in columns:
        said = f"columns.{c.key}" + (f" [{c.unit}]" if c.unit.strip() else "")
        for k, v in mine.items():
            if base.get(k) != v and f"{c.key}=" in v:
                named[k] = said
    changed: dict[str, str | None] = {}
    for k, v in mine.items():
        if base.get(k) != v:
            changed[k] = named.get(k, v)
    changed.update((k, None) for k in base if k not in mine)
    return dict(sorted(changed.items()))
