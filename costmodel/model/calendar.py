"""The calendar of a scenario's profiles: hours of a day (a weekday's, then a weekend
day's), months of a year and their weights, and how they are named. What both the inputs
(:mod:`costmodel.model.inputs`: a tariff's and a load shape's hours and months) and the
profile (:mod:`costmodel.model.profile`) need, held by neither.

Calendar conventions (stated in the disclosure): weekdays weigh 5/7 of the year and weekend
days 2/7; a month weighs its days in a 365-day year (February 28).
"""
from __future__ import annotations

__all__ = ["HOURS_A_DAY", "MONTHS", "WEEKDAY_SHARE", "MONTH_DAYS", "DAYS_A_YEAR",
           "MONTH_NAMES", "slot_labels", "month_runs", "hour_runs"]

HOURS_A_DAY = 24
MONTHS = 12
WEEKDAY_SHARE = 5 / 7  # of a year's days: weekdays, and weekend days (2/7)

MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
DAYS_A_YEAR = sum(MONTH_DAYS)  # 365
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
               "Dec")


def slot_labels(hours: int) -> list[str]:
    """Column labels of the hour axis: ``00`` to ``23``, then ``we 00`` ... for weekend
    days."""
    labels = [f"{h:02d}" for h in range(HOURS_A_DAY)]
    return labels if hours == HOURS_A_DAY else labels + [f"we {h:02d}" for h in
                                                         range(HOURS_A_DAY)]


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
