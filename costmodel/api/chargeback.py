"""``POST /api/v1/chargeback``: a period's ledger from usage records (inline JSON, or a CSV
file's text) and a fleet (inline scenarios): JSON, the workbook (``Accept`` a spreadsheet)
or the FOCUS-style CSV (``Accept: text/csv``). A heavy request: it holds a heavy slot
(:data:`costmodel.http.limits.HEAVY`), its body is bounded in bytes and its records in rows.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from flask import Response, request
from pydantic import ConfigDict, Field, model_validator

from ..app.chargeback import (
    MAX_USAGE_ROWS,
    ChargebackRequest,
    chargeback,
    chargeback_workbook,
    focus_csv,
    usage_from_file,
    usage_from_rows,
)
from .openapi import route
from .routes import XLSX, _xlsx, pricing, services
from .schemas import Out, Strict

__all__ = ["ChargebackBody", "MAX_CHARGEBACK_BODY"]

MAX_CHARGEBACK_BODY = 64 * 1024 * 1024  # bytes: about a million CSV records
CSV = "text/csv"
_HAND = {"name": "hand", "utilisation": 0.5, "idle_power": 0.3,
         "accelerator": {"rated_power": "1000 W", "hourly_price": "2 USD/h"},
         "operating_point": {"throughput": "1000 token/s", "token_kind": "mixed"},
         "workload": {"isl": 1000, "osl": 1000}, "electricity": {"price": "0 USD/kWh"},
         "facility": {"hosting": "0 USD/kW/month"}, "pricing": {"output_weight": 3}}
EXAMPLE = {
    "fleet": {"name": "hand fleet", "pools": [{"name": "p1", "scenario": _HAND,
                                               "accelerators": 2}]},
    "period": "2026-11", "by": "tenant", "idle": "usage",
    "records": [
        {"time": "2026-11-03T10:00:00Z", "tenant": "A", "model": "m",
         "input_tokens": 1e9, "cached_input_tokens": 0, "output_tokens": 1e9, "requests": 10},
        {"time": "2026-11-04T10:00:00Z", "tenant": "B", "model": "m",
         "input_tokens": 2e9, "cached_input_tokens": 0, "output_tokens": 0, "requests": 5}]}


class ChargebackBody(Strict):
    """A chargeback: the fleet (its pools' scenarios inline), the usage records (``records``
    inline, or ``csv``: a usage file's text), the period (default: the fleet's), the tenant
    key and the idle rule. The answer: each tenant's charge, the idle line and the check that
    they add up to the fleet's cost to the cent."""
    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra={"examples": [EXAMPLE]})
    fleet: dict[str, Any] = Field(description="the fleet file's table: name, period, "
                                              "cached_weight, market, pools (each: name, "
                                              "scenario as a table, accelerators | nodes | "
                                              "size = \"demand\", models, reserved, market)")
    records: Annotated[list[dict[str, Any]], Field(max_length=MAX_USAGE_ROWS)] | None = \
        Field(None, description="usage records, one object each: time (or start and end), "
                                "model, input_tokens, cached_input_tokens, output_tokens, "
                                "requests and the grouping columns (tenant, team...)")
    csv: str | None = Field(None, description="a usage file's text (CSV with a header), "
                                              "instead of records")
    period: str | None = Field(None, description="a month (2026-11) or days "
                                                 "(2026-11-01..2026-11-15), UTC")
    by: str = Field("tenant", min_length=1, max_length=200,
                    description="the records' column that names a tenant")
    idle: Literal["separate", "usage", "even"] = "separate"

    @model_validator(mode="after")
    def _one_source(self):
        if (self.records is None) == (self.csv is None):
            raise ValueError("give the usage as records or as csv, one of them")
        return self


class ChargebackOut(Out):
    """The ledger (see docs: chargeback)."""


@route(pricing, "/chargeback", "POST",
       summary="Charge each tenant its share of the fleet's cost for a period, from usage "
               "records: usage, reservations and idle cost, conserved to the cent",
       access="read", body=ChargebackBody, response=ChargebackOut, errors=(404,),
       also_content=(XLSX, CSV), body_limit=MAX_CHARGEBACK_BODY)
def chargeback_view(body: ChargebackBody, principal) -> Response | dict:
    """JSON; the workbook by ``Accept`` naming a spreadsheet; the FOCUS CSV by
    ``Accept: text/csv``."""
    records = (usage_from_rows(body.records) if body.records is not None
               else usage_from_file(body.csv.encode(), "csv", "csv"))
    req = ChargebackRequest(body.fleet, records, period=body.period, by=body.by,
                            idle=body.idle)
    accept = request.accept_mimetypes
    with services().sessions(write=False) as session:
        ledger = chargeback(services().context(session), req)
    if accept[XLSX] > accept["application/json"]:
        return _xlsx(chargeback_workbook(ledger))
    if accept[CSV] > accept["application/json"]:
        return Response(focus_csv(ledger), mimetype=CSV, headers={
            "Content-Disposition": 'attachment; filename="chargeback_focus.csv"'})
    return ledger.to_json()
