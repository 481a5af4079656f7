"""A chargeback as a FOCUS-style CSV: the FinOps Open Cost and Usage Specification's columns
(FOCUS 1.x: https://focus.finops.org/), so the charges load into the FinOps tools a finance
team already uses.

One row a part of a ledger line: a tenant's usage by token kind (``ChargeCategory`` Usage,
``ConsumedUnit`` Tokens), its reserved share (Purchase, Accelerator-Hours, recurring), its
share of idle cost, and each pool's idle line (no ``SubAccountId``). ``BilledCost`` and
``EffectiveCost`` are the line's cents (largest remainder: the rows add up to the fleet's
cost to the cent); ``ListCost`` is the tokens at the pool's market prices where there is
one. ``Tags`` is JSON: the tenant, the pool and the kind of charge (``token_kind``).

Emissions ride in two custom columns (FOCUS 1.x has no emissions column; a custom column's
name starts ``x_``): ``x_EmissionsLocationKgCO2e`` and ``x_EmissionsMarketKgCO2e``, the row's
kgCO2e charged as its cost is (location- and market-based, operational plus embodied where a
footprint is given), empty where the pool has no factor for the basis. They add up to the
fleet's emissions (docs/chargeback.md).
Text cells are written safe for a spreadsheet (:func:`costmodel.sources.cells.neutralise_cell`).
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..sources.cells import neutralise_cell

__all__ = ["FocusRow", "write_focus", "COLUMNS"]

COLUMNS = ("BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodStart",
           "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory",
           "ChargeClass", "ChargeDescription", "ChargeFrequency", "ProviderName",
           "PublisherName", "InvoiceIssuerName", "ServiceCategory", "ServiceName",
           "ResourceId", "ResourceName", "ResourceType", "SubAccountId", "SubAccountName",
           "ConsumedQuantity", "ConsumedUnit", "PricingQuantity", "PricingUnit",
           "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "Tags",
           "x_EmissionsLocationKgCO2e", "x_EmissionsMarketKgCO2e")
_DESCRIPTIONS = {"input": "new input tokens", "cached_input": "cached input tokens",
                 "output": "output tokens", "reserved": "reserved share of the pool",
                 "idle": "share of idle capacity"}


@dataclass(frozen=True)
class FocusRow:
    """One charge: the period [ISO 8601 UTC], the pool and its scenario, the tenant (None:
    the pool's idle line), the part (input, cached_input, output, reserved, idle), what it
    consumed and in what unit, its cents, its list price [USD] (None: no market) and its
    emissions by basis [kgCO2e] (None: no factor given)."""
    start: str
    end: str
    pool: str
    scenario: str
    tenant: str | None
    part: str
    quantity: float
    unit: str
    cents: int
    listed: float | None
    kg_location: float | None = None
    kg_market: float | None = None


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _kg(value: float | None) -> str:
    """kgCO2e to the milligram; empty where there is no figure."""
    if value is None:
        return ""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def write_focus(rows: Sequence[FocusRow], fleet: str) -> bytes:
    """The CSV (UTF-8, a header, ``\\r\\n`` line ends as RFC 4180)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(COLUMNS)
    for r in rows:
        category = "Purchase" if r.part == "reserved" else "Usage"
        what = _DESCRIPTIONS[r.part]
        description = (f"{what} on {r.pool}" if r.tenant is not None
                       else f"idle capacity of {r.pool}: no tenant's usage covered it")
        tags = {"tenant": r.tenant, "pool": r.pool, "token_kind": r.part}
        cost = _money(r.cents)
        w.writerow([neutralise_cell(str(x)) for x in (
            fleet, fleet, "USD", r.start, r.end, r.start, r.end, category, "",
            description, "Recurring" if r.part == "reserved" else "Usage-Based",
            "costmodel", "costmodel", fleet, "AI and Machine Learning", "LLM inference",
            r.pool, r.scenario, "accelerator pool", r.tenant or "", r.tenant or "",
            f"{r.quantity:.6f}".rstrip("0").rstrip("."), r.unit,
            f"{r.quantity:.6f}".rstrip("0").rstrip("."), r.unit, cost, cost,
            "" if r.listed is None else f"{r.listed:.6f}", cost,
            json.dumps(tags, sort_keys=True), _kg(r.kg_location), _kg(r.kg_market))])
    return out.getvalue().encode("utf-8")
