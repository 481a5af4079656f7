"""The one door into the engine: every price a use case answers is computed here.

:func:`price_scenario` runs the declared calculation over a validated scenario,
:func:`price_loaded` prices a loaded scenario and refuses costs that overflow, and
:func:`price_rows` evaluates rows of numeric inputs of one scenario in one call (a batch).
No other module of the application layer or of the faces runs the calculation
(``tests/app/test_engine_door.py``)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..model.chain import compare as compare_results
from ..model.chain import price as price_result
from ..model.evaluate import Evaluator
from ..model.inputs import Scenario
from ..model.results import Comparison, Result, check_finite
from ..model.steps import MODEL
from ..sources.curve_point import CurveReading
from .build import LoadedScenario

__all__ = ["Priced", "price_scenario", "price_loaded", "price_rows", "compare_scenarios"]


@dataclass(frozen=True)
class Priced:
    """A priced scenario [every step in its declared unit] and, when its operating point was
    read off a curve, what was read."""
    result: Result
    curve: CurveReading | None = None
    loaded: LoadedScenario | None = None


def price_scenario(scenario: Scenario, provenance: dict[str, str] | None = None, *,
                   sources: bool = True, defaults: list[str] | None = None) -> Result:
    """The declared calculation over a validated scenario [every step in its declared unit],
    not yet checked finite (:func:`price_loaded` checks). ``sources=False``: the provenance
    is not completed with the defaults' sources; ``defaults``: its defaults used, when
    known already."""
    return price_result(scenario, provenance, sources=sources, defaults=defaults)


@lru_cache(maxsize=64)
def _evaluator(steps: tuple[str, ...]) -> Evaluator:
    return Evaluator(MODEL, outputs=list(steps))


def price_rows(env: Mapping[str, Any], steps: tuple[str, ...]) -> dict[str, Any]:
    """``steps`` of the declared calculation over rows of inputs in one call: ``env`` holds
    each input [declared unit] as one value or an array of one value a row (a batch's
    numeric inputs); the figures are as :func:`price_scenario` gives each row alone (the
    same trees, numpy's IEEE operations)."""
    return _evaluator(steps)(env)


def price_loaded(loaded: LoadedScenario, *, sources: bool = True,
                 defaults: list[str] | None = None) -> Priced:
    """A loaded scenario priced; costs that overflow are an error, never an answer.
    ``sources=False``: for an answer without the per-input sources (its provenance is not
    completed); ``defaults``: its defaults used, when known already."""
    result = price_scenario(loaded.scenario, loaded.provenance, sources=sources,
                            defaults=defaults)
    check_finite(result)
    return Priced(result, loaded.curve, loaded)


def compare_scenarios(scenarios: Sequence[tuple[Scenario, dict[str, str]]]) -> Comparison:
    """Scenarios (each with its provenance) priced side by side; ratios are against the
    first. Not yet checked finite."""
    return compare_results(scenarios)
