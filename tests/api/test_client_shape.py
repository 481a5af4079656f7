"""The document as generators read it (costmodel.api.client_shape) says what it said before:
each rewrite gives every instance the verdict the original schema gave, and the served
document keeps none of the shapes a generator cannot map."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import costmodel.api.routes  # noqa: F401  (the routes declare themselves as it is imported)
from costmodel.api.client_shape import for_generators
from costmodel.api.openapi import build_spec

NULL, GIVEN = {"type": "null"}, {"not": {"type": "null"}}
KEYS = ("a", "b", "c")
# a rule says of a key: required, required and given, null, or given (when present)
_RULE_PART = st.sampled_from(("required", "given", "null", "present-given"))
rules = st.lists(st.dictionaries(st.sampled_from(KEYS), _RULE_PART, min_size=1, max_size=3),
                 min_size=1, max_size=4)
instances = st.dictionaries(st.sampled_from(KEYS), st.sampled_from((None, 1, "x")), max_size=3)


def _rule(parts: dict[str, str]) -> dict:
    required = [k for k, p in parts.items() if p in ("required", "given")]
    props = {k: NULL if p == "null" else GIVEN for k, p in parts.items() if p != "required"}
    return {**({"required": required} if required else {}),
            **({"properties": props} if props else {})}


def _document(schema: dict) -> dict:
    return {"openapi": "3.1.0", "paths": {}, "components": {"schemas": {"X": schema}}}


def _verdict(schema: dict, instance: object) -> bool:
    return Draft202012Validator(schema).is_valid(instance)


@settings(max_examples=400, deadline=None)
@given(rules, instances, st.sampled_from(("oneOf", "anyOf")))
def test_a_union_of_rules_as_conditions_gives_every_instance_the_same_verdict(
        parts, instance, key):
    original = {"type": "object", key: [_rule(p) for p in parts]}
    rewritten = for_generators(_document(original))["components"]["schemas"]["X"]
    assert key not in rewritten or len(parts) == 0
    assert _verdict(rewritten, instance) == _verdict(original, instance), \
        json.dumps(rewritten)


def test_exactly_one_of_two_by_hand():
    """{"scenario"} or {"scenario_id"}, never both: as a PriceRequest states it."""
    one = {"type": "object", "oneOf": [
        {"required": ["scenario"], "properties": {"scenario": GIVEN, "scenario_id": NULL}},
        {"required": ["scenario_id"], "properties": {"scenario_id": GIVEN, "scenario": NULL}}]}
    shaped = for_generators(_document(one))["components"]["schemas"]["X"]
    assert "oneOf" not in shaped and "if" in shaped["allOf"][0]
    for body, ok in (({"scenario": {}}, True), ({"scenario_id": 1}, True),
                     ({"scenario": {}, "scenario_id": 1}, False), ({}, False),
                     ({"scenario": None, "scenario_id": 1}, True),
                     ({"scenario": None, "scenario_id": None}, False)):
        assert _verdict(shaped, body) is ok is _verdict(one, body), body


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(("x", "peak")),
                          st.none()), min_size=1, max_size=5, unique_by=lambda v: (type(v), v)),
       st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(("x", "peak", "y")),
                 st.none(), st.floats(allow_nan=False)))
def test_a_const_or_enum_typed_by_its_values_gives_the_same_verdict(values, instance):
    for original in ({"enum": values}, {"const": values[0]}):
        rewritten = for_generators(_document(original))["components"]["schemas"]["X"]
        assert "type" in rewritten or all("type" in b for b in rewritten["anyOf"])
        assert _verdict(rewritten, instance) == _verdict(original, instance)


def test_a_quantity_table_is_one_named_component_wherever_it_is_met():
    table = {"type": "object", "required": ["value", "unit"], "additionalProperties": False,
             "properties": {"value": {"type": "number", "minimum": 0},
                            "unit": {"type": "string"}}}
    doc = _document({"type": "object", "properties": {
        "price": {"oneOf": [{"type": "string"}, table]},
        "pricing.price": {"oneOf": [{"type": "string"}, table]}}})
    shaped = for_generators(doc)["components"]["schemas"]
    assert shaped["QuantityTableAtLeast0"] == {**table, "title": "QuantityTableAtLeast0"}
    for key in ("price", "pricing.price"):
        assert shaped["X"]["properties"][key]["oneOf"][1] == {
            "$ref": "#/components/schemas/QuantityTableAtLeast0"}


# ---- the served document ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def document() -> dict:
    return build_spec()


def _schemas(node: object, path: str = ""):
    """(path, schema) of every dict under ``node`` that is a schema's union."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            if k not in ("examples", "example", "enum", "const", "default"):
                yield from _schemas(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _schemas(v, f"{path}/{i}")


def test_every_union_branch_of_the_document_has_a_type(document):
    """What openapi-python-client refused ("Invalid property in union"): a branch it cannot
    type. Every branch of a oneOf/anyOf holds a type, a $ref or a union of its own."""
    untyped = [f"{path}/{key}/{i}" for path, node in _schemas(document["components"])
               for key in ("oneOf", "anyOf") for i, b in enumerate(node.get(key, ()))
               if "/if" not in path and "/then" not in path and "/else" not in path
               and "/not" not in path
               and not ({"type", "$ref", "oneOf", "anyOf", "allOf"} & set(b))]
    assert untyped == []


def test_no_enum_of_the_document_has_two_members_a_generator_names_alike(document):
    """openapi-python-client names an enum's members in upper snake case: cost_per_mtok.capex
    and cost_per_mtok_capex, or FALSE and false, would be one member."""
    def member(v: object) -> str:
        return "".join(c if c.isalnum() else "_" for c in str(v)).upper()
    for path, node in _schemas(document):
        values = node.get("enum") if isinstance(node.get("enum"), list) else []
        names = [member(v) for v in values]
        assert len(names) == len(set(names)), (path, values)


def test_inline_tables_that_could_share_a_generated_name_are_components(document):
    """Every quantity table {value, unit} and every titled table is a named component,
    referred to wherever it is used (an inline one is named by where it is met, and the
    dotted override key pricing.output_weight met pricing -> output_weight)."""
    components = document["components"]["schemas"]
    for name, schema in components.items():
        for path, node in _schemas(schema):
            if path and node.get("type") == "object" and "properties" in node:
                assert node.get("required") != ["value", "unit"], (name, path)
                assert "title" not in node, (name, path)
    for name, schema in components.items():
        if name.startswith("QuantityTable"):
            assert schema["required"] == ["value", "unit"] and schema["title"] == name


def test_a_price_answer_has_a_typed_field_for_every_figure_it_holds(document):
    """A generated client reads each figure of a full price answer as a typed attribute, not
    as an extra key of a loose table: ResultOut declares every key of a full answer, and
    each headline figure is a QuantityOut."""
    from conftest import price_data

    from costmodel.model.results import HEADLINE
    answer = price_data({"accelerator": "gb300",
                         "operating_point": "deepseek-r1/gb300/peak"}).to_json()
    declared = document["components"]["schemas"]["ResultOut"]["properties"]
    assert set(answer) <= set(declared), set(answer) - set(declared)
    quantity = {"$ref": "#/components/schemas/QuantityOut"}
    for name in HEADLINE:
        group, _, member = name.partition("_mtok_")
        if member:  # cost_per_mtok_total -> cost_per_mtok.total
            ref = declared[f"{group}_mtok"]["$ref"].rsplit("/", 1)[1]
            assert document["components"]["schemas"][ref]["properties"][member] == quantity
        else:
            assert declared[name] == quantity, name
