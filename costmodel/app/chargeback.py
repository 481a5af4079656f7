"""Chargeback (``costmodel chargeback``, ``POST /api/v1/chargeback``, the Chargeback page):
who used the fleet over a period, and what each tenant owes.

A fleet (:mod:`costmodel.sources.fleet_file`) is pools, each a scenario and a size. Usage
records (:mod:`costmodel.sources.usage`) are summed by tenant and pool
(:func:`costmodel.decisions.chargeback.aggregate`); each pool's measured utilisation is read
from them, its scenario priced at it through the engine (energy follows the load), and its
cost over the period split among the tenants by the declared arithmetic
(:mod:`costmodel.decisions.chargeback_calculation`). Money is rounded to cents by largest
remainder, so the tenants' charges and the idle line add up to the fleet's cost in cents on
every face (the JSON, the table, the workbook's check, the FOCUS CSV).
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..decisions import chargeback_calculation as calc
from ..decisions.chargeback import (
    Period,
    Usage,
    aggregate,
    largest_remainder,
    parse_period,
)
from ..decisions.market import MarketPrices
from ..decisions.plan import whole_up
from ..model.errors import InputError
from ..model.inputs import MIN_UTILISATION, Load
from ..model.results import TOTALS_OPERATIONAL, TOTALS_WITH_EMBODIED, Result, check_finite
from ..sources.fleet_file import Fleet, Pool, validate_fleet
from ..sources.scenario_file import read_scenario_file
from ..sources.shipped import SHIPPED, shipped_scenario
from .build import LoadedScenario
from .context import Context
from .engine import price_scenario as price_result
from .load import load
from .pricing import WorkbookFile
from .profit import MarketSpec, market_for
from .specs import FileScenario, InlineScenario, ScenarioSpec

__all__ = ["ChargebackRequest", "Chargeback", "PoolLedger", "Line", "chargeback",
           "chargeback_workbook", "focus_csv", "read_fleet", "price_at", "RULES",
           "IDLE_RULES", "COMPONENTS", "MAX_TENANTS", "MAX_USAGE_ROWS", "usage_from_rows",
           "usage_from_file"]

RULES = calc.RULES
IDLE_RULES = calc.IDLE_RULES
# the parts of a tenant's charge on a pool, in the order a line's cents are split into
COMPONENTS = ("reserved", "input", "cached_input", "output", "idle")
EMISSION_BASES = ("location", "market")
EMISSIONS_RULE = ("emissions are charged as the cost is (reserved shares, usage, the idle "
                  "rule), each pool's operational emissions at the measured utilisation plus "
                  "its embodied emissions, location- and market-based; kgCO2e, not rounded "
                  "(docs/emissions.md)")
MAX_TENANTS = 10_000  # tenants of one chargeback on the service (each a row everywhere)
ROUNDING = ("cents by largest remainder: each (tenant, pool) line and each pool's idle line "
            "floored to the cent, the cents left given to the largest remainders (ties: the "
            "earlier line), so the lines add up to the fleet's cost in cents; a line's parts "
            "are split the same way")


@dataclass(frozen=True)
class ChargebackRequest:
    """A chargeback as a face gives it: the fleet (plain data: a file's or a body's), the
    usage records, the folder a pool's scenario path is beside (None: inline scenarios
    only, as on the service), the period (None: the fleet's), the tenant key and the idle
    rule; ``where`` is the path of the fleet in errors."""
    fleet: Mapping[str, Any]
    records: Any
    base: Path | None = None
    period: str | None = None
    by: str = "tenant"
    idle: str = "separate"
    where: str = "fleet"


@dataclass(frozen=True)
class PoolLedger:
    """One pool over the period: its scenario priced at the measured utilisation
    (``result``) and at its own (``assumed``), its terms, its charges (one use a tenant, in
    the ledger's tenant order), how it was sized, its reservations [fraction] and its
    market (None: none given)."""
    pool: Pool
    loaded: LoadedScenario
    result: Result
    assumed: Result
    terms: calc.PoolTerms
    charge: calc.PoolCharge
    uses: list[calc.Use]
    requests: np.ndarray
    sized: str
    reserved: dict[str, float]
    market: MarketPrices | None
    # the pool's emissions charged as its cost is [gCO2e], by basis (location, market);
    # a basis without its factor is left out
    emissions: dict[str, calc.PoolCharge] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.pool.name


@dataclass(frozen=True)
class Line:
    """One line of the ledger: a tenant's charge on a pool (``tenant`` None: the pool's idle
    line), its amount [USD] and cents, and its parts by :data:`COMPONENTS` (amount [USD],
    cents)."""
    tenant: str | None
    pool: str
    amount: float
    cents: int
    parts: dict[str, tuple[float, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Chargeback:
    """The ledger of a period (see the module docstring)."""
    fleet: Fleet
    period: Period
    by: str
    idle_rule: str
    tenants: tuple[str, ...]
    pools: list[PoolLedger]
    lines: list[Line]
    usage: Usage
    sources: tuple[str, ...]

    # -- totals ------------------------------------------------------------------------------
    @property
    def total(self) -> float:
        """The fleet's cost for the period [USD], unrounded."""
        return sum(p.charge.cost for p in self.pools)

    @property
    def total_cents(self) -> int:
        return sum(line.cents for line in self.lines)

    def tenant_cents(self, tenant: str) -> int:
        return sum(x.cents for x in self.lines if x.tenant == tenant)

    @property
    def idle_cents(self) -> int:
        return sum(x.cents for x in self.lines if x.tenant is None)

    def tenant_part_cents(self, tenant: str, part: str) -> int:
        return sum(x.parts[part][1] for x in self.lines if x.tenant == tenant)

    def tokens(self, tenant_index: int) -> dict[str, float]:
        """A tenant's tokens by kind over every pool [token]."""
        out = {"input": 0.0, "cached_input": 0.0, "output": 0.0}
        for p in self.pools:
            u = p.uses[tenant_index]
            out["input"] += float(u.input)
            out["cached_input"] += float(u.cached)
            out["output"] += float(u.output)
        return out

    def list_price(self, tenant_index: int | None = None) -> float | None:
        """What the tokens (a tenant's, or everyone's) would have cost at each pool's market
        prices [USD]; None when a pool with usage has no market."""
        total = 0.0
        for p in self.pools:
            idx = range(len(self.tenants)) if tenant_index is None else [tenant_index]
            tokens = [p.uses[k] for k in idx]
            if all(float(u.input + u.cached + u.output) == 0 for u in tokens):
                continue
            if p.market is None:
                return None
            m = p.market
            total += sum(float(u.input) * m.price_input + float(u.cached) *
                         m.price_cached_input + float(u.output) * m.price_output
                         for u in tokens) / 1e6
        return total

    @property
    def capacity(self) -> float:
        return sum(float(p.charge.capacity) for p in self.pools)

    # -- the answer --------------------------------------------------------------------------
    def emissions_json(self, k: int | None = None) -> dict[str, Any]:
        """Emissions by basis [kgCO2e]: a tenant's (``k``) over every pool, or the fleet's
        with its idle line; null where a pool has no factor for the basis."""
        out: dict[str, Any] = {}
        for basis in EMISSION_BASES:
            charges = [p.emissions.get(basis) for p in self.pools]
            if any(c is None for c in charges):
                out[basis] = None if k is not None else {"total": _q(None, "kgCO2e")}
                continue
            if k is not None:
                out[basis] = _q(sum(float(c.uses[k].total) for c in charges) / 1000, "kgCO2e")
            else:
                out[basis] = {"total": _q(sum(float(c.cost) for c in charges) / 1000,
                                          "kgCO2e"),
                              "idle_line": _q(sum(float(c.idle_line) for c in charges) / 1000,
                                              "kgCO2e")}
        return out

    def tenant_json(self, k: int) -> dict[str, Any]:
        t = self.tenants[k]
        cents = self.tenant_cents(t)
        tokens = self.tokens(k)
        total_tokens = sum(tokens.values())
        eq = sum(float(p.charge.uses[k].equivalents) for p in self.pools)
        listed = self.list_price(k)
        reserved_cap = sum(p.reserved.get(t, 0.0) * float(p.charge.capacity)
                           for p in self.pools)
        within = sum(min(float(p.charge.uses[k].equivalents),
                         p.reserved.get(t, 0.0) * float(p.charge.capacity)) for p in self.pools)
        return {
            "tenant": t,
            "charge": _usd(cents),
            "parts": {part: _usd(self.tenant_part_cents(t, part)) for part in COMPONENTS},
            "tokens": {**tokens, "total": total_tokens},
            "requests": float(sum(p.requests[k] for p in self.pools)),
            "equivalents": eq,
            "cost_per_mtok": _q(cents / 100 / total_tokens * 1e6 if total_tokens else None,
                                "USD/Mtok"),
            "share": cents / self.total_cents if self.total_cents else None,
            "utilisation": eq / self.capacity if self.capacity else None,
            "reserved_utilisation": within / reserved_cap if reserved_cap else None,
            "list_price": _q(listed, "USD"),
            "saving": _q(None if listed is None else listed - cents / 100, "USD"),
            "emissions": self.emissions_json(k),
        }

    def pool_json(self, p: PoolLedger) -> dict[str, Any]:
        c, t = p.charge, p.terms
        r, a = p.result, p.assumed
        idle_line = sum(x.cents for x in self.lines if x.tenant is None and x.pool == p.name)
        return {
            "pool": p.name, "scenario": r.name, "accelerators": int(t.accelerators),
            "sized": p.sized, "models": list(p.pool.models) or ["(every record)"],
            "hours": t.hours,
            "cost_per_accelerator_hour": {
                "energy": _q(t.energy, "USD/h"), "capital": _q(t.capital, "USD/h"),
                "operating": _q(t.operating, "USD/h"),
                "total": _q(t.energy + t.capital + t.operating, "USD/h")},
            "cost": _q(c.cost, "USD"),
            "cost_by_part": {k: _q(t.accelerators * t.hours * v, "USD") for k, v in
                             (("energy", t.energy), ("capital", t.capital),
                              ("operating", t.operating))},
            "equivalents_per_accelerator_hour": _q(t.per_hour, "token/h"),
            "output_weight": t.output_weight, "cached_weight": t.cached_weight,
            "capacity": _q(c.capacity, "token"), "used": _q(c.used, "token"),
            "utilisation": {"measured": c.utilisation,
                            "assumed": a.scenario.utilisation,
                            "over_capacity": bool(c.used > c.capacity)},
            "cost_per_mtok": {"measured": _q(_finite(r.values["cost_per_mtok_total"]),
                                             "USD/Mtok"),
                              "assumed": _q(_finite(a.values["cost_per_mtok_total"]),
                                            "USD/Mtok"),
                              "token_kind": r.scenario.operating_point.token_kind},
            "usage_rate": _q(c.rate * 1e6, "USD/Mtok equivalent"),
            "reserved": dict(p.reserved),
            "idle": _q(c.idle, "USD"), "idle_line": _usd(idle_line),
            "market": None if p.market is None else p.market.to_json(),
            "emissions": {b: None if b not in p.emissions else
                          {"total": _q(float(p.emissions[b].cost) / 1000, "kgCO2e"),
                           "idle_line": _q(float(p.emissions[b].idle_line) / 1000, "kgCO2e")}
                          for b in EMISSION_BASES},
            "emissions_counted": TOTALS_WITH_EMBODIED if r.embodied_stated
            else TOTALS_OPERATIONAL,
        }

    def to_json(self) -> dict[str, Any]:
        listed = self.list_price()
        total = self.total_cents
        parts = {k: sum(float(p.terms.accelerators * p.terms.hours * getattr(p.terms, k))
                        for p in self.pools) for k in ("energy", "capital", "operating")}
        return {
            "engine": {"name": "costmodel", "version": __version__},
            "fleet": self.fleet.name,
            "period": {"label": self.period.label, "start": self.period.iso("start"),
                       "end": self.period.iso("end"), "hours": self.period.hours},
            "currency": "USD",
            "total": _usd(total),
            "cost_by_part": {k: _q(v, "USD") for k, v in parts.items()},
            "idle_line": _usd(self.idle_cents),
            "emissions": self.emissions_json(),
            "tenants": [self.tenant_json(k) for k in range(len(self.tenants))],
            "pools": [self.pool_json(p) for p in self.pools],
            "list_price": _q(listed, "USD"),
            "saving": _q(None if listed is None else listed - total / 100, "USD"),
            "check": {"tenants": _usd(sum(self.tenant_cents(t) for t in self.tenants)),
                      "idle_line": _usd(self.idle_cents), "fleet": _usd(total),
                      "fleet_unrounded": _q(self.total, "USD"),
                      "conserved": sum(self.tenant_cents(t) for t in self.tenants)
                      + self.idle_cents == round(self.total * 100)},
            "disclosure": self.disclosure(),
        }

    def disclosure(self) -> dict[str, Any]:
        """What every figure was divided by: the period, its hours, the pools, the basis."""
        return {
            "period": self.period.label, "hours": self.period.hours,
            "pools": [f"{p.name}: {int(p.terms.accelerators)} accelerators of "
                      f"{p.result.name!r} ({p.sized})" for p in self.pools],
            "tenant_key": self.by, "idle_rule": self.idle_rule,
            "basis": "usage (input-token equivalents) and reserved shares",
            "weights": {"cached_weight": self.fleet.cached_weight,
                        "output_weight": {p.name: p.terms.output_weight for p in self.pools}},
            "records": {"in_period": self.usage.records, "outside_period": self.usage.outside},
            "sources": list(self.sources),
            "rules": RULES, "rounding": ROUNDING,
            "tariff": ("a pool with a tariff is priced on the tariff's hours over the year "
                       "(its rates weighted by the hours and the load), as the scenario is"),
            "load_shape": ("a pool with a load shape by hour is priced with the shape scaled "
                           "to the measured utilisation (each hour at most 1)"),
            "emissions": EMISSIONS_RULE,
        }


def _usd(cents: int) -> dict[str, Any]:
    return {"value": cents / 100, "cents": int(cents), "unit": "USD"}


def _q(value: float | None, unit: str) -> dict[str, Any]:
    if value is None or not math.isfinite(value):
        return {"value": None, "unit": unit}
    return {"value": float(value), "unit": unit}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


# -- the use case ------------------------------------------------------------------------------

def _spec(pool: Pool, k: int, base: Path | None, where: str) -> ScenarioSpec:
    subject = f"{where}.pools[{k}].scenario"
    if isinstance(pool.scenario, str):
        if pool.scenario.startswith(SHIPPED):
            return ScenarioSpec(FileScenario(shipped_scenario(pool.scenario, subject)),
                                subject=subject)
        if base is None:
            raise InputError([(subject, "give the scenario inline (a table) or a shipped "
                                        "one (fixture:sample-tco): the service reads no "
                                        "file paths")])
        return ScenarioSpec(FileScenario(base / pool.scenario), subject=subject)
    return ScenarioSpec(InlineScenario(pool.scenario, label=f"pool {pool.name}"),
                        subject=subject)


_CONTROL = re.compile("[\x00-\x1f\x7f]")
MAX_USAGE_ROWS = 1_000_000  # records of one request on the service (about 1 s to charge)
_ROW_KEYS = ("time", "start", "end", "input_tokens", "cached_input_tokens", "output_tokens",
             "requests")


def usage_from_rows(rows: Sequence[Mapping[str, Any]], where: str = "records") -> Any:
    """Usage records given inline (an API body: one object a record, the CSV's columns as
    keys) as the readers' records; InputError at ``where[i].column`` for a bad one."""
    import csv
    import io

    from ..sources.usage import UsageError, read_usage_bytes
    if len(rows) > MAX_USAGE_ROWS:
        raise InputError([(where, f"at most {MAX_USAGE_ROWS:,} records, got {len(rows):,}")])
    columns = list(dict.fromkeys(k for r in rows for k in r))
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(columns)
    for k, r in enumerate(rows):
        bad = [c for c, v in r.items() if not isinstance(v, (str, int, float)) or
               isinstance(v, bool)]
        if bad:
            raise InputError([(f"{where}[{k}].{bad[0]}", "a number or a text")])
        # a column's name or value is one line of text: a line break would end the record
        lines = [c for c, v in r.items() if _CONTROL.search(c) or c != c.strip() or
                 (isinstance(v, str) and _CONTROL.search(v))]
        if lines:
            raise InputError([(f"{where}[{k}].{lines[0]}", "one line of text: no control "
                                                           "character (a line break, a tab), "
                                                           "no space at a name's ends")])
        w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    try:
        return read_usage_bytes(out.getvalue().encode(), where)
    except UsageError as exc:
        at = f"{where}[{exc.line - 2}]" if exc.line and exc.line > 1 else where
        raise InputError([(f"{at}.{exc.column}" if exc.column else at, exc.message)]) \
            from None


def usage_from_file(data: bytes, name: str, where: str = "usage") -> Any:
    """An uploaded usage file's records; InputError at ``where`` naming its line and column
    otherwise (nothing is charged from a file that does not read whole)."""
    from ..sources.usage import UsageError, read_usage_bytes
    try:
        records = read_usage_bytes(data, name)
    except UsageError as exc:
        raise InputError([(where, str(exc))]) from None
    if len(records) > MAX_USAGE_ROWS:
        raise InputError([(where, f"at most {MAX_USAGE_ROWS:,} records, got "
                                  f"{len(records):,}")])
    return records


def read_fleet(path: str | Path) -> tuple[dict[str, Any], Path]:
    """A fleet file's plain data and the folder its scenario paths are beside."""
    return read_scenario_file(path), Path(path).resolve().parent


def price_at(loaded: LoadedScenario, u: float) -> Result:
    """The scenario priced at utilisation ``u`` [fraction] (at least the engine's least
    utilisation); a load shape by hour scaled to it (each hour at most 1)."""
    s = loaded.scenario
    u = max(u, MIN_UTILISATION)
    update: dict[str, Any] = {"utilisation": u}
    if s.load is not None:
        k = u / s.utilisation
        scale = lambda xs: [min(1.0, x * k) for x in xs]  # noqa: E731
        update["load"] = Load.model_construct(
            hourly=scale(s.load.hourly),
            weekend=None if s.load.weekend is None else scale(s.load.weekend))
    return price_result(s.model_copy(update=update), loaded.provenance, sources=False)


def _market(ctx: Context, fleet: Fleet, pool: Pool, k: int, where: str,
            loaded: LoadedScenario) -> MarketPrices | None:
    table = pool.market if pool.market is not None else fleet.market
    if table is None:
        return None
    path = f"{where}.pools[{k}].market" if pool.market is not None else f"{where}.market"
    if isinstance(table, str):
        table = {"catalog": table}
    return market_for(ctx, MarketSpec(table, where=path), loaded.scenario)


def _reserved(pool: Pool, n: int, k: int, where: str) -> dict[str, float]:
    out = {}
    for tenant, r in pool.reserved.items():
        if r.accelerators is not None and r.accelerators > n:
            raise InputError([(f"{where}.pools[{k}].reserved.{tenant}.accelerators",
                               f"{r.accelerators} accelerators reserved, the pool has {n}")])
        out[tenant] = r.share if r.share is not None else r.accelerators / n
    if sum(out.values()) > 1 + 1e-12:
        raise InputError([(f"{where}.pools[{k}].reserved",
                           f"reservations add up to {sum(out.values()):.4g} of the pool, "
                           f"more than all of it")])
    return out


def chargeback(ctx: Context, request: ChargebackRequest) -> Chargeback:
    """The ledger of a period (see the module docstring). InputError with field paths: a
    fleet that does not validate, an unknown idle rule or tenant key, an empty period, a
    model no pool serves, reservations beyond a pool."""
    where = request.where
    if request.idle not in IDLE_RULES:
        raise InputError([("idle", f"one of {', '.join(IDLE_RULES)}, got "
                                   f"{str(request.idle)[:40]!r}")])
    fleet = validate_fleet(request.fleet, where)
    text = request.period if request.period is not None else fleet.period
    if text is None:
        raise InputError([("period", "give the period: a month (2026-11) or days "
                                     "(2026-11-01..2026-11-15)")])
    period = parse_period(text, "period")
    usage = aggregate(request.records, request.by, {p.name: p.models for p in fleet.pools},
                      period)
    reserving = [t for p in fleet.pools for t in p.reserved if t not in usage.tenants]
    tenants = tuple(sorted({*usage.tenants, *reserving}))
    if len(tenants) > MAX_TENANTS and getattr(ctx, "limited", False):
        raise InputError([("by", f"at most {MAX_TENANTS:,} tenants in one request, got "
                                 f"{len(tenants):,}")])
    index = {t: k for k, t in enumerate(usage.tenants)}
    order = np.array([index.get(t, -1) for t in tenants])

    def by_tenant(a: np.ndarray) -> np.ndarray:
        return np.where(order >= 0, a[np.maximum(order, 0)], 0.0)

    pools = []
    for k, pool in enumerate(fleet.pools):
        spec = _spec(pool, k, request.base, where)
        loaded = load(ctx, spec, sources=False)
        try:
            assumed = price_result(loaded.scenario, loaded.provenance, sources=False)
            check_finite(assumed)
        except InputError as exc:
            raise exc.about(spec.subject) from None
        v = assumed.values
        per_hour = calc.per_hour(calc.FLOATS, v["throughput"], v["weighted_tokens_per_request"],
                                 v["tokens_per_request"])
        output_weight = loaded.scenario.pricing.output_weight
        inputs = [by_tenant(usage.input[pool.name]), by_tenant(usage.cached[pool.name]),
                  by_tenant(usage.output[pool.name])]
        eqs = inputs[0] + fleet.cached_weight * inputs[1] + output_weight * inputs[2]
        used = float(eqs.sum())
        if pool.accelerators is not None:
            n, sized = pool.accelerators, "accelerators given"
        elif pool.nodes is not None:
            n = pool.nodes * int(loaded.scenario.node.accelerators)
            sized = f"{pool.nodes} nodes of {int(loaded.scenario.node.accelerators)}"
        else:
            u0 = loaded.scenario.utilisation
            n = max(1, whole_up(used / (period.hours * per_hour * u0), "accelerators"))
            sized = (f"sized from the demand: the period's equivalents at the scenario's "
                     f"utilisation ({u0:.4g}), whole accelerators up")
        reserved = _reserved(pool, n, k, where)
        cap = n * period.hours * per_hour
        u = calc.measured_utilisation(calc.FLOATS, used, cap)
        result = price_at(loaded, u)
        hv = result.values
        if not math.isfinite(hv["cost_per_hour"]):
            raise InputError([("cost_per_hour", "not a finite cost")]).about(spec.subject)
        terms = calc.PoolTerms(period.hours, n, hv["electricity_cost_per_hour"],
                               hv["capex_per_hour"], hv["opex_per_hour"], per_hour,
                               output_weight, fleet.cached_weight)
        uses = [calc.Use(float(inputs[0][j]), float(inputs[1][j]), float(inputs[2][j]),
                         reserved.get(t, 0.0)) for j, t in enumerate(tenants)]
        charge = calc.charge_pool(calc.FLOATS, terms, uses, request.idle)
        pools.append(PoolLedger(pool, loaded, result, assumed, terms, charge, uses,
                                by_tenant(usage.requests[pool.name]), sized, reserved,
                                _market(ctx, fleet, pool, k, where, loaded),
                                _emissions(terms, hv, uses, request.idle)))
    lines = _lines(tenants, pools)
    sources = tuple(getattr(request.records, "sources", ()))
    return Chargeback(fleet, period, request.by, request.idle, tenants, pools, lines, usage,
                      sources)


def _emissions(terms: calc.PoolTerms, values: dict[str, float], uses: list[calc.Use],
               idle: str) -> dict[str, calc.PoolCharge]:
    """The pool's emissions charged by the cost's own rules [gCO2e] (the allocation is the
    same linear rule, the operational grams in the energy's place and the embodied in the
    capital's), by basis; a basis whose factor is not given is left out."""
    out = {}
    # no footprint given: no embodied figure, and the grams charged are operational alone
    embodied = values["embodied_per_hour"]
    embodied = embodied if math.isfinite(embodied) else 0.0
    for basis, step in (("location", "emissions_per_hour"),
                        ("market", "emissions_market_per_hour")):
        if math.isfinite(values[step]):
            grams = replace(terms, energy=values[step], capital=embodied, operating=0.0)
            out[basis] = calc.charge_pool(calc.FLOATS, grams, uses, idle)
    return out


def _lines(tenants: Sequence[str], pools: Sequence[PoolLedger]) -> list[Line]:
    """The ledger's lines, in cents (see ROUNDING): each pool's tenants, then its idle
    line."""
    raw: list[tuple[str | None, PoolLedger, int, list[float]]] = []
    for p in pools:
        c = p.charge
        for j, t in enumerate(tenants):
            u, x = p.uses[j], c.uses[j]
            if float(x.equivalents) == 0 and float(u.reserved) == 0:
                continue
            eq = float(x.equivalents)
            kinds = [float(u.input), p.terms.cached_weight * float(u.cached),
                     p.terms.output_weight * float(u.output)]
            usage = [float(x.usage) * k / eq if eq else 0.0 for k in kinds]
            raw.append((t, p, j, [float(x.reserved), *usage, float(x.idle)]))
        raw.append((None, p, -1, [0.0, 0.0, 0.0, 0.0, float(c.idle_line)]))
    amounts = [sum(parts) if t is not None else parts[-1] for t, _, _, parts in raw]
    # tenant lines read their total as the sheet does (reserved + usage + idle)
    amounts = [float(p.charge.uses[j].total) if t is not None else a
               for (t, p, j, _), a in zip(raw, amounts, strict=True)]
    total = sum(float(p.charge.cost) for p in pools)
    cents = largest_remainder(amounts, total)
    lines = []
    for (t, p, _, parts), amount, c in zip(raw, amounts, cents, strict=True):
        split = largest_remainder(parts, int(c) / 100) if any(parts) else \
            np.zeros(len(parts), dtype=np.int64)
        if not any(parts) and c:  # a line of no amount given a cent: its idle part holds it
            split[-1] = c
        lines.append(Line(t, p.name, amount, int(c),
                          {k: (parts[i], int(split[i])) for i, k in enumerate(COMPONENTS)}))
    return lines


# -- renderings --------------------------------------------------------------------------------

def focus_csv(ledger: Chargeback) -> bytes:
    """The ledger as a FOCUS-style CSV (:mod:`costmodel.render.focus`): one row a part of a
    line with cents, BilledCost and EffectiveCost adding up to the fleet's cost."""
    from ..render.focus import FocusRow, write_focus
    rows = []
    start, end = ledger.period.iso("start"), ledger.period.iso("end")
    for line in ledger.lines:
        p = next(x for x in ledger.pools if x.name == line.pool)
        j = ledger.tenants.index(line.tenant) if line.tenant is not None else -1
        for part, (amount, cents) in line.parts.items():
            if line.tenant is None and part != "idle":
                continue
            kg = _part_kg(p, j, line, part, amount)
            if cents == 0 and not (line.tenant is None and part == "idle") \
                    and not any(kg.values()):  # (a part of grams and no cent is kept)
                continue
            quantity, unit, listed = _consumed(p, j, part, ledger)
            rows.append(FocusRow(start, end, p.name, p.result.name, line.tenant, part,
                                 quantity, unit, cents, listed, kg.get("location"),
                                 kg.get("market")))
    return write_focus(rows, ledger.fleet.name)


def _part_kg(p: PoolLedger, j: int, line: Line, part: str, amount: float
             ) -> dict[str, float | None]:
    """A part of a line's emissions [kgCO2e] by basis (None: the pool has no factor for it):
    the line's grams (the engine's) split as its cost is, the allocation being linear in the
    pool's cost an accelerator-hour; an idle line's grams all in its idle part."""
    out: dict[str, float | None] = {}
    for basis in EMISSION_BASES:
        c = p.emissions.get(basis)
        if c is None:
            out[basis] = None
            continue
        grams = float(c.idle_line) if j < 0 else float(c.uses[j].total)
        if j < 0 or line.amount == 0:
            share = 1.0 if part == "idle" else 0.0
        else:
            share = amount / line.amount
        out[basis] = grams * share / 1000
    return out


def _consumed(p: PoolLedger, j: int, part: str, ledger: Chargeback
              ) -> tuple[float, str, float | None]:
    """What a part of a line consumed [token or accelerator-hour] and its list price [USD]."""
    t = p.terms
    if part in ("input", "cached_input", "output"):
        u = p.uses[j]
        tokens = {"input": u.input, "cached_input": u.cached, "output": u.output}[part]
        listed = None if p.market is None else float(tokens) * p.market.price(part) / 1e6
        return float(tokens), "Tokens", listed
    if part == "reserved":
        return float(p.uses[j].reserved) * t.accelerators * t.hours, "Accelerator-Hours", None
    # idle: the accelerator-hours no usage covered
    return (1 - float(p.charge.utilisation)) * t.accelerators * t.hours, \
        "Accelerator-Hours", None


def chargeback_workbook(ledger: Chargeback, title: str | None = None) -> WorkbookFile:
    """The chargeback workbook (live formulas): each pool's scenario priced at its measured
    utilisation on the model's sheets, and the Chargeback sheet
    (:mod:`costmodel.render.workbook.chargeback_sheet`)."""
    from ..render.workbook.chargeback_sheet import ChargebackBook, PoolBook
    from ..render.workbook.export import WorkbookSystem, build_workbook
    book = ChargebackBook(
        ledger.fleet.name, ledger.period.label, ledger.period.hours, ledger.idle_rule,
        ledger.fleet.cached_weight, ledger.tenants,
        [PoolBook(p.name, int(p.terms.accelerators), p.reserved, p.uses, p.charge,
                  p.result.scenario.load is not None, p.emissions) for p in ledger.pools],
        ledger.lines, RULES, ledger.by)
    systems = [WorkbookSystem(p.result, p.loaded.curve) for p in ledger.pools]
    wb = build_workbook(systems, title=title or f"Chargeback {ledger.period.label}",
                        chargeback=book)
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in ledger.period.label)
    return WorkbookFile(wb.content, f"chargeback_{stem}.xlsx")
