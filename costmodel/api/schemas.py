"""Request and response bodies (pydantic, strict: ``true`` is never a number)."""
from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from ..app.caps import MAX_DRAWS, MAX_QUOTES, MAX_SCENARIO_NAME, MAX_SCENARIOS
from ..app.keys import ROLES
from ..app.pricing import FLEXIBLE_SHARE
from ..app.saved import MAX_ID
from ..decisions.demand import Demand
from ..decisions.market import MARKET_KEY_PATTERN, MARKET_REF_PATTERN, Market, MarketEntry
from ..decisions.plan import DEPLOYMENTS
from ..decisions.quotes import CAPACITY_ONLY, FORMS, MARKET_GIVES, PER_MTOK_ONLY, Quote
from ..decisions.sensitivity.inputs import VARS
from ..decisions.task import Task
from ..model.curves import PERCENTILES
from ..model.inputs import (
    MAX_CURRENCIES,
    MAX_FX_RATE,
    MAX_TEXT,
    MIN_FX_RATE,
    Accelerator,
    Electricity,
    Fraction,
    GridFactor,
    OperatingPoint,
    QuantityField,
    RateEntry,
    Scenario,
    _quantity_schema,
    check_text,
)
from ..model.rates import DATE_PATTERN, FULL_REF_PATTERN, KEY_PATTERN, REF_PATTERN
from ..model.steps import MODEL
from ..model.units import CURRENCIES
from ..sources.curve_point import CURVE_GIVES, SELECTIONS

__all__ = ["PriceRequest", "PriceWhatIfRequest", "CompareRequest", "ScenarioCreate",
           "ScenarioRevise", "CatalogCreate", "CATALOG_CREATE", "CurveCreate", "KeyCreate",
           "scenario_input_schema", "quote_schema", "overrides_schema", "catalog_data_schema",
           "INPUT_SCHEMAS",
           "CATALOG_MODELS", "CATALOG_KEY", "MAX_CURVE_ID"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


# ---- the scenario, quote and catalog inputs as JSON Schema ----------------------------------
# Built from the engine's own models, then tightened to what their validation accepts: every
# rule JSON Schema can state is stated (text without control characters, a table's required
# keys, a quote form's prices, exactly one throughput...). What it cannot state (a unit's
# dimension, whether a catalog key exists, cross-field rules such as a TBT matching the
# interactivity) is listed in docs/operations.md#api-contract-schemathesis.

_SECTIONS = ("accelerator", "node", "rack", "facility", "financing", "electricity",
             "operating_point", "workload", "power", "pricing")
_CATALOG_SECTIONS = ("accelerator", "operating_point", "electricity")
CATALOG_MODELS = {"accelerator": Accelerator, "operating_point": OperatingPoint,
                  "electricity": Electricity, "rate": RateEntry, "market_price": MarketEntry,
                  "grid_factor": GridFactor}
_NULL = {"type": "null"}
_GIVEN = {"not": _NULL}
_CONTROL = "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f"
TEXT = {"type": "string", "maxLength": MAX_TEXT, "pattern": f"^[^{_CONTROL}]*$"}
CATALOG_KEY = r"^[A-Za-z0-9][A-Za-z0-9._/+@-]{0,99}$"  # "@": a rate's version
_KEY = {"type": "string", "pattern": CATALOG_KEY}
MAX_JSON_INT = 2**64 - 1  # a larger JSON integer is read as a float, which is not a count
# the booleans of a scenario's tables are pydantic's lax ones: true/false, 0/1, and these
# words in any case ("yes", "Off")
_BOOL_WORDS = ("0", "1", "t", "f", "y", "n", "on", "off", "no", "yes", "true", "false")
# (the words as a pattern, not an enum of every spelling: a generated client's enum would have
# one member per spelling, and FALSE, False and false are one name to it)
_ANY_CASE = "|".join("".join(f"[{ch.upper()}{ch.lower()}]" if ch.isalpha() else ch for ch in w)
                     for w in _BOOL_WORDS)
_LAX_BOOL = {"anyOf": [{"type": "boolean"}, {"type": "integer", "enum": [0, 1]},
                       {"type": "string", "pattern": f"^(?:{_ANY_CASE})$"}],
    "description": "true or false (also read: 0/1, and yes/no, on/off, t/f, y/n in any case)"}
_QUANTITY = _quantity_schema(QuantityField("token/s/user", positive=True), "interactivity")
_FORM_NEEDS = {"per_mtok": ("price_input", "price_output"),  # quotes.validate_quote's rule
               "per_accelerator_hour": ("hourly_price",),
               "reserved_monthly": ("monthly_price", "accelerators")}
EXAMPLE_SCENARIO = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
EXAMPLE_INLINE = {"name": "gb300 at 5000 token/s",
                  "accelerator": {"rated_power": "1400 W", "price": "45000 USD"},
                  "operating_point": {"throughput": "5000 token/s",
                                      "interactivity": "169 token/s/user"},
                  "electricity": {"price": "0.08 USD/kWh"}, "utilisation": 0.6}
EXAMPLE_QUOTE = {"name": "vendor-a-tokens", "vendor": "Vendor A", "date": "2026-11-16",
                 "form": "per_mtok", "price_input": "0.55 USD/Mtok",
                 "price_output": "2.19 USD/Mtok", "term": "12 month",
                 "operating_point": {"interactivity": "169 token/s/user"}}


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``$ref``s replaced by their definitions (it is embedded in
    other documents, where ``#/$defs`` would not resolve)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = defs[node["$ref"].rsplit("/", 1)[-1]]
                return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return walk(schema)


def _is_quantity(node: dict[str, Any]) -> bool:
    return any(isinstance(b, dict) and b.get("required") == ["value", "unit"]
               for b in node.get("oneOf", ()))


def _accepted(schema: Any, *, provenance: bool = False) -> Any:
    """A schema of the engine's models (:class:`~costmodel.model.inputs.Section`) as their
    validation reads input: text is checked text, booleans are lax, counts fit orjson's
    integers; titles and defaults dropped (a default is a canonical magnitude, 2400.0 for
    "2400 W", which a quantity's own schema rightly does not accept). ``provenance``: a
    quantity table may carry its ``source`` and ``note`` (scenario files and catalog data)."""
    if isinstance(schema, list):
        return [_accepted(v, provenance=provenance) for v in schema]
    if not isinstance(schema, dict):
        return schema
    # (a table keeps its title: the document names it, see client_shape)
    node = {k: v for k, v in schema.items()
            if k != "default" and (k != "title" or "properties" in schema)}
    if _is_quantity(node):
        if provenance:
            note = {"type": ["string", "number", "boolean", "null"]}  # read as its text
            node["oneOf"] = [{**b, "properties": {**b["properties"], "source": note,
                                                  "note": note}}
                             if b.get("type") == "object" else b for b in node["oneOf"]]
        return node
    kind = node.get("type")
    if kind == "string" and not {"enum", "const", "pattern", "format"} & set(node):
        node = {**node, **TEXT}
    elif kind == "boolean":
        return {k: v for k, v in node.items() if k != "type"} | _LAX_BOOL
    elif kind == "integer" and "maximum" not in node:
        node["maximum"] = MAX_JSON_INT
    for key in ("properties",):
        if key in node:
            node[key] = {k: _accepted(v, provenance=provenance) for k, v in node[key].items()}
    for key in ("anyOf", "oneOf", "allOf", "items"):
        if key in node:
            node[key] = _accepted(node[key], provenance=provenance)
    return node


def _present(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional field's schema without its ``null`` (a value the rule needs given)."""
    kept = [b for b in schema.get("anyOf", ()) if b != {"type": "null"}]
    if len(kept) == 1 and set(schema) <= {"anyOf", "description", "examples"}:
        return {**{k: v for k, v in schema.items() if k != "anyOf"}, **kept[0]}
    return schema


def _section_props(model: type[BaseModel], provenance: bool = True) -> dict[str, Any]:
    return _accepted(_inline(model.model_json_schema()), provenance=provenance)


def _at_schema() -> dict[str, Any]:
    """``operating_point.at``: "peak", or one of interactivity, TBT (either with a
    percentile) or concurrency."""
    percentile = {"enum": list(PERCENTILES), "description": "the percentile read (default "
                                                            "median)"}
    at = {"interactivity": _quantity_schema(QuantityField("token/s/user", positive=True),
                                            "read the curve at this interactivity"),
          "tbt": _quantity_schema(QuantityField("ms", positive=True),
                                  "read the curve at this time between tokens"),
          "concurrency": {"type": "number", "exclusiveMinimum": 0,
                          "description": "read the curve at this concurrency"}}
    assert set(at) == set(SELECTIONS) - {"peak"}
    one = [{"type": "object", "required": [how], "additionalProperties": False,
            "properties": {how: schema, **({"percentile": percentile}
                                           if how != "concurrency" else {})}}
           for how, schema in at.items()]
    return {"oneOf": [{"const": "peak"}, *one],
            "description": 'where to read the curve: "peak" (the default) or one of '
                           '{"interactivity": ...}, {"tbt": ...} (each may add a '
                           '"percentile"), {"concurrency": N}'}


def _ttft_max_schema() -> dict[str, Any]:
    """``operating_point.ttft_max``: a time, or {value, percentile} (value a time, or a
    number with its unit beside it)."""
    time = _quantity_schema(QuantityField("s", positive=True), "the TTFT's ceiling")
    percentile = {"enum": list(PERCENTILES)}
    return {"anyOf": [
        time, _NULL,
        {"type": "object", "required": ["value"], "additionalProperties": False,
         "properties": {"value": time, "percentile": percentile}},
        {"type": "object", "required": ["value", "unit"], "additionalProperties": False,
         "properties": {"value": {"type": "number", "exclusiveMinimum": 0},
                        "unit": {"type": "string"}, "percentile": percentile}}],
        "description": "read the curve where this percentile of the TTFT (default median) "
                       "is at most this time"}


def _branches(name: str, section: dict[str, Any]) -> list[dict[str, Any]]:
    """A catalog section given in full (without ``catalog``): the rules of its own table."""
    props = section["properties"]
    table = {"type": "object", "additionalProperties": False}
    if name == "accelerator":  # rated power, and a price to own or an hourly price to rent
        return [{**table, "properties": {**props, k: _present(props[k])},
                 "required": ["rated_power", k], "description": description}
                for k, description in (("price", "an accelerator to own"),
                                       ("hourly_price", "an accelerator rented by the hour"))]
    if name == "operating_point":  # exactly one throughput, or a curve to read it from
        null = {"type": "null"}
        props = {k: v for k, v in props.items() if k != "curve"}  # "curve" reads a curve
        return [
            {**table, "required": ["throughput"], "description": "a throughput per accelerator",
             "properties": {**props, "throughput": _present(props["throughput"]),
                            "throughput_per_kw": null, "normalised_by": null}},
            {**table, "required": ["throughput_per_kw"], "description": "a throughput per kW",
             "properties": {**props, "throughput_per_kw": _present(props["throughput_per_kw"]),
                            "throughput": null}},
            {**table, "required": ["curve"], "description": "read off a stored curve",
             "properties": {
                 **{k: v for k, v in section["properties"].items() if k not in CURVE_GIVES},
                 "curve": {"type": "string", "description": "id of a stored curve",
                           "examples": ["b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"]},
                 "curve_id": {"anyOf": [{"type": "string"}, {"type": "null"}],
                              "description": "the curve's id, when curve names another"},
                 "at": _at_schema(), "ttft_max": _ttft_max_schema()}},
        ]
    return [{**table, "properties": props}]


def _catalog_section(name: str, section: dict[str, Any], example: str) -> dict[str, Any]:
    """A section the catalog can supply: its key, the key plus overrides, or the section in
    full (its own required keys)."""
    props = dict(section["properties"])
    if name == "operating_point":  # a catalog point is a point: not read off a curve
        props.pop("curve", None)
    if name == "accelerator":  # priced from a reference rate of that accelerator
        props["rate"] = {"type": "string", "pattern": REF_PATTERN,
                         "examples": ["rental@2026-09", "rental"],
                         "description": "a reference rate of this accelerator: <kind>[@YYYY-"
                                        "MM[-DD]] (the latest version on or before the date; "
                                        "none: the latest), all in"}
    with_catalog = {"type": "object", "required": ["catalog"], "additionalProperties": False,
                    "description": "a catalog entry (its key) and keys that override it",
                    "properties": {"catalog": {**_KEY, "examples": [example]}, **props}}
    if name == "operating_point":  # one throughput, whatever the entry gives
        with_catalog["not"] = {"required": ["throughput", "throughput_per_kw"], "properties": {
            "throughput": _GIVEN, "throughput_per_kw": _GIVEN}}
    return {"oneOf": [{**_KEY, "description": "a catalog key", "examples": [example]},
                      with_catalog, *_branches(name, section)]}


_CATALOG_EXAMPLES = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
                     "electricity": "eia-2026-05-us-industrial"}


@cache
def _scenario_parts(provenance: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the scenario's properties, each section's own table schema). ``provenance``: a
    quantity table may carry its source (a scenario's tables do; overrides do not)."""
    scenario = _section_props(Scenario, provenance)
    props = scenario["properties"]
    tables = {name: props[name] for name in _SECTIONS}
    electricity = tables["electricity"]["properties"]
    electricity["tariff"] = {"anyOf": [{**_KEY, "description": "a catalog tariff's key"},
                                       *electricity["tariff"]["anyOf"]],
                             "examples": ["illustrative-tou-peak-16-21"],
                             "description": "a tariff (replaces the flat price): its table, or "
                                            "the key of a catalog tariff"}
    # a catalog grid factor by its key (docs/emissions.md), expanded into the fields above
    electricity["carbon"] = {**_KEY, "examples": ["egrid2023-erct"],
                             "description": "the key of a catalog location-based grid factor "
                                            "(fills carbon_intensity, carbon_hourly, "
                                            "carbon_year and carbon_source)"}
    electricity["market_carbon"] = {**_KEY, "examples": ["illustrative-residual-mix"],
                                    "description": "the key of a catalog grid factor used as "
                                                   "the market-based one (fills the "
                                                   "market_carbon_* fields)"}
    props["money"] = _money_schema()
    props["system"] = {"anyOf": [_KEY, {"type": "null"}], "examples": ["gb300-nvl72"],
                       "description": "a system preset from the catalog (node and rack)"}
    for name in _CATALOG_SECTIONS:
        props[name] = _catalog_section(name, tables[name], _CATALOG_EXAMPLES[name])
    # null: the table a catalog entry or curve fills (a published point's or a curve's
    # workload, a system's node and rack), see scenario_input_schema
    for name, filled_by in (("workload", "the operating point's (a catalog entry or curve)"),
                            ("node", "the system preset's"), ("rack", "the system preset's")):
        props[name] = {"anyOf": [tables[name], {**_NULL, "description": f"null: {filled_by}"}]}
    return props, tables


def _money_schema() -> dict[str, Any]:
    """``money``: the currency results are shown in, and exchange rates against USD, in the
    ISO 4217 currencies the unit registry knows (an enum: a code it does not know is no
    schema-valid request), each rate within its plausible bounds."""
    codes = sorted(CURRENCIES)
    code = {"type": "string", "enum": ["USD", *codes]}
    rate = {"oneOf": [
        {"type": "string", "pattern": r"^\s*[0-9.]+(?:[eE][-+]?[0-9]+)?\s*(?:"
                                      + "|".join(codes) + r")\s*/\s*USD\s*$"},
        {"type": "object", "required": ["value", "unit"], "additionalProperties": False,
         "properties": {"value": {"type": "number", "minimum": MIN_FX_RATE,
                                  "maximum": MAX_FX_RATE},
                        "unit": {"type": "string", "enum": [f"{c}/USD" for c in codes]}}}],
        "examples": ["0.92 EUR/USD"],
        "description": f"units of the currency per USD, in its unit: <CODE>/USD, from "
                       f"{MIN_FX_RATE:g} to {MAX_FX_RATE:g}"}
    fx = {"type": "object", "additionalProperties": False,
          "required": ["rate", "date", "source"],
          "properties": {"rate": rate,
                         "date": {"type": "string", "pattern": f"^{DATE_PATTERN}$"},
                         "source": {**TEXT, "minLength": 1}},
          "description": "an exchange rate, dated and sourced"}
    return {"type": "object", "additionalProperties": False,
            "description": "the currency results are shown in (ISO 4217), and the exchange "
                           "rates that convert amounts given in other currencies: none is "
                           "applied unless stated here",
            "properties": {"currency": {**code, "examples": ["EUR"]},
                           "fx": {"type": "object", "maxProperties": MAX_CURRENCIES,
                                  "propertyNames": {"enum": codes},
                                  "additionalProperties": fx}},
            "examples": [{"currency": "EUR", "fx": {"EUR": {
                "rate": "0.92 EUR/USD", "date": "2026-11-30",
                "source": "illustrative assumption"}}}]}


def scenario_input_schema() -> dict[str, Any]:
    """JSON schema of a scenario as a file or request gives it: tables, catalog keys
    (``"accelerator": "gb300"``), ``{"catalog": key, ...overrides}``, curve readings."""
    props, _ = _scenario_parts()
    measured = {"required": ["power"], "properties": {"power": {
        "required": ["basis"], "properties": {"basis": {"const": "measured"}}}}}

    def null(name: str) -> dict[str, Any]:
        return {"required": [name], "properties": {name: _NULL}}
    catalog = [{"type": "string"}, {"type": "object", "required": ["catalog"]}]
    return {"type": "object", "properties": props, "additionalProperties": False,
            "required": ["accelerator", "operating_point"],
            "allOf": [
                # power.basis = measured needs the accelerator's measured power (a catalog
                # entry may hold it)
                {"if": measured, "then": {"properties": {"accelerator": {"anyOf": [
                    *catalog, {"type": "object", "required": ["measured_power"],
                               "properties": {"measured_power": _GIVEN}}]}}}},
                # a null table is one a catalog entry or a curve fills
                {"if": null("workload"), "then": {"properties": {"operating_point": {
                    "anyOf": [*catalog, {"type": "object", "required": ["curve"]}]}}}},
                *({"if": null(t), "then": {"required": ["system"],
                                           "properties": {"system": _KEY}}}
                  for t in ("node", "rack"))],
            "examples": [EXAMPLE_SCENARIO, EXAMPLE_INLINE],
            "description": "A scenario: the same structure and names as a scenario file. "
                           "Missing tables and keys take the documented defaults, which the "
                           "result's disclosure lists."}


def overrides_schema() -> dict[str, Any]:
    """``overrides``: dotted scenario keys (the ones ``--set`` knows) to values."""
    props, tables = _scenario_parts(provenance=False)
    keys: dict[str, Any] = {}
    for name, schema in props.items():
        # an override applies after the catalog is expanded: no null table to fill then
        keys[name] = tables[name] if name in ("workload", "node", "rack") else schema
        if name in tables:
            for sub, value in tables[name]["properties"].items():
                keys[f"{name}.{sub}"] = value
    at = _at_schema()
    curve = _branches("operating_point", tables["operating_point"])[2]["properties"]
    keys.update({"operating_point.curve": curve["curve"],  # reads that curve
                 "operating_point.curve_id": curve["curve_id"],
                 "operating_point.at": at,
                 **{f"operating_point.at.{k}": v
                    for branch in at["oneOf"][1:] for k, v in branch["properties"].items()}})
    return {"type": "object", "properties": keys, "additionalProperties": False,
            "description": 'dotted scenario keys to values, e.g. {"electricity.price": '
                           '"0.10 USD/kWh"}', "examples": [{"electricity.price": "0.10 USD/kWh"}]}


def quote_schema(*, term: bool = False) -> dict[str, Any]:
    """A vendor quote (a quote file's [[quote]] table as JSON): name, vendor and form, and
    the prices its form needs. ``term``: its date is where the term starts (an ISO date)."""
    base = _section_props(Quote, provenance=False)
    props = base["properties"]
    if term:
        props["date"] = {"anyOf": [{"type": "string", "format": "date"}, {"const": ""},
                                   {"type": "null"}],
                         "description": "the quote's date (YYYY-MM-DD), where its term starts "
                                        "(default: today)"}
    forms = []
    for form, needs in _FORM_NEEDS.items():
        other = CAPACITY_ONLY if form == "per_mtok" else PER_MTOK_ONLY
        own = {**props, "form": {"const": form}, **{k: _present(props[k]) for k in needs},
               "rate": _NULL, "market": _NULL, **{k: _NULL for k in other}}
        branch = {"type": "object", "properties": own, "additionalProperties": False,
                  "required": ["name", "vendor", "form", *needs],
                  "description": f"a {form} quote"}
        if form == "per_mtok":  # prices, or tiers in their place
            branch["required"] = ["name", "vendor", "form"]
            branch["oneOf"] = [
                {"required": list(needs), "properties": {"tiers": _NULL}},
                {"required": ["tiers"], "properties": {
                    "tiers": _present(props["tiers"]), **{k: _NULL for k in needs}}}]
        forms.append({**branch, "allOf": SUPPLY_RULES})
    assert set(_FORM_NEEDS) == set(FORMS)
    forms.append({"type": "object", "allOf": SUPPLY_RULES, "additionalProperties": False,
                  "required": ["name", "rate"],
                  "description": "a reference quote: per_accelerator_hour at a reference rate",
                  "properties": {**props, "form": {"const": "per_accelerator_hour"},
                                 "hourly_price": _NULL, "market": _NULL,
                                 "rate": {"type": "string", "pattern": FULL_REF_PATTERN,
                                          "examples": ["gb300/rental@2026-09"]}}})
    forms.append({"type": "object", "allOf": SUPPLY_RULES, "additionalProperties": False,
                  "required": ["market"],
                  "description": "a market quote: per_mtok at a catalog market price (its "
                                 "name defaults to the reference, its vendor to the entry's "
                                 "provider)",
                  "properties": {**props, "form": {"const": "per_mtok"}, "rate": _NULL,
                                 **{k: _NULL for k in (*MARKET_GIVES, *CAPACITY_ONLY)},
                                 "market": {"type": "string", "pattern": MARKET_REF_PATTERN,
                                            "examples": ["illustrative/reasoning-model-api"
                                                         "@2026-11"]}}})
    return {"oneOf": forms, "examples": [EXAMPLE_QUOTE],
            "description": "A vendor quote: per_mtok (price_input and price_output, or "
                           "tiers), "
                           "per_accelerator_hour (hourly_price) or reserved_monthly "
                           "(monthly_price and accelerators); or a reference quote (rate: "
                           "a catalog reference rate) or a market quote (market: a catalog "
                           "market price)."}


def catalog_data_schema(kind: str) -> dict[str, Any]:
    """The ``data`` of a new catalog entry, as the catalog files give it."""
    _, tables = _scenario_parts()
    text_source = {"anyOf": [TEXT, {"type": ["number", "boolean", "null"]}]}
    if kind == "system":
        label = {"type": ["string", "number", "boolean", "null"]}  # not read
        return {"type": "object", "additionalProperties": False, "properties": {
            "name": label, "note": label, "node": tables["node"], "rack": tables["rack"]},
            "description": "a system preset: node and rack tables"}
    table = _accepted(_inline(CATALOG_MODELS[kind].model_json_schema()), provenance=True)
    table["properties"] = {k: {**v, "oneOf": [
        {**b, "properties": {**b["properties"], "source": text_source}}
        if b.get("type") == "object" else b for b in v["oneOf"]]} if _is_quantity(v) else v
        for k, v in table["properties"].items()}
    if kind == "operating_point":
        table["properties"]["workload"] = tables["workload"]
    if kind == "market_price":
        table = _market_entry_rules(table)
    return table


# the inputs' schemas are components of the OpenAPI document (build_spec adds them)
INPUT_SCHEMAS = {"ScenarioInput": scenario_input_schema, "ScenarioOverrides": overrides_schema,
                 "Quote": quote_schema, "TermQuote": lambda: quote_schema(term=True),
                 "Demand": lambda: demand_schema(),  # defined below, with its example
                 "Task": lambda: task_schema(),
                 "Market": lambda: market_schema()}


def _ref(name: str) -> WithJsonSchema:
    assert name in INPUT_SCHEMAS
    # allOf: pydantic would try to resolve a bare $ref beside a field's default
    return WithJsonSchema({"allOf": [{"$ref": f"#/components/schemas/{name}"}]})


ScenarioBody = Annotated[dict[str, Any], _ref("ScenarioInput")]
Overrides = Annotated[dict[str, Any], _ref("ScenarioOverrides")]
Quantity = Annotated[Any, WithJsonSchema(_QUANTITY)]
QuoteBody = Annotated[dict[str, Any], _ref("Quote")]
TermQuoteBody = Annotated[dict[str, Any], _ref("TermQuote")]


Id = Annotated[int, Field(ge=1, le=MAX_ID)]


def _text(max_length: int, min_length: int = 0):
    """Checked text (no control characters) of at most ``max_length`` characters."""
    return Annotated[str, Field(min_length=min_length, max_length=max_length,
                                json_schema_extra={"pattern": TEXT["pattern"]}),
                     AfterValidator(check_text)]


def _examples(*examples: dict[str, Any], rules: list[dict[str, Any]] = ()) -> ConfigDict:
    """Request examples (each a valid request), and rules across the body's fields."""
    extra: dict[str, Any] = {"examples": list(examples)}
    if rules:
        extra["allOf"] = list(rules)
    return ConfigDict(json_schema_extra=extra)


# a scenario inline, or a saved one (and its revision, if not the latest)
_ONE_SCENARIO = {"oneOf": [
    {"required": ["scenario"], "properties": {"scenario": _GIVEN, "scenario_id": _NULL,
                                              "revision": _NULL}},
    {"required": ["scenario_id"], "properties": {"scenario_id": _GIVEN, "scenario": _NULL}}]}
# matched interactivity is not read at a given one; either is read off curves: each scenario
# names one (or is a saved one, which may)
_READS_CURVES = {"items": {"anyOf": [
    {"required": ["scenario_id"], "properties": {"scenario_id": _GIVEN}},
    {"required": ["scenario"], "properties": {"scenario": {
        "required": ["operating_point"],
        "properties": {"operating_point": {"type": "object", "required": ["curve"]}}}}},
    {"required": ["overrides"], "properties": {"overrides": {
        "required": ["operating_point.curve"]}}}]}}
_MATCHED = {"allOf": [
    {"if": {"required": ["matched"], "properties": {"matched": {"const": True}}},
     "then": {"properties": {"at_interactivity": _NULL, "scenarios": _READS_CURVES}}},
    {"if": {"required": ["at_interactivity"], "properties": {"at_interactivity": _GIVEN}},
     "then": {"properties": {"scenarios": _READS_CURVES}}}]}


PRICE_EXAMPLE = {"scenario": EXAMPLE_SCENARIO}
# two curves, read at one interactivity or matched
CURVE_EXAMPLES = [{"scenario": {"name": hw, "accelerator": {"rated_power": "1000 W",
                                                            "price": "30000 USD"},
                                "operating_point": {"curve": f"{hw}/gpt-oss-120b/vllm/fp8/"
                                                             f"8192x1024/none/agg"}}}
                  for hw in ("b200", "h100")]
JALAPENO = {"scenario": {"accelerator": "jalapeno",
                         "operating_point": "deepseek-r1/jalapeno/peak"}}


# what every list of scenarios in a request holds (compare, workbook, quotes)
ITEMS = ('each item is a /price body: {"scenario": {...}} (a scenario inline), or '
         '{"scenario_id": n, "revision": r, "overrides": {...}} (a saved one), never the '
         'bare scenario table')


class PriceRequest(Strict):
    """An inline scenario, or a saved one (latest revision unless given) plus overrides."""
    model_config = _examples(PRICE_EXAMPLE, {"scenario": EXAMPLE_INLINE, "overrides": {
        "electricity.price": "0.10 USD/kWh"}}, rules=[_ONE_SCENARIO])
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    overrides: Overrides = Field(default_factory=dict)


# the what-if of POST /price: serving 60 % of every hour on a time-of-use tariff, 30 % of
# that load moved to each day's cheapest hours
WHAT_IF_EXAMPLE = {"scenario": {**EXAMPLE_SCENARIO, "utilisation": 0.6,
                                "electricity": {"tariff": "illustrative-tou-peak-16-21"}},
                   "flexible_share": 0.3}


class PriceWhatIfRequest(PriceRequest):
    """A /price body (an inline scenario, or a saved one plus overrides) and, optionally, a
    what-if answered beside the result: ``flexible_share``."""
    model_config = _examples(PRICE_EXAMPLE, {"scenario": EXAMPLE_INLINE, "overrides": {
        "electricity.price": "0.10 USD/kWh"}}, WHAT_IF_EXAMPLE, rules=[_ONE_SCENARIO])
    flexible_share: Fraction(
        minimum=FLEXIBLE_SHARE[0], maximum=FLEXIBLE_SHARE[1], description=(
            "what if this share of every hour's load (a fraction, 0 to 1, or a percentage: "
            "\"30 %\") moved to the same "
            "day's cheapest hours (by the year's average rate), each filled up to a whole "
            "hour, serving hours and tokens unchanged: the scenario is priced again and "
            "answered as `what_if` beside the result (as `costmodel price --flexible-share`). "
            "Needs a tariff (`electricity.tariff`): at a flat price every hour costs the "
            "same")) | None = None


class CompareRequest(Strict):
    """Several scenarios side by side; ratios are against the first."""
    model_config = _examples({"scenarios": CURVE_EXAMPLES, "at_interactivity": "169 token/s/user"},
                             rules=[_MATCHED])
    scenarios: Annotated[list[PriceRequest], Field(min_length=2, max_length=MAX_SCENARIOS,
                                                   description=ITEMS)]
    at_interactivity: Quantity | None = None
    matched: bool = False


class WorkbookRequest(Strict):
    model_config = _examples({"scenarios": CURVE_EXAMPLES, "matched": True,
                              "title": "gpt-oss-120b, matched"}, rules=[_MATCHED])
    scenarios: Annotated[list[PriceRequest], Field(min_length=1, max_length=MAX_SCENARIOS,
                                                   description=ITEMS)]
    at_interactivity: Quantity | None = None
    matched: bool = False
    title: _text(200) | None = None


# ---- capacity planning (POST /plan) ----------------------------------------------------------
PLAN_EXAMPLE = {"scenario": EXAMPLE_SCENARIO, "demand": "2.5e6 token/s", "availability": 0.99}
# sized for a demand (with its availability), or for a power budget: exactly one
_ONE_SIZE = {"oneOf": [
    {"required": ["demand"], "properties": {"demand": _GIVEN, "power_budget": _NULL,
                                            "headroom": _NULL, "deployment": _NULL}},
    {"required": ["power_budget"], "properties": {"power_budget": _GIVEN, "demand": _NULL,
                                                  "availability": _NULL}}]}
# a named interactivity is read off a curve: the scenario names one (or is a saved one)
_PLAN_READS_CURVE = {"if": {"required": ["at_interactivity"],
                            "properties": {"at_interactivity": _GIVEN}},
                     "then": _READS_CURVES["items"]}


def _plan_quantity(unit: str, description: str, *examples: str) -> WithJsonSchema:
    schema = _quantity_schema(QuantityField(unit, positive=True), description)
    return WithJsonSchema({**schema, "examples": list(examples)})


class PlanRequest(Strict):
    """A fleet sized for an average demand (accelerators, nodes and racks rounded up), or
    the whole deployments (nodes or racks) a power budget holds with a planning headroom
    (rounded down), and priced: the scenario inline, or a saved one plus overrides, as a
    /price body."""
    model_config = _examples(
        PLAN_EXAMPLE, {"scenario": EXAMPLE_INLINE, "power_budget": "10 MW"},
        {"scenario": EXAMPLE_INLINE, "power_budget": "1 GW", "headroom": 0.1,
         "deployment": "rack"},
        {**CURVE_EXAMPLES[0], "demand": "6570000 Mtok/month",
         "at_interactivity": "100 token/s/user"},
        rules=[_ONE_SCENARIO, _ONE_SIZE, _PLAN_READS_CURVE])
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    overrides: Overrides = Field(default_factory=dict)
    demand: Annotated[Any, _plan_quantity(
        "token/s", "the average demand, in tokens of the scenario's token kind (token/s, "
                   "Mtok/day, Mtok/month)", "2.5e6 token/s", "6570000 Mtok/month")] | None = None
    power_budget: Annotated[Any, _plan_quantity(
        "W", "the power budget at the scenario's boundary", "10 MW")] | None = None
    at_interactivity: Quantity | None = None
    availability: Fraction(positive=True, description=(
        "the fraction of hours an accelerator is available, or a percentage (\"99 %\"; a "
        "demand only; default 1)")) | None = None
    headroom: Fraction(below_maximum=True, description=(
        "the planning headroom above the power a deployment draws at the scenario's boundary, "
        "as a fraction or a percentage (\"10 %\"; a power budget only; default 0)")) \
        | None = None
    deployment: Annotated[Literal[DEPLOYMENTS], Field(description=(  # type: ignore[valid-type]
        "what a power budget holds whole: a node (the default) or a rack"))] | None = None


class QuotesCompareRequest(Strict):
    """Vendor quotes (the quote file's [[quote]] tables as JSON) against our scenarios."""
    model_config = _examples({"quotes": [EXAMPLE_QUOTE], "scenarios": [PRICE_EXAMPLE]})
    quotes: Annotated[list[QuoteBody], Field(min_length=1, max_length=MAX_QUOTES)]
    scenarios: Annotated[list[PriceRequest], Field(min_length=1, max_length=MAX_SCENARIOS,
                                                   description=ITEMS)]


def _given(key: str) -> dict[str, Any]:
    return {"required": [key], "properties": {key: _GIVEN}}


# Supply's rule (a demand's own build, a quote): an availability, or mtbi with recovery
SUPPLY_RULES = [{"if": _given("availability"),
                 "then": {"properties": {"mtbi": _NULL, "recovery": _NULL}}},
                {"if": _given("mtbi"), "then": _given("recovery")},
                {"if": _given("recovery"), "then": _given("mtbi")}]


def demand_schema() -> dict[str, Any]:
    """The buyer's demand (a quote file's [demand] table as JSON)."""
    schema = _section_props(Demand, provenance=False)
    props = schema["properties"]
    props["own"] = {**props["own"], "allOf": SUPPLY_RULES}
    props["task"] = {"anyOf": [{"$ref": "#/components/schemas/Task"}, _NULL],
                     "description": "the task tasks_per_day counts"}
    volumes = [_given("volume"), _given("requests_per_day"), _given("tasks_per_day")]
    schema["allOf"] = [  # Demand._volume's rules, and a load shape's (_check_shape)
        {"if": _given("load"), "then": {"oneOf": [_given("peak"), *volumes]},
         "else": {"oneOf": volumes}},
        {"if": {"anyOf": volumes[1:]},
         "then": {"properties": {"token_kind": {"const": "mixed"}}}},
        {"if": _given("tasks_per_day"), "then": _given("task"),
         "else": {"properties": {"task": _NULL}}}]
    schema["examples"] = [EXAMPLE_DEMAND, EXAMPLE_SHAPED_DEMAND]
    schema["description"] = ("the buyer's demand: volume [Mtok/month], requests_per_day or "
                             "tasks_per_day (of its task), optional peak [token/s]; or a "
                             "load shape by hour (load: each hour a fraction of the peak, "
                             "the busiest 1) with the peak or one of the volumes; service "
                             "level (interactivity, percentile), batch and cached-input "
                             "shares, own availability")
    return schema


EXAMPLE_DEMAND = {"volume": "50000 Mtok/month", "interactivity": "100 token/s/user"}
# 08:00-20:00 at the peak, the night at half of it: a mean of 0.75, 7,884 Mtok a month
EXAMPLE_SHAPED_DEMAND = {"peak": "4000 token/s", "interactivity": "100 token/s/user",
                         "load": {"hourly": [0.5] * 8 + [1.0] * 12 + [0.5] * 4}}
EXAMPLE_CAPACITY = {"name": "h100-capacity", "vendor": "Cloud X", "date": "2026-11-20",
                    "form": "per_accelerator_hour", "hourly_price": "2.10 USD/h",
                    "accelerators": 64, "term": "12 month", "hardware": "h100"}
EXAMPLE_API = {"name": "api-tokens", "vendor": "API Y", "date": "2026-11-20",
               "form": "per_mtok", "price_input": "0.60 USD/Mtok",
               "price_output": "0.60 USD/Mtok", "term": "12 month",
               "operating_point": {"interactivity": "100 token/s/user"}}
DemandBody = Annotated[dict[str, Any], _ref("Demand")]


def task_schema() -> dict[str, Any]:
    """An agent's task (a scenario or quote file's [task] table as JSON)."""
    schema = _section_props(Task, provenance=False)
    schema["properties"]["percentile"] = {"type": "string", "enum": list(PERCENTILES),
                                          "description": "the statistic of interactivity and "
                                                         "TTFT read (default median)"}
    # a repeated step (steps, context, output) or step tables: one form (app validation's
    # rule, said here as validators read it)
    repeated = ["steps", "context", "output"]
    schema["oneOf"] = [
        {"required": repeated, "properties": {**{k: _GIVEN for k in repeated},
                                              "step": _NULL}},
        {"required": ["step"], "properties": {
            "step": _GIVEN, **{k: _NULL for k in repeated},
            **{k: {"not": {}} for k in ("growth", "cached_share", "tool_time")}}}]
    schema["examples"] = [EXAMPLE_TASK]
    schema["description"] = (
        "an agent's task: `steps` repeated steps whose input starts at `context` tokens and "
        "grows by `growth` a step (`cached_share` of it from the prefix cache), `output` "
        "tokens each and `tool_time` before each but the first; or `step` tables (input, "
        "cached, output, tool_time); a latency `target` at a `percentile`; `cached_weight`: "
        "a cached input token's cost as a share of a new one's (default 1)")
    return schema


EXAMPLE_TASK = {"name": "coding agent", "steps": 40, "context": "8000 token",
                "growth": "1500 token", "output": "300 token", "cached_share": 0.8,
                "tool_time": "1.2 s", "target": "120 s"}
TaskBody = Annotated[dict[str, Any], _ref("Task")]
TASK_CURVES = [{"scenario": {"name": hw, "accelerator": {"rated_power": "1000 W",
                                                         "price": "30000 USD"},
                             "operating_point": {"curve": f"{hw}/gpt-oss-120b/vllm/fp8/"
                                                          f"8192x1024/none/agg"}}}
               for hw in ("b200", "h100")]


class TaskRequest(Strict):
    """An agent's task priced on each system: its latency at each system's point (or, with a
    target, at the cheapest point of each curve that meets it) and its cost."""
    model_config = _examples({"scenarios": TASK_CURVES, "task": EXAMPLE_TASK},
                             {"scenarios": [{"scenario": {
                                 "accelerator": hw,
                                 "operating_point": f"deepseek-r1/{hw}/matched"}}
                                 for hw in ("gb300", "jalapeno")],
                              "task": {"steps": 40, "context": 2400, "output": 300}})
    scenarios: Annotated[list[PriceRequest], Field(min_length=1, max_length=MAX_SCENARIOS,
                                                   description=ITEMS)]
    task: TaskBody


# ---- profit at market prices (POST /profit) ----------------------------------------------------

EXAMPLE_MARKET = {"catalog": "illustrative/reasoning-model-api", "revenue_share": 0.1,
                  "cached_share": 0.5}
EXAMPLE_TYPED_MARKET = {"price_input": "0.5 USD/Mtok", "price_output": "2 USD/Mtok",
                        "provider": "Example API", "model": "DeepSeek R1", "date": "2026-11",
                        "source": "illustrative assumption", "revenue_share": "15 %"}
_MARKET_PRICES = ("price_input", "price_cached_input", "price_output")


def market_schema() -> dict[str, Any]:
    """A market (a scenario file's [market] table as JSON): a catalog entry and/or prices
    typed over it, the revenue share and the cached share."""
    schema = _section_props(Market, provenance=True)
    props = schema["properties"]
    props["catalog"] = {"anyOf": [{"type": "string", "pattern": MARKET_REF_PATTERN}, _NULL],
                        "examples": ["illustrative/reasoning-model-api",
                                     "deepseek/deepseek-r1-off-peak@2026-08"],
                        "description": "a market price in the catalog (GET /market-prices): "
                                       "<provider>/<offer>[@YYYY-MM[-DD]], the latest version "
                                       "on or before the date (none: the latest)"}
    schema["allOf"] = _MARKET_RULES
    schema["examples"] = [EXAMPLE_MARKET, EXAMPLE_TYPED_MARKET]
    schema["description"] = (
        "the market a scenario sells into: `catalog` (a market price in the catalog) and/or "
        "prices per million tokens typed over it (`price_input`, `price_cached_input`, "
        "`price_output`, or a blended `price`; any currency the scenario states a rate for), "
        "`revenue_share` (paid out of revenue: 0 to below 1), `cached_share` (of input "
        "tokens, from the prefix cache); `provider`, `model`, `date`, `source` cite the "
        "prices typed (with a catalog entry, its own citation stands, and `source` is the "
        "typed prices' source)")
    return schema


# Market's rules, said as validators read them: a blended price or prices by kind, not both;
# without a catalog entry, a price for input and output tokens
_MARKET_RULES = [
    {"if": _given("price"), "then": {"properties": {k: _NULL for k in _MARKET_PRICES}}},
    {"if": {"not": _given("catalog")}, "then": {"anyOf": [
        _given("price"), {"allOf": [_given("price_input"), _given("price_output")]}]}}]


def _market_entry_rules(table: dict[str, Any]) -> dict[str, Any]:
    """A catalog market price's data: a price, on one basis (MarketEntry's rules)."""
    return {**table, "allOf": [
        _MARKET_RULES[0],
        {"anyOf": [_given(k) for k in ("price", *_MARKET_PRICES)]}]}


MarketBody = Annotated[dict[str, Any], _ref("Market")]
_ITEM_MARKET = ("the market this scenario sells into (none: the request's market)")


class ProfitScenario(Strict):
    """A scenario to sell (inline, or saved plus overrides, as a /price body) and, when it
    is not the request's, its market."""
    model_config = _examples({"scenario": EXAMPLE_SCENARIO, "market": EXAMPLE_MARKET},
                             rules=[_ONE_SCENARIO])
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    overrides: Overrides = Field(default_factory=dict)
    market: MarketBody | None = Field(None, description=_ITEM_MARKET)


class ProfitRequest(Strict):
    """Each scenario sold at a market's prices: revenue, revenue share, cost and profit per
    accelerator-hour, per month and per GW-year, the margin, the break-even market price and
    tokens per dollar of cost. One market for every scenario (``market``), or each its own."""
    model_config = _examples(
        {"scenarios": [{"scenario": EXAMPLE_SCENARIO}], "market": EXAMPLE_MARKET},
        {"scenarios": [{"scenario": {"accelerator": hw,
                                     "operating_point": f"deepseek-r1/{hw}/peak"}}
                       for hw in ("gb300", "jalapeno")],
         "market": {"catalog": "deepseek/deepseek-r1-off-peak", "price_input": "0.14 USD/Mtok",
                    "source": "illustrative assumption (the input price)"}},
        {"scenarios": [{"scenario": EXAMPLE_SCENARIO, "market": EXAMPLE_MARKET},
                       {"scenario": EXAMPLE_SCENARIO, "market": EXAMPLE_TYPED_MARKET},
                       {"scenario": EXAMPLE_SCENARIO, "overrides": {"utilisation": 0.5},
                        "market": {"price": "0.6 USD/Mtok"}}]},
        # without the request's market, every scenario names its own
        rules=[{"if": {"not": _given("market")},
                "then": {"properties": {"scenarios": {"items": _given("market")}}}}])
    scenarios: Annotated[list[ProfitScenario], Field(min_length=1, max_length=MAX_SCENARIOS,
                                                     description=ITEMS + "; each may add its "
                                                                         "market")]
    market: MarketBody | None = Field(None, description="the market of every scenario that "
                                                        "names none")


class QuotesDecideRequest(Strict):
    """Vendor quotes and our own builds (scenarios) priced for the buyer's demand."""
    model_config = _examples({"quotes": [EXAMPLE_CAPACITY, EXAMPLE_API],
                              "scenarios": [{"scenario": {
                                  "accelerator": "h100", "system": "hgx-8gpu",
                                  "operating_point": {"curve": "h100/gpt-oss-120b/vllm/fp8/"
                                                      "8192x1024/none/agg"}}}],
                              "demand": EXAMPLE_DEMAND, "improvement": 0.3})
    quotes: Annotated[list[QuoteBody], Field(min_length=1, max_length=MAX_QUOTES)]
    scenarios: Annotated[list[PriceRequest], Field(min_length=1, max_length=MAX_SCENARIOS,
                                                   description=ITEMS)]
    demand: DemandBody
    improvement: Fraction(below_maximum=True, description=(
        "yearly fall of the market price per token, a fraction or a percentage (\"30 %\"): "
        "prices the lock-in of the recommended offer's term")) | None = None


# a step of the calculation by its name: one name an output (a generated client's enum has one
# member each); the dotted alias of a grouped step (cost_per_mtok.total) is read too
_OUTPUTS = sorted(MODEL.scalar_steps)
assert all(s.name in MODEL.scalar_steps for s in MODEL.steps.values() if s.group)
Output = Annotated[str, Field(min_length=1, max_length=100), WithJsonSchema(
    {"type": "string", "enum": _OUTPUTS, "examples": ["cost_per_mtok_total"],
     "description": "a step of the calculation by name (`costmodel steps`), e.g. "
                    "cost_per_mtok_total; the dotted alias of a grouped step "
                    "(cost_per_mtok.total) is also read"})]
# the inputs an analysis moves, by dotted key (`costmodel steps`): one name an input in the
# document (a generated client's enum has one member each); the input's name
# (electricity_price) is read too
_DECIDED = sorted(k for k, v in VARS.items() if v.unit_of is None)
_CONTINUOUS = sorted(k for k, v in VARS.items() if not v.count)


def _no_null_defaults(schema: dict[str, Any]) -> None:
    # a field left out of a lean answer is absent, not null: no default in the document
    for prop in schema.get("properties", {}).values():
        if prop.get("default", 0) is None:
            del prop["default"]


class Partial(BaseModel):
    """An answer whose fields ``?view=`` and ``?fields=`` may leave out."""
    model_config = ConfigDict(extra="allow", json_schema_extra=_no_null_defaults)


MAX_BATCH_ROWS = 10_000  # rows of one batch (costmodel.app.batch.MAX_ROWS)
MAX_BATCH_BODY = 8 * 2**20  # bytes of a batch body: 10,000 rows of a few overrides each
MAX_ROW_KEYS = 100  # overrides of one row
BATCH_EXAMPLE = {"scenario": EXAMPLE_SCENARIO,
                 "overrides": [{"electricity.price": "0.05 USD/kWh"},
                               {"electricity.price": "0.10 USD/kWh", "utilisation": 0.6},
                               {"power.boundary": "facility"}],
                 "outputs": ["cost_per_mtok_total", "cost_per_mtok_energy"]}
# a row is any table of overrides: a row that does not price is listed in the answer's
# errors (the request fails only when no row prices), so the document refuses no key
_ROW = {"type": "object", "maxProperties": MAX_ROW_KEYS, "description": (
    "one row: dotted scenario keys to values, as a /price body's overrides (see "
    "ScenarioOverrides); a row that does not price is null in every column and listed in "
    "errors"), "examples": [{"electricity.price": "0.05 USD/kWh"}]}


class BatchRequest(Strict):
    """One scenario (inline, or saved) priced with each row of overrides, for the outputs
    asked: rows that move numeric inputs are evaluated together in one vectorised call."""
    model_config = _examples(BATCH_EXAMPLE, rules=[_ONE_SCENARIO])
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    overrides: Annotated[list[Annotated[dict[str, Any], Field(max_length=MAX_ROW_KEYS),
                                        WithJsonSchema(_ROW)]],
                         Field(min_length=1, max_length=MAX_BATCH_ROWS, description=(
                             f"the rows, at most {MAX_BATCH_ROWS:,}; the body at most "
                             f"{MAX_BATCH_BODY // 2**20} MiB (413 above)"))]
    outputs: Annotated[list[Output], Field(min_length=1, max_length=50)] = Field(
        default_factory=lambda: ["cost_per_mtok_total"],
        description="the columns: steps of the calculation, by name or dotted")


class BatchColumn(BaseModel):
    unit: str
    values: list[float | None]


class BatchRowErrorOut(BaseModel):
    """Why a row has no figures: the shape of every problem's ``errors[]`` (``path``,
    ``message``) with the row's index."""
    row: int
    path: str = Field(description="overrides[i].key, or overrides[i] for the row as a whole")
    message: str = Field(description="what is wrong, in words")
    detail: str = Field(deprecated=True, description=(
        "deprecated: the same words as message (the field's former name), kept for one "
        "release; read message"))


class BatchOut(Partial):
    """The rows' figures by column (null where a row failed or a figure has no value), the
    errors of the rows that failed, one disclosure for what the rows share (the base's) and,
    per row, the sources that differ from it (null for a failed row; a source null: gone)."""
    outputs: list[str] = None  # type: ignore[assignment]
    rows: int = None  # type: ignore[assignment]
    priced: int = None  # type: ignore[assignment]
    columns: dict[str, BatchColumn] = None  # type: ignore[assignment]
    errors: list[BatchRowErrorOut] = None  # type: ignore[assignment]
    disclosure: dict[str, Any] = None  # type: ignore[assignment]
    provenance: list[dict[str, str | None] | None] = Field(None, description=(  # type: ignore[assignment]
        "the row form's: per row, the sources that differ from the disclosure's"))
    sources: dict[str, str | None] = Field(None, description=(  # type: ignore[assignment]
        "the columnar form's, in place of provenance: the sources every row's columns "
        "change in the disclosure's (columns.electricity.price [USD/kWh]; null: a citation "
        "the column replaces)"))
    errors_unlisted: int = Field(None, ge=0, description=(  # type: ignore[assignment]
        "the columnar form's: rows without figures beyond the first 1,000 listed in errors "
        "(each null in every column)"))


# ---- the columnar form of POST /price/batch (docs/pricing-tools.md#columnar-batch) ---------
MAX_COLUMN_ROWS = 1_000_000  # rows of one columnar batch (costmodel.app.columns)
MAX_COLUMNAR_BODY = 64 * 2**20  # bytes of a columnar body (JSON, Arrow or Parquet)
# numeric inputs a column may hold (every one a batch moves), by dotted key
_COLUMN_KEYS = sorted(k for k in VARS if k != "money.rate")
COLUMNS_EXAMPLE = {"scenario": EXAMPLE_SCENARIO,
                   "columns": {"electricity.price": {"unit": "USD/kWh",
                                                     "values": [0.05, 0.08, 0.12]},
                               "utilisation": {"unit": "%", "values": [60, 75, 90]}},
                   "outputs": ["cost_per_mtok_total", "cost_per_mtok_energy"]}


class ColumnIn(Strict):
    """One numeric input's values, one a row, in one unit."""
    unit: Annotated[str, Field(max_length=100, examples=["USD/kWh"], description=(
        "the values' unit, e.g. USD/kWh, USD/MWh, %; empty for a plain number or a count "
        "(node.accelerators...); checked and converted once for the column"))] = ""
    values: Annotated[Any, WithJsonSchema({
        "type": "array", "minItems": 1, "maxItems": MAX_COLUMN_ROWS,
        "items": {"type": "number"}, "examples": [[0.05, 0.08, 0.12]],
        "description": "numbers (integers for a count), one a row; no null, no text, no "
                       "boolean; each within the input's valid range"})]


class ColumnsRequest(Strict):
    """The columnar form: one scenario (inline, or saved) priced once a row of its columns,
    each column one numeric input in one unit, every column of the same length."""
    model_config = _examples(COLUMNS_EXAMPLE, rules=[_ONE_SCENARIO])
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    columns: Annotated[dict[str, ColumnIn], Field(
        min_length=1, max_length=len(_COLUMN_KEYS),
        json_schema_extra={"propertyNames": {"enum": _COLUMN_KEYS}},
        description=(f"numeric input (dotted key) -> its column, at most {MAX_COLUMN_ROWS:,} "
                     f"rows; the body at most {MAX_COLUMNAR_BODY // 2**20} MiB (413 above)"))]
    outputs: Annotated[list[Output], Field(min_length=1, max_length=50)] = Field(
        default_factory=lambda: ["cost_per_mtok_total"],
        description="the columns of the answer: steps of the calculation, by name or dotted")


class ColumnsBase(Strict):
    """What an Arrow or Parquet body says around its columns, as JSON in its schema's
    metadata ``costmodel``: the scenario and the outputs."""
    scenario: ScenarioBody | None = None
    scenario_id: Id | None = None
    revision: Id | None = None
    outputs: Annotated[list[Output], Field(min_length=1, max_length=50)] = Field(
        default_factory=lambda: ["cost_per_mtok_total"])


class TornadoRequest(Strict):
    """Each input moved alone (default -/+ 20 %, or across a range), ranked by the swing."""
    model_config = _examples({"scenario": PRICE_EXAMPLE, "output": "cost_per_mtok_total",
                              "ranges": {"electricity.price": "0.05..0.15 USD/kWh"}})
    scenario: PriceRequest
    output: Output = "cost_per_mtok_total"
    swing: Fraction(positive=True, below_maximum=True, description=(
        "each input moved -/+ this share of its value, a fraction or a percentage "
        "(\"20 %\")")) = 0.2
    inputs: Annotated[list[Annotated[str, Field(max_length=100),
                                     WithJsonSchema({"enum": _DECIDED})]],
                      Field(max_length=60, examples=[["electricity.price"]])] | None = None
    ranges: Annotated[dict[str, Annotated[str, Field(max_length=200)]], WithJsonSchema({
        "type": "object", "propertyNames": {"enum": _DECIDED},
        "additionalProperties": {"type": "string", "maxLength": 200},
        "examples": [{"electricity.price": "0.05..0.15 USD/kWh"}]})] = Field(
        default_factory=dict, description='key -> "LOW..HIGH", e.g. "0.05..0.15 USD/kWh"')


class GridRequest(Strict):
    """The output over two inputs: "key=LOW..HIGH:N" or "key=V1,V2,... unit"."""
    model_config = _examples({"scenario": PRICE_EXAMPLE,
                              "x": "electricity.price=0.05..0.15 USD/kWh:3",
                              "y": "utilisation=0.5,1"})
    scenario: PriceRequest
    output: Output = "cost_per_mtok_total"
    x: Annotated[str, Field(min_length=1, max_length=400,
                            examples=["electricity.price=0.05..0.15 USD/kWh:3"])]
    y: Annotated[str, Field(min_length=1, max_length=400, examples=["utilisation=0.5,1"])]


class MonteCarloRequest(Strict):
    """Inputs as distributions: uniform(low, high), triangular(low, mode, high),
    normal(mean, sd), lognormal(median, gsd)."""
    model_config = _examples({"scenario": PRICE_EXAMPLE, "draws": 10000, "seed": 1,
                              "distributions": {
                                  "electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}})
    scenario: PriceRequest
    output: Output = "cost_per_mtok_total"
    distributions: Annotated[dict[str, Annotated[str, Field(max_length=200)]],
                             Field(min_length=1, max_length=40), WithJsonSchema({
                                 "type": "object", "minProperties": 1, "maxProperties": 40,
                                 "propertyNames": {"enum": _CONTINUOUS},
                                 "additionalProperties": {"type": "string", "maxLength": 200},
                                 "examples": [{"electricity.price":
                                               "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}]})]
    draws: Annotated[int, Field(ge=1, le=MAX_DRAWS)] = 100_000
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
    model_config = _examples(
        {"quote": EXAMPLE_QUOTE, "scenario": PRICE_EXAMPLE, "improvement": 0.3},
        {"quote": EXAMPLE_QUOTE, "scenario": PRICE_EXAMPLE, "successor": JALAPENO,
         "available": "12 month", "successor_rate": "jalapeno/rental"},
        rules=[  # improvement or a successor; a successor with the time it is available
            {"anyOf": [{"required": ["improvement"], "properties": {"improvement": _GIVEN}},
                       {"required": ["successor"], "properties": {"successor": _GIVEN}}]},
            {"if": {"required": ["successor"], "properties": {"successor": _GIVEN}},
             "then": {"required": ["available"], "properties": {"available": _GIVEN}}},
            # ... and its market price: a reference rate or a quote, one of them
            {"if": {"required": ["successor"], "properties": {"successor": _GIVEN}},
             "then": {"oneOf": [
                 {"required": ["successor_rate"], "properties": {
                     "successor_rate": _GIVEN, "successor_quote": _NULL}},
                 {"required": ["successor_quote"], "properties": {
                     "successor_quote": _GIVEN, "successor_rate": _NULL}}]}}])
    quote: TermQuoteBody
    scenario: PriceRequest
    improvement: Fraction(below_maximum=True, description=(
        "yearly fall of the market price per token, a fraction or a percentage "
        "(\"30 %\")")) | None = None
    successor: PriceRequest | None = None
    available: Annotated[str, Field(max_length=40)] | None = Field(
        None, description='when the successor is available: "12 month" or "2027-06"')
    successor_rate: Annotated[str, Field(max_length=120, pattern=FULL_REF_PATTERN)] | None = \
        Field(None, description="the successor's market price: a reference rate, "
                                "<accelerator>/<kind>[@date]")
    successor_quote: QuoteBody | None = Field(
        None, description="the successor's market price: a quote for it")
    tolerance: Annotated[float, Field(ge=0, le=10)] = 0.10
    terms: Annotated[list[Annotated[float, Field(gt=0, le=600)]],
                     Field(min_length=1, max_length=40)] = [6, 12, 18, 24, 36, 48]


class ScenarioCreate(Strict):
    model_config = _examples({"name": "GB300 at peak", "scenario": EXAMPLE_SCENARIO})
    name: _text(MAX_SCENARIO_NAME, min_length=1)
    scenario: ScenarioBody


class ScenarioRevise(Strict):
    model_config = _examples({"scenario": EXAMPLE_INLINE})
    scenario: ScenarioBody


CatalogKey = Annotated[str, Field(pattern=CATALOG_KEY)]


class CatalogCreate(Strict):
    key: CatalogKey
    data: dict[str, Any] = Field(description="the entry's values, as in the catalog files")


_CATALOG_EXAMPLE_DATA = {
    "accelerator": {"name": "Example X1", "vendor": "Example",
                    "rated_power": {"value": 1000, "unit": "W", "source": "datasheet"},
                    "price": "30000 USD"},
    "operating_point": {"throughput": "5000 token/s", "interactivity": "100 token/s/user",
                        "workload": {"model": "DeepSeek R1", "isl": 8192, "osl": 1024}},
    "electricity": {"price": "0.12 USD/kWh", "source": "a utility tariff", "date": "2026-05"},
    "system": {"name": "Example 8-GPU server", "node": {"accelerators": 8,
                                                        "host_power": "2000 W"}},
    "rate": {"accelerator": "example-accelerator", "kind": "rental", "date": "2026-09",
             "hourly_price": {"value": 2.5, "unit": "USD/h", "source": "a rate card"},
             "all_in_power": "1.5 kW", "source": "an example rate card, not a quote"},
    "market_price": {"provider": "Example API", "model": "Example 70B", "date": "2026-11",
                     "price_input": {"value": 0.2, "unit": "USD/Mtok",
                                     "source": "an example price list"},
                     "price_output": "0.8 USD/Mtok",
                     "source": "an example price list, not a published price"},
    "grid_factor": {"basis": "market", "instrument": "supplier",
                    "factor": {"value": 250, "unit": "gCO2e/kWh",
                               "source": "an example supplier's disclosure"},
                    "year": "2025", "date": "2026-03",
                    "source": "an example supplier's factor, not a published one"},
}
_CATALOG_EXAMPLE_KEYS = {"rate": "example-accelerator/rental@2026-09",
                         "market_price": "example/example-70b@2026-11"}
# a kind whose key is its version, as its data states it
_KEY_PATTERNS = {"rate": KEY_PATTERN, "market_price": MARKET_KEY_PATTERN}


def _catalog_create(kind: str) -> type[CatalogCreate]:
    """The body of ``POST`` on a catalog kind: its key and its own data table."""
    name = "".join(p.title() for p in kind.split("_")) + "Create"
    data = Annotated[dict[str, Any], WithJsonSchema(catalog_data_schema(kind))]
    example = {"key": _CATALOG_EXAMPLE_KEYS.get(kind, f"example-{kind.replace('_', '-')}"),
               "data": _CATALOG_EXAMPLE_DATA[kind]}
    # a rate's key is its version: <accelerator>/<kind>@<date>, as its data states them; a
    # market price's <provider>/<offer>@<date>, its date the data's
    key = {"key": Annotated[str, Field(pattern=_KEY_PATTERNS[kind])]} \
        if kind in _KEY_PATTERNS else {}
    return type(name, (CatalogCreate,), {
        "__annotations__": {**key, "data": data}, "__module__": __name__,
        "__doc__": f"A new {kind.replace('_', ' ')} entry (entries are never overwritten).",
        "model_config": _examples(example)})


CATALOG_CREATE = {kind: _catalog_create(kind)
                  for kind in ("accelerator", "operating_point", "electricity", "system",
                               "rate", "market_price", "grid_factor")}


# characters of a curve id (``hardware/model/framework/precision/ISLxOSL/spec/agg``): a path
# of 200 characters, each percent-encoded, still fits gunicorn's 4094-byte request line
MAX_CURVE_ID = 200
MAX_CURVE_POINTS = 2_000  # points of one curve (an InferenceX sweep has tens)
MAX_UPLOAD_POINTS = 10_000  # rows of one upload, counted before any is parsed


class CurveCreate(Strict):
    model_config = _examples({"content": (
        "hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,concurrency,"
        "interactivity [token/s/user],throughput [token/s],source\n"
        "x1,example-model,vllm,fp8,1024,1024,none,false,1,200,200,an example sweep\n"
        "x1,example-model,vllm,fp8,1024,1024,none,false,8,100,1000,an example sweep\n")})
    content: Annotated[str, Field(min_length=1, max_length=2_000_000, description=(
        "a curve file's text: InferenceX agg rows or API export (JSON/CSV), or costmodel's "
        f"curve CSV; at most {MAX_UPLOAD_POINTS:,} rows, {MAX_CURVE_POINTS:,} points a "
        f"curve"))]
    gpus: Annotated[int, Field(ge=1, le=100000)] | None = None
    hardware: Annotated[str, Field(min_length=1, max_length=100)] | None = None


class KeyCreate(Strict):
    model_config = _examples({"name": "pricing-bot", "role": "viewer"})
    name: _text(100, min_length=1)
    role: Literal[ROLES]  # type: ignore[valid-type]


# ---- responses ------------------------------------------------------------------------------

class QuantityOut(BaseModel):
    value: float | None
    unit: str


class CostPerMtokOut(Partial):
    """Cost per million tokens of the operating point's token kind, and its parts."""
    energy: QuantityOut = None  # type: ignore[assignment]
    capex: QuantityOut = None  # type: ignore[assignment]
    opex: QuantityOut = None  # type: ignore[assignment]
    total: QuantityOut = None  # type: ignore[assignment]


class PricePerMtokOut(Partial):
    """Price per million tokens (cost over one less the gross margin), blended and by kind."""
    total: QuantityOut = None  # type: ignore[assignment]
    input: QuantityOut = None  # type: ignore[assignment]
    output: QuantityOut = None  # type: ignore[assignment]


class LoadShapeOut(BaseModel):
    """A load shape: the fraction of each hour serving, 24 values from 00:00-01:00 local
    time (and 24 for weekend days where they differ)."""
    hourly: list[float]
    weekend: list[float] | None


class WhatIfCostOut(BaseModel):
    """The cost per million tokens with the load moved: in total and its electricity."""
    total: QuantityOut
    energy: QuantityOut


class WhatIfOut(BaseModel):
    """What if the flexible share of the load moved to the cheapest hours of its day: the
    scenario priced again with the load moved (money in the currency results are shown
    in)."""
    flexible_share: float = Field(description="the share of every hour's load moved "
                                              "(a fraction)")
    load: LoadShapeOut = Field(description="the load shape after the move")
    cost_per_mtok: WhatIfCostOut = Field(description="the cost per million tokens after "
                                                     "the move")
    electricity_effective_price: QuantityOut = Field(
        description="the energy price per kWh drawn after the move")
    change: QuantityOut = Field(description="the cost per million tokens after the move "
                                            "less the result's own")
    rule: str = Field(description="how the load was moved, in words")


class ResultOut(Partial):
    """A priced scenario. Every field is present in the full answer; ``?view=summary`` has
    no ``steps`` and no ``disclosure.sources``; ``?fields=`` holds only what it names. The
    figures are the headline ones (costmodel.model.results.HEADLINE), each typed; the
    emission figures [gCO2e/Mtok] are location-based, market-based, embodied and the two
    totals (docs/emissions.md), null where the factor they need is not given; embodied is
    null where no product carbon footprint is given, and the totals are then the operational
    figures (``disclosure.emissions.totals`` says which)."""
    scenario: str = None  # type: ignore[assignment]
    engine: dict[str, str] = None  # type: ignore[assignment]
    power_per_accelerator: QuantityOut = None  # type: ignore[assignment]
    throughput: QuantityOut = None  # type: ignore[assignment]
    throughput_per_kw: QuantityOut = None  # type: ignore[assignment]
    tokens_per_kwh: QuantityOut = None  # type: ignore[assignment]
    joules_per_token: QuantityOut = None  # type: ignore[assignment]
    bandwidth_per_watt: QuantityOut = None  # type: ignore[assignment]
    capex_per_accelerator: QuantityOut = None  # type: ignore[assignment]
    cost_per_hour: QuantityOut = None  # type: ignore[assignment]
    cost_per_mtok: CostPerMtokOut = None  # type: ignore[assignment]
    price_per_mtok: PricePerMtokOut = None  # type: ignore[assignment]
    # [gCO2e/Mtok]: location-based, market-based, embodied and the totals (docs/emissions.md);
    # null without the factor they need
    emissions_per_mtok: QuantityOut = None  # type: ignore[assignment]
    emissions_market_per_mtok: QuantityOut = None  # type: ignore[assignment]
    embodied_per_mtok: QuantityOut = None  # type: ignore[assignment]
    emissions_total_per_mtok: QuantityOut = None  # type: ignore[assignment]
    emissions_market_total_per_mtok: QuantityOut = None  # type: ignore[assignment]
    steps: dict[str, Any] = None  # type: ignore[assignment]
    disclosure: dict[str, Any] = None  # type: ignore[assignment]
    what_if: WhatIfOut = Field(None, description=(  # type: ignore[assignment]
        "POST /price with a flexible_share only: the what-if, beside the result"))


Ratios = list[float | None]


class ComparisonOut(Partial):
    """Side by side (``?fields=`` holds only what it names)."""
    baseline: str = None  # type: ignore[assignment]
    scenarios: list[ResultOut] = None  # type: ignore[assignment]
    ratios: dict[str, Ratios | dict[str, Ratios]] = Field(None, description=(
        "each headline figure over the baseline's, one a scenario, nested like the results "
        "(ratios.cost_per_mtok.energy divides cost_per_mtok.energy); null where the "
        "baseline's is 0 or a figure has no value"))


class PowerPerDeploymentOut(BaseModel):
    """One deployment's power [W] at each level (``power_plan.powers`` says each in words)."""
    ac: QuantityOut = Field(description="the node's AC power at its power supplies (chassis "
                                        "AC), or the rack's at its feed")
    facility: QuantityOut = Field(description="at the facility meter: its share of the "
                                              "rack's AC power x PUE")
    at_boundary: QuantityOut = Field(description="at the scenario's boundary: what the budget "
                                                 "counts")
    planning: QuantityOut = Field(description="at_boundary x (1 + headroom): what each count "
                                              "divides")


class WholeDeploymentsOut(BaseModel):
    deployments: int
    accelerators: int


class PowerPlanOut(BaseModel):
    """The whole deployments a power budget holds, and a gigawatt: floor(budget /
    planning power per deployment), exact arithmetic then the floor."""
    deployment: Literal[DEPLOYMENTS]  # type: ignore[valid-type]
    accelerators_per_deployment: int
    nodes_per_deployment: int
    boundary: str
    headroom: float
    power_per_deployment: PowerPerDeploymentOut
    powers: dict[str, str]
    deployments: int
    accelerators: int
    per_gw: WholeDeploymentsOut = Field(description="the whole deployments 1 GW holds, and "
                                                    "their accelerators")
    divides: str
    note: str | None = Field(description="why a count is zero; null when none is")


class PlanOut(Out):
    """A planned fleet: counts, then fleet totals; the cost per million tokens at the fleet's
    utilisation; the disclosure with what the plan assumed (``disclosure.plan``)."""
    scenario: str
    accelerators: int
    nodes: int
    racks: int
    users: int | None = Field(description="concurrent users at the operating point's "
                                          "interactivity; null when it has none")
    power_plan: PowerPlanOut | None = Field(description="a power budget's whole deployments "
                                                        "and the same per GW; null for a "
                                                        "demand")
    power: QuantityOut
    throughput: QuantityOut
    capex: QuantityOut
    cost_per_hour: QuantityOut
    cost_per_month: QuantityOut
    cost_per_mtok: dict[str, QuantityOut]
    emissions_per_year: dict[str, QuantityOut] = Field(description=(
        "the fleet's emissions a year [tCO2e/year]: location, market, embodied, "
        "location_total, market_total (docs/emissions.md); null values where the factor is "
        "not given, embodied null where no product carbon footprint is (the totals are then "
        "operational only)"))
    disclosure: dict[str, Any]


class RevisionOut(BaseModel):
    scenario_id: int
    number: int
    content_hash: str
    created_at: datetime
    created_by: str = Field(description="the name of the key that saved it (names are not "
                                        "unique: see created_by_key_id)")
    created_by_key_id: int | None = Field(description="the id of the key that saved it; null "
                                                      "for revisions saved before keys were "
                                                      "recorded")
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
    decision: QuotesDecisionOut | None = Field(
        None, description="a decision's workbook: the decision made again at the demand and "
                          "offers as edited on its Decision sheet")


class MarketQuotePriceOut(BaseModel):
    """The catalog market price a market quote is priced at."""
    key: str = Field(description="the version's catalog key, <provider>/<offer>@<date>")
    provider: str
    model: str
    date: str = Field(description="the version: YYYY-MM or YYYY-MM-DD")
    source: str | None
    note: str | None
    prices: dict[str, QuantityOut | None] = Field(description=(
        "input, output, cached_input (null: none given) and blended (null: prices by kind) "
        "[USD/Mtok]"))
    status: str = Field(description="a public list price, not a negotiated quote")


class QuoteComparisonOut(Out):
    quote: str
    vendor: str
    form: str
    reference_rate: dict[str, Any] | None = Field(None, description=(
        "the reference rate a reference quote is priced at; null for other quotes"))
    market_price: MarketQuotePriceOut | None = Field(None, description=(
        "the market price a market quote is priced at; null for other quotes"))
    scenario: str
    price_per_mtok: QuantityOut
    own_cost_per_mtok: QuantityOut
    implied_margin: float | None = Field(description="1 - our cost / the quote's price; "
                                         "null for a free offer (price 0)")
    implied_margin_note: str | None = Field(None, description="why implied_margin is null")
    break_even_utilisation: float | None = Field(description=(
        "where our cost per Mtok equals the quote's price; null: none up to 100% (a "
        "per-token quote) or n/a (a capacity quote)"))
    quote_total: QuantityOut = Field(description="the quote, nominal over the term (the "
                                                 "payments' sum, commitment applied)")
    own_total: QuantityOut = Field(description="our cost, nominal over the term")
    quote_pv: QuantityOut = Field(description="the quote, present value at discount_rate")
    own_pv: QuantityOut = Field(description="our cost, present value at discount_rate")
    saving_pv: QuantityOut = Field(description="own_pv - quote_pv")
    discount_rate: float = Field(description="[fraction a year] the present values' rate: "
                                             "the scenario's cost of capital")
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


class HoldsOut(BaseModel):
    from_: QuantityOut | None = Field(alias="from")
    to: QuantityOut | None


class RecommendationOut(Out):
    """The offer to take, what it costs and saves against the next, and why."""
    offer: str
    next: str | None
    monthly_cost: QuantityOut | None
    margin: QuantityOut | None = Field(description="a month's saving against the next offer")
    margin_share: float | None = Field(description="the margin over the next offer's bill")
    holds: HoldsOut = Field(description="the monthly volumes between which the choice holds "
                                        "(null: no bound)")
    reasons: list[str]
    risks: list[str]
    text: str


class QuotesDecisionOut(Out):
    demand: dict[str, Any]
    ranked: list[dict[str, Any]]
    unranked: list[dict[str, Any]]
    break_even: list[dict[str, Any]]
    holds: dict[str, Any]
    recommendation: RecommendationOut | None
    assumptions: list[str]
    own_builds: list[dict[str, Any]]
    discount_rate: float = Field(description=(
        "[fraction a year] the rate of each ranked option's term_pv (present value at it); "
        "term_total is nominal over the term"))


class TaskShapeOut(BaseModel):
    name: str | None
    steps: int
    input_tokens: QuantityOut
    cached_tokens: QuantityOut
    output_tokens: QuantityOut
    tool_time: QuantityOut
    target: QuantityOut | None
    percentile: str
    cached_weight: float


class TaskPointOut(BaseModel):
    interactivity: QuantityOut | None = Field(description="where the task was read, at its "
                                                          "percentile")
    ttft: QuantityOut | None = Field(description="each step's TTFT there (null: none measured)")
    how: str
    ttft_from: str


class StepValuesOut(BaseModel):
    unit: str
    values: list[float]


class TaskLatencyOut(BaseModel):
    total: QuantityOut
    ttft: QuantityOut = Field(description="the steps' TTFT, summed")
    decode: QuantityOut = Field(description="the steps' output tokens over the interactivity")
    tool: QuantityOut
    per_step: StepValuesOut | None = Field(description=(
        "each step's latency; null when not asked (?series=totals) or when the task is over "
        "20,000 steps x systems and ?series=steps was not asked (docs/tasks.md)"))


class SystemTaskOut(Out):
    """The task on one system."""
    scenario: str
    operating_point: TaskPointOut
    latency: TaskLatencyOut | None
    meets_target: bool | None
    misses_by: QuantityOut | None = Field(description="how far the fastest point is from the "
                                                      "target, when it cannot meet it")
    cost_per_task: CostPerMtokOut
    price_per_task: QuantityOut
    cost_per_thousand_tasks: QuantityOut
    price_per_thousand_tasks: QuantityOut
    energy_per_task: QuantityOut
    emissions_per_task: dict[str, QuantityOut | None] = Field(description=(
        "grams of CO2e per task [gCO2e/task] by basis: location, market, location_total, "
        "market_total (with embodied); null values where the factor is not given "
        "(docs/emissions.md)"))
    tasks_per_hour: QuantityOut = Field(description="per accelerator, at its utilisation")
    weighted_tokens: QuantityOut = Field(description="the task in input-token equivalents")
    cost_per_mtok: QuantityOut
    notes: list[str] = Field(description="what differs from the measured configuration")


class TaskOut(Out):
    engine: dict[str, str]
    task: TaskShapeOut
    systems: list[SystemTaskOut]
    cheapest: str | None = Field(description="the lowest cost per task among the systems that "
                                             "meet the target (all, with none)")
    rules: list[str]
    disclosure: list[dict[str, Any]]


class MarketPricesOut(BaseModel):
    """The market's price of each kind of token, in the currency results are shown in."""
    input: QuantityOut
    cached_input: QuantityOut
    output: QuantityOut
    per_mtok: QuantityOut = Field(description="per million tokens of either kind, at the "
                                              "workload's mix of input and output")


class BreakEvenOut(BaseModel):
    """The market prices at which profit is zero: every price times ``factor``."""
    factor: float | None = Field(description="cost / revenue kept: the share of every market "
                                             "price at which profit is zero")
    price_per_mtok: QuantityOut = Field(description="per million tokens of either kind")
    input: QuantityOut
    cached_input: QuantityOut
    output: QuantityOut


class SystemProfitOut(Out):
    """One scenario sold at its market: money in the currency results are shown in, per
    accelerator."""
    scenario: str
    market_prices: MarketPricesOut
    revenue_share: float
    cached_share: float
    utilisation: float
    revenue_per_request: QuantityOut
    requests_per_hour: QuantityOut
    revenue_per_hour: QuantityOut
    revenue_share_per_hour: QuantityOut
    net_revenue_per_hour: QuantityOut = Field(description="revenue kept, after the revenue "
                                                          "share")
    cost_per_hour: QuantityOut = Field(description="every hour, served or idle")
    profit_per_hour: QuantityOut
    profit_margin: float | None = Field(description="profit / revenue")
    revenue_per_month: QuantityOut
    cost_per_month: QuantityOut
    profit_per_month: QuantityOut
    accelerators_per_gw: QuantityOut = Field(description="accelerators a GW of facility "
                                                         "power runs")
    revenue_per_gw_year: QuantityOut
    profit_per_gw_year: QuantityOut
    break_even: BreakEvenOut
    tokens_per_usd: QuantityOut = Field(description="tokens of the operating point's kind "
                                                    "per unit of cost")
    cost_per_mtok: QuantityOut
    token_kind: str
    disclosure: dict[str, Any] = Field(description="the scenario's disclosure, and its "
                                                   "market: the prices, their date and "
                                                   "source, the shares")


class ProfitOut(Out):
    engine: dict[str, str]
    systems: list[SystemProfitOut]
    most_profitable: str = Field(description="the most profit per accelerator-hour")
    rules: list[str]


class QuotesCompareOut(BaseModel):
    scenarios: list[QuotesForScenario]
    ranked_by: str = Field(description=(
        "what the ranking is: unit price at each offer's own volume and term, cheapest "
        "first, not a recommendation (offers sized for different volumes and terms are "
        "decided between for one demand by POST /api/v1/quotes/decide)"))


class ProblemFieldOut(BaseModel):
    """One input problem: where (a dotted field path) and what is wrong."""
    path: str = Field(description="the field's dotted path (body for the request as a whole)")
    message: str = Field(description="what is wrong, in words")


class ProblemOut(BaseModel):
    """RFC 9457 problem details; ``errors`` lists each input problem by its field path."""
    type: str
    title: str
    status: int
    detail: str
    instance: str
    errors: list[ProblemFieldOut] | None = None
    request_id: str | None = Field(None, description="the request's id, as in the answer's "
                                   "X-Request-ID header: quote it when reporting a problem")

