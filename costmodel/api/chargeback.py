"""``POST /api/v1/chargeback``: a period's ledger from usage records (inline JSON, or a CSV
file's text) and a fleet (inline scenarios): JSON, the workbook (``Accept`` a spreadsheet)
or the FOCUS-style CSV (``Accept: text/csv``). A heavy request: it holds a heavy slot
(:data:`costmodel.http.limits.HEAVY`), its body is bounded in bytes and its records in rows.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from flask import Response, request
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from ..app.caps import MAX_CHARGEBACK_LINES, chargeback_workbook_too_large
from ..app.chargeback import (
    MAX_USAGE_ROWS,
    ChargebackRequest,
    chargeback,
    chargeback_workbook,
    focus_csv,
    usage_from_file,
    usage_from_rows,
)
from ..decisions.market import MARKET_REF_PATTERN
from ..http.errors import Problem
from ..sources.shipped import SHIPPED, shipped_scenarios
from .openapi import route
from .routes import XLSX, _xlsx, pricing, services
from .schemas import (
    _GIVEN,
    _NULL,
    EXAMPLE_SCENARIO,
    MarketBody,
    Out,
    Strict,
    _examples,
)

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


_NAME = r"^[A-Za-z0-9][A-Za-z0-9 ._+:/-]{0,59}$"
_PERIOD = r"^\d{4}-\d{2}(-\d{2}\.\.\d{4}-\d{2}-\d{2})?$"
_TIME = r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|\+00:00)?)?$"
_MAX_TOKENS = 1e15  # [token] of one record: a million such records stay finite
Label = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\u0000-\u001f]*$")]
_NO_NUL = {"pattern": "^[^\\u0000]*$", "minLength": 1, "maxLength": 200}  # no body holds a NUL
_ONE_LINE = "^[^\\u0000-\\u001f\\u007f]*$"  # no control character: no line break, no NUL
# a column's name: one line, without white space at either end (a CSV header's names are read
# trimmed, so " tenant" would be "tenant" named twice, and " " no name)
_COLUMN = "^[^\\s\\u0000-\\u001f\\u007f]([^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f])?$"
Key = Annotated[str, Field(min_length=1, max_length=200)]  # a table's key: no pattern (a
# pattern on a dict's keys becomes patternProperties, which leaves other keys unchecked)
Count = Annotated[float, Field(ge=0, le=_MAX_TOKENS)]
Time = Annotated[str, Field(pattern=_TIME)] | Annotated[float, Field(ge=0, le=2 ** 40)]


def _one_of(*keys: str) -> dict[str, Any]:
    """JSON Schema: exactly one of ``keys`` given (not null)."""
    return {"oneOf": [{"required": [k], "properties": {k: _GIVEN, **{
        o: _NULL for o in keys if o != k}}} for k in keys]}


class ReservationBody(Strict):
    """A tenant's reserved part of a pool: a share (above 0 to 1) or whole accelerators."""
    model_config = _examples({"share": 0.25}, rules=[_one_of("share", "accelerators")])
    share: Annotated[float, Field(gt=0, le=1)] | None = None
    accelerators: Annotated[int, Field(ge=1, le=10_000_000)] | None = None


# every shipped example's name: the document lists them (a name the schema allows is one
# the service has)
SHIPPED_NAMES = tuple(shipped_scenarios())


def _pool_scenario(value: Any) -> Any:
    """A pool's scenario: a table (validated as a scenario when the pool is priced) or a
    shipped example's name; refused at the field otherwise, in words."""
    if isinstance(value, dict) or (isinstance(value, str) and value in SHIPPED_NAMES):
        return value
    shown = repr(value)[:80]
    raise ValueError(f"a scenario table (the scenario inline), or a shipped example's name such "
                     f"as {SHIPPED}sample-tco (the service reads no file paths), got {shown}")


# a table, or a shipped example scenario by its name (the document lists them: a name the
# schema allows is one the service has)
PoolScenario = Annotated[Any, BeforeValidator(_pool_scenario), WithJsonSchema({"anyOf": [
    {"allOf": [{"$ref": "#/components/schemas/ScenarioInput"}]},
    {"type": "string", "enum": list(SHIPPED_NAMES)}]})]


class PoolBody(Strict):
    """One pool: its scenario (inline, or a shipped example's name), its size (accelerators,
    nodes or "demand"), the models it serves, reservations by tenant and its market (none:
    the fleet's)."""
    model_config = _examples({"name": "p1", "scenario": EXAMPLE_SCENARIO, "accelerators": 8},
                             rules=[_one_of("accelerators", "nodes", "size")])
    name: Annotated[str, Field(pattern=_NAME)]
    scenario: PoolScenario
    accelerators: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    nodes: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    size: Literal["demand"] | None = None
    models: Annotated[list[Label], Field(max_length=200)] = Field(default_factory=list)
    reserved: Annotated[dict[Key, ReservationBody], Field(max_length=1000)] = Field(
        default_factory=dict, json_schema_extra={"propertyNames": _NO_NUL})
    market: Annotated[str, Field(pattern=MARKET_REF_PATTERN)] | MarketBody | None = None


class FleetBody(Strict):
    """A fleet: its pools, the period, the weight of a cached input token and the market
    whose list prices the period is compared with."""
    model_config = _examples(EXAMPLE["fleet"])
    name: Label = "fleet"
    period: Annotated[str, Field(pattern=_PERIOD)] | None = None
    cached_weight: Annotated[float, Field(ge=0, le=1000)] = 1.0
    market: Annotated[str, Field(pattern=MARKET_REF_PATTERN)] | MarketBody | None = None
    pools: Annotated[list[PoolBody], Field(min_length=1, max_length=12)]


class RecordBody(BaseModel):
    """One usage record: its time (or start and end: ISO 8601 UTC, or seconds since the
    epoch), model and counts; any other key is a grouping column (tenant, team...)."""
    model_config = ConfigDict(extra="allow", strict=True, json_schema_extra={
        # a grouping column's name and value: one line of text (no control character), a
        # number or null (unattributed), read as the CSV reader reads a cell; a number or null
        # also lets a typed client's index signature hold the counts and the time
        "additionalProperties": {"anyOf": [
            {"type": "string", "maxLength": 200, "pattern": _ONE_LINE}, {"type": "number"},
            {"type": "null"}]},
        "propertyNames": {"pattern": _COLUMN, "minLength": 1, "maxLength": 200},
        "anyOf": [{"required": ["time"], "properties": {"time": _GIVEN}},
                  {"required": ["start"], "properties": {"start": _GIVEN}}]})
    time: Time | None = None
    start: Time | None = None
    end: Time | None = None
    model: Label | None = None
    input_tokens: Count = 0.0
    cached_input_tokens: Count = 0.0
    output_tokens: Count = 0.0
    requests: Count = 0.0


class ChargebackBody(Strict):
    """A chargeback: the fleet (its pools' scenarios inline), the usage records (``records``
    inline, or ``csv``: a usage file's text), the period (default: the fleet's), the tenant
    key and the idle rule. The answer: each tenant's charge, the idle line and the check that
    they add up to the fleet's cost to the cent."""
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [EXAMPLE], "allOf": [_one_of("records", "csv")]})
    fleet: FleetBody
    records: Annotated[list[RecordBody], Field(min_length=1, max_length=MAX_USAGE_ROWS)] | \
        None = Field(
        None, description="usage records, one object each: time (or start and end), model, "
                          "input_tokens, cached_input_tokens, output_tokens, requests and the "
                          "grouping columns (tenant, team...)")
    csv: Annotated[str, Field(max_length=MAX_CHARGEBACK_BODY)] | None = Field(
        None, description="a usage file's text (CSV with a header), instead of records")
    period: Annotated[str, Field(pattern=_PERIOD)] | None = Field(
        None, description="a month (2026-11) or days (2026-11-01..2026-11-15), UTC")
    by: Label = Field("tenant", description="the records' column that names a tenant")
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
       also_content=(XLSX, CSV), body_limit=MAX_CHARGEBACK_BODY,
       heavy_note=f"The workbook (Accept naming a spreadsheet) holds at most "
                  f"{MAX_CHARGEBACK_LINES:,} lines (a tenant on a pool, and each pool's idle "
                  f"line): a larger period's is refused with 413 (type answer-too-large, the "
                  f"bound said); its JSON and FOCUS CSV are not.")
def chargeback_view(body: ChargebackBody, principal) -> Response | dict:
    """JSON; the workbook by ``Accept`` naming a spreadsheet; the FOCUS CSV by
    ``Accept: text/csv``."""
    records = (usage_from_rows([r.model_dump(exclude_none=True) for r in body.records])
               if body.records is not None
               else usage_from_file(body.csv.encode(), "csv", "csv"))
    req = ChargebackRequest(body.fleet.model_dump(exclude_none=True), records,
                            period=body.period, by=body.by, idle=body.idle)
    accept = request.accept_mimetypes
    with services().sessions(write=False) as session:
        ledger = chargeback(services().context(session), req)
    if accept[XLSX] > accept["application/json"]:
        why = chargeback_workbook_too_large(len(ledger.lines))
        if why is not None:
            raise Problem(413, "Answer too large", why, kind="answer-too-large",
                          errors=[{"path": "by", "message": why}])
        return _xlsx(chargeback_workbook(ledger))
    if accept[CSV] > accept["application/json"]:
        return Response(focus_csv(ledger), mimetype=CSV, headers={
            "Content-Disposition": 'attachment; filename="chargeback_focus.csv"'})
    return ledger.to_json()
