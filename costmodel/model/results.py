"""Result and Disclosure: every figure with its unit, and the denominator that produced it."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from .. import __version__
from .errors import NonFiniteResult
from .evaluate import Evaluator
from .inputs import TYPICAL, Scenario
from .rates import ALL_IN, NOT_A_QUOTE
from .steps import MODEL, SHOWN, shown
from .units import SHOWN_CURRENCY

__all__ = ["Result", "Comparison", "quantity_json", "headline_json", "HEADLINE", "CONVENTIONS",
           "ALLOCATION_RULE", "MUST_BE_FINITE", "check_finite"]

# Figures shown first (table) and at the top level of the JSON result, besides groups.
HEADLINE = ["power_per_accelerator", "throughput", "throughput_per_kw", "tokens_per_kwh",
            "joules_per_token", "bandwidth_per_watt", "capex_per_accelerator", "cost_per_hour",
            "cost_per_mtok_energy", "cost_per_mtok_capex", "cost_per_mtok_opex",
            "cost_per_mtok_total", "price_per_mtok_total", "price_per_mtok_input",
            "price_per_mtok_output", "emissions_per_mtok", "emissions_market_per_mtok",
            "embodied_per_mtok", "emissions_total_per_mtok", "emissions_market_total_per_mtok"]

# Figures every priced scenario has; one that is not finite means inputs beyond float64's
# range, never an answer (optional figures such as emissions are null when an input is absent)
MUST_BE_FINITE = ["power_per_accelerator", "throughput", "tokens_per_kwh", "joules_per_token",
                  "cost_per_hour", "cost_per_mtok_energy", "cost_per_mtok_capex",
                  "cost_per_mtok_opex", "cost_per_mtok_total", "price_per_mtok_total",
                  "price_per_mtok_input", "price_per_mtok_output"]
EXTREME = 1e100  # an input this far from 1 (either way) is named as a likely overflow
# a cost or price per million tokens above this is no answer either (a trillion USD: no
# operating point costs that; 1e-300 utilisation would give 4e298): refused, never saved
MAX_COST_PER_MTOK = 1e12  # USD/Mtok
BOUNDED = [n for n in MUST_BE_FINITE if n.startswith(("cost_per_mtok", "price_per_mtok"))]
FAR = 1e3  # an input this far from its typical magnitude is named as driving a figure


CONVENTIONS = [
    "a year is 8,760 hours and 12 months; money is USD",
    "power and cost figures are per accelerator; node and rack power are shared equally",
    "throughput from a per-kW figure = figure x the power it was normalised by",
    "energy per hour = boundary power x (utilisation + (1 - utilisation) x idle fraction) x "
    "electricity price",
    "hosting is charged on rated rack-boundary power",
    "amortised capex per year = (capex - salvage x capex / (1+r)^n) x r(1+r)^n/((1+r)^n - 1); "
    "straight line when r = 0",
    "an hourly accelerator price replaces amortised capex and maintenance",
    "an all-in power per accelerator replaces the node and rack build-up at the rack "
    "boundary (PUE still applies at the facility boundary)",
    "cost per million tokens counts tokens of the operating point's token kind",
    "emissions per hour = boundary power x load factor x grid factor (location- or "
    "market-based); embodied emissions are spread straight-line over the economic life's "
    "hours, not discounted",
]

# what the emission figures count, and what they leave out (docs/emissions.md)
EMISSIONS_SCOPE = (
    "operational: scope 2 of the electricity drawn at the chosen power boundary (PUE "
    "included only at the facility boundary), location-based and market-based as the GHG "
    "Protocol's Scope 2 Guidance defines them; embodied: the product carbon footprints given "
    "(a scope 3 figure), amortised straight-line over financing.life. Not included: water, "
    "scope 1 (on-site generators, refrigerants), other scope 3 (transmission losses, "
    "upstream fuel, end of life), and no market instrument beyond the factor stated")
# what emissions_total_per_mtok and emissions_market_total_per_mtok count
TOTALS_WITH_EMBODIED = "operational and embodied"
TOTALS_OPERATIONAL = "operational only: no product carbon footprint given (embodied not stated)"
EMBODIED_METHOD = ("straight-line over financing.life, every hour of it (8,760 a year), "
                   "not discounted; per accelerator with its share of the node")

_IN_USD = {"currency": "USD", "calculated_in": "USD"}  # money without exchange rates
CALENDAR = ("hours are local time; weekdays weigh 5/7 of the year and weekend days 2/7; a "
            "month weighs its days in a 365-day year; a demand charge bills each month's "
            "busiest hour of power at the facility boundary, a demand period's charge the "
            "busiest hour within its hours")

ALLOCATION_RULE = ("a request's price (ISL input + OSL output tokens) is split so that an "
                   "output token costs pricing.output_weight input tokens")


_STEP_TEXT = {n: {"description": s.description, "expression": s.expression}
              for n, s in MODEL.steps.items() if not s.axes}


_PEAKS = "demand_period_peak_load_factor"


@cache
def _demand_peaks() -> Evaluator:
    """The evaluator of each demand period's busiest hour (a profile step, not a result)."""
    return Evaluator(MODEL, outputs=[_PEAKS])


def quantity_json(value: float | None, unit: str) -> dict[str, Any]:
    """``{"value": v, "unit": u}``; a missing or non-finite value is ``null``."""
    if value is None or not math.isfinite(value):
        return {"value": None, "unit": unit}
    return {"value": float(value), "unit": unit}


def _optional(value: float | None, unit: str) -> dict[str, Any] | None:
    """A quantity, or None where the input was not given at all."""
    return None if value is None else quantity_json(value, unit)


@dataclass
class Result:
    """Every declared step's value [its unit] for one scenario, and the disclosure."""
    scenario: Scenario
    values: dict[str, float]
    provenance: dict[str, str] = field(default_factory=dict)
    defaults_used: list[str] = field(default_factory=list)

    def value(self, name: str) -> float | None:
        v = self.values[name]
        return v if math.isfinite(v) else None

    def quantity(self, name: str) -> dict[str, Any]:
        return quantity_json(self.values[name], MODEL.steps[name].unit)

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def embodied_stated(self) -> bool:
        """Whether the scenario gives a product carbon footprint: else no embodied figure,
        and its totals with embodied are the operational emissions alone."""
        return self.scenario.embodied_basis != "none"

    @property
    def currency(self) -> str:
        """The currency results are shown in (``money.currency``)."""
        return self.scenario.money.currency

    def shown(self, name: str) -> tuple[float | None, str]:
        """A figure as the answer shows it: a money figure in the result currency (its step
        times ``money.rate``), with its unit; anything else as computed."""
        unit = MODEL.steps[name].unit
        if name in _SHOWN and self.currency != "USD":
            name = shown(name)
            unit = MODEL.steps[name].unit.replace(SHOWN_CURRENCY, self.currency)
        return self.value(name), unit

    # -- disclosure ----------------------------------------------------------------------
    def disclosure(self, *, sources: bool = True) -> dict[str, Any]:
        """What the figures rest on; ``sources=False`` leaves out the per-input sources."""
        s = self.scenario
        op, w, f = s.operating_point, s.workload, s.financing
        q = quantity_json
        return {
            "boundary": s.power.boundary,
            "power_basis": s.power.basis,
            "power_per_accelerator": self.quantity("power_per_accelerator"),
            "accelerator": s.accelerator.name,
            "operating_point": {
                "chosen": op.chosen,
                "label": op.label,
                "throughput_basis": op.throughput_basis,
                "throughput": self.quantity("throughput"),
                "throughput_per_kw_as_given": _optional(op.throughput_per_kw, "token/s/kW"),
                "normalised_by": (q(s.normalising_power, "W")
                                  if op.throughput_per_kw is not None else None),
                "interactivity": _optional(op.effective_interactivity, "token/s/user"),
                "tbt": _optional(op.effective_tbt, "ms"),
                "ttft": _optional(op.ttft, "s"),
                "e2e_latency": _optional(op.e2e_latency, "s"),
                "source": op.source,
                "note": op.note,
            },
            "token_kind": op.token_kind,
            "workload": {"model": w.model, "isl": q(w.isl, "token"), "osl": q(w.osl, "token"),
                         "precision": w.precision, "framework": w.framework,
                         "speculative_decoding": w.speculative_decoding,
                         "disaggregated": w.disaggregated},
            "electricity": self.electricity_disclosure(),
            "emissions": self.emissions_disclosure(),
            "financing": {"cost_basis": s.accelerator.cost_basis,
                          "life": q(f.life, "year"),
                          "cost_of_capital": q(f.cost_of_capital, "1/year"),
                          "salvage": f.salvage, "maintenance": q(f.maintenance, "1/year"),
                          "hourly_price": _optional(s.accelerator.hourly_price, "USD/h")},
            "utilisation": s.utilisation,
            "idle_power": s.idle_power,
            "load": None if s.load is None else {
                "basis": "hourly", "hourly": s.load.hourly, "weekend": s.load.weekend,
                "peak_load_factor": self.values["peak_load_factor"],
                "calendar": CALENDAR},
            "pricing": {"gross_margin": s.pricing.gross_margin,
                        "output_weight": s.pricing.output_weight,
                        "allocation": ALLOCATION_RULE},
            "reference_rate": self.rate_disclosure(),
            "money": self.money_disclosure() if s.money.fx else dict(_IN_USD),
            "conventions": CONVENTIONS,
            "defaults_used": self.defaults_used,
            **({"sources": dict(sorted(self.provenance.items()))} if sources else {}),
        }

    def emissions_disclosure(self) -> dict[str, Any]:
        """What the emission figures rest on: the energy's boundary, each factor with its
        basis (flat or hourly), year and source, and the factor per kWh drawn that resulted;
        the embodied emissions and how they are spread; what is left out."""
        s = self.scenario
        e, a, n = s.electricity, s.accelerator, s.node

        def factor(annual: float | None, hourly: list[float] | None, step: str,
                   year: str | None, source: str | None) -> dict[str, Any] | None:
            if annual is None:
                return None
            return {"factor": quantity_json(annual, "gCO2e/kWh"),
                    "basis": "flat" if hourly is None else "hourly",
                    "hourly": hourly, "per_kwh_drawn": self.quantity(step),
                    "year": year, "source": source}
        market = factor(e.market_carbon_intensity, e.market_carbon_hourly,
                        "grid_factor_market", e.market_carbon_year, e.market_carbon_source)
        if market is not None:
            market["instrument"] = e.market_carbon_instrument
        embodied = None
        if s.embodied_basis != "none":
            embodied = {"accelerator": _optional(a.embodied, "gCO2e"),
                        "node": _optional(n.embodied, "gCO2e"),
                        "per_accelerator": self.quantity("embodied_per_accelerator"),
                        "life": quantity_json(s.financing.life, "year"),
                        "method": EMBODIED_METHOD}
        return {"boundary": s.power.boundary, "power_basis": s.power.basis,
                "location": factor(e.carbon_intensity, e.carbon_hourly,
                                   "grid_factor_location", e.carbon_year, e.carbon_source),
                "market": market, "embodied": embodied,
                "totals": TOTALS_WITH_EMBODIED if embodied else TOTALS_OPERATIONAL,
                "scope": EMISSIONS_SCOPE}

    def money_disclosure(self) -> dict[str, Any]:
        """The currency the figures are shown in and the stated exchange rates used."""
        m = self.scenario.money

        def rate(code: str) -> dict[str, Any]:
            fx = m.fx[code]
            return {"value": fx.rate, "unit": f"{code}/USD", "date": fx.date,
                    "source": fx.source}
        out: dict[str, Any] = {"currency": m.currency, "calculated_in": "USD"}
        if m.currency != "USD":
            out["rate"] = rate(m.currency)
        if m.converted:
            out["inputs_converted"] = {code: rate(code) for code in m.converted}
        return out

    def electricity_disclosure(self) -> dict[str, Any]:
        """The electricity priced: a flat price with its source and date, or a tariff (its
        name, utility, effective date and source, which stand as the source and date); the
        energy price per kWh drawn that resulted, and the bill per kWh with demand and fixed
        charges."""
        e = self.scenario.electricity
        t = e.tariff
        out: dict[str, Any] = {
            "pricing": "flat" if t is None else "tariff",
            "price": quantity_json(e.price, "USD/kWh"),
            "source": e.source if t is None else t.source,
            "date": e.date if t is None else t.effective,
            "carbon_intensity": _optional(e.carbon_intensity, "gCO2e/kWh")}
        if e.carbon_source is not None or e.region is not None or e.sector is not None \
                or e.period is not None:  # (none, mostly: one test instead of four)
            for name in ("carbon_source", "region", "sector", "period"):
                if getattr(e, name) is not None:
                    out[name] = getattr(e, name)
        if t is not None:
            out["tariff"] = {
                "name": t.name, "utility": t.utility, "effective": t.effective,
                "source": t.source, "seasons": [s.months for s in t.seasons],
                "weekend_rates": t.weekend_rates,
                "demand_charge": quantity_json(t.demand_charge, "USD/kW/month"),
                "demand_periods": self.demand_periods_disclosure(),
                "fixed_charge": quantity_json(t.fixed_charge, "USD/month"),
                "site_accelerators": self.values["site_accelerators"],
                "scale": t.scale, "shift": quantity_json(t.shift, "USD/kWh"),
                "calendar": CALENDAR}
            out["effective_price"] = self.quantity("electricity_effective_price")
            out["price_all_in"] = self.quantity("electricity_price_all_in")
        return out

    def demand_periods_disclosure(self) -> list[dict[str, Any]]:
        """The tariff's demand periods: each one's charge, hours, months and the busiest
        hour's power within its hours (a fraction of operating-point power), as billed."""
        t = self.scenario.electricity.tariff
        if t is None or not t.demand_periods:
            return []
        peaks = np.broadcast_to(_demand_peaks()(self.scenario.to_inputs())[_PEAKS],
                                (len(t.demand_periods), 1))
        return [{"name": p.name, "demand_charge": quantity_json(p.demand_charge,
                                                                 "USD/kW/month"),
                 "hours": sorted(p.hours),
                 "weekend_hours": None if p.weekend_hours is None else sorted(p.weekend_hours),
                 "months": p.billed_months, "peak_load_factor": float(peak[0])}
                for p, peak in zip(t.demand_periods, peaks, strict=True)]

    def rate_disclosure(self) -> dict[str, Any] | None:
        """The reference rate the scenario was priced from (None if none): which version,
        its origin, what all-in means here, and every input that departs from what the rate
        sets (a value given instead of the rate's, energy or hosting charged on top)."""
        s = self.scenario
        r = s.reference_rate
        if r is None:
            return None
        a = s.accelerator
        departs = []
        if a.hourly_price is None or not math.isclose(a.hourly_price, r.hourly_price):
            shown = "none" if a.hourly_price is None else f"{a.hourly_price:g} USD/h"
            departs.append(f"accelerator.hourly_price is {shown}, not the rate's "
                           f"{r.hourly_price:g} USD/h")
        if a.all_in_power is None or not math.isclose(a.all_in_power, r.all_in_power):
            shown = "none" if a.all_in_power is None else f"{a.all_in_power:g} W"
            departs.append(f"accelerator.all_in_power is {shown}, not the rate's "
                           f"{r.all_in_power:g} W")
        if s.electricity.tariff is not None:
            departs.append(f"electricity.tariff {s.electricity.tariff.name!r}: energy, demand "
                           f"and fixed charges are charged on top of the all-in rate")
        elif s.electricity.price != 0:
            departs.append(f"electricity.price is {s.electricity.price:g} USD/kWh: energy is "
                           f"charged on top of the all-in rate")
        if s.facility.hosting != 0:
            departs.append(f"facility.hosting is {s.facility.hosting:g} USD/kW/month: "
                           f"hosting is charged on top of the all-in rate")
        if s.power.boundary != "rack":
            departs.append(f"power.boundary is {s.power.boundary}: the rate's all-in power is "
                           f"at the rack boundary")
        return {"key": r.key, "accelerator": r.accelerator, "kind": r.kind,
                "version": r.date, "origin": r.source, "note": r.note,
                "hourly_price": quantity_json(r.hourly_price, "USD/h"),
                "all_in_power": quantity_json(r.all_in_power, "W"),
                "all_in": f"{ALL_IN}: the rate is the hourly price, its all-in power the "
                          f"power per accelerator at the rack boundary (PUE applies at the "
                          f"facility boundary); electricity price and hosting are 0 unless "
                          f"given",
                "status": NOT_A_QUOTE, "departures": departs}

    # -- renderings ------------------------------------------------------------------------
    def to_json(self, view: str = "full") -> dict[str, Any]:
        """The result as JSON data. ``view="summary"``: the headline figures and the
        disclosure without its per-input sources, no steps."""
        out: dict[str, Any] = {"scenario": self.name,
                               "engine": {"name": "costmodel", "version": __version__}}
        values, finite, code = self.values, math.isfinite, self.currency
        usd = code == "USD"
        for group, figures in _HEADLINE_GROUPS if usd else _SHOWN_GROUPS:  # as headline_json
            table = out if group is None else out.setdefault(group, {})  # nests them
            for name, key, unit in figures:
                v = values[name]
                table[key] = {"value": float(v) if v is not None and finite(v) else None,
                              "unit": unit if usd else unit.replace(SHOWN_CURRENCY, code)}
        disclosure = self.disclosure(sources=view != "summary")
        if view != "summary":
            out["steps"] = {name: {**self.quantity(name), **_STEP_TEXT[name]}
                            for name in MODEL.scalar_steps}
        out["disclosure"] = disclosure
        return out


_HEADLINE_LAYOUT = [(n, MODEL.steps[n].group, MODEL.steps[n].member, MODEL.steps[n].unit)
                    for n in HEADLINE]
_SHOWN = frozenset(SHOWN)
# in another currency: each money figure read from its shown(...) step, in shown_currency
_SHOWN_LAYOUT = [(shown(n), g, m, MODEL.steps[shown(n)].unit) if n in _SHOWN else (n, g, m, u)
                 for n, g, m, u in _HEADLINE_LAYOUT]


def _headline_groups(layout: list[tuple[str, str | None, str | None, str]]
                     ) -> list[tuple[str | None, list[tuple[str, str, str]]]]:
    """The headline figures in runs of one group (None: at the top level), in HEADLINE's
    order: (group, [(step name, key in the group, unit)])."""
    runs: list[tuple[str | None, list[tuple[str, str, str]]]] = []
    for name, group, member, unit in layout:
        key = (group or None, [(name, member if group else name, unit)])
        if runs and runs[-1][0] == key[0]:
            runs[-1][1].extend(key[1])
        else:
            runs.append(key)
    return runs


_HEADLINE_GROUPS = _headline_groups(_HEADLINE_LAYOUT)
_SHOWN_GROUPS = _headline_groups(_SHOWN_LAYOUT)


def headline_json(figure: Any) -> dict[str, Any]:
    """The headline figures as a result or comparison nests them (``cost_per_mtok.energy``:
    a step's group, then its member), each ``figure(step name)``."""
    out: dict[str, Any] = {}
    for name in HEADLINE:
        step = MODEL.steps[name]
        if step.group:
            out.setdefault(step.group, {})[step.member] = figure(name)
        else:
            out[name] = figure(name)
    return out


@dataclass
class Comparison:
    """Several results side by side; ratios are each result's figure over the first's."""
    results: list[Result]

    def ratios(self, name: str) -> list[float | None]:
        base = self.results[0].values[name]
        out: list[float | None] = []
        for r in self.results:
            v = r.values[name]
            ok = math.isfinite(v) and math.isfinite(base) and base != 0
            out.append(v / base if ok else None)
        return out

    def to_json(self, view: str = "full") -> dict[str, Any]:
        """Side by side; ``ratios`` nest like the results they divide
        (``ratios.cost_per_mtok.energy`` beside ``cost_per_mtok.energy``)."""
        return {
            "baseline": self.results[0].name,
            "scenarios": [r.to_json(view) for r in self.results],
            "ratios": headline_json(self.ratios),
        }


def check_finite(result: Result) -> None:
    """Refuse a result whose costs overflowed: :class:`NonFiniteResult` naming the inputs
    (dotted keys) whose magnitude is beyond 10^+-100 among those the figure reads."""
    bad = [n for n in MUST_BE_FINITE if not math.isfinite(result.values[n])]
    if not bad:
        check_bounded(result)
        return
    inputs = result.scenario.to_inputs()
    read = MODEL.inputs_read(MODEL.dependencies(bad))
    extreme = sorted(MODEL.inputs[n].key for n in read if n in MODEL.inputs
                     and not MODEL.inputs[n].axes  # a profile is checked as it is read
                     and math.isfinite(inputs[n]) and inputs[n] != 0
                     and not 1 / EXTREME < abs(inputs[n]) < EXTREME)
    why = (f"{bad[0]} is not a finite number: the inputs are beyond the range of the "
           f"calculation")
    raise NonFiniteResult([(key, f"{inputs_value(inputs, key)} overflows the calculation "
                                 f"({bad[0]} is not finite)") for key in extreme]
                          or [("", why)])


def out_of_bounds(values: Any) -> Any:
    """Whether each figure (a number or an array) of :data:`BOUNDED` in ``values`` (by step
    name) is beyond :data:`MAX_COST_PER_MTOK` (a bool, or an array of them)."""
    over = False
    for n in BOUNDED:
        over = over | (abs(values[n]) > MAX_COST_PER_MTOK)
    return over


def check_bounded(result: Result) -> None:
    """Refuse a finite result whose cost or price per Mtok is beyond
    :data:`MAX_COST_PER_MTOK`: :class:`NonFiniteResult` naming the inputs the figure reads
    that are furthest (beyond :data:`FAR`) from their typical magnitude, the likeliest to
    have driven it there."""
    big = [n for n in BOUNDED if abs(result.values[n]) > MAX_COST_PER_MTOK]
    if not big:
        return
    inputs = result.scenario.to_inputs()
    far = []
    for n in MODEL.inputs_read(MODEL.dependencies(big)):
        spec = MODEL.inputs.get(n)
        typical = TYPICAL.get(spec.unit) if spec is not None and not spec.axes else None
        value = inputs.get(n)
        if typical and value and math.isfinite(value):
            ratio = abs(value) / typical
            if not 1 / FAR < ratio < FAR:
                far.append((-abs(math.log10(ratio)), spec.key))
    worst = max(big, key=lambda n: abs(result.values[n]))
    figure = f"{worst} would be {result.values[worst]:.3g} USD/Mtok, above the " \
             f"{MAX_COST_PER_MTOK:g} USD/Mtok any result may be"
    raise NonFiniteResult([(key, f"{inputs_value(inputs, key)}: {figure}")
                           for _, key in sorted(far)[:3]] or [("", figure)])


def inputs_value(inputs: dict[str, float], key: str) -> str:
    name = key.replace(".", "_")
    return f"{inputs[name]:g} {MODEL.inputs[name].unit}"
