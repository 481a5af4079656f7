"""Capacity planning: the fleet a demand needs (``costmodel plan --demand``), or the fleet a
power budget buys (``--power-budget``), priced.

The scenario is loaded and priced once, read where the request says (its own point, or a
named interactivity); the sizing arithmetic is the core's (:mod:`costmodel.decisions.plan`) on that
result's own steps. A fleet sized for a demand is rounded up, so it serves the demand at a
lower utilisation than the scenario's: it is priced again at that utilisation, and its cost
per million tokens is the demand's. A power budget holds whole deployments (a node, or a rack:
the request's ``deployment``), each planned at its power at the scenario's boundary plus the
request's planning ``headroom``, rounded down (:class:`PowerPlan`); its fleet never draws more
than the budget, and is priced at the scenario's utilisation.

Errors are :class:`~costmodel.model.errors.InputError`: the scenario's marked with the spec's
subject, the plan's own at the request's fields (``demand``, ``power_budget``,
``availability``, ``headroom``, ``deployment``) for the face to name as its options.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..decisions import plan as core
from ..model.errors import InputError
from ..model.inputs import MIN_UTILISATION
from ..model.results import quantity_json
from ..model.units import HOURS_PER_YEAR
from ..render.display import OPERATIONAL_ONLY, format_percent, format_quantity
from .build import LoadedScenario
from .context import Context
from .load import load_all
from .money import ShownMoney, shown_money
from .pricing import Priced, WorkbookFile, price_loaded, render_workbook
from .specs import OWN_POINT, Reading, ScenarioSpec

__all__ = ["PlanRequest", "Plan", "PowerPlan", "plan", "plan_workbook"]

DEMAND, BUDGET = "demand", "power_budget"
_SECONDS_PER_MONTH = core.HOURS_PER_MONTH * 3600.0  # [s/month]
_TOKENS_PER_MTOK = 1e6
_COST_MEMBERS = ("energy", "capex", "opex", "total")
# the fleet's emissions a year by basis: key -> the step per accelerator-hour
_EMISSIONS = {"location": "emissions_per_hour", "market": "emissions_market_per_hour",
              "embodied": "embodied_per_hour", "location_total": "emissions_total_per_hour",
              "market_total": "emissions_market_total_per_hour"}
GRAMS_PER_TONNE = 1e6


@dataclass(frozen=True)
class PlanRequest:
    """What to plan: a scenario, and exactly one of an average ``demand`` [token/s, of the
    scenario's token kind] or a ``power_budget`` [W at the scenario's boundary]; where its
    curve is read; the ``availability`` [fraction of hours, (0, 1]] of a demand's fleet
    (None: 1); a power budget's planning ``headroom`` [fraction above the power counted,
    [0, 1); None: 0] and its ``deployment`` (what it holds whole: ``node`` or ``rack``;
    None: node)."""
    spec: ScenarioSpec
    demand: float | None = None
    power_budget: float | None = None
    reading: Reading = OWN_POINT
    availability: float | None = None
    headroom: float | None = None
    deployment: str | None = None

    @property
    def sized_for(self) -> str:
        return DEMAND if self.demand is not None else BUDGET


def _watts(x: float) -> str:
    """A power in a sentence [W], to the milliwatt, trailing zeros dropped: ``6,917.196 W``
    (the figure the count divides, not the display's whole watts); below a milliwatt in three
    significant digits (``1e-06 W``)."""
    if 0 < abs(x) < 0.001:
        return f"{x:.3g} W"
    return f"{x:,.3f}".rstrip("0").rstrip(".") + " W"


def _quotient(q: float, whole: int) -> str:
    """A quotient [count] to two decimals, or more where two would round it past the whole
    number it is floored to (``39,755.996`` is not ``39,756.00``, rounded down: 39,755)."""
    for places in (2, 4, 6):
        text = f"{q:,.{places}f}"
        if math.floor(float(text.replace(",", ""))) == whole:
            return text
    return f"{q:,.9f}"


@dataclass(frozen=True)
class PowerPlan:
    """What a power budget holds whole, as a power planner counts it: whole ``deployment``s
    (``node`` or ``rack``) of ``per_deployment`` [count] accelerators, each planned at its
    power at the scenario's ``boundary`` x (1 + ``headroom`` [fraction]). Powers per
    deployment [W]: ``ac``, the node's AC draw at its power supplies (the chassis) or the
    rack's at its feed; ``facility``, at the facility meter (its share of the rack's AC power
    x PUE); ``at_boundary``, what the budget counts; ``planning``, ``at_boundary`` x (1 +
    headroom), exact: what each count divides. ``budget`` [W]; ``deployments`` and
    ``deployments_per_gw`` [count]: floor(budget / planning) and floor(1 GW / planning)."""
    deployment: str
    per_deployment: int
    nodes_per_deployment: int
    boundary: str
    headroom: float
    pue: float
    all_in: bool
    ac: float
    facility: float
    at_boundary: float
    planning: float
    budget: float
    deployments: int
    deployments_per_gw: int

    @property
    def accelerators(self) -> int:
        """Accelerators in the whole deployments the budget holds [count]."""
        return self.deployments * self.per_deployment

    @property
    def accelerators_per_gw(self) -> int:
        """Accelerators in the whole deployments 1 GW holds [count]."""
        return self.deployments_per_gw * self.per_deployment

    def powers(self) -> dict[str, str]:
        """What each power per deployment is, in words."""
        kind, share = self.deployment, ("the rack's" if self.deployment == "rack" else
                                        "its share of the rack's")
        rack_ac = (f"{share} all-in power (the accelerators' all-in power x "
                   f"{self.per_deployment:,})" if self.all_in else f"{share} AC power")
        at = {"chip": f"its {self.per_deployment:,} accelerators' chip power",
              "node": ("its nodes' AC power at their power supplies, no rack overheads"
                       if kind == "rack" else "its chassis AC power"),
              "rack": rack_ac, "facility": "its facility power"}[self.boundary]
        return {
            "ac": ("the rack's AC power at its feed (its nodes, switches and other power over "
                   "the power delivery efficiency)" if kind == "rack" else
                   "the node's AC power at its power supplies (chassis AC)") + (
                "; the scenario counts an all-in power at the rack instead"
                if self.all_in else ""),
            "facility": f"{rack_ac} x PUE {self.pue:g}, at the facility meter",
            "at_boundary": f"what the budget counts: {at}, at the {self.boundary} boundary",
            "planning": (f"the power at the {self.boundary} boundary x (1 + "
                         f"{format_percent(self.headroom)} headroom): what each count "
                         f"divides"),
        }

    def divides(self) -> str:
        """How the counts were found, with the figures."""
        kind = self.deployment
        return (f"whole {kind}s = floor(power budget / planning power per {kind}); planning "
                f"power = {_watts(self.at_boundary)} at the {self.boundary} boundary x (1 + "
                f"{format_percent(self.headroom)} headroom) = {_watts(self.planning)}: "
                f"{_watts(self.budget)} / {_watts(self.planning)} = "
                f"{_quotient(self.budget / self.planning, self.deployments)}, rounded down: "
                f"{self.deployments:,}; per GW: 1,000,000,000 W / {_watts(self.planning)} = "
                f"{_quotient(core.GIGAWATT / self.planning, self.deployments_per_gw)}, "
                f"rounded down: {self.deployments_per_gw:,}; exact arithmetic, then the "
                f"floor (the power "
                f"per {kind} is not rounded before the headroom is added)")

    def note(self) -> str | None:
        """Why a count is zero, in a sentence; None when neither is."""
        kind = self.deployment
        said = [f"{what} ({_watts(power)}) is less than the planning power of one {kind} "
                f"({_watts(self.planning)}): it holds no whole {kind}"
                for what, power, n in (("The power budget", self.budget, self.deployments),
                                       ("A gigawatt", core.GIGAWATT, self.deployments_per_gw))
                if n == 0]
        return "; ".join(said) + "." if said else None

    def to_json(self) -> dict[str, Any]:
        q = quantity_json
        return {
            "deployment": self.deployment,
            "accelerators_per_deployment": self.per_deployment,
            "nodes_per_deployment": self.nodes_per_deployment,
            "boundary": self.boundary,
            "headroom": self.headroom,
            "power_per_deployment": {k: q(getattr(self, k), "W") for k in
                                     ("ac", "facility", "at_boundary", "planning")},
            "powers": self.powers(),
            "deployments": self.deployments,
            "accelerators": self.accelerators,
            "per_gw": {"deployments": self.deployments_per_gw,
                       "accelerators": self.accelerators_per_gw},
            "divides": self.divides(),
            "note": self.note(),
        }


@dataclass(frozen=True)
class Plan:
    """A sized fleet and its cost. ``sized``: the scenario at its own utilisation (the
    figures the fleet was sized on); ``priced``: at the fleet's resulting utilisation (the
    same for a power budget). Counts [count]; utilisations and availability [fraction];
    ``output_per_accelerator`` [token/s]; ``interactivity`` [token/s/user];
    ``power_plan``: the whole deployments a power budget holds (None for a demand)."""
    request: PlanRequest
    sized: Priced
    priced: Priced
    accelerators: int
    nodes: int
    racks: int
    users: int | None
    availability: float
    resulting_utilisation: float
    output_per_accelerator: float
    output_basis: str  # measured | implied
    output_note: str
    interactivity: float | None
    power_plan: PowerPlan | None = None

    def _step(self, name: str) -> float:
        return self.priced.result.values[name]

    @property
    def utilisation(self) -> float:
        """The scenario's utilisation, which the fleet was sized with [fraction]."""
        return self.sized.result.scenario.utilisation

    @property
    def power(self) -> float:
        """The fleet's power at the scenario's boundary, at the operating point [W]."""
        return self.accelerators * self._step("power_per_accelerator")

    @property
    def throughput(self) -> float:
        """The fleet's capacity at the operating point [token/s]."""
        return self.accelerators * self._step("throughput")

    @property
    def capex(self) -> float:
        """The fleet's capital cost [USD] (NaN when the accelerator has no price)."""
        return self.accelerators * self._step("capex_per_accelerator")

    @property
    def cost_per_hour(self) -> float:
        """The fleet's cost per hour at the resulting utilisation [USD/h]."""
        return self.accelerators * self._step("cost_per_hour")

    @property
    def cost_per_month(self) -> float:
        """[USD/month], 730 h a month."""
        return core.per_month(self.cost_per_hour)

    def emissions_per_year(self) -> dict[str, float]:
        """The fleet's emissions a year [tCO2e/year] by basis: each accelerator's per hour
        at the resulting utilisation x the accelerators x 8,760 h, in tonnes (NaN where the
        factor is not given)."""
        return {key: self.accelerators * self._step(step) * HOURS_PER_YEAR / GRAMS_PER_TONNE
                for key, step in _EMISSIONS.items()}

    def emission_rows(self) -> list[tuple[str, float, str]]:
        """The fleet's tonnes a year as the faces list them: (key, tCO2e/year, what it
        counts), the operational figures, then the totals (with embodied, or operational
        only where no footprint is given); NaN where the factor is not given."""
        e = self.emissions_per_year()
        total = "with embodied" if self.priced.result.embodied_stated else OPERATIONAL_ONLY
        return [("location", e["location"], "location-based, operational"),
                ("market", e["market"], "market-based, operational"),
                ("location_total", e["location_total"], f"location-based, {total}"),
                ("market_total", e["market_total"], f"market-based, {total}")]

    @property
    def money(self) -> ShownMoney:
        """The currency the plan's money is shown in: the scenario's ``[money]``."""
        return shown_money([self.priced.result])

    def assumptions(self) -> dict[str, Any]:
        """What the plan assumed, for the disclosure."""
        req, r, s = self.request, self.sized.result, self.sized.result.scenario
        q = quantity_json
        t = r.values["throughput"]
        if req.sized_for == DEMAND:
            rule = ("accelerators = ceil(demand / (throughput per accelerator x utilisation x "
                    "availability))")
            per_month = req.demand * _SECONDS_PER_MONTH / _TOKENS_PER_MTOK
        else:
            rule = "accelerators = whole deployments x accelerators per deployment"
            per_month = None
        pp = self.power_plan
        return {
            "sized_for": req.sized_for,
            "demand": None if req.demand is None else q(req.demand, "token/s"),
            "demand_per_month": None if per_month is None else q(per_month, "Mtok/month"),
            "power_budget": None if req.power_budget is None else q(req.power_budget, "W"),
            "availability": self.availability if req.sized_for == DEMAND else None,
            "deployment": None if pp is None else pp.deployment,
            "headroom": None if pp is None else pp.headroom,
            "utilisation": self.utilisation,
            "resulting_utilisation": self.resulting_utilisation,
            "utilisation_note": (
                "sized at the scenario's utilisation and availability; the fleet is rounded "
                "up, so it serves the demand at the resulting utilisation, demand / "
                "(accelerators x throughput per accelerator), at which it is priced (hours "
                "not serving, unavailable ones included, draw idle power)"
                if req.sized_for == DEMAND else
                "a power budget's fleet is priced at the scenario's utilisation"),
            "throughput_per_accelerator": q(t, "token/s"),
            "power_per_accelerator": q(r.values["power_per_accelerator"], "W"),
            "accelerators_per_node": s.node.accelerators,
            "nodes_per_rack": s.rack.nodes,
            "interactivity": None if self.interactivity is None
            else q(self.interactivity, "token/s/user"),
            "output_throughput_per_accelerator": q(self.output_per_accelerator, "token/s"),
            "output_throughput_basis": self.output_basis,
            "output_throughput_note": self.output_note,
            "users": ("floor(accelerators x output throughput per accelerator / "
                      "interactivity)" if self.interactivity is not None else
                      "not computed: the operating point has no interactivity"),
            "accelerators": rule,
            "deployments": None if pp is None else (
                "deployments = floor(power budget / (power per deployment at the boundary x "
                "(1 + headroom))), exact arithmetic then the floor"),
            "nodes": ("whole deployments (a node each)" if pp is not None and
                      pp.deployment == "node" else "whole racks x nodes per rack"
                      if pp is not None else "ceil(accelerators / accelerators per node)"),
            "racks": ("whole deployments (a rack each)" if pp is not None and
                      pp.deployment == "rack" else "ceil(nodes / nodes per rack)"),
            "capex": "accelerators x capital cost per accelerator" + (
                "; the accelerators are rented (an hourly price): this is what buying them "
                "would cost, and the cost per hour carries the rent instead"
                if s.accelerator.cost_basis == "rent" else ""),
            "emissions": "tonnes a year = accelerators x emissions per accelerator-hour (at the "
                         "resulting utilisation) x 8,760 h / 1e6 g a tonne; embodied spread "
                         "straight-line over the life (docs/emissions.md)",
            "rounding": list(core.ROUNDING),
            "hours_per_month": core.HOURS_PER_MONTH,
        }

    def to_json(self) -> dict[str, Any]:
        """The fleet totals at the top (counts, then ``{"value", "unit"}`` quantities), the
        cost per million tokens of the plan's utilisation, and the disclosure: the priced
        scenario's, with ``plan`` saying what the plan assumed."""
        r = self.priced.result
        q, m = quantity_json, self.money.q
        return {
            "scenario": r.name,
            "engine": {"name": "costmodel", "version": __version__},
            "accelerators": self.accelerators,
            "nodes": self.nodes,
            "racks": self.racks,
            "users": self.users,
            "power_plan": None if self.power_plan is None else self.power_plan.to_json(),
            "power": q(self.power, "W"),
            "throughput": q(self.throughput, "token/s"),
            "capex": m(self.capex, "USD"),
            "cost_per_hour": m(self.cost_per_hour, "USD/h"),
            "cost_per_month": m(self.cost_per_month, "USD/month"),
            "cost_per_mtok": {k: m(r.values[f"cost_per_mtok_{k}"], "USD/Mtok")
                              for k in _COST_MEMBERS},
            "emissions_per_year": {k: q(v, "tCO2e/year")
                                   for k, v in self.emissions_per_year().items()},
            "disclosure": {**r.disclosure(), "plan": self.assumptions()},
        }


def _checked(req: PlanRequest) -> tuple[float, float, str]:
    """The request's own rules; the availability [fraction], headroom [fraction] and
    deployment to size with."""
    if (req.demand is None) == (req.power_budget is None):
        raise InputError([(DEMAND, "give exactly one of demand or power_budget")])
    for field, value in ((DEMAND, req.demand), (BUDGET, req.power_budget)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError([(field, f"must be greater than zero and finite, got {value:g}")])
    if req.demand is not None:
        for field, given in (("headroom", req.headroom), ("deployment", req.deployment)):
            if given is not None:
                raise InputError([(field, "applies to a power budget only: a demand's fleet "
                                          "is sized by its throughput, not by power")])
    h, kind = req.headroom, req.deployment
    if h is not None and not (math.isfinite(h) and 0 <= h < 1):
        raise InputError([("headroom", f"must be at least 0 and less than 1, got {h:g}")])
    if kind is not None and kind not in core.DEPLOYMENTS:
        raise InputError([("deployment", f"must be node or rack, got {str(kind)[:40]!r}")])
    h, kind = h or 0.0, kind or "node"
    if req.availability is None:
        return 1.0, h, kind
    if req.power_budget is not None:
        raise InputError([("availability", "applies to a demand only: a power budget buys "
                                           "accelerators whether or not they serve")])
    a = req.availability
    if not (math.isfinite(a) and 0 < a <= 1):
        raise InputError([("availability", f"must be greater than zero and at most 1, "
                                           f"got {a:g}")])
    return a, h, kind


def _power_plan(budget: float, priced: Priced, headroom: float, kind: str) -> PowerPlan:
    """The whole ``kind`` deployments a ``budget`` [W at the scenario's boundary] holds, and
    1 GW, planned with ``headroom`` [fraction]; :class:`~core.PlanOverflow` beyond the
    counts' range."""
    r, s = priced.result, priced.result.scenario
    v = r.values
    per_node, per_rack = s.node.accelerators, s.rack.nodes
    nodes_each = per_rack if kind == "rack" else 1
    k = per_node * nodes_each
    planned = core.planning_power(v["power_per_accelerator"], k, headroom)
    deployments = core.deployments_for_budget(budget, planned)
    per_gw = core.deployments_for_budget(core.GIGAWATT, planned)
    if max(deployments, per_gw) * k > core.MAX_COUNT:
        raise core.PlanOverflow(f"the accelerators would be more than {core.MAX_COUNT:,}: "
                                f"the inputs overflow the calculation")
    ac = v["power_rack"] * k if kind == "rack" else v["node_wall_power"]
    return PowerPlan(kind, k, nodes_each, s.power.boundary, headroom, s.facility.pue,
                     s.accelerator.rack_power_basis == "all_in", ac,
                     v["power_facility"] * k, float(core.exact(v["power_per_accelerator"]) * k),
                     float(planned), budget, deployments, per_gw)


def _output(loaded: LoadedScenario, priced: Priced) -> tuple[float, str, str]:
    """Output token/s per accelerator [token/s], its basis (measured | implied) and how it
    was found: the point's measured output throughput when it has one, else its throughput x
    the output share of a request."""
    s = priced.result.scenario
    kind, t = s.operating_point.token_kind, priced.result.values["throughput"]
    if kind == "output":
        return t, "measured", "the operating point's throughput counts output tokens"
    reading = loaded.curve
    if reading is not None and len(reading.selection.points) == 1:
        i = reading.selection.points[0]
        measured = float(reading.curve.output_throughput[i])
        if math.isfinite(measured) and measured > 0:
            return measured, "measured", (f"the output throughput measured at the point read "
                                          f"on curve {reading.curve.key.id}")
    isl, osl = s.workload.isl, s.workload.osl
    shape, per = (("OSL / (ISL + OSL)", f"({isl:,g} + {osl:,g})") if kind == "mixed"
                  else ("OSL / ISL", f"{isl:,g}"))
    return (core.output_throughput(t, kind, isl, osl), "implied",
            f"no measured output throughput at this point: {kind} throughput x {shape} = "
            f"{t:,g} x {osl:,g} / {per}")


def plan(ctx: Context, req: PlanRequest) -> Plan:
    """Size the request's fleet and price it."""
    availability, headroom, kind = _checked(req)
    loaded = load_all(ctx, [req.spec], req.reading)[0]
    try:
        sized = price_loaded(loaded)
    except InputError as exc:
        raise exc.about(req.spec.subject) from None
    r, s = sized.result, sized.result.scenario
    t = r.values["throughput"]
    field, power_plan = req.sized_for, None
    try:
        if field == DEMAND:
            n = core.accelerators_for_demand(req.demand, t, s.utilisation, availability)
            nodes = core.nodes_for(n, s.node.accelerators)
            racks = core.racks_for(nodes, s.rack.nodes)
        else:  # whole deployments: the fleet never draws more than the budget
            power_plan = _power_plan(req.power_budget, sized, headroom, kind)
            n = power_plan.accelerators
            if kind == "rack":
                racks = power_plan.deployments
                nodes = racks * s.rack.nodes
            else:
                nodes = power_plan.deployments
                racks = core.racks_for(nodes, s.rack.nodes)
        out, basis, note = _output(loaded, sized)
        interactivity = s.operating_point.effective_interactivity
        users = core.concurrent_users(n, out, interactivity)
    except core.PlanOverflow as exc:
        raise InputError([(field, str(exc))]) from None
    priced, resulting = sized, s.utilisation
    if field == DEMAND:
        resulting = core.resulting_utilisation(req.demand, n, t)
        if resulting < MIN_UTILISATION:  # one accelerator, idle all but seconds a year
            raise InputError([(DEMAND, (
                f"must be at least {_up3(t * MIN_UTILISATION):g}, got {req.demand:g} (token/s): "
                f"one accelerator would serve {resulting:.3g} of its hours, below the "
                f"{MIN_UTILISATION:g} any scenario is priced at; the smallest demand this "
                f"scenario plans for keeps one accelerator that busy"))])
        priced = _at_utilisation(loaded, sized, resulting,
                                 f"plan: the demand over the fleet's capacity, "
                                 f"{req.demand:g} token/s / ({n:,} x {t:g} token/s)")
    planned = Plan(req, sized, priced, n, nodes, racks, users, availability, resulting, out,
                   basis, note, interactivity, power_plan)
    for total in ("power", "throughput", "capex", "cost_per_hour", "cost_per_month"):
        value = getattr(planned, total)  # capex is NaN (no value) for a rented accelerator
        if math.isinf(value) or (math.isnan(value) and total != "capex"):
            raise InputError([(field, f"the fleet's {total.replace('_', ' ')} is not finite: "
                                      f"the inputs overflow the calculation")])
    return planned


def _up3(x: float) -> float:
    """``x`` > 0 rounded up to 3 significant digits (a least value said so that typing it
    is enough)."""
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return math.ceil(x / step) * step


def _at_utilisation(loaded: LoadedScenario, sized: Priced, utilisation: float,
                    source: str) -> Priced:
    """The sized scenario priced again at ``utilisation`` [fraction], its source said."""
    def overflow() -> InputError:
        return InputError([(DEMAND, f"the cost per million tokens at the resulting "
                                    f"utilisation ({utilisation:g}) is not finite: the demand "
                                    f"is beyond the range of the calculation")])
    if not (math.isfinite(utilisation) and utilisation > 0):
        raise overflow()
    scenario = sized.result.scenario.model_copy(update={"utilisation": utilisation})
    provenance = {**sized.result.provenance, "utilisation": source}
    try:
        return price_loaded(LoadedScenario(scenario, provenance, loaded.origin, loaded.curve))
    except InputError:
        raise overflow() from None


def plan_workbook(planned: Plan) -> WorkbookFile:
    """The workbook (live formulas) of a plan's scenario as the plan prices it: at the
    fleet's resulting utilisation for a demand (the utilisation's source says so), at the
    scenario's own for a power budget; its per-accelerator and per-million-token figures
    are the plan's. There is no plan sheet: the fleet's counts and totals (accelerators x
    the per-accelerator figures, 730 hours a month) are in the plan's JSON and one-page
    summary; the cover's title names the fleet."""
    req, n = planned.request, planned.accelerators
    used = format_percent(planned.resulting_utilisation)
    if req.sized_for == DEMAND:
        what = (f"an average demand of {format_quantity(req.demand, 'token/s')}, priced at "
                f"the fleet's utilisation ({used})")
    else:
        pp = planned.power_plan
        what = (f"a power budget of {format_quantity(req.power_budget, 'W')}: "
                f"{pp.deployments:,} whole {pp.deployment}{'' if pp.deployments == 1 else 's'}"
                f" planned at {_watts(pp.planning)} each ({format_percent(pp.headroom)} "
                f"headroom; {pp.accelerators_per_gw:,} accelerators per GW), priced at the "
                f"scenario's utilisation ({used})")
    book = render_workbook([planned.priced], title=(
        f"Plan: {n:,} accelerator{'' if n == 1 else 's'} for {what}; figures per "
        f"accelerator (the fleet's totals are {n:,} x them)"))
    return WorkbookFile(book.content, f"plan_{book.filename}")
