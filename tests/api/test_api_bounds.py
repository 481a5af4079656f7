"""Figures asked for are finite numbers, never Infinity nor a silent null (issue 38, items 7
and 9): a quote's term, a market price and an exchange rate are bounded to plausible ranges
(refused at the field, 422); the JSON of every answer refuses a non-finite number at
serialisation (a 500 that shows the bug; validation catches it first); the currencies of
``money`` are the ISO 4217 codes the unit registry knows, stated as an enum, and each one the
document allows is one the service takes."""
from __future__ import annotations

import json
import math
import re

import pytest
from conftest import auth

from costmodel import app as use_cases
from costmodel.api.schemas import EXAMPLE_QUOTE
from costmodel.model.units import CURRENCIES

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
MARKET = {"price_input": "0.5 USD/Mtok", "price_output": "2 USD/Mtok",
          "provider": "Example API", "model": "DeepSeek R1", "date": "2026-11",
          "source": "illustrative assumption"}


def _fx(rate: str, code: str = "EUR") -> dict:
    return {"currency": code, "fx": {code: {"rate": rate, "date": "2026-11-30",
                                            "source": "a test rate"}}}


def _finite(node) -> bool:
    """Whether every number in an answer is finite (and the answer was JSON at all)."""
    if isinstance(node, dict):
        return all(_finite(v) for v in node.values())
    if isinstance(node, list):
        return all(_finite(v) for v in node)
    return not isinstance(node, float) or math.isfinite(node)


def _refused(r, path: str, said: str) -> None:
    assert r.status_code == 422, r.get_data(as_text=True)[:500]
    assert r.mimetype == "application/problem+json"
    error = r.get_json()["errors"][0]
    assert error["path"] == path and said in error["message"], error


# ---- a quote's term --------------------------------------------------------------------------

def test_a_quote_term_beyond_fifty_years_is_refused(client, tokens):
    def decide(term: str):
        return client.post(f"{API}/quotes/decide", json={
            "quotes": [{**EXAMPLE_QUOTE, "term": term}], "scenarios": [{"scenario": GB300}],
            "demand": {"volume": "50000 Mtok/month"}}, headers=auth(tokens["viewer"]))
    _refused(decide("1e308 month"), "quotes[0].term", "must be at most 600, got 1e+308")
    ok = decide("50 year")
    assert ok.status_code == 200, ok.get_data(as_text=True)[:500]
    text = ok.get_data(as_text=True)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the answer"))  # strict
    totals = [m.group(1) for m in re.finditer(r'"term_total": \{"value": ([^,]+),', text)]
    assert totals and all(math.isfinite(float(t)) for t in totals)
    assert _finite(ok.get_json())


# ---- a market price ----------------------------------------------------------------------------

def test_a_market_price_beyond_a_dollar_a_token_is_refused(client, tokens):
    r = client.post(f"{API}/profit", json={"scenarios": [{"scenario": GB300}], "market": {
        **MARKET, "price_input": "1e308 USD/Mtok"}}, headers=auth(tokens["viewer"]))
    _refused(r, "market.price_input", "must be at most 1e+06, got 1e+308")
    ok = client.post(f"{API}/profit", json={"scenarios": [{"scenario": GB300}], "market": {
        **MARKET, "price_input": "1e6 USD/Mtok"}}, headers=auth(tokens["viewer"]))
    assert ok.status_code == 200
    sold = ok.get_json()["systems"][0]
    for figure in ("revenue_per_hour", "profit_per_hour"):
        assert isinstance(sold[figure]["value"], float), figure  # a figure, never null
    assert _finite(ok.get_json())


def test_the_catalog_refuses_such_a_market_price(client, tokens):
    data = {"provider": "Test", "model": "Test 70B", "date": "2026-12",
            "price": {"value": 1e308, "unit": "USD/Mtok", "source": "a test price"}}
    r = client.post(f"{API}/market-prices", json={"key": "test/huge@2026-12", "data": data},
                    headers=auth(tokens["editor"]))
    _refused(r, "data.price", "must be at most 1e+06")


# ---- an exchange rate --------------------------------------------------------------------------

@pytest.mark.parametrize("rate,said", [("1e308 EUR/USD", "must be at most 1e+07, got 1e+308"),
                                       ("1e-9 EUR/USD", "must be at least 0.0001, got 1e-09")])
def test_an_exchange_rate_beyond_any_currencys_is_refused(client, tokens, rate, said):
    r = client.post(f"{API}/price", json={"scenario": {**GB300, "money": _fx(rate)}},
                    headers=auth(tokens["viewer"]))
    _refused(r, "scenario.money.fx.EUR", said)


def test_an_exchange_rate_at_its_bound_gives_figures(client, tokens):
    r = client.post(f"{API}/price", json={"scenario": {**GB300, "money": _fx("1e7 EUR/USD")}},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200
    usd = client.post(f"{API}/price", json={"scenario": GB300},
                      headers=auth(tokens["viewer"])).get_json()
    cost = r.get_json()["cost_per_mtok"]["total"]
    assert cost["unit"] == "EUR/Mtok"
    assert cost["value"] == pytest.approx(usd["cost_per_mtok"]["total"]["value"] * 1e7)


# ---- the guard at serialisation ----------------------------------------------------------------

def test_a_non_finite_number_never_leaves_as_json(client, tokens, monkeypatch):
    class Broken:
        def to_json(self):
            return {"term_total": {"value": math.inf, "unit": "USD"}}
    monkeypatch.setattr(use_cases, "quotes_term", lambda ctx, request: Broken())
    r = client.post(f"{API}/quotes/term", json={"quote": EXAMPLE_QUOTE, "improvement": 0.3,
                                                "scenario": {"scenario": GB300}},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 500 and b"Infinity" not in r.data


# ---- the currencies the document states (item 9) -----------------------------------------------

def _validator(name: str):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    from costmodel.api.openapi import build_spec
    registry = Registry().with_resource("urn:spec", Resource.from_contents(
        build_spec(), default_specification=DRAFT202012))
    return Draft202012Validator({"$ref": f"urn:spec#/components/schemas/{name}"},
                                registry=registry)


def test_a_currency_the_registry_does_not_know_is_not_schema_valid():
    valid = _validator("GridRequest")
    body = {"scenario": {"scenario": GB300}, "x": "utilisation=0.5..1:3",
            "y": "electricity.price=0.05..0.15 USD/kWh:3"}

    def with_money(money: dict) -> dict:
        return {**body, "scenario": {"scenario": {**GB300, "money": money}}}
    # schemathesis's case: "8.77e34 DVG/USD" (DVG is no ISO 4217 code the service knows)
    assert not valid.is_valid(with_money(_fx("8.77e34 DVG/USD", "DVG")))
    assert not valid.is_valid(with_money({"currency": "EUR", "fx": {"EUR": {
        "rate": "0.92 DVG/USD", "date": "2026-11-30", "source": "x"}}}))
    assert not valid.is_valid(with_money(_fx({"value": 1e308, "unit": "EUR/USD"})))
    assert valid.is_valid(with_money(_fx("0.92 EUR/USD")))


def test_every_currency_the_document_allows_is_taken(client, tokens):
    from costmodel.api.openapi import build_spec
    spec = json.dumps(build_spec())
    said = re.findall(r'"money": \{"type": "object".*?"currency": \{"type": "string", '
                      r'"enum": (\[[^\]]*\])', spec)
    assert said and all(set(json.loads(e)) == CURRENCIES | {"USD"} for e in said)
    priced = {code: client.post(f"{API}/price", json={"scenario": {
        **GB300, "money": _fx(f"2 {code}/USD", code)}}, headers=auth(tokens["viewer"]))
        for code in sorted(CURRENCIES)}
    assert {code: r.status_code for code, r in priced.items() if r.status_code != 200} == {}
    assert priced["JPY"].get_json()["cost_per_mtok"]["total"]["unit"] == "JPY/Mtok"
