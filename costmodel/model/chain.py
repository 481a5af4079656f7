"""The chain: validated scenario -> declared calculation -> Result with disclosure."""
from __future__ import annotations

from collections.abc import Sequence

from .evaluate import Evaluator
from .inputs import NORMALISED_BY_DEFAULT, Scenario, default_source, shape_of
from .results import Comparison, Result
from .steps import MODEL

__all__ = ["price", "compare"]

_FULL = Evaluator(MODEL)  # every step; compiled once per process
_FLOAT = frozenset({float})


def price(scenario: Scenario, provenance: dict[str, str] | None = None, *,
          sources: bool = True, defaults: list[str] | None = None) -> Result:
    """Price one scenario: every declared step, and what it was divided by. ``sources=False``:
    the provenance is not completed with the defaults' sources (for an answer without the
    per-input sources). ``defaults``: ``scenario.defaults_used()`` when the caller knows it
    already (a scenario built from another with the same keys given)."""
    # every input a number, unless a tariff, a load shape or hourly emission factors bring
    # profiles (arrays)
    plain = shape_of(scenario) is None
    values = _FULL(scenario.to_inputs(), plain=plain)
    if not _FLOAT.issuperset(map(type, values.values())):  # numpy's, after a fallback
        values = {name: float(v) for name, v in values.items()}
    defaults = scenario.defaults_used() if defaults is None else list(defaults)
    provenance = dict(provenance or {})
    if sources:
        for key in defaults:
            provenance.setdefault(key, default_source(key))
    if scenario.normalised_by_defaulted:
        defaults.append("operating_point.normalised_by")
        if sources:
            provenance["operating_point.normalised_by"] = f"default: {NORMALISED_BY_DEFAULT}"
    return Result(scenario, values, provenance, defaults)


def compare(scenarios: Sequence[tuple[Scenario, dict[str, str]]]) -> Comparison:
    """Price several scenarios; the first is the baseline of the ratios."""
    return Comparison([price(s, p) for s, p in scenarios])
