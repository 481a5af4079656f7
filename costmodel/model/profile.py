"""A scenario's hourly profile: evaluated once for every reader (:func:`hourly_profile`: the
energy rate and the load by hour for the price page's chart and the what-if's move of
flexible load, every profile block of the Tariff sheet), labelled (a tariff's demand
periods) and moved (:func:`move_flexible`).

The profile inputs themselves (a tariff's rates, the load shape and the calendar's weights
as arrays along the month and hour axes) are the scenario's inputs
(:func:`costmodel.model.inputs.profile_inputs`); the calendar is
:mod:`costmodel.model.calendar`'s.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from .calendar import (
    DAYS_A_YEAR,
    HOURS_A_DAY,
    MONTH_DAYS,
    MONTH_NAMES,
    MONTHS,
    WEEKDAY_SHARE,
    hour_runs,
    month_runs,
    slot_labels,
)
from .evaluate import Evaluator
from .inputs import Scenario, Tariff, profile_inputs, shape_of
from .steps import MODEL

__all__ = ["MONTH_DAYS", "DAYS_A_YEAR", "profile_inputs", "shape_of", "slot_labels",
           "MONTH_NAMES", "move_flexible", "HOURS_A_DAY", "MONTHS", "WEEKDAY_SHARE",
           "period_labels", "month_runs", "hour_runs", "HourlyProfile", "hourly_profile",
           "PROFILE_STEPS", "PROFILE_ITEMS", "AXES"]

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


def period_labels(tariff: Tariff | None) -> list[str]:
    """The rows of the demand-period axis in words: each period's name (or number) and the
    months it is billed in; ``no period`` for a tariff without one."""
    if tariff is None or not tariff.demand_periods:
        return ["no period"]
    out = []
    for i, p in enumerate(tariff.demand_periods):
        name = p.name or f"period {i + 1}"
        out.append(name if p.months is None else f"{name} ({month_runs(p.billed_months)})")
    return out


def move_flexible(load: np.ndarray, rates: np.ndarray, share: float) -> np.ndarray:
    """A load shape with ``share`` of each day's serving moved to that day's cheapest hours.

    ``load`` [fraction of each hour serving] and ``rates`` [USD/kWh, the year's average rate
    of each hour] are (1, hours) profiles (a weekday's hours, then a weekend day's). Each day
    keeps its serving hours: ``1 - share`` of every hour stays, and the rest fills the
    cheapest hours of the same day first, each up to a whole hour (ties: the earlier hour)."""
    if not 0 <= share <= 1:
        raise ValueError(f"the flexible share is a fraction from 0 to 1, got {share:g}")
    original = np.array(load, dtype=float).reshape(-1, HOURS_A_DAY)
    out = original * (1 - share)
    days = np.asarray(rates, dtype=float).reshape(-1, HOURS_A_DAY)
    for day, rate, before in zip(out, days, original, strict=True):
        moved = share * before.sum()  # [hours serving] to place
        for hour in np.argsort(rate, kind="stable"):
            take = min(1 - day[hour], moved)
            day[hour] += take
            moved -= take
            if moved <= 0:
                break
    return out.reshape(1, -1)
