"""A decision's arithmetic declared once: what a month of a demand costs from each kind of
offer, how many accelerators it takes, and the bisection that finds where two costs cross.

Each function here is written over an *algebra* ``o`` rather than over floats, so the same
text is rendered twice: :data:`FLOATS` evaluates it (the engine, :mod:`.demand` and
:mod:`.decision`), and the workbook's formula algebra
(:mod:`costmodel.render.workbook.decision_formulas`) writes it as spreadsheet formulas, each
carrying the value the engine computes. Operators (``+ - * /``) are the operands' own; the
rest goes through the algebra:

- ``o.max(a, b)``, ``o.min(a, b)``: MAX and MIN;
- ``o.whole_up(x)``: whole accelerators, ceil(x) after dropping noise below 1e-9
  (:func:`costmodel.decisions.plan.whole_up`; ``ROUNDUP(ROUND(x,9),0)`` in a sheet);
- ``o.where(condition, a, b)``: IF; a condition is ``o.le(a, b)`` (a <= b);
- ``o.const(name)``: a named conversion constant (:data:`CONSTANTS`), never a bare number;
- ``o.cell(label, x)``: a value worth its own cell (a float is itself; a sheet writes a cell
  and reads it from there), so a long calculation is a column of short formulas; ``x`` may
  be a function of nothing, computed only where no cell holds it yet.

Structure that an edit of a figure cannot change (how many tiers an offer has, whether it
states a commitment) is plain Python; everything an edit of the demand or a price can move
is in the algebra. Every function performs the engine's operations in the engine's order, so
the floats are the ones the decision has always computed.

Units: volumes [Mtok/month mixed], rates [token/s mixed], prices [USD/Mtok mixed or
USD/month], money [USD/month].
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..model.units import HOURS_PER_MONTH
from .plan import whole_up

__all__ = ["CONSTANTS", "FLOATS", "Floats", "Tier", "PerMtokTerms", "CapacityTerms",
           "OwnTerms", "Demand", "blended", "usage", "per_mtok_bill", "size", "capacity_for",
           "capacity_bill",
           "own_bill", "bill", "edge", "BISECTIONS", "JUST_BELOW", "scaled"]

T = TypeVar("T")

CONSTANTS = {"hours_per_month": HOURS_PER_MONTH,  # [h/month]: 8,760 / 12
             "seconds_per_month": HOURS_PER_MONTH * 3600.0,  # [s/month]
             "tokens_per_mtok": 1e6}  # [token/Mtok]
JUST_BELOW = 0.99  # [x a break-even scale]: where the option cheaper below it is read
BISECTIONS = 40  # halvings of a scale interval: far below any volume a contract states


class Floats:
    """The engine's algebra: plain floats, Python's own max, min and comparisons."""

    @staticmethod
    def max(a: Any, b: Any) -> Any:
        return max(a, b)

    @staticmethod
    def min(a: Any, b: Any) -> Any:
        return min(a, b)

    @staticmethod
    def whole_up(x: float, what: str = "the count") -> int:
        return whole_up(x, what)

    @staticmethod
    def le(a: float, b: float) -> bool:
        return a <= b

    @staticmethod
    def where(condition: bool, a: Any, b: Any) -> Any:
        return a if condition else b

    @staticmethod
    def sqrt(x: float) -> float:
        return math.sqrt(x)

    @staticmethod
    def const(name: str) -> float:
        return CONSTANTS[name]

    @staticmethod
    def cell(label: str, x: Any) -> Any:
        return x() if callable(x) else x


FLOATS = Floats()


@dataclass(frozen=True)
class Demand:
    """A demand at one scale, in mixed tokens: ``volume`` [Mtok/month], ``average`` and
    ``peak`` [token/s], and the shares a per-Mtok bill reads: input tokens of the request
    shape, input served from cache, volume sent as batch [fractions]."""
    volume: Any
    average: Any
    peak: Any
    input_share: Any
    cached_share: Any
    batch_share: Any


def scaled(o: Any, d: Demand, s: Any) -> Demand:
    """The demand ``s`` times larger, volume and rates together (the shares kept)."""
    return Demand(d.volume * s, d.average * s, d.peak * s, d.input_share, d.cached_share,
                  d.batch_share)


@dataclass(frozen=True)
class Tier:
    """Prices [USD/Mtok] up to a volume [Mtok/month mixed] (None: no limit)."""
    up_to: Any
    price_input: Any
    price_output: Any


@dataclass(frozen=True)
class PerMtokTerms:
    """A per-million-token offer: graduated ``tiers``; the share of the input price a cached
    input token costs (None: no cache price, every input token at the full price); a batch
    discount [fraction]; a take-or-pay ``committed_volume`` [Mtok/month] with ``overage``
    (input, output) prices above it (None: the tiers continue); a minimum spend ``floor``
    [USD/month]."""
    tiers: Sequence[Tier]
    cached_fraction: Any = None
    batch_discount: Any = None
    committed_volume: Any = None
    overage: tuple[Any, Any] | None = None
    floor: Any = None


@dataclass(frozen=True)
class CapacityTerms:
    """Capacity rented by the accelerator: ``throughput`` [token/s mixed] an accelerator
    serves at the service level, the ``available`` fraction of hours, an ``offered`` block
    of accelerators (None: any count), ``unit`` [USD/month] an accelerator-month, the block's
    own price ``block`` [USD/month] (None: priced by the unit) and a minimum spend ``floor``
    [USD/month]."""
    throughput: Any
    available: Any
    offered: Any
    unit: Any
    block: Any = None
    floor: Any = None


@dataclass(frozen=True)
class OwnTerms:
    """Our own build: ``throughput`` [token/s mixed] an accelerator serves at the service
    level, the ``available`` fraction of hours, and ``hour(o, u)`` the cost of an
    accelerator-hour [USD/h] at utilisation u (the engine: the model priced at u; a sheet:
    its value idle plus its slope times u, the model's cost being affine in u)."""
    throughput: Any
    available: Any
    hour: Callable[[Any, Any], Any]


def blended(o: Any, d: Demand, terms: PerMtokTerms, p_in: T, p_out: T) -> T:
    """A price pair as [USD/Mtok mixed] for the demand: input at its share (cached input at
    the cache's share of the price), output at the rest, the batch share discounted."""
    cached = d.cached_share if terms.cached_fraction is not None else 0.0
    fraction = 0.0 if terms.cached_fraction is None else terms.cached_fraction
    input_factor = 1.0 - cached + cached * fraction
    batch = d.batch_share * (0.0 if terms.batch_discount is None else terms.batch_discount)
    return (d.input_share * p_in * input_factor + (1.0 - d.input_share) * p_out) * (1.0 - batch)


def usage(o: Any, d: Demand, terms: PerMtokTerms, v: T) -> T:
    """[USD/month] for ``v`` Mtok/month of mixed tokens, each tier's slice of it at the
    tier's blended price (a slice beyond the volume is empty: max(0, ...))."""
    cost: Any = 0.0
    low: Any = None
    for k, tier in enumerate(terms.tiers):
        top = v if tier.up_to is None else o.min(v, tier.up_to)
        part = o.max(0.0, top if low is None else top - low) * o.cell(
            f"blended {k + 1}",
            lambda tier=tier: blended(o, d, terms, tier.price_input, tier.price_output))
        cost = part if k == 0 else cost + part
        low = tier.up_to
    return cost


def per_mtok_bill(o: Any, d: Demand, terms: PerMtokTerms) -> Any:
    """A per-million-token offer's bill for a month of ``d`` [USD/month]: the use, take-or-pay
    on a committed volume (overage above it when priced), raised to the minimum spend."""
    v, committed = d.volume, terms.committed_volume
    if committed is None:
        amount = usage(o, d, terms, v)
    elif terms.overage is not None:
        amount = usage(o, d, terms, committed) + o.max(0.0, v - committed) * o.cell(
            "blended overage", lambda: blended(o, d, terms, *terms.overage))
    else:
        amount = usage(o, d, terms, o.max(v, committed))
    return amount if terms.floor is None else o.max(amount, terms.floor)


def size(o: Any, peak: Any, throughput: Any, available: Any) -> Any:
    """Whole accelerators [count] that serve ``peak`` [token/s] when each serves
    ``throughput`` [token/s] for the ``available`` fraction of hours (at least one)."""
    return o.max(1, o.whole_up(peak / (throughput * available),
                               "peak / (throughput x availability)"))


def capacity_for(o: Any, needed: Any, terms: CapacityTerms) -> tuple[Any, Any]:
    """A capacity offer for ``needed`` accelerators: (accelerators paid [count], their price
    [USD/month], before any minimum spend). A block is paid whole; accelerators beyond it at
    the unit price."""
    offered = terms.offered
    paid = needed if offered is None else o.max(needed, offered)
    if terms.block is not None and offered is not None:
        return paid, terms.block + o.max(0, needed - offered) * terms.unit
    return paid, paid * terms.unit


def capacity_bill(o: Any, d: Demand, terms: CapacityTerms) -> tuple[Any, Any]:
    """A capacity offer for a month of ``d``: (accelerators paid [count], bill [USD/month]):
    sized for the peak, raised to the minimum spend."""
    needed = o.cell("accelerators needed", size(o, d.peak, terms.throughput, terms.available))
    paid, amount = capacity_for(o, needed, terms)
    return paid, amount if terms.floor is None else o.max(amount, terms.floor)


def own_bill(o: Any, d: Demand, terms: OwnTerms) -> tuple[Any, Any, Any]:
    """Our own build for a month of ``d``: (accelerators [count], their utilisation
    [fraction]: the average over what they serve, bill [USD/month]: accelerators x the cost
    of an accelerator-hour at that utilisation x the hours of a month)."""
    n = o.cell("accelerators", size(o, d.peak, terms.throughput, terms.available))
    u = o.cell("utilisation", o.min(1.0, d.average / (n * terms.throughput)))
    return n, u, n * terms.hour(o, u) * o.const("hours_per_month")


def bill(o: Any, d: Demand, terms: Any) -> Any:
    """Any offer's bill for a month of ``d`` [USD/month]."""
    if isinstance(terms, PerMtokTerms):
        return per_mtok_bill(o, d, terms)
    if isinstance(terms, CapacityTerms):
        return capacity_bill(o, d, terms)[1]
    return own_bill(o, d, terms)[2]


def edge(o: Any, f: Callable[[Any], Any], inside: Any, outside: Any) -> Any:
    """The scale between ``inside`` (``f`` true) and ``outside`` (false) where ``f`` changes:
    :data:`BISECTIONS` halvings of the interval on a logarithmic scale (the geometric mean),
    then the middle of what is left."""
    for k in range(BISECTIONS):
        mid = o.cell(f"middle {k + 1}", o.sqrt(inside * outside))
        holds = o.cell(f"holds {k + 1}", f(mid))
        inside, outside = (o.cell(f"inside {k + 1}", o.where(holds, mid, inside)),
                           o.cell(f"outside {k + 1}", o.where(holds, outside, mid)))
    return o.sqrt(inside * outside)
