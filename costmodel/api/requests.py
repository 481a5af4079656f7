"""The API's parse step: request bodies into the application layer's typed requests, and
its typed errors into problems with the request's field paths."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..app import (
    MATCHED,
    OWN_POINT,
    AtInteractivity,
    InlineScenario,
    MarketSpec,
    Reading,
    SavedRevision,
    ScenarioSpec,
    overrides_from_mapping,
)
from ..decisions.demand import Demand, validate_demand
from ..decisions.quotes import Quote, validate_quote
from ..decisions.task import Task, validate_task
from ..http.errors import Problem
from ..model.errors import InputError
from ..model.units import UnitInputError, parse_quantity
from .schemas import PriceRequest, ProfitRequest

__all__ = ["spec_of", "specs_of", "reading_of", "quote_of", "demand_of", "task_of", "invalid",
           "markets_of"]


def invalid(path: str, message: str) -> Problem:
    """A 422 about one field."""
    return Problem(422, "Invalid input", f"{path}: {message}" if path else message,
                   errors=[{"path": path, "message": message}])


def spec_of(req: PriceRequest, where: str = "") -> ScenarioSpec:
    """A scenario in a request (inline, or saved plus overrides) as a typed spec whose
    errors will carry ``where`` + the request's own path."""
    if (req.scenario is None) == (req.scenario_id is None):
        raise invalid(f"{where}scenario", "give exactly one of scenario or scenario_id")
    if req.scenario is not None and req.revision is not None:
        raise invalid(f"{where}revision", "applies to scenario_id only")
    try:
        overrides = overrides_from_mapping(req.overrides)
    except InputError as exc:
        raise Problem.from_input(exc, prefix=f"{where}overrides.") from None
    if req.scenario is not None:
        return ScenarioSpec(InlineScenario(req.scenario), overrides, f"{where}scenario.")
    return ScenarioSpec(SavedRevision(req.scenario_id, req.revision), overrides, where)


def specs_of(reqs: Sequence[PriceRequest], field: str = "scenarios") -> list[ScenarioSpec]:
    return [spec_of(r, f"{field}[{i}].") for i, r in enumerate(reqs)]


def reading_of(at_interactivity: Any, matched: bool) -> Reading:
    """Where a comparison reads its curves."""
    if matched and at_interactivity is not None:
        raise invalid("matched", "not with at_interactivity")
    if matched:
        return MATCHED
    if at_interactivity is None:
        return OWN_POINT
    try:
        return AtInteractivity(parse_quantity(at_interactivity, "token/s/user",
                                              allow_zero=False))
    except UnitInputError as exc:
        raise invalid("at_interactivity", str(exc)) from None


def quote_of(data: Any, where: str) -> Quote:
    try:
        return validate_quote(data, where)
    except InputError as exc:
        raise Problem.from_input(exc) from None


def task_of(data: Any) -> Task:
    try:
        return validate_task(data, "task")
    except InputError as exc:
        raise Problem.from_input(exc) from None


def demand_of(data: Any) -> Demand:
    try:
        return validate_demand(data, "demand")
    except InputError as exc:
        raise Problem.from_input(exc) from None


def markets_of(body: ProfitRequest) -> list[MarketSpec]:
    """Each scenario's market: its own, else the request's (422 at the scenario's market
    when neither is given)."""
    out = []
    for i, item in enumerate(body.scenarios):
        if item.market is not None:
            out.append(MarketSpec(item.market, where=f"scenarios[{i}].market",
                                      given_by="given in the request"))
        elif body.market is not None:
            out.append(MarketSpec(body.market, given_by="given in the request"))
        else:
            raise invalid(f"scenarios[{i}].market", "required: give this scenario's market, "
                                                    "or the request's (market)")
    return out
