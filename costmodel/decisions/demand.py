"""The buyer's demand, and what serving it costs from each offer and from our own build.

A negotiator's question is not "which quote has the lowest unit price" but "for my demand,
which offer, why, and when would that change". Every offer is therefore priced for one
:class:`Demand`: a monthly volume and a peak rate at a service level (interactivity, at a
percentile). Per-million-token offers are volume x price (tiers, committed volumes with
take-or-pay, overage, a batch discount, cached input); capacity offers and our own build
are *sized*: whole accelerators enough for the peak at the service level, costed for the
month whatever they serve.

Tokens: the demand counts tokens of one kind (``mixed`` = input + output, the default);
everything here is converted to mixed tokens with the request shape (ISL/OSL) of the demand,
else of the scenario. A throughput measured in output (or input) tokens is converted with the
shape it was measured at. A month is 730 hours (8,760 / 12).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from ..model.curves import PERCENTILES
from ..model.inputs import (
    Hourly,
    InputError,
    Load,
    Qty,
    Section,
    error_message,
    error_path,
    load_mean,
)
from ..model.steps import TOKEN_KINDS
from ..model.units import HOURS_PER_MONTH
from . import decision_calculation as calc
from .task import Task

__all__ = ["Demand", "DemandShape", "Supply", "validate_demand", "Shape", "DemandLoad", "load_of",
           "share", "per_mtok_monthly", "capacity_monthly", "size", "HOURS_PER_MONTH",
           "SECONDS_PER_MONTH", "Charge", "typed_over", "availability_lines",
           "bill_demand", "per_mtok_charge", "capacity_charge", "own_charge"]

SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600.0
DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0  # 30.4167


def _fraction(*, positive: bool = False):
    return Qty("dimensionless", positive=positive, maximum=1.0)


class Supply(Section):
    """How much of the time a supply serves: an ``availability`` fraction, or a mean time
    between interruptions ``mtbi`` and the ``recovery`` time each takes [h]."""
    availability: _fraction(positive=True) | None = None
    mtbi: Qty("h", positive=True) | None = None
    recovery: Qty("h") | None = None

    @model_validator(mode="after")
    def _one_way(self):
        if self.availability is not None and (self.mtbi is not None or
                                              self.recovery is not None):
            raise ValueError("give availability, or mtbi and recovery, not both")
        if (self.mtbi is None) != (self.recovery is None):
            raise ValueError("mtbi and recovery go together")
        return self

    @property
    def available(self) -> float:
        """The fraction of hours it serves [dimensionless]: mtbi / (mtbi + recovery)."""
        if self.availability is not None:
            return self.availability
        if self.mtbi is not None:
            return self.mtbi / (self.mtbi + self.recovery)
        return 1.0

    def availability_words(self) -> str | None:
        """The availability as the file gave it, or None when it is the default (1)."""
        if self.availability is not None:
            return f"availability {self.availability:.4%}"
        if self.mtbi is not None:
            return (f"availability {self.available:.4%} (an interruption every "
                    f"{self.mtbi:g} h, {self.recovery:g} h to recover)")
        return None


class DemandShape(Section):
    """The demand's load shape: each hour's rate as a fraction of the peak (the busiest hour
    is 1), weekdays (``hourly``) and, when they differ, weekend days (``weekend``); index 0 =
    00:00-01:00 local time. Its mean (weekdays 5/7, weekend days 2/7) is the average over
    the peak."""
    hourly: Hourly("dimensionless", maximum=1.0,
                   description="the hour's demand as a fraction of the peak")
    weekend: Hourly("dimensionless", maximum=1.0,
                    description="the hour's demand as a fraction of the peak, weekend "
                                "days") | None = None

    @property
    def mean(self) -> float:
        """The average over the peak [dimensionless]: the shape's mean over the year."""
        return load_mean(self)  # type: ignore[arg-type]  (reads hourly and weekend only)

    def scaled(self, k: float) -> Load:
        """The shape ``k`` (at most 1) times over, as a scenario's ``[load]`` (fractions of
        each hour serving; a float's last bit above 1 is 1)."""
        def by(xs: list[float]) -> list[float]:
            return [min(1.0, x * k) for x in xs]
        return Load.model_construct(hourly=by(self.hourly),  # each in [0, 1]: no check
                                    weekend=None if self.weekend is None else by(self.weekend))

    def agrees(self, load: Load) -> bool:
        """Whether a scenario's ``load`` is this shape at some scale (each hour over the
        busiest within 1e-6)."""
        theirs = list(load.hourly) + list(load.weekend or load.hourly)
        ours = list(self.hourly) + list(self.weekend or self.hourly)
        top = max(theirs)
        return top > 0 and all(math.isclose(a / top, b, rel_tol=1e-6, abs_tol=1e-9)
                               for a, b in zip(theirs, ours, strict=True))

    def words(self) -> str:
        days = "every day" if self.weekend is None else "weekdays and weekend days"
        return (f"a load shape by hour ({days}): the busiest hour is the peak, the average "
                f"{self.mean:.4g} of it (weekdays 5/7, weekend days 2/7)")


class Demand(Section):
    """What the buyer needs served: a volume (``volume`` [Mtok/month], or
    ``requests_per_day`` with the request shape), a ``peak`` rate [token/s] (default: the
    average), all in tokens of ``token_kind``; or a load shape by hour (``load``) with the
    peak (its busiest hour) or the volume, the other following from the shape's mean; the
    service level (``interactivity``
    [token/s/user] at a ``percentile``, and a ``ttft_max`` [s] at it); the shares of the
    volume sent as batch and of input tokens served from a prefix cache; and ``own``, the
    availability of our own build."""
    volume: Qty("Mtok/month", positive=True) | None = None
    requests_per_day: Qty("request/day", positive=True) | None = None
    isl: Qty("token", positive=True) | None = None
    osl: Qty("token", positive=True) | None = None
    token_kind: Literal[TOKEN_KINDS] = "mixed"  # type: ignore[valid-type]
    peak: Qty("token/s", positive=True) | None = None
    interactivity: Qty("token/s/user", positive=True) | None = None
    percentile: str | None = None
    ttft_max: Qty("s", positive=True) | None = None  # at the same percentile
    model: str | None = None  # what is served (default: the first scenario's)
    precision: str | None = None
    batch_share: _fraction() = 0.0
    cached_input_share: _fraction() = 0.0
    own: Supply = Field(default_factory=Supply)
    # an agent's tasks: the volume in tasks a day of one task's shape (see as_requests)
    tasks_per_day: Qty("task/day", positive=True) | None = None
    task: Task | None = None
    load: DemandShape | None = None  # the demand by hour: the peak's busiest hour

    @model_validator(mode="after")
    def _volume(self):
        given = [k for k in ("volume", "requests_per_day", "tasks_per_day")
                 if getattr(self, k) is not None]
        if len(given) > 1 or (not given and self.load is None):
            raise ValueError("give volume, requests_per_day or tasks_per_day (one of them)")
        if given and given[0] != "volume" and self.token_kind != "mixed":
            raise ValueError(f"{given[0]} counts whole requests: token_kind must be mixed")
        if (self.tasks_per_day is None) != (self.task is None):
            raise ValueError("tasks_per_day and task go together")
        return self

    def as_requests(self) -> tuple[Demand, list[str]]:
        """A demand in tasks as the requests it makes, and how they were counted: each step
        a request, the steps' mean input and output tokens as the request shape, the task's
        cached share of input, and, for a task latency ``target``, the interactivity every
        step needs: output tokens / (target - tool time - steps x ``ttft_max``, 0 when not
        given) [token/s/user]. A demand in tokens or requests is returned as it is."""
        if self.task is None:
            return self, []
        task, steps = self.task, self.task.arrays()
        n, tokens_in, tokens_out = len(steps), float(steps.input.sum()), \
            float(steps.output.sum())
        given = self.model_fields_set
        clash = [k for k in ("isl", "osl", "cached_input_share") if k in given]
        if clash:
            raise InputError([(f"demand.{clash[0]}", "a demand in tasks takes its request "
                                                     "shape and cached share from its task")])
        words = [f"{_count(self.tasks_per_day)} tasks a day of {n:,} steps: "
                 f"{_count(self.tasks_per_day * n)} requests a day of {tokens_in / n:,.0f} input "
                 f"and {tokens_out / n:,.0f} output tokens on average, "
                 f"{float(steps.cached.sum()) / tokens_in:.0%} of input from the prefix cache"]
        update = {"requests_per_day": self.tasks_per_day * n, "isl": tokens_in / n,
                  "osl": tokens_out / n,
                  "cached_input_share": float(steps.cached.sum()) / tokens_in}
        if task.target is not None:
            if self.interactivity is not None:
                raise InputError([("demand.interactivity", "a demand in tasks with a target "
                                                           "sets the interactivity it needs")])
            ttft = self.ttft_max or 0.0
            left = task.target - float(steps.tool_time.sum()) - n * ttft
            if left <= 0:
                raise InputError([("demand.task.target", (
                    f"{task.target:g} s leaves no time to decode: the tool time "
                    f"({float(steps.tool_time.sum()):g} s) and {n:,} x the TTFT ceiling "
                    f"({ttft:g} s) take it all"))])
            need = tokens_out / left
            words.append(
                f"a {task.target:g} s task needs {need:,.4g} token/s/user a step: "
                f"{tokens_out:,.0f} output tokens in {left:,.4g} s (the target less "
                f"{float(steps.tool_time.sum()):,.4g} s of tool time and "
                + (f"{n:,} x a TTFT of at most {ttft:g} s)" if self.ttft_max is not None
                   else "no TTFT: give ttft_max to hold each step's first token to it)"))
            update |= {"interactivity": need,
                       "percentile": self.percentile or task.percentile}
        return self.model_copy(update=update), words


def _count(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.4g}"


def validate_demand(data: object, where: str = "demand") -> Demand:
    """A demand from plain data; :class:`InputError` with field paths otherwise."""
    if not isinstance(data, dict):
        raise InputError([(where, "a demand must be a table/object")])
    try:
        demand = Demand.model_validate(data)
    except ValidationError as exc:
        raise InputError([(f"{where}.{error_path(e['loc'])}".rstrip("."), error_message(e))
                          for e in exc.errors()]) from None
    if demand.percentile is not None and demand.percentile not in PERCENTILES:
        raise InputError([(f"{where}.percentile", f"unknown percentile {demand.percentile!r} "
                                                  f"(known: {', '.join(PERCENTILES)})")])
    if demand.load is not None:
        _check_shape(demand, f"{where}.load")
    return demand


VOLUME_KEYS = ("volume", "requests_per_day", "tasks_per_day")


def typed_over(table: dict[str, Any], *, volume: str | None = None, peak: Any = None,
               **others: Any) -> dict[str, Any]:
    """A demand's data (a quote file's ``[demand]``) with what a face typed over it (None:
    not typed). A ``volume`` text counts tokens, requests or tasks as its unit says and
    replaces the table's volume; with a load shape the typed volume replaces the table's
    peak and a typed peak its volume (the shape's mean gives the other); a shape typed
    alone over a table with a volume and a peak keeps the volume and lets the peak follow."""
    data = dict(table)
    shaped = data.get("load") is not None or others.get("load") is not None
    if others.get("load") is not None and peak is None and any(k in data for k in VOLUME_KEYS):
        data.pop("peak", None)
    if volume is not None or (shaped and peak is not None):
        for key in VOLUME_KEYS:
            data.pop(key, None)
    if volume is not None:
        if shaped:
            data.pop("peak", None)
        data["requests_per_day" if "request" in volume else
             "tasks_per_day" if "task" in volume else "volume"] = volume
    if peak is not None:
        data["peak"] = peak
    data.update({k: v for k, v in others.items() if v is not None})
    return data


def _check_shape(demand: Demand, where: str) -> None:
    """A load shape's own rules: its busiest hour is 1 (the peak), and it comes with the peak
    or a volume, not both (the shape's mean ties them)."""
    shape = demand.load
    top = max(list(shape.hourly) + list(shape.weekend or []))
    if not math.isclose(top, 1.0, rel_tol=1e-9):
        busiest = "weekend" if shape.weekend and max(shape.weekend) > max(shape.hourly) \
            else "hourly"
        raise InputError([(f"{where}.{busiest}", (
            f"the busiest hour is {top:.6g}: each hour is a fraction of the peak, so the "
            f"busiest is 1 (divide the shape by its busiest hour)"))])
    volume = [k for k in VOLUME_KEYS if getattr(demand, k) is not None]
    base = where.rsplit(".", 1)[0]
    if demand.peak is not None and volume:
        raise InputError([(f"{base}.peak", (
            f"with a load shape give the peak or the {volume[0]}, not both: the shape's mean "
            f"({shape.mean:.6g} of the peak) sets the one from the other"))])
    if demand.peak is None and not volume:
        raise InputError([(base, "a load shape needs the peak (its busiest hour, token/s) or "
                                 "the volume (volume, requests_per_day or tasks_per_day)")])


@dataclass(frozen=True)
class Shape:
    """A request shape [token]: ISL input and OSL output tokens."""
    isl: float
    osl: float

    @property
    def input_share(self) -> float:
        """Input tokens as a fraction of mixed tokens."""
        return self.isl / (self.isl + self.osl)

    def differs(self, other: Shape) -> bool:
        return not (math.isclose(self.isl, other.isl, rel_tol=0.01)
                    and math.isclose(self.osl, other.osl, rel_tol=0.01))

    def words(self) -> str:
        return f"ISL {self.isl:,.0f} / OSL {self.osl:,.0f}"


def share(kind: str, shape: Shape) -> float:
    """Tokens of ``kind`` per mixed token of a request of ``shape`` [dimensionless]."""
    return {"mixed": 1.0, "input": shape.input_share, "output": 1.0 - shape.input_share}[kind]


@dataclass(frozen=True)
class DemandLoad:
    """A demand in mixed tokens, at a scale (1 = as stated): ``volume`` [Mtok/month],
    ``average`` and ``peak`` [token/s], the request shape and the shares."""
    volume: float
    average: float
    peak: float
    shape: Shape
    batch_share: float
    cached_input_share: float
    peak_given: bool
    profile: DemandShape | None = None  # the load shape by hour (fractions of the peak)

    def scaled(self, s: float) -> DemandLoad:
        """The same demand ``s`` times larger (volume and peak together, the shape kept)."""
        return DemandLoad(self.volume * s, self.average * s, self.peak * s, self.shape,
                          self.batch_share, self.cached_input_share, self.peak_given,
                          self.profile)


def load_of(demand: Demand, scenario_shape: Shape) -> DemandLoad:
    """The demand in mixed tokens, with the demand's request shape (else the scenario's).
    With a load shape of mean m [fraction of the peak]: average = peak x m, or peak =
    average / m when the volume is given; volume [Mtok/month] = average x 730 h x 3600 s."""
    shape = Shape(demand.isl if demand.isl is not None else scenario_shape.isl,
                  demand.osl if demand.osl is not None else scenario_shape.osl)
    if demand.load is not None:
        m = demand.load.mean
        if demand.peak is not None:
            peak = demand.peak / share(demand.token_kind, shape)
            average = peak * m
            volume = average * SECONDS_PER_MONTH / 1e6
        else:
            volume = _volume(demand, shape)
            average = volume * 1e6 / SECONDS_PER_MONTH
            peak = average / m
        return DemandLoad(volume, average, peak, shape, demand.batch_share,
                          demand.cached_input_share, True, demand.load)
    volume = _volume(demand, shape)
    average = volume * 1e6 / SECONDS_PER_MONTH
    peak = average if demand.peak is None else demand.peak / share(demand.token_kind, shape)
    if peak < average * (1 - 1e-9):
        raise InputError([("demand.peak", f"the peak ({peak:,.0f} token/s, mixed) is below "
                                          f"the average the volume implies ({average:,.0f} "
                                          f"token/s)")])
    return DemandLoad(volume, average, peak, shape, demand.batch_share,
                      demand.cached_input_share, demand.peak is not None)


def _volume(demand: Demand, shape: Shape) -> float:
    """The demand's volume [Mtok/month mixed], from tokens or requests a day."""
    if demand.requests_per_day is not None:
        return demand.requests_per_day * DAYS_PER_MONTH * (shape.isl + shape.osl) / 1e6
    return demand.volume / share(demand.token_kind, shape)


def size(peak: float, throughput: float, available: float) -> int:
    """Whole accelerators that serve ``peak`` [token/s] when each serves ``throughput``
    [token/s] for the ``available`` fraction of hours: ceil(peak / (throughput x a)), the
    planner's rounding (:func:`costmodel.decisions.plan.whole_up`; PlanOverflow beyond a count)."""
    return calc.size(calc.FLOATS, peak, throughput, available)


@dataclass
class Charge:
    """What a month of the demand costs from one offer [USD/month], and why."""
    monthly: float
    lines: list[str] = field(default_factory=list)  # how it was charged, in words
    committed_unused: float = 0.0  # [USD/month] paid for commitment not used
    accelerators: int | None = None  # capacity and own build: the fleet
    utilisation: float | None = None  # the fleet's: the demand's average over its capacity
    capacity: float | None = None  # [token/s mixed] the fleet serves, availability counted


def bill_demand(load: DemandLoad) -> calc.Demand:
    """What the declared bills (:mod:`.decision_calculation`) read of a demand."""
    return calc.Demand(load.volume, load.average, load.peak, load.shape.input_share,
                       load.cached_input_share, load.batch_share)


def per_mtok_monthly(tiers: list[tuple[float | None, float, float]], load: DemandLoad, *,
                     cached_fraction: float | None, batch_discount: float | None,
                     committed_volume: float | None,
                     overage: tuple[float, float] | None,
                     commitment_monthly: float | None) -> Charge:
    """A per-million-token offer for a month of ``load``.

    ``tiers`` are (up to [Mtok/month mixed, None: no limit], input price, output price
    [USD/Mtok]), graduated: each tier's slice of the volume at its prices. Input tokens
    served from cache (the demand's share) cost ``cached_fraction`` of the input price; the
    batch share of the volume gets ``batch_discount`` off. A ``committed_volume``
    [Mtok/month] is paid for even when unused (take-or-pay); above it the ``overage`` prices
    apply when given (else the tiers continue). ``commitment_monthly`` [USD/month] is a floor
    on the bill (a minimum spend spread over the term)."""
    return per_mtok_charge(calc.PerMtokTerms(
        [calc.Tier(*t) for t in tiers], cached_fraction, batch_discount, committed_volume,
        overage, commitment_monthly), load)


def per_mtok_charge(terms: calc.PerMtokTerms, load: DemandLoad) -> Charge:
    """:func:`per_mtok_monthly` of an offer's terms: the bill as declared
    (:func:`.decision_calculation.per_mtok_bill`), with how it was charged in words."""
    o, d = calc.FLOATS, bill_demand(load)
    cached_fraction, batch_discount = terms.cached_fraction, terms.batch_discount
    committed_volume, overage = terms.committed_volume, terms.overage
    cached = load.cached_input_share if cached_fraction is not None else 0.0
    batch = load.batch_share * (batch_discount or 0.0)
    lines = []
    v = load.volume
    bill = calc.per_mtok_bill(o, d, replace(terms, floor=None))
    if committed_volume is not None:
        unused = max(0.0, committed_volume - v)
        unused_usd = bill - calc.usage(o, d, terms, v) if unused > 0 else 0.0
        lines.append(f"committed {committed_volume:,.0f} Mtok a month (take-or-pay)"
                     + (f": {unused:,.0f} Mtok unused, {unused_usd:,.0f} USD a month"
                        if unused > 0 else "")
                     + ("" if overage is None else
                        f"; overage {overage[0]:.4g} / {overage[1]:.4g} USD/Mtok in/out"))
    else:
        unused_usd = 0.0
    tiers = terms.tiers
    if len(tiers) > 1:
        lines.append("tiers " + "; ".join(
            f"{'above' if i else 'up to'} "
            f"{(tiers[i - 1].up_to if i else t.up_to) or 0:,.0f} Mtok: {t.price_input:.4g} / "
            f"{t.price_output:.4g} USD/Mtok in/out" for i, t in enumerate(tiers)))
    if cached:
        lines.append(f"{cached:.0%} of input tokens from cache at {cached_fraction:.0%} of "
                     f"the input price")
    if batch:
        lines.append(f"{load.batch_share:.0%} of the volume as batch at "
                     f"{batch_discount:.0%} off")
    return _floored(Charge(bill, lines, unused_usd), terms.floor)


def capacity_monthly(needed: int, offered: int | None, unit_monthly: float, *,
                     block_monthly: float | None, commitment_monthly: float | None
                     ) -> Charge:
    """A capacity offer for ``needed`` accelerators [USD/month]: ``unit_monthly`` an
    accelerator-month. A block of ``offered`` accelerators (``block_monthly`` for the block
    when it is priced as one) is paid whole; accelerators beyond it are taken at the same
    unit price (an assumption, said in the lines)."""
    lines = []
    paid, bill = calc.capacity_for(calc.FLOATS, needed, calc.CapacityTerms(
        None, None, offered, unit_monthly, block_monthly))
    if offered is not None and needed > offered:
        lines.append(f"the demand needs {needed} accelerators, the offer is for {offered}: "
                     f"the other {needed - offered} priced at the offer's rate (assumption)")
    unused = max(0, paid - needed) * unit_monthly
    if unused:
        lines.append(f"{paid - needed} of the {paid} accelerators offered are not needed "
                     f"for the peak ({unused:,.0f} USD a month)")
    return _floored(Charge(bill, lines, unused, accelerators=paid), commitment_monthly)


def capacity_charge(terms: calc.CapacityTerms, load: DemandLoad) -> Charge:
    """A capacity offer's month of ``load``, sized for the peak and billed as declared
    (:func:`.decision_calculation.capacity_bill`: its size, :func:`capacity_monthly`'s
    price); the fleet's utilisation (the average over what it serves) and capacity beside
    it."""
    c = capacity_monthly(size(load.peak, terms.throughput, terms.available), terms.offered,
                         terms.unit, block_monthly=terms.block, commitment_monthly=terms.floor)
    thr = terms.throughput
    return replace(c, utilisation=min(1.0, load.average / (c.accelerators * thr)),
                   capacity=c.accelerators * thr * terms.available,
                   lines=availability_lines(terms.available) + c.lines)


def _floored(charge: Charge, commitment_monthly: float | None) -> Charge:
    """``charge`` with a minimum spend [USD/month] applied: a bill below it is raised to it,
    the difference paid unused."""
    if commitment_monthly is None or commitment_monthly <= charge.monthly:
        return charge
    charge.lines.append(f"minimum spend {commitment_monthly:,.0f} USD a month sets the bill "
                        f"(use priced {charge.monthly:,.0f} USD)")
    charge.committed_unused += commitment_monthly - charge.monthly
    charge.monthly = commitment_monthly
    return charge


def own_charge(terms: calc.OwnTerms, load: DemandLoad) -> Charge:
    """Our own build's month of ``load``, as declared (:func:`.decision_calculation.own_bill`)."""
    n, u, bill = calc.own_bill(calc.FLOATS, bill_demand(load), terms)
    return Charge(bill, availability_lines(terms.available), 0.0, accelerators=n,
                  utilisation=u, capacity=n * terms.throughput * terms.available)


def availability_lines(available: float) -> list[str]:
    """What an availability below 1 did to the sizing, in words (nothing at 1)."""
    if available >= 1.0:
        return []
    return [f"availability {available:.2%}: sized to serve the peak with "
            f"{1 - available:.2%} of hours lost to interruptions"]
