"""Measured accelerator power: a sampled trace, its energy over a run window, J/token.

Times are in seconds [s], power in watts [W], energy in joules [J]. A trace holds, for each
GPU, its sample times and power readings; a missing reading (nvidia-smi's ``[N/A]``) is NaN,
a gap, never a zero. :func:`integrate` applies the trapezoid rule per GPU over the run window
and returns an :class:`EnergyReport` whose every number sits next to a validity verdict:
a trace with a sampling gap, a window it does not cover, or too few samples is ``invalid``
with reasons, and :meth:`EnergyReport.require_valid` turns that into an error.

The method follows InferenceX's ``utils/aggregate_power.py`` (per-device trapezoidal
integration with linear interpolation at the window boundaries, 3 s default gap limit), so
energy from a trace and InferenceX's published ``joules_per_*`` columns mean the same thing.
One difference: InferenceX wants a sample on both sides of each window edge; here an edge
up to ``max_gap`` from a GPU's nearest sample is accepted and filled with that sample's
value, because the default window (the trace's span) starts at the earliest GPU's first
sample and the others' follow a few milliseconds later.

No file I/O here: the readers live in :mod:`costmodel.sources.power_log`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DEFAULT_MAX_GAP", "GpuSamples", "PowerTrace", "Gap", "GpuEnergy", "EnergyReport",
           "TokenEnergy", "integrate", "joules_per_token"]

DEFAULT_MAX_GAP = 3.0  # [s]; InferenceX's limit for 1 s sampling


def _gpu_sort_key(gpu: str) -> tuple[int, int | str]:
    # GPU "10" after "9", not after "1".
    return (0, int(gpu)) if gpu.isdigit() else (1, gpu)


def _frozen(values, name: str, gpu: str) -> np.ndarray:
    array = np.array(values, dtype=float)  # a copy: the trace must not change under us
    if array.ndim != 1:
        raise ValueError(f"GPU {gpu}: {name} must be a 1-D sequence")
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class GpuSamples:
    """The samples of one GPU: ``times`` [s] strictly increasing, ``power`` [W] (NaN: missing)."""
    gpu: str
    times: np.ndarray
    power: np.ndarray

    def __post_init__(self):
        times = _frozen(self.times, "times", self.gpu)
        power = _frozen(self.power, "power", self.gpu)
        if times.shape != power.shape:
            raise ValueError(f"GPU {self.gpu}: {times.size} times but {power.size} power values")
        if not np.all(np.isfinite(times)):
            raise ValueError(f"GPU {self.gpu}: sample times must be finite")
        if np.any(np.diff(times) <= 0):
            raise ValueError(f"GPU {self.gpu}: sample times must be strictly increasing")
        if np.any(np.isinf(power)) or np.any(power < 0):
            raise ValueError(f"GPU {self.gpu}: power must be finite and not negative "
                             "(NaN marks a missing sample)")
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "power", power)

    @property
    def valid(self) -> np.ndarray:
        """Mask of the samples that carry a reading."""
        return ~np.isnan(self.power)


@dataclass(frozen=True)
class PowerTrace:
    """Per-GPU power samples from one run.

    ``source`` names where the samples came from (a file, for messages); ``clock`` says what
    the time axis is (POSIX seconds, or seconds from the first sample at a given period);
    ``warnings`` records what a reader forgave (a truncated last line, say).
    """
    gpus: tuple[GpuSamples, ...]
    source: str = ""
    clock: str = ""
    warnings: tuple[str, ...] = ()

    def __post_init__(self):
        gpus = tuple(sorted(self.gpus, key=lambda s: _gpu_sort_key(s.gpu)))
        if not gpus:
            raise ValueError("a power trace needs at least one GPU")
        names = [s.gpu for s in gpus]
        if len(set(names)) != len(names):
            raise ValueError(f"GPU names repeat: {names}")
        if any(s.times.size == 0 for s in gpus):
            raise ValueError("every GPU of a trace needs at least one sample")
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @classmethod
    def from_arrays(cls, series: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
                    source: str = "", clock: str = "",
                    warnings: Sequence[str] = ()) -> PowerTrace:
        """Build a trace from ``{gpu: (times [s], power [W])}``."""
        return cls(tuple(GpuSamples(str(g), t, p) for g, (t, p) in series.items()),
                   source=source, clock=clock, warnings=tuple(warnings))

    @property
    def gpu_ids(self) -> tuple[str, ...]:
        return tuple(s.gpu for s in self.gpus)

    @property
    def span(self) -> tuple[float, float]:
        """First and last sample time over all GPUs [s], missing samples included."""
        return (min(float(s.times[0]) for s in self.gpus),
                max(float(s.times[-1]) for s in self.gpus))


@dataclass(frozen=True)
class Gap:
    """Consecutive valid samples further apart than the limit; ``missing`` readings between."""
    start: float  # [s], on the trace's clock
    end: float  # [s]
    missing: int = 0

    @property
    def length(self) -> float:
        """[s]"""
        return self.end - self.start


class _Verdict:
    """``valid`` and ``verdict`` from a ``reasons`` tuple (empty: valid)."""
    reasons: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def verdict(self) -> str:
        return "valid" if self.valid else "invalid"


@dataclass(frozen=True)
class GpuEnergy(_Verdict):
    """One GPU over the window. Numbers are NaN when nothing could be computed."""
    gpu: str
    energy: float  # [J]
    duration: float  # [s]
    average_power: float  # [W] = energy / duration
    peak_power: float  # [W], highest reading in the window (boundary values included)
    samples: int  # valid samples used: those in the window and the two bracketing it
    missing: int  # missing readings inside the window
    gaps: tuple[Gap, ...]
    reasons: tuple[str, ...]  # why it is invalid; empty when valid



@dataclass(frozen=True)
class EnergyReport:
    """Energy of a trace over a window [start, end] [s], per GPU and in total, with a verdict."""
    gpus: tuple[GpuEnergy, ...]
    start: float  # [s]
    end: float  # [s]
    max_gap: float  # [s]
    source: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def duration(self) -> float:
        """[s]"""
        return self.end - self.start

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(r for g in self.gpus for r in g.reasons)

    @property
    def valid(self) -> bool:
        return bool(self.gpus) and all(g.valid for g in self.gpus)

    @property
    def verdict(self) -> str:
        return "valid" if self.valid else "invalid"

    @property
    def total_energy(self) -> float:
        """Energy summed over GPUs [J]."""
        return float(sum(g.energy for g in self.gpus))

    @property
    def total_average_power(self) -> float:
        """All GPUs together [W] = total energy / duration."""
        return self.total_energy / self.duration

    @property
    def mean_average_power(self) -> float:
        """Average power per GPU [W], InferenceX's ``avg_power_w``."""
        return self.total_average_power / len(self.gpus)

    @property
    def peak_power(self) -> float:
        """Highest single-GPU reading in the window [W]."""
        peaks = [g.peak_power for g in self.gpus]
        return float("nan") if all(math.isnan(p) for p in peaks) else float(np.nanmax(peaks))

    def require_valid(self) -> EnergyReport:
        """Return self if valid; otherwise raise ValueError listing the reasons."""
        if not self.valid:
            where = f" ({self.source})" if self.source else ""
            raise ValueError(f"power trace{where} is invalid: " + "; ".join(self.reasons))
        return self

    def as_dict(self) -> dict:
        """Plain data for JSON, the verdict beside the numbers, units in the keys.

        A number that could not be computed is None (JSON null), not NaN.
        """
        return {
            "source": self.source, "verdict": self.verdict, "reasons": list(self.reasons),
            "warnings": list(self.warnings), "window_s": [self.start, self.end],
            "duration_s": self.duration, "max_gap_s": self.max_gap,
            "total_energy_j": _num(self.total_energy),
            "total_average_power_w": _num(self.total_average_power),
            "mean_average_power_w": _num(self.mean_average_power),
            "peak_power_w": _num(self.peak_power),
            "gpus": [{"gpu": g.gpu, "verdict": g.verdict, "reasons": list(g.reasons),
                      "energy_j": _num(g.energy), "average_power_w": _num(g.average_power),
                      "peak_power_w": _num(g.peak_power), "samples": g.samples,
                      "missing": g.missing,
                      "gaps": [{"start_s": x.start, "end_s": x.end, "length_s": x.length,
                                "missing": x.missing} for x in g.gaps]}
                     for g in self.gpus],
        }


def _num(x: float) -> float | None:
    return None if math.isnan(x) else x


def _s(x: float) -> str:
    return f"{x:.3g} s" if abs(x) < 100 else f"{x:.1f} s"


def _integrate_gpu(s: GpuSamples, start: float, end: float, max_gap: float) -> GpuEnergy:
    nan = float("nan")
    duration = end - start
    valid = s.valid
    t, w = s.times[valid], s.power[valid]
    missing = int(np.count_nonzero(~valid & (s.times >= start) & (s.times <= end)))
    name = f"GPU {s.gpu}"
    if t.size == 0:
        return GpuEnergy(s.gpu, nan, duration, nan, nan, 0, missing, (),
                         (f"{name}: no valid sample",))

    # The samples that matter: those inside the window and the neighbour on each side.
    lo = max(int(np.searchsorted(t, start, side="right")) - 1, 0)
    hi = min(int(np.searchsorted(t, end, side="left")), t.size - 1)
    used_t, used_w = t[lo:hi + 1], w[lo:hi + 1]

    # Boundary values interpolate linearly between the bracketing samples; where the first
    # (last) sample lies inside the window np.interp holds its value to the edge, and the
    # coverage check below decides whether that edge is short enough to trust.
    inner = (used_t > start) & (used_t < end)
    pts_t = np.concatenate(([start], used_t[inner], [end]))
    pts_w = np.concatenate(([np.interp(start, t, w)], used_w[inner], [np.interp(end, t, w)]))
    energy = float(np.sum(np.diff(pts_t) * (pts_w[1:] + pts_w[:-1]) / 2.0))

    reasons: list[str] = []
    if used_t.size < 2:
        reasons.append(f"{name}: only {used_t.size} valid sample in the window "
                       "(at least 2 needed)")
    lead, tail = float(used_t[0]) - start, end - float(used_t[-1])
    if lead > max_gap:
        reasons.append(f"{name}: first valid sample {_s(lead)} after the window start "
                       f"(limit {_s(max_gap)})")
    if tail > max_gap:
        reasons.append(f"{name}: last valid sample {_s(tail)} before the window end "
                       f"(limit {_s(max_gap)})")
    gaps = []
    for i in np.flatnonzero(np.diff(used_t) > max_gap):
        a, b = used_t[i], used_t[i + 1]
        n_missing = int(np.count_nonzero(~valid & (s.times > a) & (s.times < b)))
        gaps.append(Gap(float(a), float(b), n_missing))
    for g in gaps:
        why = f", {g.missing} readings missing" if g.missing else ""
        reasons.append(f"{name}: no valid sample for {_s(g.length)} "
                       f"(from {_s(g.start - start)} to {_s(g.end - start)} into the window"
                       f"{why}; limit {_s(max_gap)})")
    return GpuEnergy(s.gpu, energy, duration, energy / duration, float(np.max(pts_w)),
                     int(used_t.size), missing, tuple(gaps), tuple(reasons))


def integrate(trace: PowerTrace, *, start: float | None = None, end: float | None = None,
              max_gap: float = DEFAULT_MAX_GAP) -> EnergyReport:
    """Energy of each GPU over the run window [start, end] [s] by the trapezoid rule.

    ``start``/``end`` are on the trace's clock (see :attr:`PowerTrace.clock`) and default to
    the trace's span. Samples outside the window are clipped, the boundary values
    interpolated linearly from the samples on either side. Missing readings are skipped:
    the trapezoid spans them, and the gap they leave is checked against ``max_gap`` [s].

    A GPU is ``valid`` only if no interval between consecutive valid samples in the window
    is longer than ``max_gap``, its first valid sample is within ``max_gap`` of ``start``
    and its last within ``max_gap`` of ``end`` (the uncovered edge is filled with that
    sample's value), and at least 2 valid samples are used. The report is valid only if
    every GPU is. Invalid results keep their numbers, each next to the verdict.
    """
    lo, hi = trace.span
    start = lo if start is None else float(start)
    end = hi if end is None else float(end)
    if not (math.isfinite(start) and math.isfinite(end)) or end <= start:
        raise ValueError(f"the window must have end > start, got [{start:g}, {end:g}] s")
    if not (math.isfinite(max_gap) and max_gap > 0):
        raise ValueError(f"max_gap must be a positive number of seconds, got {max_gap!r}")
    return EnergyReport(tuple(_integrate_gpu(s, start, end, max_gap) for s in trace.gpus),
                        start, end, float(max_gap), trace.source, trace.warnings)


@dataclass(frozen=True)
class TokenEnergy(_Verdict):
    """Joules per token [J/token]; None where no count was given. Carries the trace verdict."""
    energy: float  # [J], all GPUs
    total: float | None
    input: float | None
    output: float | None
    reasons: tuple[str, ...] = field(default=())



def _count(value, name: str) -> float | None:
    if value is None:
        return None
    # bool is an int in Python; True tokens is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number of tokens, got {value!r}")
    return float(value)


def joules_per_token(report: EnergyReport, *, total_tokens: float | None = None,
                     input_tokens: float | None = None,
                     output_tokens: float | None = None) -> TokenEnergy:
    """Energy per token [J/token] from a report's total energy [J] and token counts [token].

    Each figure divides the *whole* energy by one count, as InferenceX does
    (``utils/aggregate_power.py``): input = E / N_in, output = E / N_out and
    total = E / (N_in + N_out). They are not a split of the energy between prefill and
    decode; each charges all of it to one kind of token. Given input and output counts but
    no total, the total count is N_in + N_out. So 1/total = 1/input + 1/output: on all 37
    rows of InferenceX's ``powerx.csv`` export this holds within the 6-decimal rounding. And
    output/input = N_in/N_out, which for ISL/OSL 8192/1024 is 7.90 to 8.03 there rather than
    exactly 8, because measured lengths differ from nominal ones (about 7,375 input and 922
    output tokens per query on average, from ``joules_per_successful_query``). InferenceX's
    throughput per GPU follows as ``avg_power_w / joules_per_total_token`` [token/s/GPU].
    """
    n_in = _count(input_tokens, "input_tokens")
    n_out = _count(output_tokens, "output_tokens")
    n_total = _count(total_tokens, "total_tokens")
    if n_total is None and n_in is not None and n_out is not None:
        n_total = n_in + n_out
    if n_total is None and n_in is None and n_out is None:
        raise ValueError("give at least one token count (total, input or output)")
    energy = report.total_energy

    def per(n: float | None) -> float | None:
        return None if n is None else energy / n
    return TokenEnergy(energy, per(n_total), per(n_in), per(n_out), report.reasons)
