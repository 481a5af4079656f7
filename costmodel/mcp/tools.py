"""The MCP face's tools: each is an API operation's request, parsed by the API's own request
model (:mod:`costmodel.api.schemas`) and turned into the application layer's typed request
by the API's parse step (:mod:`costmodel.api.requests`), then answered by the same use case
and the same serialiser as ``POST /api/v1/<path>``. Their input schemas are those request
models' JSON schemas, self-contained (the OpenAPI document's components as ``$defs``).

The only part of the API this face imports is its request contract (schemas, requests and
the body's error rendering): never a route, a blueprint or the Flask request.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .. import app
from ..api.openapi import validated
from ..api.requests import (
    demand_of,
    markets_of,
    quote_of,
    reading_of,
    spec_of,
    specs_of,
    task_of,
)
from ..api.schemas import (
    INPUT_SCHEMAS,
    CompareRequest,
    PlanRequest,
    PriceRequest,
    PriceWhatIfRequest,
    ProfitRequest,
    QuotesDecideRequest,
    TaskRequest,
)
from ..app.services import Services
from ..http.errors import Problem
from ..model.units import UnitInputError, parse_quantity

__all__ = ["Tool", "TOOLS", "input_schema", "parse"]


@dataclass(frozen=True)
class Tool:
    name: str
    path: str  # the API operation it answers as: POST /api/v1/<path>
    description: str
    request: type[BaseModel]
    run: Callable[[Services, Any], dict[str, Any]]


def _price(services: Services, body: PriceWhatIfRequest) -> dict[str, Any]:
    return services.price_answer(body, spec_of(body), "full").data


def _compare(services: Services, body: CompareRequest) -> dict[str, Any]:
    specs, reading = specs_of(body.scenarios), reading_of(body.at_interactivity, body.matched)
    with services.sessions(write=False) as session:
        return app.compare(services.context(session), specs, reading).comparison.to_json(
            "full")


def _task(services: Services, body: TaskRequest) -> dict[str, Any]:
    request = app.TaskRequest(specs_of(body.scenarios), task_of(body.task))
    with services.sessions(write=False) as session:
        return app.price_task(services.context(session), request).to_json(None)


def _decide(services: Services, body: QuotesDecideRequest) -> dict[str, Any]:
    request = app.DecisionRequest([quote_of(q, f"quotes[{i}]") for i, q in
                                   enumerate(body.quotes)], specs_of(body.scenarios),
                                  demand_of(body.demand), body.improvement)
    with services.sessions(write=False) as session:
        return app.quotes_decide(services.context(session), request).to_json()


def _positive(raw: Any, field: str, unit: str) -> float | None:
    """As the API reads ``demand`` and ``power_budget`` [unit]: a wrong dimension or a zero
    is a 422 at ``field``."""
    if raw is None:
        return None
    try:
        return parse_quantity(raw, unit, allow_zero=False)
    except UnitInputError as exc:
        raise Problem(422, "Invalid input", f"{field}: {exc}",
                      errors=[{"path": field, "message": str(exc)}]) from None


def _plan(services: Services, body: PlanRequest) -> dict[str, Any]:
    spec = spec_of(PriceRequest.model_construct(
        scenario=body.scenario, scenario_id=body.scenario_id, revision=body.revision,
        overrides=body.overrides))
    request = app.PlanRequest(spec, _positive(body.demand, "demand", "token/s"),
                              _positive(body.power_budget, "power_budget", "W"),
                              reading_of(body.at_interactivity, False), body.availability,
                              body.headroom, body.deployment)
    with services.sessions(write=False) as session:
        return app.plan(services.context(session), request).to_json()


def _profit(services: Services, body: ProfitRequest) -> dict[str, Any]:
    request = app.ProfitRequest(specs_of(body.scenarios), markets_of(body))
    with services.sessions(write=False) as session:
        return app.profit(services.context(session), request).to_json()


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("price", "price", "Price a scenario (inline, or saved plus overrides): cost and "
         "price per million tokens, every step, and the disclosure of every denominator. "
         "As POST /api/v1/price.", PriceWhatIfRequest, _price),
    Tool("compare", "compare", "Price scenarios side by side, with ratios to the first (each "
         "at its own point, matched interactivity, or a named one). As POST /api/v1/compare.",
         CompareRequest, _compare),
    Tool("task", "task", "An agent's task on each system: its latency and cost, at each "
         "system's point or the cheapest that meets a target. As POST /api/v1/task.",
         TaskRequest, _task),
    Tool("quotes_decide", "quotes/decide", "Price every vendor quote and our own builds for "
         "a demand and recommend one. As POST /api/v1/quotes/decide.", QuotesDecideRequest,
         _decide),
    Tool("plan", "plan", "Size a fleet for a demand or a power budget, and price it. As "
         "POST /api/v1/plan.", PlanRequest, _plan),
    Tool("profit", "profit", "Sell each scenario at a market's prices: revenue, cost, profit "
         "and the break-even price. As POST /api/v1/profit.", ProfitRequest, _profit),
)}


@cache
def input_schema(request: type[BaseModel]) -> dict[str, Any]:
    """The request model's JSON schema as the OpenAPI document states it, self-contained:
    the model at the root and every component it reaches in ``$defs``."""
    _, defs = models_json_schema([(request, "validation")],
                                 ref_template="#/components/schemas/{model}")
    schemas = dict(defs.get("$defs", {}))
    schemas.update({name: build() for name, build in INPUT_SCHEMAS.items()})
    text = orjson.dumps(schemas).decode().replace("#/components/schemas/", "#/$defs/")
    schemas = orjson.loads(text)
    root = schemas[request.__name__]
    return {**root, "$defs": schemas}


def parse(tool: Tool, arguments: dict[str, Any] | None) -> BaseModel:
    """The tool's arguments as its API request (a 422 problem with the field paths, as the
    API's for the same body)."""
    return validated(tool.request, arguments or {})
