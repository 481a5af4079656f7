"""The OpenAPI document is exactly as strict as the handlers, where JSON Schema can say it: its
examples are valid requests, its quantity examples carry their own units, and requests the
document refuses are the requests the service refuses (and the reverse), case by case."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import auth
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import costmodel.api.routes  # noqa: F401  (the routes declare themselves as it is imported)
from costmodel.api.openapi import build_spec
from costmodel.api.schemas import CATALOG_KEY, MAX_CURVE_ID, MAX_JSON_INT
from costmodel.decisions.quotes import Quote, QuoteOperatingPoint
from costmodel.model.inputs import Scenario, _quantity_meta

API = "/api/v1"
SPEC = build_spec()
SCHEMAS = SPEC["components"]["schemas"]
REGISTRY = Registry().with_resource("urn:spec", Resource.from_contents(
    SPEC, default_specification=DRAFT202012))


def validator(component: str) -> Draft202012Validator:
    """A validator of one component, its refs resolved in the whole document."""
    return Draft202012Validator({"$ref": f"urn:spec#/components/schemas/{component}"},
                                registry=REGISTRY)


def valid(component: str, instance: Any) -> bool:
    return validator(component).is_valid(instance)


# ---- the document ----------------------------------------------------------------------------

def test_every_operation_documents_the_front_servers_answers():
    for path, ops in SPEC["paths"].items():
        for method, op in ops.items():
            for code in ("400", "414", "431"):
                assert code in op["responses"], f"{method} {path}: {code}"
            for code in ("414", "431"):
                assert list(op["responses"][code]["content"]) == ["text/html"]


def test_query_parameters_come_from_the_query_models():
    params = {p["name"]: p for p in SPEC["paths"][f"{API}/curves"]["get"]["parameters"]}
    assert params["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 200,
                                         "default": 50}
    assert params["offset"]["schema"]["type"] == "integer"
    assert params["q"]["schema"] == {"type": "string", "maxLength": 100,
                                     "pattern": "^[^\\u0000]*$"}
    revision = SPEC["paths"][f"{API}/scenarios/{{scenario_id}}/workbook"]["get"]["parameters"]
    assert revision[1]["name"] == "revision" and revision[1]["schema"]["type"] == "integer"
    assert all("given once" in p["description"] for p in params.values()
               if p["in"] == "query")


def test_path_parameters():
    key = SPEC["paths"][f"{API}/accelerators/{{key}}"]["get"]["parameters"][0]["schema"]
    assert key["pattern"] == CATALOG_KEY
    curve = SPEC["paths"][f"{API}/curves/{{curve_id}}"]["get"]["parameters"][0]["schema"]
    assert (curve["minLength"], curve["maxLength"]) == (1, MAX_CURVE_ID)


def _body_components(schema: dict) -> list[str]:
    """The components a JSON body's schema names: its $ref, or each of an anyOf (a batch's
    rows or columns)."""
    return [s["$ref"].rsplit("/", 1)[1] for s in schema.get("anyOf", [schema])]


def _request_examples():
    for path, ops in SPEC["paths"].items():
        for method, op in ops.items():
            content = op.get("requestBody", {}).get("content", {})
            schema = content.get("application/json", {}).get("schema")
            if schema is None:
                continue
            for name in _body_components(schema):
                for i, example in enumerate(SCHEMAS[name].get("examples", ())):
                    yield pytest.param(method.upper(), path, name, example,
                                       id=f"{name}[{i}]")


EXAMPLES = list(_request_examples())


def test_every_request_body_has_an_example():
    named = {p.values[2] for p in EXAMPLES}
    bodies = {name for ops in SPEC["paths"].values() for op in ops.values()
              if "application/json" in op.get("requestBody", {}).get("content", {})
              for name in _body_components(
                  op["requestBody"]["content"]["application/json"]["schema"])}
    assert bodies <= named and "ColumnsRequest" in named


@pytest.mark.parametrize("method,path,name,example", EXAMPLES)
def test_examples_are_valid_requests(client, tokens, method, path, name, example):
    assert valid(name, example)
    r = client.open(path.replace("{scenario_id}", "1"), method=method, json=example,
                    headers=auth(tokens["admin"]))
    assert r.status_code in (200, 201, 409), r.get_data(as_text=True)[:500]


def test_the_price_example_is_a_published_point():
    assert SCHEMAS["PriceRequest"]["examples"][0] == {
        "scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}}


def _quantity_fields(model, prefix=""):
    for name, info in model.model_fields.items():
        meta = _quantity_meta(info)
        if meta is not None:
            yield f"{prefix}{name}", meta
        sub = getattr(info.annotation, "model_fields", None) and info.annotation
        for arg in getattr(info.annotation, "__args__", ()) or ():
            sub = sub or (arg if getattr(arg, "model_fields", None) else None)
        if sub is not None and sub is not model:
            yield from _quantity_fields(sub, f"{prefix}{name}.")


QUANTITIES = [*_quantity_fields(Scenario), *_quantity_fields(Quote, "quote.")]


@pytest.mark.parametrize("key,meta", QUANTITIES, ids=[k for k, _ in QUANTITIES])
def test_quantity_examples_carry_their_own_unit(key, meta):
    model: Any = Quote if key.startswith("quote.") else Scenario
    parts = key.removeprefix("quote.").split(".")
    for part in parts[:-1]:
        info = model.model_fields[part]
        model = next(a for a in (info.annotation, *getattr(info.annotation, "__args__", ()))
                     if getattr(a, "model_fields", None))
    schema = model.model_json_schema()["properties"][parts[-1]]
    schema = next((b for b in schema.get("anyOf", [schema]) if "oneOf" in b), schema)
    (example,) = schema["examples"]
    assert meta.parse(example) > 0, key  # parses in the field's unit and bounds
    if meta.unit != "dimensionless":
        assert example.endswith(" " + meta.unit)
    assert model is not QuoteOperatingPoint or key.startswith("quote.")


def test_the_examples_the_issue_named():
    fields = dict(QUANTITIES)
    assert fields["accelerator.rated_power"].unit == "W"
    props = Scenario.model_json_schema()["$defs"]
    assert props["Accelerator"]["properties"]["rated_power"]["examples"] == ["700 W"]
    price = props["Electricity"]["properties"]["price"]  # or null: a tariff instead
    assert price["anyOf"][0]["examples"] == ["0.08 USD/kWh"]
    assert props["OperatingPoint"]["properties"]["interactivity"]["anyOf"][0]["examples"] == [
        "169 token/s/user"]


# ---- the document and the handlers agree ------------------------------------------------------

PEAK = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
INLINE_ACC = {"rated_power": "1400 W", "price": "45000 USD"}
INLINE_OP = {"throughput": "5000 token/s"}
QUOTE = {"name": "q", "vendor": "V", "form": "per_mtok", "price_input": "0.5 USD/Mtok",
         "price_output": "2 USD/Mtok"}

# (component, body, valid?) for each rule the document states; the service must agree
SCENARIOS = [
    ({**PEAK}, True),
    ({"accelerator": {"catalog": "gb300"}, "operating_point": "deepseek-r1/gb300/peak"}, True),
    ({"accelerator": {"catalog": "gb300", "price": "1 USD"},
      "operating_point": {"catalog": "deepseek-r1/gb300/peak", "interactivity": None}}, True),
    ({"accelerator": INLINE_ACC, "operating_point": INLINE_OP}, True),
    ({"accelerator": {"rated_power": "1400 W", "hourly_price": "3 USD/h"},
      "operating_point": {"throughput_per_kw": "4000 token/s/kW", "normalised_by": "1 kW"}},
     True),
    ({"accelerator": {"price": "45000 USD"}, "operating_point": INLINE_OP}, False),
    ({"accelerator": {"rated_power": "1400 W"}, "operating_point": INLINE_OP}, False),
    ({"accelerator": {**INLINE_ACC, "price": None, "hourly_price": None},
      "operating_point": INLINE_OP}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        **INLINE_OP, "throughput_per_kw": "4000 token/s/kW"}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {**INLINE_OP, "normalised_by": "1 kW"}},
     False),
    ({"accelerator": INLINE_ACC, "operating_point": {**INLINE_OP, "at": "peak"}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
        "at": {"interactivity": "50 token/s/user"}}}, True),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", **INLINE_OP}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", "at": {"speed": 1}}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
        "at": {"interactivity": "50 token/s/user", "percentile": "median"}}}, True),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
        "at": {"concurrency": 8, "percentile": "p90"}}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
        "at": {"interactivity": "50 token/s/user", "tbt": "20 ms"}}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", "ttft_max": "600 s"}}, True),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
        "ttft_max": {"value": 600, "unit": "s", "percentile": "median"}}}, True),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
        "ttft_max": {"value": 600}}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {**INLINE_OP, "ttft_max": "2 s"}}, False),
    ({"accelerator": {"catalog": "gb300", "measured_power": "1200 W"},
      "operating_point": "deepseek-r1/gb300/peak", "power": {"basis": "measured"}}, True),
    ({"accelerator": INLINE_ACC, "operating_point": INLINE_OP, "power": {"basis": "measured"}},
     False),
    ({"accelerator": {**INLINE_ACC, "measured_power": "1200 W"}, "operating_point": INLINE_OP,
      "power": {"basis": "measured"}}, True),
    ({**PEAK, "accelerator": ""}, False),
    ({**PEAK, "name": "a\x01b"}, False),
    ({**PEAK, "name": "x" * 2001}, False),
    ({**PEAK, "workload": {"disaggregated": "yes"}}, True),  # pydantic's lax booleans
    ({**PEAK, "workload": {"disaggregated": 1}}, True),
    ({**PEAK, "workload": {"disaggregated": 2}}, False),
    ({**PEAK, "node": {"accelerators": 8.5}}, False),
    ({**PEAK, "node": {"accelerators": 0}}, False),
    ({**PEAK, "utilisation": 0}, False),
    ({**PEAK, "utilisation": 1.5}, False),
    ({**PEAK, "utilisation": "60 %"}, True),
    ({**PEAK, "pricing": {"gross_margin": 1}}, False),
    ({**PEAK, "facility": {"pue": 0.9}}, False),
    ({**PEAK, "electricity": {"price": {"value": -1, "unit": "USD/kWh"}}}, False),
    ({**PEAK, "electricity": {"price": {"value": 0.1, "unit": "USD/kWh",
                                        "source": "a tariff"}}}, True),
    ({**PEAK, "electricity": {"price": ""}}, False),
    ({**PEAK, "system": "gb300-nvl72"}, True),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "catalog": "deepseek-r1/gb300/peak", "curve": "x"}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "catalog": "deepseek-r1/gb300/peak", "throughput_per_kw": "1 token/s/kW",
        "throughput": "1 token/s"}}, False),
    ({"accelerator": INLINE_ACC, "operating_point": {
        "catalog": "deepseek-r1/gb300/peak", "throughput_per_kw": "1000 token/s/kW",
        "throughput": None}}, True),
    ({**PEAK, "workload": None}, True),  # the published point's own
    ({"accelerator": INLINE_ACC, "operating_point": INLINE_OP, "workload": None}, False),
    ({**PEAK, "system": "gb300-nvl72", "node": None, "rack": None}, True),
    ({**PEAK, "node": None}, False),
    ({**PEAK, "name": "a\x00b"}, False),
    ({**PEAK, "system": "-x"}, False),
]


def _price(client, tokens, body):
    return client.post(f"{API}/price", json=body, headers=auth(tokens["viewer"]))


@pytest.mark.parametrize("scenario,ok", SCENARIOS)
def test_scenario_rules_agree(client, tokens, scenario, ok):
    body = {"scenario": scenario}
    assert valid("PriceRequest", body) is ok
    r = _price(client, tokens, body)
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]


OVERRIDES = [
    ({"electricity.price": "0.1 USD/kWh"}, True),
    ({"accelerator": "h100"}, True),
    ({"operating_point.interactivity": None}, True),
    ({"electricity.prise": "0.1 USD/kWh"}, False),
    ({"accelerator.catalog": "h100"}, False),
    ({"utilisation": 2}, False),
    ({"electricity.price": {"value": 0.1, "unit": "USD/kWh"}}, True),
    ({"electricity.price": {"value": 0.1, "unit": "USD/kWh", "source": "x"}}, False),
    ({"workload": None}, False),  # overrides apply after the catalog is expanded
    ({"operating_point.curve": None}, False),
]


@pytest.mark.parametrize("overrides,ok", OVERRIDES)
def test_override_rules_agree(client, tokens, overrides, ok):
    body = {"scenario": PEAK, "overrides": overrides}
    assert valid("PriceRequest", body) is ok
    assert (_price(client, tokens, body).status_code == 200) is ok


@pytest.mark.parametrize("body,ok", [
    ({"scenario": PEAK, "scenario_id": 1}, False),
    ({"scenario": PEAK, "revision": 1}, False),
    ({"scenario": None, "scenario_id": None}, False),
    ({}, False),
])
def test_one_scenario_rule_agrees(client, tokens, body, ok):
    assert valid("PriceRequest", body) is ok
    assert (_price(client, tokens, body).status_code == 200) is ok


@pytest.mark.parametrize("quote,ok", [
    (QUOTE, True),
    ({k: v for k, v in QUOTE.items() if k != "price_output"}, False),
    ({**QUOTE, "price_output": None}, False),
    ({k: v for k, v in QUOTE.items() if k != "vendor"}, False),
    ({"name": "q", "vendor": "V", "form": "per_accelerator_hour", "hourly_price": "2 USD/h"},
     True),
    ({"name": "q", "vendor": "V", "form": "reserved_monthly", "monthly_price": "9 USD/month"},
     False),
    ({"name": "q", "vendor": "V", "form": "reserved_monthly", "monthly_price": "9 USD/month",
      "accelerators": 8}, True),
    ({**QUOTE, "form": "per_token"}, False),
    ({**QUOTE, "operating_point": {"interactivity": "100 token/s/user", "isl": 1024}}, True),
    ({**QUOTE, "operating_point": {"speed": 1}}, False),
    ({**QUOTE, "name": "\x07"}, False),
    # a market quote: per_mtok at a catalog market price, no prices of its own
    ({"market": "illustrative/reasoning-model-api"}, True),
    ({"market": "illustrative/reasoning-model-api@2026-08", "name": "m", "vendor": "V",
      "form": "per_mtok", "term": "24 month"}, True),
    ({"market": "illustrative/reasoning-model-api", "price_input": "1 USD/Mtok"}, False),
    ({"market": "illustrative/reasoning-model-api", "cached_input_fraction": 0.5}, False),
    ({"market": "illustrative/reasoning-model-api", "form": "per_accelerator_hour"}, False),
    ({"market": "illustrative/reasoning-model-api", "rate": "gb300/rental"}, False),
    ({"market": "illustrative/reasoning-model-api", "hardware": "gb300"}, False),
    ({"market": "reasoning model api"}, False),
    ({**QUOTE, "market": None}, True),
])
def test_quote_rules_agree(client, tokens, quote, ok):
    body = {"quotes": [quote], "scenarios": [{"scenario": PEAK}]}
    assert valid("QuotesCompareRequest", body) is ok
    r = client.post(f"{API}/quotes/compare", json=body, headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]


@pytest.mark.parametrize("extra,ok", [
    ({"improvement": 0.3}, True),
    ({}, False),
    ({"improvement": None}, False),
    ({"successor": {"scenario": PEAK}}, False),
    ({"successor": {"scenario": PEAK}, "available": "12 month"}, False),  # no market price
    ({"successor": {"scenario": PEAK}, "available": "12 month",
      "successor_rate": "gb300/rental"}, True),
    ({"successor": {"scenario": PEAK}, "available": "12 month",
      "successor_quote": QUOTE}, True),
    ({"successor": {"scenario": PEAK}, "available": "12 month",
      "successor_rate": "gb300/rental", "successor_quote": QUOTE}, False),
    ({"improvement": 0.3, "quote": {**QUOTE, "date": "2026-11-16"}}, True),
    ({"improvement": 0.3, "quote": {**QUOTE, "date": ""}}, True),
])
def test_term_rules_agree(client, tokens, extra, ok):
    body = {"quote": QUOTE, "scenario": {"scenario": PEAK}, **extra}
    assert valid("QuoteTermRequest", body) is ok
    r = client.post(f"{API}/quotes/term", json=body, headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]


@pytest.mark.parametrize("kind,data,ok", [
    ("accelerators", {"rated_power": {"value": 700, "unit": "W", "source": "datasheet"}}, True),
    ("accelerators", {"price": "1 USD"}, False),
    ("accelerators", {"rated_power": "700 W", "vendor": "a\x00"}, False),
    ("operating-points", {"throughput": "1 token/s", "workload": {"isl": 1024}}, True),
    ("operating-points", {"throughput": "1 token/s", "workload": {"speed": 1}}, False),
    ("operating-points", {"curve_id": "x"}, False),
    ("electricity-prices", {"price": "0.1 USD/kWh"}, True),
    ("systems", {"node": {"accelerators": 4}, "note": "n"}, True),
    ("systems", {"node": {"accelerators": 0}}, False),
    ("systems", {"switch": {}}, False),
])
def test_catalog_data_rules_agree(client, tokens, kind, data, ok):
    import uuid
    component = {"accelerators": "AcceleratorCreate", "operating-points": "OperatingPointCreate",
                 "electricity-prices": "ElectricityCreate", "systems": "SystemCreate"}[kind]
    body = {"key": f"contract-{uuid.uuid4().hex[:8]}", "data": data}
    assert valid(component, body) is ok
    r = client.post(f"{API}/{kind}", json=body, headers=auth(tokens["editor"]))
    assert (r.status_code == 201) is ok, r.get_data(as_text=True)[:500]


CURVES = [{"scenario": {"accelerator": INLINE_ACC, "operating_point": {
    "curve": f"{hw}/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"}}} for hw in ("b200", "h100")]


@pytest.mark.parametrize("body,ok", [
    ({"scenarios": CURVES, "matched": True}, True),
    ({"scenarios": CURVES, "matched": True, "at_interactivity": "100 token/s/user"}, False),
    ({"scenarios": CURVES, "at_interactivity": "100 token/s/user"}, True),
    ({"scenarios": CURVES, "at_interactivity": 100}, False),
    ({"scenarios": [{"scenario": PEAK}] * 2, "matched": True}, False),
    ({"scenarios": [{"scenario": PEAK}] * 2, "at_interactivity": "100 token/s/user"}, False),
    ({"scenarios": [{"scenario": PEAK}] * 2}, True),
])
def test_compare_rules_agree(client, tokens, body, ok):
    assert valid("CompareRequest", body) is ok
    r = client.post(f"{API}/compare", json=body, headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]


@pytest.mark.parametrize("body,ok", [
    ({"scenario": {"scenario": PEAK}, "output": "cost_per_mtok_total"}, True),
    ({"scenario": {"scenario": PEAK}, "output": "costs"}, False),
    ({"scenario": {"scenario": PEAK}, "inputs": ["electricity.price"]}, True),
    ({"scenario": {"scenario": PEAK}, "inputs": ["electricity.prise"]}, False),
    ({"scenario": {"scenario": PEAK}, "ranges": {"electricity.price": "0.05..0.1 USD/kWh"}},
     True),
    ({"scenario": {"scenario": PEAK}, "ranges": {"x": "0.05..0.1 USD/kWh"}}, False),
])
def test_tornado_rules_agree(client, tokens, body, ok):
    assert valid("TornadoRequest", body) is ok
    r = client.post(f"{API}/sensitivity/tornado", json=body, headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]


@pytest.mark.parametrize("body", [
    {"scenario": {"scenario": PEAK}, "output": "cost_per_mtok.total"},
    {"scenario": {"scenario": PEAK}, "inputs": ["electricity_price"]},
    {"scenario": {"scenario": PEAK}, "ranges": {"electricity_price": "0.05..0.1 USD/kWh"}},
])
def test_an_alias_is_read_though_the_document_lists_one_name(client, tokens, body):
    """The document lists one name an output or input (a generated client's enum has one
    member each); the alias (dotted output, an input's name) is still read, to the same
    figures as the listed name."""
    assert not valid("TornadoRequest", body)
    r = client.post(f"{API}/sensitivity/tornado", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    listed = json.loads(json.dumps(body).replace("cost_per_mtok.total", "cost_per_mtok_total")
                        .replace("electricity_price", "electricity.price"))
    assert valid("TornadoRequest", listed)
    same = client.post(f"{API}/sensitivity/tornado", json=listed,
                       headers=auth(tokens["viewer"]))
    assert same.get_json()["bars"] == r.get_json()["bars"]


# ---- query and path parameters ---------------------------------------------------------------

def test_a_repeated_query_parameter_is_refused_naming_it(client, tokens):
    r = client.get(f"{API}/accelerators?limit=5&limit=7", headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["errors"] == [
        {"path": "limit", "message": "given more than once"}]
    r = client.get(f"{API}/curves?q=a&hardware=b200&hardware=h100",
                   headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["errors"][0]["path"] == "hardware"
    # unknown parameters are ignored, repeated or not
    assert client.get(f"{API}/accelerators?x=1&x=2", headers=auth(tokens["viewer"])).status_code \
        == 200


@pytest.mark.parametrize("path", ["scenarios?q=a%00b", "curves?model=%00", "accelerators?q=%00"])
def test_a_nul_in_a_query_is_refused_on_every_backend(client, tokens, path):
    r = client.get(f"{API}/{path}", headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and "NUL" in r.json["errors"][0]["message"]


@pytest.mark.parametrize("query", ["revision=", "revision=x", "revision=0", "revision=1.5"])
def test_an_integer_parameter_refuses_what_its_schema_refuses(client, tokens, query):
    schema = {"type": "integer", "minimum": 1}
    raw = query.split("=", 1)[1]
    assert not Draft202012Validator(schema).is_valid(raw)
    r = client.get(f"{API}/scenarios/1/workbook?{query}", headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["errors"][0]["path"] == "revision"


@pytest.mark.parametrize("query,ok", [("q=" + "a" * 100, True), ("q=" + "a" * 101, False),
                                      ("model=" + "m" * 101, False)])
def test_filters_are_bounded(client, tokens, query, ok):
    r = client.get(f"{API}/curves?{query}", headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok


def test_a_curve_id_is_at_most_200_characters(client, tokens):
    r = client.get(f"{API}/curves/{'a' * (MAX_CURVE_ID + 1)}", headers=auth(tokens["viewer"]))
    assert r.status_code == 404 and "at most 200" in r.json["detail"]
    csv = ("hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,concurrency,"
           "interactivity [token/s/user],throughput [token/s],source\n"
           f"h,{'m' * 199},vllm,fp8,1024,1024,none,false,1,200,200,a test\n")
    r = client.post(f"{API}/curves", json={"content": csv}, headers=auth(tokens["editor"]))
    assert r.status_code == 422 and "curve ids 200" in r.json["detail"]


def test_integers_beyond_64_bits_are_not_counts(client, tokens):
    body = {"scenario": {**PEAK, "node": {"accelerators": MAX_JSON_INT + 1}}}
    assert not valid("PriceRequest", copy.deepcopy(body))
    assert _price(client, tokens, body).status_code == 422


# found by the full schemathesis run: curves.select raised ValueError for a token kind the
# curve has no throughput of, which read_curve_point did not catch (a 500)
def test_a_curve_without_the_token_kind_is_a_422_not_a_500(client, tokens):
    body = {"scenario": {"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", "token_kind": "input"}}}
    assert valid("PriceRequest", body)
    assert _price(client, tokens, body).status_code == 422


# found by the schemathesis run: a unit named by a numeric character ("6½") passed the unit
# grammar's name token and tripped an assertion in pint's parser (a 500, or 'Assertion failed')
@pytest.mark.parametrize("path,body", [
    ("compare", {"scenarios": CURVES, "at_interactivity": "6½"}),
    ("price", {"scenario": {"accelerator": INLINE_ACC, "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", "at": {"tbt": "6½"}}}}),
    ("price", {"scenario": {**PEAK, "electricity": {"price": "6½"}}}),
])
def test_a_numeric_character_unit_is_a_plain_422(client, tokens, path, body):
    assert valid({"compare": "CompareRequest", "price": "PriceRequest"}[path], body)
    r = client.post(f"{API}/{path}", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and "Assertion" not in r.json["detail"]


# ---- what the schemathesis runs count as a refusal the document cannot state ----------------

def _problem(*errors):
    return json.dumps({"errors": [{"path": p, "message": m} for p, m in errors]})


@pytest.mark.parametrize("errors,rules", [
    ([("scenario.accelerator.price", "currency expected (e.g. 'USD'), got W")], ["unit"]),
    ([("scenario.accelerator", "unknown catalog entry 'x' (known: gb300)")], ["catalog"]),
    ([("scenario.utilisation", "must be at most 1, got 150 %")], ["range"]),
    ([("content", "unknown column 'x'")], ["file"]),
    # what the document states is never excused
    ([("scenario.accelerator.rated_power", "required")], None),
    ([("scenario.accelerator", "unknown catalog entry 'x'"), ("scenario.name", "required")],
     None),
    ([("quotes[0].price_input", "required for form per_mtok")], None),
])
def test_inexpressible_refusals_are_told_apart(errors, rules):
    from test_api_schema import inexpressible
    assert inexpressible(422, _problem(*errors)) == rules
    assert inexpressible(400, _problem(*errors)) is None


@pytest.mark.parametrize("request_body,rules", [
    ({"scenario": {**PEAK, "utilisation": "150 %"}}, ["range"]),
    ({"scenario": PEAK, "overrides": {"utilisation": {"value": 150, "unit": "%"}}}, ["range"]),
    ({"scenario": {**PEAK, "utilisation": 1.5}}, None),  # a bare number: the document's bound
    ({"scenario": PEAK, "overrides": {"utilisation": 1.5}}, None),
])
def test_a_bare_numbers_bound_is_never_excused(request_body, rules):
    from test_api_schema import inexpressible
    problem = _problem(("scenario.utilisation", "must be at most 1, got 1.5"))
    assert inexpressible(422, problem, request_body) == rules


# ---- a demand's rules (Demand._volume, Supply._one_way), stated in the document ---------------

DECIDE = {"quotes": [{"name": "api", "vendor": "Y", "form": "per_mtok",
                      "price_input": "0.60 USD/Mtok", "price_output": "0.60 USD/Mtok"}],
          "scenarios": [{"scenario": {"accelerator": "gb300",
                                      "operating_point": "deepseek-r1/gb300/peak"}}]}
TASK = {"steps": 4, "context": 1000, "output": 100}


@pytest.mark.parametrize("demand,ok", [
    ({"volume": "5000 Mtok/month"}, True),
    ({"requests_per_day": "1e5 request/day"}, True),
    ({"tasks_per_day": "1e4 task/day", "task": TASK}, True),
    ({}, False),
    ({"volume": "5000 Mtok/month", "requests_per_day": "1e5 request/day"}, False),
    ({"tasks_per_day": "1e4 task/day"}, False),
    ({"volume": "5000 Mtok/month", "task": TASK}, False),
    ({"requests_per_day": "1e5 request/day", "token_kind": "output"}, False),
    ({"volume": "5000 Mtok/month", "token_kind": "output"}, True),
    ({"volume": "5000 Mtok/month", "own": {"availability": 0.99}}, True),
    ({"volume": "5000 Mtok/month", "own": {"mtbi": "100 h", "recovery": "2 h"}}, True),
    ({"volume": "5000 Mtok/month", "own": {"availability": 0.99, "mtbi": "100 h",
                                           "recovery": "2 h"}}, False),
    ({"volume": "5000 Mtok/month", "own": {"mtbi": "100 h"}}, False),
    ({"tasks_per_day": "1e4 task/day", "task": {**TASK, "step": [{"input": 1, "output": 1}]}},
     False),
])
def test_demand_rules_agree(client, tokens, demand, ok):
    body = {**DECIDE, "demand": demand}
    assert valid("QuotesDecideRequest", body) is ok
    r = client.post(f"{API}/quotes/decide", json=body, headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]


# ---- what schemathesis's coverage phase found the service took and the document refused -----

def test_an_override_inside_a_section_that_is_no_table_is_refused(client, tokens):
    body = {"scenario": {**PEAK, "electricity": [None, None]},
            "overrides": {"electricity.price": "0.10 USD/kWh"}}
    assert not valid("PriceRequest", body)
    r = client.post(f"{API}/price", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422
    assert r.get_json()["errors"][0]["path"] == "scenario.electricity"


def test_a_successor_quote_given_empty_is_given(client, tokens):
    from costmodel.api.schemas import EXAMPLE_QUOTE
    body = {"quote": EXAMPLE_QUOTE, "scenario": {"scenario": PEAK}, "improvement": 0.3,
            "successor": {"scenario": {"accelerator": "jalapeno",
                                       "operating_point": "deepseek-r1/jalapeno/peak"}},
            "available": "12 month", "successor_rate": "jalapeno/rental",
            "successor_quote": {}}
    assert not valid("QuoteTermRequest", body)
    r = client.post(f"{API}/quotes/term", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422, r.get_data(as_text=True)[:500]
    assert r.get_json()["errors"][0]["path"].startswith("successor_quote")


@pytest.mark.parametrize("section,key,value", [
    ("electricity", "electricity.price", "0.10 USD/kWh"),
    ("facility", "facility.pue", 1.2),
])
def test_an_override_inside_a_null_section_is_refused_as_the_null_is(client, tokens, section,
                                                                     key, value):
    body = {"scenario": {**PEAK, section: None}, "overrides": {key: value}}
    assert not valid("PriceRequest", body)
    r = client.post(f"{API}/price", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422
    assert r.get_json()["errors"][0]["path"] == f"scenario.{section}"


@pytest.mark.parametrize("task,ok", [
    ({"steps": 4, "context": 100, "output": 10}, True),
    ({"step": [{"input": 100, "output": 10}]}, True),
    ({"steps": None, "context": None, "output": None, "step": None}, False),
    ({"step": None}, False),
    ({"step": [{"input": 100, "output": 10}], "growth": 5}, False),
])
def test_task_rules_agree(client, tokens, task, ok):
    body = {"scenarios": [{"scenario": {"accelerator": "gb300",
                                        "operating_point": "deepseek-r1/gb300/matched"}}],
            "task": task}
    assert valid("TaskRequest", body) is ok
    r = client.post(f"{API}/task", json=body, headers=auth(tokens["viewer"]))
    assert (r.status_code == 200) is ok, r.get_data(as_text=True)[:500]
