"""The OpenAPI document written the way client generators read it, meaning exactly the same.

A validator and a generator read JSON Schema differently. ``oneOf`` of two partial schemas
("scenario given, scenario_id null" or the reverse) is a precise rule for a validator; a
generator (openapi-python-client, openapi-typescript) reads every ``oneOf``/``anyOf`` as a
union of types, and a branch without a type is one it cannot map, or maps to a type that
refuses valid bodies. So, applied to the whole document, three rewrites that change no
verdict of a validator:

- **rules as conditions**: a ``oneOf``/``anyOf`` whose branches are all rules (no type of
  their own) becomes ``if``/``then``/``else``, which validators apply and generators leave
  alone (exactly one of A, B: if A then not B else B; any of A, B: if A else B);
- **typed branches**: a ``const``/``enum`` without a ``type`` gets the type its values have,
  and a table of any keys says so (``additionalProperties: true``, the default);
- **named tables**: a quantity's ``{"value", "unit"}`` table is a named component (the same
  bounds, one name), and so is a table with a title (a scenario's sections, a quote's forms),
  so every field that takes one maps to one class instead of an inline class per site (whose
  generated names collide: ``pricing`` -> ``output_weight`` and the dotted override key
  ``pricing.output_weight``).

tests/api/test_client_shape.py checks that each rewrite gives every instance the verdict the
original gave; tests/api/test_generated_clients.py runs the generators on the result.
"""
from __future__ import annotations

import json
from typing import Any

__all__ = ["for_generators"]

# keywords a rule may hold: what it asks of the instance, and nothing that types it
_RULE_KEYS = frozenset({"required", "properties", "not", "if", "then", "else", "allOf",
                        "anyOf", "oneOf", "description", "minProperties", "maxProperties",
                        "dependentRequired"})
# keys whose value is a value, not a schema; keys whose value maps names to schemas
_VALUES = frozenset({"examples", "example", "default", "const", "enum"})
_BY_NAME = frozenset({"properties", "patternProperties", "$defs", "schemas", "dependentSchemas",
                      "paths", "responses", "content", "headers"})
_JSON_TYPE = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
              (type(None), "null"), (list, "array"), (dict, "object"))


def for_generators(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (an OpenAPI 3.1 document) with the rewrites above; a new document."""
    named: dict[str, str] = {}  # a quantity table's content -> its component's name
    schemas = dict(document["components"]["schemas"])
    # the tables named here, after the document's own components (whose names they never take)
    tables: dict[str, Any] = {name: _TAKEN for name in schemas}
    walked = _walk(document, named, tables)
    walked["components"]["schemas"] = {
        **{k: walked["components"]["schemas"][k] for k in schemas},
        **{k: v for k, v in tables.items() if v is not _TAKEN}}
    return walked


_TAKEN: dict[str, Any] = {"taken": True}  # a name the document's own components hold


def _walk(node: Any, named: dict[str, str], tables: dict[str, Any], owner: str = "",
          root: bool = False) -> Any:
    """``node`` rewritten; ``owner``: the component it is part of (``root``: it is that
    component, which keeps its place)."""
    if isinstance(node, list):
        return [_walk(v, named, tables, owner) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: (v if k in _VALUES else
                {n: _walk(s, named, tables, n if k == "schemas" else owner, k == "schemas")
                 for n, s in v.items()} if k in _BY_NAME
                else _walk(v, named, tables, owner)) for k, v in node.items()}
    node = _typed(node)
    if node.get("type") == "object" and not {"properties", "additionalProperties",
                                               "patternProperties"} & set(node):
        node["additionalProperties"] = True  # (said: a generator may read "no keys")
    for key in ("oneOf", "anyOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches and all(map(_is_rule, branches)):
            condition = _exactly_one(branches) if key == "oneOf" else _any(branches)
            node = {k: v for k, v in node.items() if k != key}
            node["allOf"] = [*node.get("allOf", ()), condition]
    if root or node.get("type") != "object" or "properties" not in node:
        return node
    if node.get("required") == ["value", "unit"]:
        return {"$ref": f"#/components/schemas/{_name(node, named, tables)}"}
    if "title" in node:
        return {"$ref": f"#/components/schemas/{_hoisted(node, owner, tables)}"}
    return node


def _hoisted(table: dict[str, Any], owner: str, tables: dict[str, Any]) -> str:
    """The component of an inline table that has a title: named by it, or (a table of that
    title that differs: a scenario's sections as overrides take them, without sources) by
    the component it is met in and its title. (A generator names a class by its title.)"""
    title = table["title"]
    for name in (title, f"{owner}{title}", *(f"{owner}{title}{n}" for n in range(2, 100))):
        if tables.setdefault(name, {**table, "title": name}) == {**table, "title": name}:
            return name
    raise AssertionError(f"too many tables titled {title} in {owner}")


def _is_rule(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema) and set(schema) <= _RULE_KEYS


def _exactly_one(rules: list[dict[str, Any]]) -> dict[str, Any]:
    first, *rest = rules
    if not rest:
        return first
    return {"if": first, "then": {"not": _any(rest)}, "else": _exactly_one(rest)}


def _any(rules: list[dict[str, Any]]) -> dict[str, Any]:
    first, *rest = rules
    if not rest:
        return first
    return {"if": first, "else": _any(rest)}


def _typed(node: dict[str, Any]) -> dict[str, Any]:
    """A ``const`` or ``enum`` without a type, typed by its values (split by type when they
    have several)."""
    if "type" in node or "$ref" in node or not ({"const", "enum"} & set(node)):
        return node
    values = [node["const"]] if "const" in node else list(node["enum"])
    kinds: dict[str, list[Any]] = {}
    for v in values:
        kinds.setdefault(next(name for t, name in _JSON_TYPE if isinstance(v, t)), []).append(v)
    if len(kinds) == 1:
        return {**node, "type": next(iter(kinds))}
    rest = {k: v for k, v in node.items() if k not in ("const", "enum")}
    return {**rest, "anyOf": [{"type": t, "enum": vs} for t, vs in kinds.items()]}


_BOUNDS = (("minimum", "AtLeast"), ("exclusiveMinimum", "Above"), ("maximum", "AtMost"),
           ("exclusiveMaximum", "Below"))


def _name(table: dict[str, Any], named: dict[str, str], tables: dict[str, Any]) -> str:
    """The component of a quantity's table ({"value", "unit"}): named for what it holds
    (an exchange rate's unit is <CODE>/USD; an hourly value is 24 numbers), its value's
    bounds, whether it may cite a source, and any other key; tables that differ in less
    than that (a source's text rule) are numbered."""
    key = json.dumps(table, sort_keys=True)
    if key in named:
        return named[key]
    props = table["properties"]
    value = props["value"]
    words = ["ExchangeRate" if str(props["unit"].get("pattern", "")).endswith("/USD$")
             else "QuantityTable"]
    if value.get("type") == "array":
        words.append("Hourly")
        value = value.get("items", {})
    for bound, word in _BOUNDS:
        if bound in value:
            words.append(f"{word}{_number(value[bound])}")
    if "source" in props:
        words.append("Cited")
    words += [f"With{k.title()}" for k in props if k not in ("value", "unit", "source", "note")]
    base = "".join(words)
    name, n = base, 2
    while tables.setdefault(name, {**table, "title": name}) != {**table, "title": name}:
        name, n = f"{base}{n}", n + 1
    named[key] = name
    return name


def _number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v).replace(".", "_")
