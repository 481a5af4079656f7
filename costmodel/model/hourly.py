"""A scenario's hourly profile, evaluated once for every reader: the energy rate and the load
by hour (the price page's chart, the what-if's move of flexible load) and every profile
block of the Tariff sheet come from :func:`hourly_profile`, one evaluation of the declared
calculation's profile steps over the scenario's profile inputs
(:mod:`costmodel.model.profile`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from .evaluate import Evaluator
from .inputs import Scenario
from .profile import period_labels, shape_of
from .steps import MODEL

__all__ = ["HourlyProfile", "hourly_profile", "PROFILE_STEPS", "PROFILE_ITEMS", "AXES"]

# the steps along the month, hour or period axes, and every profile input and step by name
PROFILE_STEPS = [n for n, s in MODEL.steps.items() if s.axes]
PROFILE_ITEMS = [*MODEL.profile_inputs, *PROFILE_STEPS]
AXES: dict[str, tuple[str, ...]] = {**{n: MODEL.inputs[n].axes for n in MODEL.profile_inputs},
                                    **{n: MODEL.steps[n].axes for n in PROFILE_STEPS}}


@cache
def _evaluator() -> Evaluator:
    return Evaluator(MODEL, outputs=PROFILE_STEPS)


@dataclass(frozen=True)
class HourlyProfile:
    """Every profile input and step of one scenario at its whole shape: (months, hours),
    (months, 1), (periods, 1)... as its axes say [each item's declared unit]; NaN where the
    scenario has no such profile (no tariff: no rates)."""
    months: int  # 12 when the tariff has seasons, else 1
    hours: int  # 24, or 48: a weekday's hours, then a weekend day's
    periods: int  # rows of the demand-period axis (1 when the tariff has none)
    values: dict[str, np.ndarray]

    def by_hour(self, name: str) -> list[float] | None:
        """A profile along the hours alone (``tariff_rate_by_hour``, ``load_by_hour``) as one
        value an hour, None when it has no value (a flat price has no rate by hour)."""
        value = self.values[name]
        return None if np.isnan(value).all() else value[0].tolist()


def hourly_profile(scenario: Scenario) -> HourlyProfile | None:
    """The scenario's profile, or None when it has neither a tariff nor a load shape."""
    shape = shape_of(scenario)
    if shape is None:
        return None
    months, hours = shape
    periods = len(period_labels(scenario.electricity.tariff))
    inputs = scenario.to_inputs()
    computed: dict[str, Any] = _evaluator()(inputs)
    values = {}
    for name in PROFILE_ITEMS:
        axes = AXES[name]
        full = (months if "month" in axes else periods if "period" in axes else 1,
                hours if "hour" in axes else 1)
        value = inputs[name] if name in inputs else computed[name]
        values[name] = np.broadcast_to(np.asarray(value, dtype=float), full)
    return HourlyProfile(months, hours, periods, values)
