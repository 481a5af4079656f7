"""Throughput-interactivity curves, their Pareto frontier, and operating points read from them.

A :class:`Curve` is one benchmark sweep of one system on one workload: points at several
concurrencies, each with throughput per accelerator [token/s] and interactivity
[token/s/user] (= 1 / time per output token). The product decision lives on the curve's
Pareto frontier: the points no other point beats on both throughput and interactivity.

Reading a throughput at a target interactivity interpolates along the frontier with a
monotone cubic (PCHIP, Fritsch-Carlson), which never overshoots the measured points, and
never extrapolates:

- a target above the frontier's best interactivity is *unreachable*: no number, only the
  best reachable interactivity;
- a target below the frontier's lowest interactivity is *clamped* to the peak-throughput end
  of the frontier (a slower user experience cannot buy more throughput than was measured),
  and says so.

Costs and J/token at a target are derived from the interpolated throughput by the engine;
they are never interpolated themselves.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from scipy.interpolate import PchipInterpolator

__all__ = ["CurveKey", "Curve", "Frontier", "Reading", "Selection", "Unreachable", "select",
           "READ_STATUS", "SELECTIONS", "matched_interactivity"]

READ_STATUS = ("exact", "interpolated", "clamped", "unreachable")
_REL_TOL = 1e-9  # a target this close to a measured interactivity counts as that point


@dataclass(frozen=True)
class CurveKey:
    """What a curve belongs to: change any of these and it is a different curve."""
    hardware: str
    model: str
    framework: str | None = None
    precision: str | None = None
    isl: int | None = None
    osl: int | None = None
    spec_decoding: str | None = None
    disaggregated: bool | None = None

    @property
    def id(self) -> str:
        """A stable, readable identifier, e.g. ``mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg``."""
        seq = "x".join(str(v) for v in (self.isl, self.osl)) if self.isl or self.osl else "-"
        disagg = {True: "disagg", False: "agg", None: "-"}[self.disaggregated]
        parts = [self.hardware, self.model, self.framework or "-", self.precision or "-", seq,
                 self.spec_decoding or "-", disagg]
        return "/".join(str(p).replace("/", "_") for p in parts)


@dataclass
class Curve:
    """Measured points of one sweep; arrays share one length, NaN where not measured.

    Units: interactivity [token/s/user]; throughput, output_throughput, input_throughput
    [token/s per accelerator]; ttft, e2e_latency [s]; power [W per accelerator, measured];
    concurrency [requests in flight].
    """
    key: CurveKey
    interactivity: np.ndarray
    throughput: np.ndarray
    output_throughput: np.ndarray
    input_throughput: np.ndarray
    concurrency: np.ndarray
    ttft: np.ndarray
    e2e_latency: np.ndarray
    power: np.ndarray
    source: str = ""
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_points(cls, key: CurveKey, points: list[dict], source: str = "") -> Curve:
        """Build from dicts with any of the array names above (missing -> NaN)."""
        names = ("interactivity", "throughput", "output_throughput", "input_throughput",
                 "concurrency", "ttft", "e2e_latency", "power")
        arrays = {n: np.array([_num(p.get(n)) for p in points], dtype=float) for n in names}
        return cls(key, source=source, **arrays)

    def __len__(self) -> int:
        return len(self.throughput)

    def merged(self, other: Curve) -> Curve:
        """This curve with another sweep's points of the same key appended."""
        if other.key != self.key:
            raise ValueError(f"cannot merge curve {other.key.id} into {self.key.id}")
        arrays = {n: np.concatenate([getattr(self, n), getattr(other, n)])
                  for n in ("interactivity", "throughput", "output_throughput",
                            "input_throughput", "concurrency", "ttft", "e2e_latency", "power")}
        sources = "; ".join(dict.fromkeys(s for s in (self.source, other.source) if s))
        return replace(self, source=sources, notes=self.notes + other.notes, **arrays)

    def throughput_of(self, kind: str) -> np.ndarray:
        """Throughput per accelerator counting ``kind`` tokens (mixed = input + output)."""
        return {"mixed": self.throughput, "output": self.output_throughput,
                "input": self.input_throughput}[kind]

    def frontier(self, kind: str = "mixed") -> Frontier:
        return Frontier.of(self, kind)

    def peak_index(self, kind: str = "mixed") -> int:
        t = self.throughput_of(kind)
        if np.all(np.isnan(t)):
            raise ValueError(f"curve {self.key.id} has no {kind} throughput")
        return int(np.nanargmax(t))

    def concurrency_index(self, concurrency: float, kind: str = "mixed") -> int:
        """The point measured at ``concurrency`` (the best one if measured twice)."""
        hits = np.flatnonzero(self.concurrency == concurrency)
        if hits.size == 0:
            known = ", ".join(f"{c:g}" for c in sorted(set(self.concurrency[
                ~np.isnan(self.concurrency)])))
            raise LookupError(f"no point at concurrency {concurrency:g} on curve "
                              f"{self.key.id} (measured: {known or 'none'})")
        t = self.throughput_of(kind)[hits]
        return int(hits[np.nanargmax(t)] if not np.all(np.isnan(t)) else hits[0])


def _num(v) -> float:
    if v is None or isinstance(v, bool):
        return np.nan
    return float(v)


@dataclass(frozen=True)
class Reading:
    """What was read off a frontier at one target.

    ``throughput`` [token/s per accelerator] is None when ``status == "unreachable"``;
    ``interactivity`` [token/s/user] is where it was read (the clamp point when clamped);
    ``best_interactivity`` is the frontier's best reachable interactivity.
    """
    status: Literal["exact", "interpolated", "clamped", "unreachable"]
    target: float
    interactivity: float | None
    throughput: float | None
    best_interactivity: float
    power: float | None = None  # [W per accelerator], linear between frontier points

    def describe(self) -> str:
        if self.status == "unreachable":
            return (f"{self.target:.4g} token/s/user is unreachable: the frontier's best is "
                    f"{self.best_interactivity:.4g} token/s/user")
        if self.status == "clamped":
            return (f"{self.target:.4g} token/s/user is below the frontier; clamped to its "
                    f"peak-throughput end at {self.interactivity:.4g} token/s/user")
        how = "a measured point" if self.status == "exact" else "PCHIP along the Pareto frontier"
        return f"read at {self.target:.4g} token/s/user ({how})"


@dataclass
class Frontier:
    """The Pareto frontier of a curve for one token kind, sorted by interactivity ascending
    (throughput then strictly descending)."""
    interactivity: np.ndarray
    throughput: np.ndarray
    power: np.ndarray
    indices: np.ndarray  # positions of the frontier points in the curve
    _pchip: PchipInterpolator | None = field(default=None, repr=False)

    @classmethod
    def of(cls, curve: Curve, kind: str = "mixed") -> Frontier:
        x, y = curve.interactivity, curve.throughput_of(kind)
        ok = np.flatnonzero(~np.isnan(x) & ~np.isnan(y) & (x > 0) & (y > 0))
        if ok.size == 0:
            raise ValueError(f"curve {curve.key.id} has no point with both interactivity and "
                             f"{kind} throughput")
        idx = pareto_indices(x[ok], y[ok])
        chosen = ok[idx]
        return cls.from_points(x[chosen], y[chosen], curve.power[chosen], chosen)

    @classmethod
    def from_points(cls, x: np.ndarray, y: np.ndarray, power: np.ndarray | None = None,
                    indices: np.ndarray | None = None) -> Frontier:
        """A frontier from points already on it (interactivity ascending)."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        power = np.full_like(x, np.nan) if power is None else np.asarray(power, dtype=float)
        indices = np.arange(len(x)) if indices is None else indices
        pchip = PchipInterpolator(x, y, extrapolate=False) if len(x) >= 2 else None
        return cls(x, y, power, indices, pchip)

    @property
    def best_interactivity(self) -> float:
        return float(self.interactivity[-1])

    @property
    def peak(self) -> tuple[float, float]:
        """(interactivity, throughput) of the peak-throughput end."""
        return float(self.interactivity[0]), float(self.throughput[0])

    def read(self, target: float) -> Reading:
        """Throughput at a target interactivity [token/s/user]; see the module docstring."""
        status, x_read, y = self.read_many(np.array([target], dtype=float))
        code = READ_STATUS[int(status[0])]
        if code == "unreachable":
            return Reading("unreachable", target, None, None, self.best_interactivity)
        xr = float(x_read[0])
        return Reading(code, target, xr, float(y[0]), self.best_interactivity,
                       self._power_at(xr))

    def read_many(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectorised :meth:`read`: (status codes into READ_STATUS, interactivity read,
        throughput [token/s; NaN where unreachable])."""
        targets = np.asarray(targets, dtype=float)
        lo, hi = self.interactivity[0], self.interactivity[-1]
        tol = _REL_TOL * hi
        below = targets < lo - tol
        above = targets > hi + tol
        x_read = np.clip(targets, lo, hi)
        if self._pchip is not None:
            y = self._pchip(x_read)
        else:
            y = np.full_like(targets, self.throughput[0])
        y = np.where(above, np.nan, y)
        x_read = np.where(above, np.nan, x_read)
        status = np.full(targets.shape, READ_STATUS.index("interpolated"), dtype=np.int8)
        # a target on a measured point is "exact": check the neighbours either side of it
        last = len(self.interactivity) - 1
        right = np.clip(np.searchsorted(self.interactivity, x_read), 0, last)
        left = np.clip(right - 1, 0, None)
        exact = (np.abs(self.interactivity[right] - x_read) <= tol) | \
            (np.abs(self.interactivity[left] - x_read) <= tol)
        status[exact] = READ_STATUS.index("exact")
        status[below] = READ_STATUS.index("clamped")
        status[above] = READ_STATUS.index("unreachable")
        return status, x_read, y

    def _power_at(self, x: float) -> float | None:
        ok = ~np.isnan(self.power)
        if not ok.any():
            return None
        return float(np.interp(x, self.interactivity[ok], self.power[ok]))


def pareto_indices(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the Pareto-optimal points (maximise both x and y), sorted by x ascending.

    Of points with equal x, only the highest y can be on the frontier; a point is kept only if
    its y is strictly above every point with a higher x.
    """
    order = np.lexsort((-y, -x))  # x descending, then y descending
    keep: list[int] = []
    best = -np.inf
    for i in order:
        if y[i] > best:
            keep.append(int(i))
            best = y[i]
    return np.array(keep[::-1], dtype=int)


def matched_interactivity(frontiers: list[Frontier]) -> float:
    """The interactivity every system reaches: the slowest system's best [token/s/user]."""
    return min(f.best_interactivity for f in frontiers)


SELECTIONS = ("peak", "interactivity", "tbt", "concurrency")


class Unreachable(LookupError):
    """A target interactivity above the frontier; carries the :class:`Reading`."""

    def __init__(self, reading: Reading, curve: Curve):
        self.reading = reading
        super().__init__(f"{reading.describe()} on curve {curve.key.id}")


@dataclass(frozen=True)
class Selection:
    """An operating point chosen on a curve, with everything the disclosure needs.

    Units: target as chosen (token/s/user, ms or requests); interactivity [token/s/user];
    throughput [token/s per accelerator]; ttft, e2e_latency [s]; power [W].
    """
    how: str
    target: float | None
    status: str  # exact | interpolated | clamped (reads), measured (peak, concurrency)
    interactivity: float | None
    throughput: float
    ttft: float | None
    e2e_latency: float | None
    power: float | None
    concurrency: float | None
    frontier_points: int
    description: str


def select(curve: Curve, how: str, target: float | None = None,
           kind: str = "mixed") -> Selection:
    """Choose an operating point: ``peak``; at an ``interactivity`` [token/s/user]; at a
    ``tbt`` [ms]; or at a measured ``concurrency``. Raises :class:`Unreachable` above the
    frontier and :class:`LookupError` for an unmeasured concurrency."""
    frontier = curve.frontier(kind) if not np.all(np.isnan(curve.interactivity)) else None
    n_frontier = len(frontier.interactivity) if frontier is not None else 0
    if how in ("peak", "concurrency"):
        if how == "peak":
            i = curve.peak_index(kind)
            text = f"peak {kind} throughput of curve {curve.key.id}"
        else:
            i = curve.concurrency_index(float(target), kind)
            text = f"the point measured at concurrency {target:g} on curve {curve.key.id}"
        return Selection(how, target, "measured", _opt(curve.interactivity[i]),
                         float(curve.throughput_of(kind)[i]), _opt(curve.ttft[i]),
                         _opt(curve.e2e_latency[i]), _opt(curve.power[i]),
                         _opt(curve.concurrency[i]), n_frontier, text)
    if how not in ("interactivity", "tbt"):
        raise ValueError(f"unknown selection {how!r} (known: {', '.join(SELECTIONS)})")
    if frontier is None:
        raise LookupError(f"curve {curve.key.id} has no interactivity data: choose peak or a "
                          f"concurrency")
    interactivity = target if how == "interactivity" else 1000.0 / target  # tbt in ms
    reading = frontier.read(interactivity)
    if reading.status == "unreachable":
        raise Unreachable(reading, curve)
    ttft = e2e = conc = None
    if reading.status in ("exact", "clamped"):  # a measured point: keep its latencies
        pos = int(np.argmin(np.abs(frontier.interactivity - reading.interactivity)))
        i = int(frontier.indices[pos])
        ttft, e2e, conc = _opt(curve.ttft[i]), _opt(curve.e2e_latency[i]), \
            _opt(curve.concurrency[i])
    asked = f" for a TBT of {target:.4g} ms" if how == "tbt" else ""
    text = (f"{kind} throughput of curve {curve.key.id}{asked}, {reading.describe()}, "
            f"{n_frontier} frontier points")
    return Selection(how, target, reading.status, reading.interactivity,
                     float(reading.throughput), ttft, e2e, reading.power, conc, n_frontier, text)


def _opt(v: float) -> float | None:
    return None if np.isnan(v) else float(v)
