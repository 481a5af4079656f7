"""Offers ranked for one demand, where they break even, and a recommendation.

Each option (a quote, or our own build) is a function from a demand to a month's
:class:`~costmodel.decisions.demand.Charge`. Options are ranked by what the demand costs a month
from
each; the *range* over which the winner stays the winner is found by scaling the demand
(volume and peak together) from 1/100 to 100 times, on a logarithmic grid refined by
bisection at each change of winner; the break-even volume of a pair is where their monthly
costs cross (capacity is bought in whole accelerators, so a crossing may be a step).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .decision_calculation import FLOATS, JUST_BELOW, edge
from .demand import Charge, DemandLoad
from .quotes import present_value, term_table

__all__ = ["Option", "Priced", "Decision", "decide", "SCALE_RANGE", "SCALES", "holds_words"]

SCALE_RANGE = (0.01, 100.0)  # demand multiples scanned for break-evens and winner ranges
_GRID = 121  # log-spaced scales over SCALE_RANGE (5 points a factor of 1.47)


@dataclass
class Option:
    """One way to serve the demand. ``charge`` prices a demand (None: the option cannot be
    ranked, ``why`` says why); ``term`` [month] the commitment; ``kind`` per_mtok | capacity
    | own."""
    name: str
    kind: str
    vendor: str
    term: float
    charge: Callable[[DemandLoad], Charge] | None
    flags: list[str] = field(default_factory=list)
    why: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    terms: Any = None  # the declared terms its charge bills (decision_calculation), if any
    quote: int | None = None  # the quote it prices (its index in the request), if one


@dataclass
class Priced:
    """An option's bill for the demand: ``monthly`` [USD/month], per Mtok [USD/Mtok mixed],
    over its term [USD] and the present value of that [USD]."""
    option: Option
    charge: Charge
    per_mtok: float
    term: float  # [month]: the option's, or for our own build the longest offer's
    term_total: float
    term_pv: float

    def to_json(self) -> dict[str, Any]:
        q = lambda v, u: {"value": v, "unit": u}  # noqa: E731
        c = self.charge
        return {"offer": self.option.name, "kind": self.option.kind,
                "vendor": self.option.vendor,
                "monthly_cost": q(c.monthly, "USD/month"),
                "cost_per_mtok": q(self.per_mtok, "USD/Mtok"),
                "term": q(self.term, "month"), "term_total": q(self.term_total, "USD"),
                "term_pv": q(self.term_pv, "USD"),
                "committed_unused": q(c.committed_unused, "USD/month"),
                "accelerators": c.accelerators, "utilisation": c.utilisation,
                "capacity": None if c.capacity is None else q(c.capacity, "token/s"),
                "charged": c.lines, "flags": self.option.flags, **self.option.details}


@dataclass
class Decision:
    """The ranking for a demand, the unranked options, break-evens and the recommendation."""
    load: DemandLoad
    ranked: list[Priced]
    unranked: list[Option]
    break_even: list[dict[str, Any]]
    holds: tuple[float | None, float | None]  # [Mtok/month]: the winner's range
    recommendation: dict[str, Any] | None
    assumptions: list[str]
    given: list[Option] = field(default_factory=list)  # the ranked options, in the order given
    discount_rate: float = 0.0  # [fraction a year] the present values' (term_pv)

    def to_json(self) -> dict[str, Any]:
        q = lambda v, u: None if v is None else {"value": v, "unit": u}  # noqa: E731
        d = self.load
        return {"demand": {"volume": q(d.volume, "Mtok/month"),
                           "average": q(d.average, "token/s"), "peak": q(d.peak, "token/s"),
                           "token_kind": "mixed", "isl": q(d.shape.isl, "token"),
                           "osl": q(d.shape.osl, "token"), "batch_share": d.batch_share,
                           "cached_input_share": d.cached_input_share,
                           "load": None if d.profile is None else {
                               "hourly": list(d.profile.hourly),
                               "weekend": (None if d.profile.weekend is None
                                           else list(d.profile.weekend)),
                               "mean": d.profile.mean}},
                "ranked": [p.to_json() for p in self.ranked],
                "unranked": [{"offer": o.name, "kind": o.kind, "vendor": o.vendor,
                              "why": o.why, "flags": o.flags, **o.details}
                             for o in self.unranked],
                "break_even": self.break_even,
                "holds": {"from": q(self.holds[0], "Mtok/month"),
                          "to": q(self.holds[1], "Mtok/month")},
                "recommendation": self.recommendation, "assumptions": self.assumptions,
                "discount_rate": self.discount_rate}


def _price(option: Option, load: DemandLoad, rate: float, own_term: float) -> Priced:
    charge = option.charge(load)
    term = option.term or own_term
    return Priced(option, charge, charge.monthly / load.volume, term, charge.monthly * term,
                  present_value(charge.monthly, term, rate))


def _winner(options: Sequence[Option], load: DemandLoad) -> int:
    costs = [o.charge(load).monthly for o in options]
    return min(range(len(costs)), key=lambda i: (costs[i], i))


def _scales() -> list[float]:
    lo, hi = (math.log(x) for x in SCALE_RANGE)
    return [math.exp(lo + (hi - lo) * k / (_GRID - 1)) for k in range(_GRID)]


SCALES = tuple(_scales())  # the grid, made once: every pair and the winner's range walk it


def _on_grid(options: Sequence[Option], load: DemandLoad) -> list[list[float]]:
    """Each option's monthly cost [USD/month] at each grid scale, priced once: the pairs'
    break-evens read it instead of pricing both options again for every pair (which made a
    decision quadratic in charges: 50 offers, 154,000 charges)."""
    loads = [load.scaled(s) for s in SCALES]
    return [[o.charge(L).monthly for L in loads] for o in options]


def _edge(f: Callable[[float], bool], inside: float, outside: float) -> float:
    """The scale between ``inside`` (f true) and ``outside`` (f false) where f changes, as
    declared (:func:`.decision_calculation.edge`)."""
    return edge(FLOATS, f, inside, outside)


def _holds(options: Sequence[Option], load: DemandLoad, best: int,
           costs: list[list[float]]) -> tuple[float | None, float | None]:
    """The demand scales around 1 over which option ``best`` stays the cheapest (None: it
    still is at the end of :data:`SCALE_RANGE`); ``costs``: :func:`_on_grid`'s."""
    wins = lambda s: _winner(options, load.scaled(s)) == best  # noqa: E731
    n = len(options)

    def wins_at(k: int) -> bool:  # at grid point k, from the costs priced once
        return min(range(n), key=lambda i: (costs[i][k], i)) == best

    def first_loss(points: list[int]) -> float | None:  # walking away from 1
        last = 1.0
        for k in points:
            if not wins_at(k):
                return _edge(wins, last, SCALES[k])
            last = SCALES[k]
        return None
    return (first_loss([k for k, s in enumerate(SCALES) if s < 1.0][::-1]),
            first_loss([k for k, s in enumerate(SCALES) if s > 1.0]))


def _break_even(a: Option, b: Option, load: DemandLoad, cost_a: list[float],
                cost_b: list[float]) -> float | None:
    """The demand scale nearest 1 where a and b cost the same a month (None: no crossing in
    :data:`SCALE_RANGE`); ``cost_a``, ``cost_b``: their costs on the grid (:func:`_on_grid`)."""
    cheaper = lambda s: a.charge(load.scaled(s)).monthly <= b.charge(  # noqa: E731
        load.scaled(s)).monthly
    side = [x <= y for x, y in zip(cost_a, cost_b, strict=True)]
    found = []
    for (s0, c0), (s1, c1) in itertools.pairwise(zip(SCALES, side, strict=True)):
        if c0 != c1:  # a crossing: refined by pricing the pair between the grid points
            found.append(_edge(cheaper if c0 else lambda s: not cheaper(s), s0, s1))
    return min(found, key=lambda s: abs(math.log(s)), default=None)


def holds_words(holds: tuple[float | None, float | None], volume: float) -> str:
    """Where a choice holds, in words: "from 2,208 to 163,520 Mtok a month"."""
    low, high = holds
    lo, hi = (volume * x for x in SCALE_RANGE)
    if low is None and high is None:
        return f"over every demand scanned ({lo:,.0f} to {hi:,.0f} Mtok a month)"
    return ("from " + (f"less than {lo:,.0f}" if low is None else f"{low:,.0f}") + " to "
            + (f"more than {hi:,.0f}" if high is None else f"{high:,.0f}") + " Mtok a month")


def decide(options: Sequence[Option], load: DemandLoad, annual_rate: float, *,
           improvement: float | None = None, currency: str = "USD",
           rate: float = 1.0) -> Decision:
    """Rank ``options`` for ``load``; break-evens, the winner's range and a recommendation.
    ``annual_rate`` discounts term totals; ``improvement`` (the yearly fall of the market
    price per token [fraction]) prices the premium of locking in the winner's term. The
    recommendation's words say money in ``currency`` at ``rate`` [currency/USD] (its
    quantities, like every figure here, stay in USD)."""
    ranked_opts = [o for o in options if o.charge is not None]
    unranked = [o for o in options if o.charge is None]
    own_term = max((o.term for o in ranked_opts), default=12.0) or 12.0
    priced = sorted((_price(o, load, annual_rate, own_term) for o in ranked_opts),
                    key=lambda p: (p.charge.monthly, len(p.option.flags)))
    assumptions = [
        "a month is 730 hours; tokens counted mixed (input + output) with "
        f"{load.shape.words()}",
        ("the demand follows " + load.profile.words() if load.profile is not None else
         "the peak is " + ("as stated" if load.peak_given else
                           "the average rate (no peak given: the demand is flat)")),
        f"present values at {annual_rate:.1%} a year (the scenario's cost of capital), "
        "monthly payments at month end",
        f"own build priced over {own_term:g} months (the longest offer's term)"]
    if not priced:
        return Decision(load, [], unranked, [], (None, None), None, assumptions, ranked_opts,
                        annual_rate)
    order = [p.option for p in priced]
    best = 0  # sorted: the winner at the demand as stated
    costs = _on_grid(order, load)
    low, high = _holds(order, load, best, costs) if len(order) > 1 else (None, None)
    pairs = []
    for i, a in enumerate(order):
        for j in range(i + 1, len(order)):
            b = order[j]
            s = _break_even(a, b, load, costs[i], costs[j])
            pairs.append({"offers": [a.name, b.name],
                          "volume": None if s is None else {"value": s * load.volume,
                                                            "unit": "Mtok/month"},
                          "cheaper_below": None if s is None else (
                              a.name if a.charge(load.scaled(s * JUST_BELOW)).monthly
                              <= b.charge(load.scaled(s * JUST_BELOW)).monthly else b.name)})
    holds = (None if low is None else low * load.volume,
             None if high is None else high * load.volume)
    return Decision(load, priced, unranked, pairs, holds,
                    _recommend(priced, load, holds, annual_rate, improvement, currency, rate),
                    assumptions, ranked_opts, annual_rate)


def _recommend(priced: list[Priced], load: DemandLoad, holds: tuple[float | None, float | None],
               rate: float, improvement: float | None, cur: str = "USD",
               fx: float = 1.0) -> dict[str, Any]:
    """The winner and why; money in the words in ``cur`` at ``fx`` [cur/USD]."""
    def m(usd: float) -> float:
        return usd if cur == "USD" else usd * fx
    win = priced[0]
    nxt = priced[1] if len(priced) > 1 else None
    reasons = [f"{m(win.charge.monthly):,.0f} {cur} a month for {load.volume:,.0f} Mtok a "
               f"month ({m(win.per_mtok):.4g} {cur}/Mtok)"]
    margin = share = None
    if nxt is not None:
        margin = nxt.charge.monthly - win.charge.monthly
        share = margin / nxt.charge.monthly if nxt.charge.monthly else None
        of_next = "" if share is None else f" ({share:.1%})"  # the next one free: no share
        reasons.append(f"{m(margin):,.0f} {cur} a month{of_next} below {nxt.option.name}, "
                       f"the next")
    risks = []
    if win.charge.committed_unused > 0:
        risks.append(f"{m(win.charge.committed_unused):,.0f} {cur} a month pays for "
                     f"commitment or capacity this demand leaves unused")
    half = win.option.charge(load.scaled(0.5))
    if half.committed_unused > win.charge.committed_unused + 0.5:
        risks.append(f"at half the demand, {m(half.committed_unused):,.0f} {cur} a month "
                     f"pays for unused commitment or capacity")
    if win.option.kind != "own" and win.option.term > 1:
        if improvement is not None:
            (row,), _ = term_table(win.per_mtok, load.volume, rate, [win.option.term],
                                   yearly_improvement=improvement)
            of_flexible = ("" if row.premium_share is None
                           else f" ({row.premium_share:.1%})")
            risks.append(f"locking in {win.option.term:g} months at today's price costs "
                         f"{m(row.premium):,.0f} {cur}{of_flexible} more in present "
                         f"value than a market price falling {improvement:.0%} a year")
        else:
            risks.append(f"a {win.option.term:g}-month term: the price stays while the "
                         f"market's falls (give an improvement to price the lock-in)")
    if win.option.details.get("hardware"):
        risks.append(f"capacity on {win.option.details['hardware']}: a successor "
                     f"generation within the term lowers the market price, not this one")
    risks += win.option.flags
    where = holds_words(holds, load.volume)
    text = (f"Take {win.option.name} ({win.option.vendor}): " + "; ".join(reasons)
            + f". The choice holds {where}."
            + (" Risks: " + "; ".join(risks) + "." if risks else ""))
    low, high = holds
    q = lambda v, u: None if v is None else {"value": v, "unit": u}  # noqa: E731
    return {"offer": win.option.name, "next": None if nxt is None else nxt.option.name,
            "monthly_cost": q(win.charge.monthly, "USD/month"),
            "margin": q(margin, "USD/month"), "margin_share": share,
            "holds": {"from": q(low, "Mtok/month"), "to": q(high, "Mtok/month")},
            "reasons": reasons, "risks": risks, "text": text}
