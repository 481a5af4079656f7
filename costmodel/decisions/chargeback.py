"""A chargeback's ledger apart from its declared arithmetic (:mod:`.chargeback_calculation`):
the period, usage records summed by tenant and pool, and money rounded to cents so that the
cents still add up.

- :func:`parse_period`: ``2026-11`` (a month, UTC) or ``2026-11-01..2026-11-15`` (days, both
  included) as [start, end) in seconds since the epoch, with its hours.
- :func:`aggregate`: the records whose start falls in the period, matched to pools by model
  and summed by tenant (a grouping column of the records), with numpy (a million records in
  a fraction of a second).
- :func:`largest_remainder`: amounts [USD] as whole cents whose sum is the total in cents
  (each amount's cents floored, the cents left over given to the largest remainders, ties
  to the earlier line).
"""
from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from ..model.errors import InputError

__all__ = ["Period", "parse_period", "Usage", "aggregate", "largest_remainder",
           "UNATTRIBUTED", "CENTS_DIGITS"]

UNATTRIBUTED = "(unattributed)"  # the tenant of records whose key is empty
CENTS_DIGITS = 6  # [decimals of a cent] an amount is read to before it is rounded
_MONTH = re.compile(r"(\d{4})-(\d{2})")
_RANGE = re.compile(r"(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})")
_MAX_DAYS = 366 * 2  # a period of at most two years


@dataclass(frozen=True)
class Period:
    """[start, end) [s since the epoch, UTC] and how it was given (``label``)."""
    start: int
    end: int
    label: str

    @property
    def hours(self) -> float:
        """Hours in the period [h]."""
        return (self.end - self.start) / 3600.0

    def iso(self, which: str) -> str:
        """``start`` or ``end`` as ISO 8601 UTC (``2026-11-01T00:00:00Z``)."""
        t = self.start if which == "start" else self.end
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _epoch(d: date) -> int:
    return calendar.timegm(d.timetuple())


def parse_period(text: Any, where: str = "period") -> Period:
    """``YYYY-MM`` (a month) or ``YYYY-MM-DD..YYYY-MM-DD`` (days, both included), in UTC;
    InputError at ``where`` otherwise."""
    if isinstance(text, str):
        m = _MONTH.fullmatch(text.strip())
        r = _RANGE.fullmatch(text.strip())
        try:
            if m:
                y, mo = int(m.group(1)), int(m.group(2))
                first = date(y, mo, 1)
                last = date(y + mo // 12, mo % 12 + 1, 1)
                return Period(_epoch(first), _epoch(last), text.strip())
            if r:
                first, last = (date.fromisoformat(x) for x in r.groups())
                days = (last - first).days + 1
                if days < 1:
                    raise InputError([(where, f"the period ends before it starts: {text}")])
                if days > _MAX_DAYS:
                    raise InputError([(where, f"a period of at most {_MAX_DAYS} days, got "
                                              f"{days}")])
                return Period(_epoch(first), _epoch(first) + days * 86400, text.strip())
        except ValueError as exc:
            raise InputError([(where, f"not a date: {exc}")]) from None
    raise InputError([(where, f"a month (2026-11) or days (2026-11-01..2026-11-15), got "
                              f"{str(text)[:40]!r}")])


@dataclass(frozen=True)
class Usage:
    """Usage summed by tenant and pool: ``tenants`` (labels, in order), and per pool arrays
    of one value a tenant: new input, cached input and output tokens [token] and requests;
    ``records`` counted in the period, ``outside`` records outside it."""
    tenants: tuple[str, ...]
    input: Mapping[str, np.ndarray]
    cached: Mapping[str, np.ndarray]
    output: Mapping[str, np.ndarray]
    requests: Mapping[str, np.ndarray]
    records: int
    outside: int


def aggregate(records: Any, key: str, models: Mapping[str, Sequence[str]], period: Period,
              *, where: str = "by") -> Usage:
    """The ``records`` (:class:`costmodel.sources.usage.UsageRecords`) whose start falls in
    ``period``, summed by the grouping column ``key`` and by pool; ``models``: pool -> the
    model names it serves (one pool with none: every record is its).

    InputError: a key no record has (``where``), no record in the period, a model no pool
    serves (``models``), a model two pools serve."""
    if key not in records.labels:
        known = ", ".join(sorted(records.labels)) or "none"
        raise InputError([(where, f"no record has the tenant key {key!r} (the records' "
                                  f"columns: {known})")])
    inside = (records.start >= period.start) & (records.start < period.end)
    count = int(inside.sum())
    if count == 0:
        raise InputError([("period", f"no usage record starts in {period.label} "
                                     f"({period.iso('start')} to {period.iso('end')}); "
                                     f"{len(records):,} records read")])
    pools = list(models)
    of_model: dict[str, int] = {}
    for p, names in models.items():
        for name in names:
            if name in of_model and pools[of_model[name]] != p:
                raise InputError([("models", f"the model {name!r} is served by two pools, "
                                             f"{pools[of_model[name]]} and {p}")])
            of_model[name] = pools.index(p)
    codes = records.keys[key][inside]
    labels = records.labels[key]
    if len(pools) == 1 and not models[pools[0]]:
        pool = np.zeros(count, dtype=np.int64)
    else:
        if "model" not in records.labels:
            raise InputError([("models", "the records name no model: give one pool, serving "
                                         "every record")])
        table = np.array([of_model.get(m, -1) for m in records.labels["model"]], dtype=np.int64)
        pool = table[records.keys["model"][inside]]
        if (pool < 0).any():
            missing = sorted({records.labels["model"][c]
                              for c in np.unique(records.keys["model"][inside][pool < 0])})
            raise InputError([("models", f"no pool serves the model(s) {', '.join(missing[:10])}"
                                         f": add them to a pool's models")])
    # tenants in the order of their labels, only those with a record in the period
    used, tenant = np.unique(codes, return_inverse=True)
    names = tuple(labels[c] or UNATTRIBUTED for c in used)
    n = len(used)
    flat = pool * n + tenant
    size = len(pools) * n

    def summed(values: np.ndarray) -> np.ndarray:
        return np.bincount(flat, weights=values[inside], minlength=size).reshape(len(pools), n)

    sums = [summed(a) for a in (records.input_tokens, records.cached_input_tokens,
                                records.output_tokens, records.requests)]
    split = [{p: s[k] for k, p in enumerate(pools)} for s in sums]
    return Usage(names, *split, records=count, outside=len(records) - count)


def largest_remainder(amounts: Sequence[float] | np.ndarray, total: float) -> np.ndarray:
    """``amounts`` [USD] as whole cents [int] adding up to ``total`` [USD] in cents: each
    amount read to :data:`CENTS_DIGITS` decimals of a cent and floored, the cents left given
    one each to the largest remainders (ties: the earlier amount first)."""
    x = np.round(np.asarray(amounts, dtype=float) * 100.0, CENTS_DIGITS)
    floor = np.floor(x)
    remainder = np.round(x - floor, CENTS_DIGITS)
    want = round(round(total * 100.0, CENTS_DIGITS))
    left = want - int(floor.sum())
    cents = floor.astype(np.int64)
    if left < 0 or left > len(cents):
        raise ValueError(f"the amounts add up to {floor.sum() / 100:.2f}, not {total:.2f}")
    order = np.lexsort((np.arange(len(cents)), -remainder))
    cents[order[:left]] += 1
    return cents
