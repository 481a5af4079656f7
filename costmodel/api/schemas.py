"""Request and response bodies (pydantic, strict: ``true`` is never a number)."""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from ..inputs import (
    Accelerator,
    Electricity,
    Facility,
    Financing,
    Node,
    OperatingPoint,
    Power,
    Pricing,
    Rack,
    Workload,
    check_text,
)
from ..store.models import MAX_ID
from ..store.repo import ROLES

__all__ = ["PriceRequest", "CompareRequest", "ScenarioCreate", "ScenarioRevise",
           "CatalogCreate", "CurveCreate", "KeyCreate", "scenario_input_schema",
           "CATALOG_MODELS"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


_QUANTITY = {"oneOf": [{"type": "string", "examples": ["169 token/s/user"]},
                       {"type": "object", "required": ["value", "unit"],
                        "additionalProperties": False,
                        "properties": {"value": {"type": "number"},
                                       "unit": {"type": "string"}}}]}
_SECTIONS = {"accelerator": Accelerator, "node": Node, "rack": Rack, "facility": Facility,
             "financing": Financing, "electricity": Electricity,
             "operating_point": OperatingPoint, "workload": Workload, "power": Power,
             "pricing": Pricing}
_CATALOG_SECTIONS = ("accelerator", "operating_point", "electricity")


def scenario_input_schema() -> dict[str, Any]:
    """JSON schema of a scenario as a file or request gives it: tables, catalog keys
    (``"accelerator": "gb300"``), ``{"catalog": key, ...overrides}``, curve readings."""
    props: dict[str, Any] = {"name": {"type": "string"}, "description": {"type": "string"},
                             "system": {"type": "string", "examples": ["gb300-nvl72"]},
                             "utilisation": {"oneOf": [{"type": "number"}, *_QUANTITY["oneOf"]]},
                             "idle_power": {"oneOf": [{"type": "number"}, *_QUANTITY["oneOf"]]}}
    for name, model in _SECTIONS.items():
        schema = model.model_json_schema()
        schema.pop("title", None)
        if name == "operating_point":
            schema["properties"].update({
                "curve": {"type": "string", "description": "id of a stored curve"},
                "curve_id": {"type": "string"},
                "at": {"oneOf": [{"const": "peak"}, {"type": "object"}]}})
        if name in _CATALOG_SECTIONS:
            schema["properties"]["catalog"] = {"type": "string"}
            schema.pop("required", None)
            props[name] = {"oneOf": [{"type": "string", "description": "a catalog key"},
                                     schema]}
        else:
            props[name] = schema
    return {"type": "object", "properties": _without_defaults(props),
            "additionalProperties": False, "required": ["accelerator", "operating_point"],
            "description": "A scenario: the same structure and names as a scenario file. "
                           "Missing tables and keys take the documented defaults, which the "
                           "result's disclosure lists."}


def _without_defaults(schema: Any) -> Any:
    """Drop pydantic's ``default`` values: they are canonical magnitudes (2400.0 for
    "2400 W"), which a quantity's own schema rightly does not accept as input."""
    if isinstance(schema, dict):
        return {k: _without_defaults(v) for k, v in schema.items() if k != "default"}
    if isinstance(schema, list):
        return [_without_defaults(v) for v in schema]
    return schema


ScenarioBody = Annotated[dict[str, Any], WithJsonSchema(scenario_input_schema())]
Quantity = Annotated[Any, WithJsonSchema(_QUANTITY)]


Id = Annotated[int, Field(ge=1, le=MAX_ID)]


class PriceRequest(Strict):
    """An inline scenario, or a saved one (latest revision unless given) plus overrides."""
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    overrides: dict[str, Any] = Field(default_factory=dict, description=(
        "dotted keys to values, e.g. {\"electricity.price\": \"0.10 USD/kWh\"}"))


class CompareRequest(Strict):
    """Several scenarios side by side; ratios are against the first."""
    scenarios: Annotated[list[PriceRequest], Field(min_length=2, max_length=12)]
    at_interactivity: Quantity | None = None
    matched: bool = False


class WorkbookRequest(Strict):
    scenarios: Annotated[list[PriceRequest], Field(min_length=1, max_length=12)]
    at_interactivity: Quantity | None = None
    matched: bool = False
    title: Annotated[str, Field(max_length=200), AfterValidator(check_text)] | None = None


class QuotesCompareRequest(Strict):
    """Vendor quotes (the quote file's [[quote]] tables as JSON) against our scenarios."""
    quotes: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=50)]
    scenarios: Annotated[list[PriceRequest], Field(min_length=1, max_length=12)]


Output = Annotated[str, Field(min_length=1, max_length=100,
                              description="a step of the calculation, e.g. cost_per_mtok_total")]


class TornadoRequest(Strict):
    """Each input moved alone (default -/+ 20 %, or across a range), ranked by the swing."""
    scenario: PriceRequest
    output: Output = "cost_per_mtok_total"
    swing: Annotated[float, Field(gt=0, lt=1)] = 0.2
    inputs: Annotated[list[Annotated[str, Field(max_length=100)]],
                      Field(max_length=60)] | None = None
    ranges: dict[str, Annotated[str, Field(max_length=200)]] = Field(
        default_factory=dict, description='key -> "LOW..HIGH", e.g. "0.05..0.15 USD/kWh"')


class GridRequest(Strict):
    """The output over two inputs: "key=LOW..HIGH:N" or "key=V1,V2,... unit"."""
    scenario: PriceRequest
    output: Output = "cost_per_mtok_total"
    x: Annotated[str, Field(min_length=1, max_length=400)]
    y: Annotated[str, Field(min_length=1, max_length=400)]


class MonteCarloRequest(Strict):
    """Inputs as distributions: uniform(low, high), triangular(low, mode, high),
    normal(mean, sd), lognormal(median, gsd)."""
    scenario: PriceRequest
    output: Output = "cost_per_mtok_total"
    distributions: Annotated[dict[str, Annotated[str, Field(max_length=200)]],
                             Field(min_length=1, max_length=40)]
    draws: Annotated[int, Field(ge=1, le=2_000_000)] = 100_000
    seed: Annotated[int, Field(ge=0, le=2 ** 63 - 1)] | None = None
    bins: Annotated[int, Field(ge=1, le=500)] = 50
    truncate: bool = False


class SensitivityOut(Out):
    scenario: str
    output: str
    unit: str
    base: QuantityOut


class QuoteTermRequest(Strict):
    """What each term length of a quote costs against staying flexible."""
    quote: dict[str, Any]
    scenario: PriceRequest
    improvement: Annotated[float, Field(ge=0, lt=1)] | None = Field(
        None, description="yearly fall of the market price per token, a fraction")
    successor: PriceRequest | None = None
    available: Annotated[str, Field(max_length=40)] | None = Field(
        None, description='when the successor is available: "12 month" or "2027-06"')
    tolerance: Annotated[float, Field(ge=0, le=10)] = 0.10
    terms: Annotated[list[Annotated[float, Field(gt=0, le=600)]],
                     Field(min_length=1, max_length=40)] = [6, 12, 18, 24, 36, 48]


class ScenarioCreate(Strict):
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(check_text)]
    scenario: ScenarioBody


class ScenarioRevise(Strict):
    scenario: ScenarioBody


CatalogKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,99}$")]


class CatalogCreate(Strict):
    key: CatalogKey
    data: dict[str, Any] = Field(description="the entry's values, as in the catalog files")


MAX_CURVE_POINTS = 2_000  # points of one curve (an InferenceX sweep has tens)
MAX_UPLOAD_POINTS = 10_000  # rows of one upload, counted before any is parsed


class CurveCreate(Strict):
    content: Annotated[str, Field(min_length=1, max_length=2_000_000, description=(
        "a curve file's text: InferenceX agg rows or API export (JSON/CSV), or costmodel's "
        f"curve CSV; at most {MAX_UPLOAD_POINTS:,} rows, {MAX_CURVE_POINTS:,} points a "
        f"curve"))]
    gpus: Annotated[int, Field(ge=1, le=100000)] | None = None
    hardware: Annotated[str, Field(min_length=1, max_length=100)] | None = None


class KeyCreate(Strict):
    name: Annotated[str, Field(min_length=1, max_length=100), AfterValidator(check_text)]
    role: Literal[ROLES]  # type: ignore[valid-type]


# ---- responses ------------------------------------------------------------------------------

class QuantityOut(BaseModel):
    value: float | None
    unit: str


class ResultOut(Out):
    scenario: str
    engine: dict[str, str]
    cost_per_mtok: dict[str, QuantityOut]
    price_per_mtok: dict[str, QuantityOut]
    power_per_accelerator: QuantityOut
    throughput_per_kw: QuantityOut
    tokens_per_kwh: QuantityOut
    joules_per_token: QuantityOut
    steps: dict[str, Any]
    disclosure: dict[str, Any]


class ComparisonOut(BaseModel):
    baseline: str
    scenarios: list[ResultOut]
    ratios: dict[str, list[float | None]]


class RevisionOut(BaseModel):
    scenario_id: int
    number: int
    content_hash: str
    created_at: datetime
    created_by: str
    engine_version: str
    scenario: dict[str, Any]
    result: ResultOut


class ScenarioOut(BaseModel):
    id: int
    name: str
    latest_revision: int
    created_at: datetime


class ScenarioPage(BaseModel):
    items: list[ScenarioOut]
    total: int
    limit: int
    offset: int


class CatalogEntryOut(BaseModel):
    kind: str
    key: str
    data: dict[str, Any]
    provenance: dict[str, Any]
    origin: str
    created_at: datetime


class CatalogPage(BaseModel):
    items: list[CatalogEntryOut]
    total: int
    limit: int
    offset: int


class CurveOut(BaseModel):
    curve_id: str
    hardware: str
    model: str
    points: int
    source: str
    origin: str
    created_at: datetime
    csv: str | None = None


class CurvePage(BaseModel):
    items: list[CurveOut]
    total: int
    limit: int
    offset: int


class KeyOut(BaseModel):
    id: int
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


class KeyList(BaseModel):
    items: list[KeyOut]


class KeyCreated(KeyOut):
    token: str = Field(description="shown once; only its hash is stored")


class RepriceOut(BaseModel):
    results: list[ResultOut]
    changes: list[dict[str, Any]]
    warnings: list[str]


class QuoteComparisonOut(Out):
    quote: str
    vendor: str
    form: str
    scenario: str
    price_per_mtok: QuantityOut
    own_cost_per_mtok: QuantityOut
    implied_margin: float
    break_even_utilisation: float | None
    quote_pv: QuantityOut
    own_pv: QuantityOut
    saving_pv: QuantityOut
    flags: list[str]


class QuoteTermOut(Out):
    quote: str
    scenario: str
    price_per_mtok: QuantityOut
    volume: QuantityOut
    tolerance: float
    longest_term_within_tolerance: QuantityOut | None
    terms: list[dict[str, Any]]


class QuotesForScenario(BaseModel):
    scenario: str
    ranked: list[QuoteComparisonOut]


class QuotesCompareOut(BaseModel):
    scenarios: list[QuotesForScenario]


class ProblemOut(BaseModel):
    type: str
    title: str
    status: int
    detail: str
    instance: str
    errors: list[dict[str, str]] | None = None


CATALOG_MODELS = {"accelerator": Accelerator, "operating_point": OperatingPoint,
                  "electricity": Electricity}
