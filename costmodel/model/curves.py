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

Interactivity, TTFT and E2E latency are medians over a run's requests. A curve may also carry
other statistics of its latencies (mean, p90, p99; and TPOT, ITL): a read can take its
frontier on another percentile of interactivity, and a TTFT ceiling at a percentile removes
the points above it before the frontier is built (:func:`select`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from scipy.interpolate import PchipInterpolator

__all__ = ["CurveKey", "Curve", "Frontier", "Reading", "Selection", "Unreachable", "select",
           "READ_STATUS", "SELECTIONS", "matched_interactivity", "PERCENTILES",
           "LATENCY_METRICS", "LATENCY_COLUMNS", "TtftCeiling", "AboveCeiling"]

READ_STATUS = ("exact", "interpolated", "clamped", "unreachable")
_REL_TOL = 1e-9  # a target this close to a measured interactivity counts as that point

# Statistics of a run's per-request latencies a curve can keep; "median" is the default of
# every read, and the median interactivity, TTFT and E2E latency are the curve's own arrays.
PERCENTILES = ("median", "mean", "p90", "p99")
# latency metric -> canonical unit (interactivity = 1 / TPOT; ITL: inter-token latency)
LATENCY_METRICS = {"interactivity": "token/s/user", "ttft": "s", "e2e_latency": "s",
                   "tpot": "s", "itl": "s"}
_OWN_MEDIANS = ("interactivity", "ttft", "e2e_latency")
# the other statistics, kept in Curve.latency under these names (``ttft_p90``, ``tpot_median``)
LATENCY_COLUMNS = tuple(f"{m}_{p}" for m in LATENCY_METRICS for p in PERCENTILES
                        if not (m in _OWN_MEDIANS and p == "median"))
_ARRAYS = ("interactivity", "throughput", "output_throughput", "input_throughput",
           "concurrency", "ttft", "e2e_latency", "power")


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
    # GPUs of one deployment: prefill and decode for a disaggregated one; both count the
    # whole deployment for one that is not (InferenceX's num_prefill_gpu, num_decode_gpu)
    prefill_gpus: int | None = None
    decode_gpus: int | None = None

    @property
    def id(self) -> str:
        """A stable, readable identifier, e.g. ``mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg``;
        with GPU counts a last part ``8gpu`` (both counts equal) or ``p8-d16``."""
        seq = "x".join(str(v) for v in (self.isl, self.osl)) if self.isl or self.osl else "-"
        disagg = {True: "disagg", False: "agg", None: "-"}[self.disaggregated]
        parts = [self.hardware, self.model, self.framework or "-", self.precision or "-", seq,
                 self.spec_decoding or "-", disagg]
        if self.prefill_gpus is not None and self.decode_gpus is not None:
            parts.append(f"{self.decode_gpus}gpu" if self.prefill_gpus == self.decode_gpus
                         and not self.disaggregated
                         else f"p{self.prefill_gpus}-d{self.decode_gpus}")
        return "/".join(str(p).replace("/", "_") for p in parts)

    @property
    def deployment_gpus(self) -> int | None:
        """GPUs of one deployment: prefill + decode when disaggregated, else either count."""
        if self.prefill_gpus is None or self.decode_gpus is None:
            return None
        return self.prefill_gpus + self.decode_gpus if self.disaggregated else self.decode_gpus


@dataclass
class Curve:
    """Measured points of one sweep; arrays share one length, NaN where not measured.

    Units: interactivity [token/s/user]; throughput, output_throughput, input_throughput
    [token/s per accelerator]; ttft, e2e_latency [s]; power [W per accelerator, measured];
    concurrency [requests in flight]. Interactivity, ttft and e2e_latency are medians;
    ``latency`` holds the other statistics measured (names in :data:`LATENCY_COLUMNS`, e.g.
    ``interactivity_p90`` [token/s/user], ``ttft_p90`` [s], ``tpot_median`` [s]).
    ``point_sources`` and ``point_notes`` are each point's own (``source`` sums them up).
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
    latency: dict[str, np.ndarray] = field(default_factory=dict)
    point_sources: list[str] = field(default_factory=list)
    point_notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.throughput)
        unknown = sorted(set(self.latency) - set(LATENCY_COLUMNS))
        if unknown:
            raise ValueError(f"unknown latency column {unknown[0]!r}")
        if len(self.point_sources) != n:
            self.point_sources = [self.source] * n
        if len(self.point_notes) != n:
            self.point_notes = [""] * n

    @classmethod
    def from_points(cls, key: CurveKey, points: list[dict], source: str = "") -> Curve:
        """Build from dicts with any of the array names above or of :data:`LATENCY_COLUMNS`
        (missing -> NaN), and optionally a point's own ``source`` and ``note``."""
        arrays = {n: np.array([_num(p.get(n)) for p in points], dtype=float) for n in _ARRAYS}
        latency = {c: np.array([_num(p.get(c)) for p in points], dtype=float)
                   for c in LATENCY_COLUMNS if any(p.get(c) is not None for p in points)}
        sources = [str(p.get("source") or source) for p in points]
        notes = [str(p.get("note") or "") for p in points]
        return cls(key, source=source or _sum_up(sources), latency=latency,
                   point_sources=sources, point_notes=notes, **arrays)

    def __len__(self) -> int:
        return len(self.throughput)

    def merged(self, other: Curve) -> Curve:
        """This curve with another sweep's points of the same key appended."""
        if other.key != self.key:
            raise ValueError(f"cannot merge curve {other.key.id} into {self.key.id}")
        arrays = {n: np.concatenate([getattr(self, n), getattr(other, n)]) for n in _ARRAYS}
        latency = {c: np.concatenate([self.column_named(c), other.column_named(c)])
                   for c in LATENCY_COLUMNS if c in self.latency or c in other.latency}
        sources = self.point_sources + other.point_sources
        return replace(self, source=_sum_up(sources), notes=self.notes + other.notes,
                       latency=latency, point_sources=sources,
                       point_notes=self.point_notes + other.point_notes, **arrays)

    def column_named(self, name: str) -> np.ndarray:
        """A latency statistic by its column name (all NaN where not measured)."""
        if name in _OWN_MEDIANS:
            return getattr(self, name)
        if name not in LATENCY_COLUMNS:
            raise ValueError(f"unknown latency column {name!r}")
        found = self.latency.get(name)
        return found if found is not None else np.full(len(self), np.nan)

    def column(self, metric: str, percentile: str = "median") -> np.ndarray:
        """``metric`` (a key of :data:`LATENCY_METRICS`) at ``percentile`` (of
        :data:`PERCENTILES`), in its canonical unit."""
        if percentile not in PERCENTILES:
            raise ValueError(f"unknown percentile {percentile!r} (known: "
                             f"{', '.join(PERCENTILES)})")
        if metric not in LATENCY_METRICS:
            raise ValueError(f"unknown latency metric {metric!r}")
        return self.column_named(metric if metric in _OWN_MEDIANS and percentile == "median"
                                 else f"{metric}_{percentile}")

    def throughput_of(self, kind: str) -> np.ndarray:
        """Throughput per accelerator counting ``kind`` tokens (mixed = input + output)."""
        return {"mixed": self.throughput, "output": self.output_throughput,
                "input": self.input_throughput}[kind]

    def frontier(self, kind: str = "mixed", percentile: str = "median",
                 ttft_max: TtftCeiling | None = None) -> Frontier:
        """The Pareto frontier on ``percentile`` interactivity, of the points within
        ``ttft_max`` (all when None)."""
        keep = None if ttft_max is None else ttft_max.within(self)
        return Frontier.of(self, kind, percentile, keep)

    def peak_index(self, kind: str = "mixed", keep: np.ndarray | None = None) -> int:
        t = self.throughput_of(kind)
        if np.all(np.isnan(t)):
            raise ValueError(f"curve {self.key.id} has no {kind} throughput")
        if keep is not None:
            t = np.where(keep, t, np.nan)
            if np.all(np.isnan(t)):
                raise AboveCeiling(f"no point of curve {self.key.id} within the TTFT ceiling "
                                   f"has {kind} throughput")
        return int(np.nanargmax(t))

    def concurrency_index(self, concurrency: float, kind: str = "mixed",
                          keep: np.ndarray | None = None) -> int:
        """The point measured at ``concurrency`` (the best one if measured twice), of the
        points in ``keep`` when given (:class:`AboveCeiling` when none of them is)."""
        hits = np.flatnonzero(self.concurrency == concurrency)
        if hits.size == 0:
            known = ", ".join(f"{c:g}" for c in sorted(set(self.concurrency[
                ~np.isnan(self.concurrency)])))
            raise LookupError(f"no point at concurrency {concurrency:g} on curve "
                              f"{self.key.id} (measured: {known or 'none'})")
        if keep is not None:
            inside = hits[keep[hits]]
            if inside.size == 0:
                raise AboveCeiling(f"the point measured at concurrency {concurrency:g} on "
                                   f"curve {self.key.id} is above the TTFT ceiling")
            hits = inside
        t = self.throughput_of(kind)[hits]
        return int(hits[np.nanargmax(t)] if not np.all(np.isnan(t)) else hits[0])


def _sum_up(sources: list[str], most: int = 3) -> str:
    """One text for many points' sources: the distinct ones, at most ``most`` of them named."""
    distinct = list(dict.fromkeys(s for s in sources if s))
    if len(distinct) <= most:
        return "; ".join(distinct)
    return (f"{'; '.join(distinct[:most - 1])}; and {len(distinct) - most + 1:,} more "
            f"sources (each point keeps its own)")


class AboveCeiling(LookupError):
    """No point (of those asked for) is within a TTFT ceiling, or the ceiling's percentile
    was not measured."""


@dataclass(frozen=True)
class TtftCeiling:
    """Points whose TTFT at ``percentile`` is above ``value`` [s] leave the curve before a
    point is chosen; points whose TTFT at that percentile was not measured leave too."""
    value: float
    percentile: str = "median"

    def __post_init__(self) -> None:
        if self.percentile not in PERCENTILES:
            raise ValueError(f"unknown percentile {self.percentile!r} (known: "
                             f"{', '.join(PERCENTILES)})")

    def describe(self) -> str:
        return f"{self.percentile} TTFT at most {self.value:.4g} s"

    def within(self, curve: Curve) -> np.ndarray:
        """Which points of ``curve`` meet the ceiling; :class:`AboveCeiling` if none does."""
        ttft = curve.column("ttft", self.percentile)
        measured = ~np.isnan(ttft)
        if not measured.any():
            raise AboveCeiling(f"curve {curve.key.id} has no {self.percentile} TTFT: the "
                               f"ceiling ({self.describe()}) cannot be checked")
        keep = measured & (np.where(measured, ttft, np.inf) <= self.value * (1 + _REL_TOL))
        if not keep.any():
            raise AboveCeiling(f"no point of curve {curve.key.id} has {self.describe()} (the "
                               f"lowest {self.percentile} TTFT is {np.nanmin(ttft):.4g} s)")
        return keep


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
    def of(cls, curve: Curve, kind: str = "mixed", percentile: str = "median",
           keep: np.ndarray | None = None) -> Frontier:
        """The frontier on ``percentile`` interactivity, of the points in ``keep`` (a mask;
        all points when None)."""
        x, y = curve.column("interactivity", percentile), curve.throughput_of(kind)
        mask = ~np.isnan(x) & ~np.isnan(y) & (np.nan_to_num(x) > 0) & (np.nan_to_num(y) > 0)
        if keep is not None:
            mask &= keep
        ok = np.flatnonzero(mask)
        if ok.size == 0:
            which = "" if percentile == "median" else f" ({percentile})"
            kept = "" if keep is None else " within the TTFT ceiling"
            raise ValueError(f"curve {curve.key.id} has no point{kept} with both "
                             f"interactivity{which} and {kind} throughput")
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
        # imported here: a process that reads no curve is spared scipy's 0.3 s
        from scipy.interpolate import PchipInterpolator
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

    def __init__(self, reading: Reading, curve: Curve, context: str = ""):
        self.reading = reading
        super().__init__(f"{reading.describe()} on curve {curve.key.id}{context}")


@dataclass(frozen=True)
class Selection:
    """An operating point chosen on a curve, with everything the disclosure needs.

    Units: target as chosen (token/s/user, ms or requests); interactivity [token/s/user, at
    ``percentile`` for reads, the median for peak and concurrency]; throughput [token/s per
    accelerator]; ttft, e2e_latency [s, medians]; power [W]. ``points`` are the positions in
    the curve of the measured points the value rests on (one, or the two either side of an
    interpolated read).
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
    percentile: str = "median"
    ttft_max: TtftCeiling | None = None
    points: tuple[int, ...] = ()


def select(curve: Curve, how: str, target: float | None = None, kind: str = "mixed", *,
           percentile: str = "median", ttft_max: TtftCeiling | None = None) -> Selection:
    """Choose an operating point: ``peak``; at an ``interactivity`` [token/s/user]; at a
    ``tbt`` [ms]; or at a measured ``concurrency``. Reads take the frontier on ``percentile``
    interactivity (a TBT at that percentile is 1,000 / it); with ``ttft_max`` the points above
    the ceiling leave the curve first (peak and concurrency choose among the others too).
    Raises :class:`Unreachable` above the frontier, :class:`AboveCeiling` when the ceiling
    leaves nothing to choose, and :class:`LookupError` for an unmeasured concurrency or
    percentile."""
    if percentile not in PERCENTILES:
        raise ValueError(f"unknown percentile {percentile!r} (known: {', '.join(PERCENTILES)})")
    keep = None if ttft_max is None else ttft_max.within(curve)
    ceiling = "" if ttft_max is None else (
        f"; {len(curve) - int(keep.sum())} of {len(curve)} points left out by the ceiling "
        f"{ttft_max.describe()}")
    x = curve.column("interactivity", percentile)
    measured_x = ~np.isnan(x) if keep is None else ~np.isnan(x) & keep
    frontier = curve.frontier(kind, percentile, ttft_max) if measured_x.any() else None
    n_frontier = len(frontier.interactivity) if frontier is not None else 0
    if how in ("peak", "concurrency"):
        if how == "peak":
            i = curve.peak_index(kind, keep)
            text = f"peak {kind} throughput of curve {curve.key.id}{ceiling}"
        else:
            i = curve.concurrency_index(float(target), kind, keep)
            text = (f"the point measured at concurrency {target:g} on curve {curve.key.id}"
                    f"{ceiling}")
        return Selection(how, target, "measured", _opt(curve.interactivity[i]),
                         float(curve.throughput_of(kind)[i]), _opt(curve.ttft[i]),
                         _opt(curve.e2e_latency[i]), _opt(curve.power[i]),
                         _opt(curve.concurrency[i]), n_frontier, text, "median", ttft_max,
                         (i,))
    if how not in ("interactivity", "tbt"):
        raise ValueError(f"unknown selection {how!r} (known: {', '.join(SELECTIONS)})")
    if frontier is None:
        if keep is not None and not np.all(np.isnan(x)):
            raise AboveCeiling(f"no point of curve {curve.key.id} within the ceiling "
                               f"{ttft_max.describe()} has a {percentile} interactivity")
        if percentile != "median" and np.all(np.isnan(x)):
            raise LookupError(f"curve {curve.key.id} has no {percentile} interactivity: read "
                              f"it at the median, at peak or at a concurrency")
        raise LookupError(f"curve {curve.key.id} has no interactivity data: choose peak or a "
                          f"concurrency")
    interactivity = target if how == "interactivity" else 1000.0 / target  # tbt in ms
    reading = frontier.read(interactivity)
    column = f"{percentile} interactivity"
    if reading.status == "unreachable":
        raise Unreachable(reading, curve, "" if percentile == "median" and ttft_max is None
                          else f" ({column}{ceiling})")
    ttft = e2e = conc = None
    if reading.status in ("exact", "clamped"):  # a measured point: keep its latencies
        pos = int(np.argmin(np.abs(frontier.interactivity - reading.interactivity)))
        i = int(frontier.indices[pos])
        ttft, e2e, conc = _opt(curve.ttft[i]), _opt(curve.e2e_latency[i]), \
            _opt(curve.concurrency[i])
        points: tuple[int, ...] = (i,)
    else:
        right = int(np.searchsorted(frontier.interactivity, reading.interactivity))
        points = (int(frontier.indices[right - 1]), int(frontier.indices[right]))
    asked = f" for a {percentile} TBT of {target:.4g} ms" if how == "tbt" else ""
    text = (f"{kind} throughput of curve {curve.key.id}{asked}, {reading.describe()} on the "
            f"{column}, {n_frontier} frontier points{ceiling}")
    return Selection(how, target, reading.status, reading.interactivity,
                     float(reading.throughput), ttft, e2e, reading.power, conc, n_frontier, text,
                     percentile, ttft_max, points)


def _opt(v: float) -> float | None:
    return None if np.isnan(v) else float(v)
