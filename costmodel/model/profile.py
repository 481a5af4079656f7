"""The profile inputs of the declared calculation: a scenario's tariff, load shape and
calendar as arrays along the month and hour axes (:data:`~costmodel.model.declaration.AXES`).

Shapes (see :mod:`costmodel.model.evaluate`): rates (months, hours), demand charges and month
weights (months, 1), hour weights and the load (1, hours); a tariff's demand periods: their
hours (periods, hours) and their charges and months billed (periods, 1). A tariff without
demand periods has one period that bills nothing (no hour, no charge, every month), so the
calculation and the workbook keep one shape. ``months`` is 12 when a tariff has
seasons, else 1 (the whole year); ``hours`` is 48 (a weekday's 24, then a weekend day's)
when the tariff or the load tells weekend days apart, else 24.

Calendar conventions (stated in the disclosure): weekdays weigh 5/7 of the year and weekend
days 2/7; a month weighs its days in a 365-day year (February 28); each month row bills its
demand charge once a year (a tariff without seasons: 12 times).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .steps import MODEL

if TYPE_CHECKING:  # annotations only: inputs imports this module (tests/test_layering.py)
    from .inputs import Scenario, Tariff

__all__ = ["MONTH_DAYS", "DAYS_A_YEAR", "profile_inputs", "shape_of", "slot_labels",
           "MONTH_NAMES", "move_flexible", "HOURS_A_DAY", "MONTHS", "WEEKDAY_SHARE",
           "period_labels", "month_runs", "hour_runs"]

HOURS_A_DAY = 24
MONTHS = 12
WEEKDAY_SHARE = 5 / 7  # of a year's days: weekdays, and weekend days (2/7)

MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
DAYS_A_YEAR = sum(MONTH_DAYS)  # 365
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
               "Dec")

_ABSENT: dict[str, Any] = {
    **{n: math.nan for n in MODEL.profile_inputs},
    **{i.name: math.nan for i in MODEL.inputs.values() if i.key.startswith("electricity.tariff.")}}


def shape_of(scenario: Scenario) -> tuple[int, int] | None:
    """(months, hours) of the scenario's profile, or None when it has neither a tariff nor
    a load shape."""
    tariff, load = scenario.electricity.tariff, scenario.load
    if tariff is None and load is None:
        return None
    months = MONTHS if tariff is not None and tariff.seasons else 1
    weekend = (tariff is not None and tariff.has_weekend) or \
        (load is not None and load.weekend is not None)
    return months, HOURS_A_DAY * (2 if weekend else 1)


def slot_labels(hours: int) -> list[str]:
    """Column labels of the hour axis: ``00`` to ``23``, then ``we 00`` ... for weekend
    days."""
    labels = [f"{h:02d}" for h in range(HOURS_A_DAY)]
    return labels if hours == HOURS_A_DAY else labels + [f"we {h:02d}" for h in
                                                         range(HOURS_A_DAY)]


def _tariff_arrays(tariff: Tariff, months: int, hours: int) -> tuple[np.ndarray, np.ndarray]:
    """Energy rates (months, hours) [USD/kWh] and demand charges (months, 1)
    [USD/kW/month]."""
    by_month = {m: season for season in tariff.seasons for m in season.months}
    rates = np.empty((months, hours))
    demand = np.empty((months, 1))
    for row in range(months):
        season = by_month.get(row + 1) if months == MONTHS else None
        source = season or tariff
        weekday = source.hourly
        weekend = source.weekend if source.weekend is not None else weekday
        rates[row] = weekday if hours == HOURS_A_DAY else [*weekday, *weekend]
        charge = season.demand_charge if season is not None else None
        demand[row, 0] = tariff.demand_charge if charge is None else charge
    return rates, demand


def _demand_period_arrays(tariff: Tariff, hours: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """Each demand period's hours (periods, hours) [1 in the period, else 0], charge
    (periods, 1) [USD/kW/month] and months billed a year (periods, 1) [month/year]; one
    period billing nothing when the tariff has none."""
    periods = tariff.demand_periods
    if not periods:
        return (np.zeros((1, hours)), np.zeros((1, 1)), np.full((1, 1), float(MONTHS)))
    mask = np.zeros((len(periods), hours))
    for row, p in enumerate(periods):
        mask[row, p.hours] = 1
        if hours != HOURS_A_DAY:
            weekend = p.hours if p.weekend_hours is None else p.weekend_hours
            mask[row, [HOURS_A_DAY + h for h in weekend]] = 1
    charge = np.array([[p.demand_charge] for p in periods], dtype=float)
    months = np.array([[len(p.billed_months)] for p in periods], dtype=float)
    return mask, charge, months


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


def _runs(values: list[int]) -> list[list[int]]:
    """Whole numbers (ascending) as runs of consecutive ones: [1, 2, 3, 5] -> [[1, 2, 3], [5]]."""
    runs: list[list[int]] = []
    for v in sorted(values):
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return runs


def month_runs(months: list[int], sep: str = ", ") -> str:
    """``Jun-Sep``, ``Jan, Mar-Apr``: months 1-12 as runs, joined by ``sep``."""
    return sep.join(MONTH_NAMES[r[0] - 1] + (f"-{MONTH_NAMES[r[-1] - 1]}" if len(r) > 1
                                              else "") for r in _runs(months))


def hour_runs(hours: list[int], sep: str = ", ") -> str:
    """``12:00-18:00``, ``08:00-12:00, 18:00-23:00``: hours of a day (0 = 00:00-01:00) as
    runs joined by ``sep``; ``none`` for no hour."""
    return sep.join(f"{r[0]:02d}:00-{r[-1] + 1:02d}:00" for r in _runs(hours)) or "none"


def profile_inputs(scenario: Scenario) -> dict[str, Any]:
    """The profile inputs and the tariff's scalar inputs by input name [declared units];
    NaN where the scenario has no tariff (or no load shape)."""
    shape = shape_of(scenario)
    if shape is None:
        return _ABSENT
    months, hours = shape
    out = dict(_ABSENT)
    if hours == HOURS_A_DAY:
        hour_weight = np.full((1, hours), 1 / HOURS_A_DAY)
    else:
        hour_weight = np.concatenate([np.full(HOURS_A_DAY, WEEKDAY_SHARE / HOURS_A_DAY),
                                      np.full(HOURS_A_DAY, (1 - WEEKDAY_SHARE) / HOURS_A_DAY)]
                                     ).reshape(1, hours)
    out["hour_weight"] = hour_weight
    load = scenario.load
    if load is not None:
        weekend = load.weekend if load.weekend is not None else load.hourly
        out["load_hourly"] = np.array(
            [load.hourly if hours == HOURS_A_DAY else [*load.hourly, *weekend]], dtype=float)
    tariff = scenario.electricity.tariff
    if tariff is not None:
        rates, demand = _tariff_arrays(tariff, months, hours)
        out["electricity_tariff_rates"] = rates
        out["electricity_tariff_demand_charge"] = demand
        if months == MONTHS:
            out["tariff_month_weight"] = np.array(MONTH_DAYS, dtype=float).reshape(
                months, 1) / DAYS_A_YEAR
            out["tariff_months_billed"] = np.ones((months, 1))
        else:
            out["tariff_month_weight"] = np.ones((1, 1))
            out["tariff_months_billed"] = np.full((1, 1), float(MONTHS))
        (out["electricity_tariff_demand_period_hours"],
         out["electricity_tariff_demand_period_charge"],
         out["electricity_tariff_demand_period_months"]) = _demand_period_arrays(tariff, hours)
        out["electricity_tariff_fixed_charge"] = tariff.fixed_charge
        out["electricity_tariff_scale"] = tariff.scale
        out["electricity_tariff_shift"] = tariff.shift
    for name in MODEL.profile_inputs:
        if isinstance(out[name], np.ndarray):
            out[name].setflags(write=False)
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
