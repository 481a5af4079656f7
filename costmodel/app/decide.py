"""Decision use case: every offer and our own builds priced for the buyer's demand, ranked,
with break-evens, the range over which the choice holds, and a recommendation.

Our scenarios are the own builds; each is read at the demand's service level (its curve at
the demand's interactivity and percentile) and sized for the peak. A capacity offer is
sized on the hardware it names: at the throughput it states for the service level, else at
the throughput of one of our scenarios on the same hardware; never at another accelerator's.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ..decisions import decision_calculation as calc
from ..decisions.decision import Decision, Option, decide
from ..decisions.demand import (
    HOURS_PER_MONTH,
    Demand,
    DemandLoad,
    Shape,
    capacity_charge,
    load_of,
    own_charge,
    per_mtok_charge,
    share,
    size,
)
from ..decisions.plan import PlanOverflow, nodes_for, racks_for
from ..decisions.quotes import NO_POINT, Quote, market_flag
from ..model.curves import TtftCeiling
from ..model.errors import InputError, UnknownReference
from ..model.results import Result
from ..sources.curve_point import Target
from .build import PreparedScenario
from .caps import MAX_QUOTES, MAX_SCENARIOS, check_count
from .context import Context
from .engine import price_scenario
from .load import finish, prepare
from .money import USD_MONEY, ShownMoney, shown_money
from .pricing import Priced, WorkbookFile, _filename, price_loaded
from .quotes import at_first_scenario, quote_currencies, reference_rate
from .specs import ScenarioSpec

__all__ = ["DecisionRequest", "QuotesDecision", "quotes_decide", "decision_workbook",
           "render_decision_workbook"]


@dataclass(frozen=True)
class DecisionRequest:
    """Quotes and own builds (``scenarios``, at least one) for one ``demand``;
    ``improvement`` [fraction a year] prices the lock-in of the winner's term."""
    quotes: Sequence[Quote]
    scenarios: Sequence[ScenarioSpec]
    demand: Demand
    improvement: float | None = None


@dataclass(frozen=True)
class QuotesDecision:
    decision: Decision
    systems: list[Priced]  # the own builds as read at the service level
    money: ShownMoney = USD_MONEY  # the first own build's currency (:mod:`.money`)
    request: DecisionRequest | None = None  # what was asked (its workbook records it)

    def to_json(self) -> dict[str, Any]:
        out = {**self.decision.to_json(),
               "own_builds": [{"scenario": p.result.name,
                               "disclosure": p.result.to_json("summary")["disclosure"]}
                              for p in self.systems]}
        return out if not self.money.says else {**self.money.json(out),
                                                "money": self.money.quotes_note()}


def _service_target(demand: Demand) -> Target | None:
    if demand.interactivity is None:
        return None
    return Target("interactivity", demand.interactivity,
                  f"the demand's service level ({demand.interactivity:.4g} token/s/user"
                  + (f", {demand.percentile}" if demand.percentile else "") + ")",
                  demand.percentile)


def _shape(result: Result) -> Shape:
    return Shape(result.scenario.workload.isl, result.scenario.workload.osl)


def _mixed_throughput(result: Result) -> float:
    """[token/s mixed] an accelerator of the scenario serves at its operating point."""
    kind = result.scenario.operating_point.token_kind
    return result.values["throughput"] / share(kind, _shape(result))


def _service_flags(guaranteed: float | None, demand: Demand, what: str) -> tuple[list[str],
                                                                                str | None]:
    """Flags for a stated interactivity against the demand's, and why it cannot be ranked
    (None: it can)."""
    need = demand.interactivity
    if guaranteed is None:
        return [NO_POINT] if need is not None else [], None
    if need is not None and guaranteed < need * 0.99:
        return [], (f"{what} {guaranteed:.4g} token/s/user, below the demand's service level "
                    f"({need:.4g})")
    return [], None


def _workload_flags(model: str | None, precision: str | None, shape: Shape | None,
                    load: DemandLoad, demand_model: str | None,
                    demand_precision: str | None) -> list[str]:
    flags = []
    if model and demand_model and model.lower() not in demand_model.lower() and \
            demand_model.lower() not in model.lower():
        flags.append(f"models differ: {model!r} against the demand's {demand_model!r}")
    if precision and demand_precision and precision.lower() != demand_precision.lower():
        flags.append(f"precisions differ: {precision} against the demand's "
                     f"{demand_precision}")
    if shape is not None and shape.differs(load.shape):
        flags.append(f"request shapes differ: {shape.words()} against the demand's "
                     f"{load.shape.words()}")
    return flags


def _own_option(p: Priced, demand: Demand, load: DemandLoad, model: str | None,
                precision: str | None) -> Option:
    result = p.result
    s = result.scenario
    thr = _mixed_throughput(result)
    available = demand.own.available

    profile = load.profile  # scaling keeps it: one shape for every demand priced

    @lru_cache(maxsize=4096)
    def hourly(u: float) -> float:  # [USD/h] an accelerator at utilisation u, by the engine
        update: dict[str, Any] = {"utilisation": u}
        if profile is not None:  # the shape by hour, at the fleet's scale (mean u)
            update["load"] = profile.scaled(u / profile.mean)
        return price_scenario(s.model_copy(update=update)).values["cost_per_hour"]

    guaranteed = s.operating_point.effective_interactivity
    flags, why = _service_flags(guaranteed, demand, "the scenario runs at")
    ttft = s.operating_point.ttft
    if why is None and demand.ttft_max is not None and p.curve is None:
        if ttft is None:
            flags.append(f"the scenario states no TTFT: the demand's ceiling "
                         f"({demand.ttft_max:g} s) is not checked")
        elif ttft > demand.ttft_max:
            why = (f"the scenario's TTFT ({ttft:g} s) is above the demand's ceiling "
                   f"({demand.ttft_max:g} s)")
    flags += _workload_flags(s.workload.model, s.workload.precision, _shape(result), load,
                             model, precision)
    n = size(load.peak, thr, available)
    nodes = nodes_for(n, s.node.accelerators)
    v = result.values
    q = lambda x, unit: {"value": x, "unit": unit}  # noqa: E731
    details = {
        "scenario": result.name, "throughput_per_accelerator": q(thr, "token/s"),
        "throughput_from": "the scenario at the demand's service level",
        "availability": available, "nodes": nodes,
        "racks": racks_for(nodes, s.rack.nodes),
        "power": q(n * v["power_per_accelerator"], "W"),
        "power_boundary": s.power.boundary, "power_basis": s.power.basis,
        "capex": (q(n * v["capex_per_accelerator"], "USD")
                  if s.accelerator.cost_basis == "own" else None)}
    terms = calc.OwnTerms(thr, available, lambda o, u: hourly(u))
    return Option(result.name, "own", "own build", 0.0,
                  None if why else lambda L: own_charge(terms, L), flags, why, details, terms)


def _quote_flags(quote: Quote, demand: Demand, load: DemandLoad, model: str | None,
                 precision: str | None) -> tuple[list[str], str | None, Shape | None]:
    """A quote's flags against the demand, why it cannot be ranked (None: it can), and the
    request shape it states (None: it states none)."""
    op = quote.operating_point
    flags, why = _service_flags(op and op.effective_interactivity, demand,
                                "the quote guarantees")
    shape = None if op is None or op.isl is None or op.osl is None else Shape(op.isl, op.osl)
    flags += _workload_flags(op and op.model, op and op.precision, shape, load, model,
                             precision)
    return flags, why, shape


def _monthly_floor(quote: Quote) -> float | None:
    """A quote's minimum spend a month [USD/month]: its commitment spread over its term."""
    return None if quote.commitment is None else quote.commitment / quote.term


def _per_mtok_option(quote: Quote, demand: Demand, load: DemandLoad, model: str | None,
                     precision: str | None) -> Option:
    flags, why, _ = _quote_flags(quote, demand, load, model, precision)
    details: dict[str, Any] = {"date": quote.date}
    if quote.market_price is not None:  # a public list price: said first, and shown
        flags.insert(0, market_flag(quote))
        details["market_price"] = quote.market_price.to_json()
    tiers = ([calc.Tier(t.up_to, t.price_input, t.price_output) for t in quote.tiers]
             if quote.tiers else [calc.Tier(None, quote.price_input, quote.price_output)])
    overage = (None if quote.overage_input is None
               else (quote.overage_input, quote.overage_output))
    terms = calc.PerMtokTerms(tiers, quote.cached_input_fraction, quote.batch_discount,
                              quote.committed_volume, overage, _monthly_floor(quote))
    return Option(quote.name, "per_mtok", quote.vendor, quote.term,
                  None if why else lambda L: per_mtok_charge(terms, L), flags, why,
                  details, terms)


def _capacity_option(ctx: Context, quote: Quote, demand: Demand, load: DemandLoad,
                     own: Sequence[Priced], model: str | None, precision: str | None
                     ) -> Option:
    op = quote.operating_point
    flags, why, shape = _quote_flags(quote, demand, load, model, precision)
    if quote.reference is not None:
        flags.insert(0, f"reference rate {quote.reference.key}: a public dashboard's "
                        f"assumption, not a quote")
    hardware = quote.hardware or (quote.reference.accelerator if quote.reference else None)
    details: dict[str, Any] = {"date": quote.date, "hardware": hardware,
                               "availability": quote.available}
    if hardware is None:
        return Option(quote.name, "capacity", quote.vendor, quote.term, None, flags,
                      "names no hardware: a capacity offer is sized on the accelerator it "
                      "rents (give hardware = a catalog accelerator key)", details)
    entry = ctx.catalog().get("accelerator", hardware, f"{quote.where}.hardware")
    hardware_name = entry.data.get("name", hardware)
    details["hardware_name"] = hardware_name
    if op is not None and op.throughput is not None:
        thr = op.throughput / share(op.token_kind, shape or load.shape)
        details["throughput_from"] = "as quoted, at the quote's service level"
    else:
        same = next((p for p in own if p.result.scenario.accelerator.name == hardware_name),
                    None)
        if same is None:
            return Option(quote.name, "capacity", quote.vendor, quote.term, None, flags,
                          f"rents {hardware} ({hardware_name}), which none of our scenarios "
                          f"runs, and states no throughput at the service level: it is not "
                          f"priced at another accelerator's throughput", details)
        thr = _mixed_throughput(same.result)
        details["throughput_from"] = (f"scenario {same.result.name!r} (same hardware) at the "
                                      f"demand's service level")
    details["throughput_per_accelerator"] = {"value": thr, "unit": "token/s"}
    if quote.form == "per_accelerator_hour":
        unit, block = quote.hourly_price * HOURS_PER_MONTH, None
        hourly = quote.hourly_price
    else:
        unit, block = quote.monthly_price / quote.accelerators, quote.monthly_price
        hourly = unit / HOURS_PER_MONTH
    details["reference_rate"] = _reference_beside(ctx, hardware, quote, hourly)
    terms = calc.CapacityTerms(thr, quote.available, quote.accelerators, unit, block,
                               _monthly_floor(quote))
    return Option(quote.name, "capacity", quote.vendor, quote.term,
                  None if why else lambda L: capacity_charge(terms, L), flags, why, details,
                  terms)


def _reference_beside(ctx: Context, hardware: str, quote: Quote, hourly: float
                      ) -> dict[str, Any] | None:
    """The public rental reference rate of the offer's hardware at its date, beside the
    offer's own hourly price; None when the catalog has none."""
    ref = f"{hardware}/rental" + (f"@{quote.date}" if quote.date else "")
    try:
        rate = reference_rate(ctx, ref, f"{quote.where}.hardware")
    except (InputError, UnknownReference):
        return None
    return {"key": rate.key, "version": rate.date,
            "hourly_price": {"value": rate.hourly_price, "unit": "USD/h"},
            "offer_hourly_price": {"value": hourly, "unit": "USD/h"},
            "offer_over_reference": (hourly / rate.hourly_price - 1.0  # a free rate: none
                                     if rate.hourly_price else None),
            "origin": rate.source}


def _check_shape(p: Priced, subject: str | None, demand: Demand) -> None:
    """A scenario whose own ``[load]`` or utilisation disagrees with the demand's load shape
    is refused, naming both: the own build is priced at the demand's shape."""
    shape, s = demand.load, p.result.scenario
    if shape is None:
        return
    if s.load is not None:
        if not shape.agrees(s.load):
            raise InputError([("load.hourly", (
                f"the scenario's load shape (mean {s.utilisation:.6g}) differs from the "
                f"demand's (demand.load, mean {shape.mean:.6g} of the peak): the own build "
                f"is priced at the demand's shape; give one, or both the same shape"))]
            ).about(subject)
    elif _given(p, "utilisation") and not math.isclose(
            s.utilisation, shape.mean, rel_tol=1e-6):
        raise InputError([("utilisation", (
            f"{s.utilisation:g} differs from the utilisation the demand's load shape implies "
            f"(demand.load: mean / peak = {shape.mean:.6g}): the own build is priced at the "
            f"demand's shape; leave the utilisation out, or give that"))]).about(subject)


def _given(p: Priced, key: str) -> bool:
    """Whether the scenario states ``key`` itself (not its default; a workbook read back
    states every input, and lists those that were defaults)."""
    return key in p.result.scenario.model_fields_set and key not in (
        p.result.defaults_used or ())


def _with_ttft_ceiling(prepared: PreparedScenario, demand: Demand) -> PreparedScenario:
    """A curve read under the demand's TTFT ceiling (at its percentile), in place of the
    scenario's own; a scenario without a curve keeps its point (its TTFT is checked)."""
    if demand.ttft_max is None or prepared.curve is None:
        return prepared
    ceiling = TtftCeiling(demand.ttft_max, demand.percentile or "median")
    return replace(prepared, curve=replace(prepared.curve, ttft_max=ceiling))


def quotes_decide(ctx: Context, req: DecisionRequest,
                  priced: Sequence[Priced] | None = None) -> QuotesDecision:
    """Every quote and own build priced for the demand, ranked, and a recommendation.
    ``priced``: the own builds already priced, in place of ``req.scenarios`` (an edited
    decision workbook's, read back)."""
    if not req.scenarios and not priced:
        raise InputError([("scenarios", "give at least one scenario (our own build)")])
    check_count(ctx, len(req.quotes), MAX_QUOTES, "quotes", "quotes")
    check_count(ctx, len(req.scenarios), MAX_SCENARIOS, "scenarios", "scenarios")
    asked = req
    demand, counted = req.demand.as_requests()  # a demand in tasks: the requests they make
    req = replace(req, demand=demand)
    target = _service_target(req.demand)
    own: list[Priced] = list(priced or ())
    for spec in () if priced else req.scenarios:
        prepared = _with_ttft_ceiling(prepare(ctx, spec), req.demand)
        own.append(price_loaded(finish(
            ctx, spec, prepared, target if prepared.curve else None,
            elsewhere=("operating_point.ttft_max",) if req.demand.ttft_max is not None else ())))
        _check_shape(own[-1], spec.subject, req.demand)
    for p in own if priced else ():
        _check_shape(p, p.result.name, req.demand)
    quotes = at_first_scenario(ctx, req.quotes, own[0])
    subjects = [p.result.name for p in own] if priced else [s.subject for s in req.scenarios]
    money = shown_money([p.result for p in own], subjects
                        ).with_quotes(quote_currencies(quotes), own[0].result)
    first = own[0].result.scenario
    load = load_of(req.demand, _shape(own[0].result))
    model = req.demand.model or first.workload.model
    precision = req.demand.precision or first.workload.precision
    try:
        options = [_own_option(p, req.demand, load, model, precision) for p in own]
    except PlanOverflow as exc:
        raise InputError([("demand", str(exc))]) from None
    for i, q in enumerate(quotes):
        if q.form == "per_mtok":
            options.append(_per_mtok_option(q, req.demand, load, model, precision))
        else:
            options.append(_capacity_option(ctx, q, req.demand, load, own, model, precision))
        options[-1].quote = i
    try:
        decision = decide(options, load, first.financing.cost_of_capital,
                          improvement=req.improvement, currency=money.currency,
                          rate=money.rate)
    except PlanOverflow as exc:  # a demand too large to count its accelerators
        raise InputError([("demand", str(exc))]) from None
    decision.assumptions[:0] = counted
    if load.profile is not None:
        decision.assumptions.append(
            "own builds priced hour by hour at the demand's load shape (each hour's load "
            "is the shape x the peak over the fleet's throughput), so a time-of-use tariff "
            "bills the hours the demand uses")
    return QuotesDecision(decision, own, money, asked)



def decision_workbook(ctx: Context, req: DecisionRequest, title: str | None = None
                      ) -> WorkbookFile:
    """The decision as a workbook: the Decision and Scan sheets (live formulas over the
    demand and every ranked offer's terms, :mod:`costmodel.render.workbook.decision_sheet`)
    before the own builds' model sheets, each build read at the demand's service level."""
    return render_decision_workbook(quotes_decide(ctx, req), title)


def render_decision_workbook(answer: QuotesDecision, title: str | None = None) -> WorkbookFile:
    """:func:`decision_workbook` of a decision already made."""
    from ..render.workbook.decision_sheet import DecisionBook
    from ..render.workbook.export import WorkbookSystem, build_workbook
    from ..render.workbook.layout import system_ref
    d = answer.decision
    req = answer.request
    record = None if req is None else {
        "quotes": [q.to_data() for q in req.quotes], "demand": req.demand.to_data(),
        "improvement": req.improvement,
        "options": [{"name": p.option.name, "kind": p.option.kind, "quote": p.option.quote}
                    for p in d.ranked]}
    book = DecisionBook(d, answer.systems[0].result.scenario.financing.cost_of_capital,
                        tuple(d.assumptions[:1]),
                        system_ref("financing_cost_of_capital", 0, len(answer.systems)),
                        record)
    what = f"{d.load.volume:,.0f} Mtok a month"
    wb = build_workbook([WorkbookSystem(p.result, p.curve) for p in answer.systems],
                        title=title or f"Decision for {what}", decision=book)
    return WorkbookFile(wb.content, "decision_" + _filename([p.result.name
                                                             for p in answer.systems]))
