"""Capacity planning: the fleet a demand needs (``costmodel plan --demand``), or the fleet a
power budget buys (``--power-budget``), priced.

The scenario is loaded and priced once, read where the request says (its own point, or a
named interactivity); the sizing arithmetic is the core's (:mod:`costmodel.decisions.plan`) on that
result's own steps. A fleet sized for a demand is rounded up, so it serves the demand at a
lower utilisation than the scenario's: it is priced again at that utilisation, and its cost
per million tokens is the demand's. A fleet bought with a power budget is priced at the
scenario's utilisation.

Errors are :class:`~costmodel.model.errors.InputError`: the scenario's marked with the spec's
subject, the plan's own at the request's fields (``demand``, ``power_budget``,
``availability``) for the face to name as its options.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..decisions import plan as core
from ..model.errors import InputError
from ..model.results import quantity_json
from ..render.display import format_percent, format_quantity
from ..sources.scenario_file import LoadedScenario
from .context import Context
from .load import load_all
from .pricing import Priced, WorkbookFile, price_loaded, render_workbook
from .specs import OWN_POINT, Reading, ScenarioSpec

__all__ = ["PlanRequest", "Plan", "plan", "plan_workbook"]

DEMAND, BUDGET = "demand", "power_budget"
_SECONDS_PER_MONTH = core.HOURS_PER_MONTH * 3600.0  # [s/month]
_TOKENS_PER_MTOK = 1e6
_COST_MEMBERS = ("energy", "capex", "opex", "total")


@dataclass(frozen=True)
class PlanRequest:
    """What to plan: a scenario, and exactly one of an average ``demand`` [token/s, of the
    scenario's token kind] or a ``power_budget`` [W at the scenario's boundary]; where its
    curve is read; the ``availability`` [fraction of hours, (0, 1]] of a demand's fleet
    (None: 1)."""
    spec: ScenarioSpec
    demand: float | None = None
    power_budget: float | None = None
    reading: Reading = OWN_POINT
    availability: float | None = None

    @property
    def sized_for(self) -> str:
        return DEMAND if self.demand is not None else BUDGET


@dataclass(frozen=True)
class Plan:
    """A sized fleet and its cost. ``sized``: the scenario at its own utilisation (the
    figures the fleet was sized on); ``priced``: at the fleet's resulting utilisation (the
    same for a power budget). Counts [count]; utilisations and availability [fraction];
    ``output_per_accelerator`` [token/s]; ``interactivity`` [token/s/user]."""
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
            rule = "accelerators = floor(power budget / power per accelerator at the boundary)"
            per_month = None
        return {
            "sized_for": req.sized_for,
            "demand": None if req.demand is None else q(req.demand, "token/s"),
            "demand_per_month": None if per_month is None else q(per_month, "Mtok/month"),
            "power_budget": None if req.power_budget is None else q(req.power_budget, "W"),
            "availability": self.availability if req.sized_for == DEMAND else None,
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
            "nodes": "ceil(accelerators / accelerators per node)",
            "racks": "ceil(nodes / nodes per rack)",
            "capex": "accelerators x capital cost per accelerator" + (
                "; the accelerators are rented (an hourly price): this is what buying them "
                "would cost, and the cost per hour carries the rent instead"
                if s.accelerator.cost_basis == "rent" else ""),
            "rounding": list(core.ROUNDING),
            "hours_per_month": core.HOURS_PER_MONTH,
        }

    def to_json(self) -> dict[str, Any]:
        """The fleet totals at the top (counts, then ``{"value", "unit"}`` quantities), the
        cost per million tokens of the plan's utilisation, and the disclosure: the priced
        scenario's, with ``plan`` saying what the plan assumed."""
        r = self.priced.result
        q = quantity_json
        return {
            "scenario": r.name,
            "engine": {"name": "costmodel", "version": __version__},
            "accelerators": self.accelerators,
            "nodes": self.nodes,
            "racks": self.racks,
            "users": self.users,
            "power": q(self.power, "W"),
            "throughput": q(self.throughput, "token/s"),
            "capex": q(self.capex, "USD"),
            "cost_per_hour": q(self.cost_per_hour, "USD/h"),
            "cost_per_month": q(self.cost_per_month, "USD/month"),
            "cost_per_mtok": {m: r.quantity(f"cost_per_mtok_{m}") for m in _COST_MEMBERS},
            "disclosure": {**r.disclosure(), "plan": self.assumptions()},
        }


def _checked(req: PlanRequest) -> float:
    """The request's own rules; the availability to size with [fraction]."""
    if (req.demand is None) == (req.power_budget is None):
        raise InputError([(DEMAND, "give exactly one of demand or power_budget")])
    for field, value in ((DEMAND, req.demand), (BUDGET, req.power_budget)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError([(field, f"must be greater than zero and finite, got {value:g}")])
    if req.availability is None:
        return 1.0
    if req.power_budget is not None:
        raise InputError([("availability", "applies to a demand only: a power budget buys "
                                           "accelerators whether or not they serve")])
    a = req.availability
    if not (math.isfinite(a) and 0 < a <= 1):
        raise InputError([("availability", f"must be greater than zero and at most 1, "
                                           f"got {a:g}")])
    return a


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
    availability = _checked(req)
    loaded = load_all(ctx, [req.spec], req.reading)[0]
    try:
        sized = price_loaded(loaded)
    except InputError as exc:
        raise exc.about(req.spec.subject) from None
    r, s = sized.result, sized.result.scenario
    t, power = r.values["throughput"], r.values["power_per_accelerator"]
    field = req.sized_for
    try:
        if field == DEMAND:
            n = core.accelerators_for_demand(req.demand, t, s.utilisation, availability)
        else:
            n = core.accelerators_for_budget(req.power_budget, power)
        nodes = core.nodes_for(n, s.node.accelerators)
        racks = core.racks_for(nodes, s.rack.nodes)
        out, basis, note = _output(loaded, sized)
        interactivity = s.operating_point.effective_interactivity
        users = core.concurrent_users(n, out, interactivity)
    except core.PlanOverflow as exc:
        raise InputError([(field, str(exc))]) from None
    priced, resulting = sized, s.utilisation
    if field == DEMAND:
        resulting = core.resulting_utilisation(req.demand, n, t)
        priced = _at_utilisation(loaded, sized, resulting,
                                 f"plan: the demand over the fleet's capacity, "
                                 f"{req.demand:g} token/s / ({n:,} x {t:g} token/s)")
    planned = Plan(req, sized, priced, n, nodes, racks, users, availability, resulting, out,
                   basis, note, interactivity)
    for total in ("power", "throughput", "capex", "cost_per_hour", "cost_per_month"):
        value = getattr(planned, total)  # capex is NaN (no value) for a rented accelerator
        if math.isinf(value) or (math.isnan(value) and total != "capex"):
            raise InputError([(field, f"the fleet's {total.replace('_', ' ')} is not finite: "
                                      f"the inputs overflow the calculation")])
    return planned


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
        what = (f"a power budget of {format_quantity(req.power_budget, 'W')}, priced at the "
                f"scenario's utilisation ({used})")
    book = render_workbook([planned.priced], title=(
        f"Plan: {n:,} accelerator{'' if n == 1 else 's'} for {what}; figures per "
        f"accelerator (the fleet's totals are {n:,} x them)"))
    return WorkbookFile(book.content, f"plan_{book.filename}")
