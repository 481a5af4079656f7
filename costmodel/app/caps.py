"""How much one request of the service may ask for: stated here once, for every face.

The API's schemas declare these bounds (``max_length``, ``le``), so its OpenAPI document
states them; the use cases check them again on a context that is the service's
(``ctx.limited``), so a face that reads its input otherwise (a quote file uploaded to the
Quotes page) meets the same bound, with the same words. The command line is not limited:
its context is local, and its own machine's time is its user's to spend.

Each bound keeps the slowest request it allows short: 50 quotes ranked for a demand take
0.08-0.4 s, 2,000,000 Monte Carlo draws 0.3 s, on one core (docs/pricing-tools.md#limits).
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError

from ..model.errors import InputError
from ..model.inputs import check_text

__all__ = ["MAX_QUOTES", "MAX_SCENARIOS", "MAX_DRAWS", "MAX_SCENARIO_NAME", "check_count",
           "limited", "scenario_name_error"]

MAX_QUOTES = 50  # quotes compared or ranked for a demand in one request
MAX_SCENARIOS = 12  # scenarios of one request (a comparison, a workbook, our own builds)
MAX_DRAWS = 2_000_000  # Monte Carlo draws of one analysis (about 0.3 s)
MAX_SCENARIO_NAME = 200  # characters of a saved scenario's name

# a saved scenario's name: the API's ScenarioCreate.name states it in its schema; the web's
# Save page checks it here (the faces do not import each other)
_SCENARIO_NAME = TypeAdapter(
    Annotated[str, Field(min_length=1, max_length=MAX_SCENARIO_NAME), AfterValidator(check_text)],
    config=ConfigDict(strict=True))


def scenario_name_error(name: str) -> str | None:
    """Why ``name`` cannot name a saved scenario (1 to MAX_SCENARIO_NAME characters, no
    control characters), in pydantic's words, or None."""
    try:
        _SCENARIO_NAME.validate_python(name)
    except ValidationError as exc:
        return exc.errors()[0]["msg"]
    return None


def limited(ctx: Any) -> bool:
    """Whether ``ctx`` is the service's (its requests are bounded)."""
    return bool(getattr(ctx, "limited", False))


def check_count(ctx: Any, count: int, cap: int, path: str, what: str) -> None:
    """An InputError at ``path`` when the service is asked for more than ``cap`` ``what``
    (a plural noun) at once; nothing on a local context."""
    if count > cap and limited(ctx):
        raise InputError([(path, f"at most {cap:,} {what} in one request, got {count:,}")])
