"""A chargeback's arithmetic declared once: what a pool of the fleet cost over the period, how
much of it each tenant's usage and reservation pays, and the idle cost no usage covers.

Each function is written over an *algebra* ``o``, as :mod:`.decision_calculation` is: the
engine evaluates it on floats (:data:`FLOATS`), the chargeback workbook
(:mod:`costmodel.render.workbook.chargeback_sheet`) writes the same text as spreadsheet
formulas. Beside that algebra's operations (``max``, ``min``, ``const``, ``cell``) this one
has ``o.div0(a, b)``: a / b, 0 where b is 0 (``IF(b=0,0,a/b)``), ``o.total(xs)``: the sum of
a column of values (``SUM``), and ``o.positive(x)``: 1 where x > 0, else 0.

The rules (:data:`RULES`, stated on every face):

- a tenant's **input-token equivalents** on a pool: new input + cached_weight x cached input
  + output_weight x output [token];
- the pool's **capacity** over the period: accelerators x hours x equivalents an
  accelerator serves an hour at the scenario's operating point (its throughput, counted in
  its token kind, turned into equivalents at the workload's request shape);
- its **measured utilisation**: equivalents used / capacity (at most 1), the utilisation the
  pool's scenario is priced at (energy follows the load);
- its **cost**: accelerators x hours x the scenario's cost of an accelerator-hour at the
  measured utilisation (energy + capital + operating);
- a **reserved** share (a fraction of the pool) pays that fraction of the cost, used or
  not; equivalents a reserving tenant uses beyond its share of the capacity are usage;
- **usage** pays the rest at the cost per equivalent of the unreserved capacity (its cost /
  its capacity; when usage exceeds that capacity, the cost / the usage);
- **idle** is what usage leaves of the unreserved cost: a line of its own (``separate``),
  shared in proportion to each tenant's usage (``usage``) or evenly among the tenants that
  used the pool (``even``); a pool nobody used keeps its idle cost on the idle line.

Units: tokens and equivalents [token], hours [h], money [USD], rates [USD/h per accelerator].
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CONSTANTS", "FLOATS", "Floats", "IDLE_RULES", "PoolTerms", "Use", "PoolCharge",
           "UseCharge", "per_hour", "equivalents", "capacity", "measured_utilisation", "pool_cost",
           "charge_pool", "RULES"]

CONSTANTS = {"seconds_per_hour": 3600.0,  # [s/h]
             "tokens_per_mtok": 1e6}  # [token/Mtok]
IDLE_RULES = ("separate", "usage", "even")

RULES = [
    "input-token equivalents = new input + cached_weight x cached input + output_weight x "
    "output tokens (output_weight: the scenario's pricing.output_weight)",
    "a pool's capacity = accelerators x hours in the period x equivalents an accelerator "
    "serves an hour at the scenario's operating point",
    "measured utilisation = equivalents used / capacity (at most 1); each pool's scenario is "
    "priced at it",
    "a pool's cost = accelerators x hours x the scenario's cost of an accelerator-hour at "
    "the measured utilisation (energy + capital + operating)",
    "a reserved share of a pool pays that share of its cost, used or not; equivalents beyond "
    "a reservation's share of the capacity are usage",
    "usage pays the unreserved cost at its cost per equivalent of unreserved capacity (the "
    "cost / the usage when usage exceeds that capacity)",
    "idle cost = the unreserved cost usage does not pay",
    "records are matched to pools by model; each record counts in the period its start "
    "falls in",
    "money is rounded to cents by largest remainder: the lines' cents add up to the fleet's "
    "cost in cents",
]


class Floats:
    """The engine's algebra: floats, or numpy arrays (a column of tenants at once)."""

    @staticmethod
    def max(a: Any, b: Any) -> Any:
        return np.maximum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) \
            else max(a, b)

    @staticmethod
    def min(a: Any, b: Any) -> Any:
        return np.minimum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) \
            else min(a, b)

    @staticmethod
    def div0(a: Any, b: Any) -> Any:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
            return np.divide(a, b, out=np.zeros_like(a), where=b != 0)
        return 0.0 if b == 0 else a / b

    @staticmethod
    def positive(x: Any) -> Any:
        return (np.asarray(x) > 0).astype(float) if isinstance(x, np.ndarray) \
            else (1.0 if x > 0 else 0.0)

    @staticmethod
    def total(xs: Any) -> Any:
        if isinstance(xs, np.ndarray):
            return float(xs.sum())
        out = 0.0
        for x in xs:
            out = out + x
        return out

    @staticmethod
    def const(name: str) -> float:
        return CONSTANTS[name]

    @staticmethod
    def cell(label: str, x: Any) -> Any:
        return x() if callable(x) else x


FLOATS = Floats()


@dataclass(frozen=True)
class PoolTerms:
    """One pool over the period: ``hours`` [h], ``accelerators`` [count], its scenario's
    cost of an accelerator-hour by part at the measured utilisation (``energy``,
    ``capital``, ``operating`` [USD/h]), ``per_hour`` [token/h]: equivalents an accelerator
    serves an hour at the operating point, and the weights [input tokens per token]."""
    hours: Any
    accelerators: Any
    energy: Any
    capital: Any
    operating: Any
    per_hour: Any
    output_weight: Any
    cached_weight: Any


@dataclass(frozen=True)
class Use:
    """One tenant on one pool: its new input, cached input and output tokens [token] and
    its reserved share of the pool [fraction]."""
    input: Any
    cached: Any
    output: Any
    reserved: Any = 0.0


@dataclass(frozen=True)
class UseCharge:
    """What one tenant owes one pool [USD]: its equivalents [token], those charged as
    usage (beyond its reservation) [token], and the reserved, usage and idle parts."""
    equivalents: Any
    over: Any
    reserved: Any
    usage: Any
    idle: Any
    total: Any


@dataclass(frozen=True)
class PoolCharge:
    """A pool's period: capacity and equivalents used [token], measured utilisation, cost
    [USD], the unreserved cost [USD], the cost per equivalent of usage [USD/token], the
    idle cost [USD] and the part of it left on the idle line [USD]; each use's charge."""
    capacity: Any
    used: Any
    utilisation: Any
    cost: Any
    shared: Any
    rate: Any
    idle: Any
    idle_line: Any
    uses: Sequence[UseCharge]


def equivalents(o: Any, t: PoolTerms, u: Use) -> Any:
    """Input-token equivalents of a use [token]."""
    return u.input + t.cached_weight * u.cached + t.output_weight * u.output


def per_hour(o: Any, throughput: Any, weighted_per_request: Any, per_request: Any) -> Any:
    """Equivalents an accelerator serves an hour at its operating point [token/h]: its
    throughput [token/s of the point's kind] as requests of the workload's shape, each
    ``weighted_per_request`` equivalents (ISL + output_weight x OSL) for ``per_request``
    tokens of the point's kind."""
    return throughput * o.const("seconds_per_hour") * weighted_per_request / per_request


def capacity(o: Any, t: PoolTerms) -> Any:
    """Equivalents the pool can serve in the period [token]."""
    return t.accelerators * t.hours * t.per_hour


def measured_utilisation(o: Any, used: Any, cap: Any) -> Any:
    """Equivalents used over capacity, at most 1 [fraction]."""
    return o.min(1.0, o.div0(used, cap))


def pool_cost(o: Any, t: PoolTerms) -> Any:
    """The pool's cost over the period [USD]: accelerators x hours x cost an hour."""
    return t.accelerators * t.hours * (t.energy + t.capital + t.operating)


def charge_pool(o: Any, t: PoolTerms, uses: Sequence[Use], idle_rule: str) -> PoolCharge:
    """Every use of one pool charged (see the module's rules); ``idle_rule`` one of
    :data:`IDLE_RULES`."""
    if idle_rule not in IDLE_RULES:
        raise ValueError(f"idle rule: one of {', '.join(IDLE_RULES)}, got {idle_rule!r}")
    cap = o.cell("capacity", lambda: capacity(o, t))
    eqs = [o.cell(f"equivalents {k}", equivalents(o, t, u)) for k, u in enumerate(uses)]
    used = o.cell("used", o.total(eqs))
    util = o.cell("utilisation", measured_utilisation(o, used, cap))
    cost = o.cell("cost", lambda: pool_cost(o, t))
    reserved_share = o.cell("reserved share", o.total([u.reserved for u in uses]))
    overs = [o.cell(f"over {k}", o.max(0.0, e - u.reserved * cap))
             for k, (e, u) in enumerate(zip(eqs, uses, strict=True))]
    over = o.cell("usage", o.total(overs))
    shared = o.cell("shared cost", cost - cost * reserved_share)
    rate = o.cell("rate", o.div0(shared, o.max(over, cap - cap * reserved_share)))
    idle = o.cell("idle", shared - rate * over)
    if idle_rule == "usage":
        weights = overs
    elif idle_rule == "even":
        weights = [o.cell(f"weight {k}", o.positive(x)) for k, x in enumerate(overs)]
    else:
        weights = None
    weight = None if weights is None else o.cell("weights", o.total(weights))
    charges = []
    for k, (e, x, u) in enumerate(zip(eqs, overs, uses, strict=True)):
        reserved = o.cell(f"reserved {k}", cost * u.reserved)
        usage = o.cell(f"usage {k}", x * rate)
        share = 0.0 if weights is None else o.cell(
            f"idle {k}", o.div0(idle * weights[k], weight))
        charges.append(UseCharge(e, x, reserved, usage, share,
                                 o.cell(f"total {k}", reserved + usage + share)))
    shared_idle = 0.0 if weights is None else o.total([c.idle for c in charges])
    line = o.cell("idle line", idle - shared_idle)
    return PoolCharge(cap, used, util, cost, shared, rate, idle, line, charges)
