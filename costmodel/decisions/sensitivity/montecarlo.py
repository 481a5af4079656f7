"""Monte Carlo: draw inputs from distributions, evaluate the output for every draw, and
summarise it.

Out-of-range policy: a distribution is refused up front when more than
:data:`OUTSIDE_TOLERANCE` (10^-6) of its probability lies outside the input's valid range (a
normal electricity price that can go negative, a uniform utilisation up to 1.2), with an
error naming the key and the share; ``truncate=True`` (``--truncate``) accepts it as the
truncated distribution instead. In every case a draw outside the valid range is never
evaluated: it is drawn again from the same distribution (rejection sampling), and the result
reports how many draws each input had redrawn. Counts cannot take a distribution.

Reproducibility: ``numpy.random.default_rng(seed)`` spawns one child stream per varied input,
in the order given, so the same seed, distributions (same order) and draws give the same
numbers, and the draws do not depend on the chunk size (unless draws were redrawn). Without
a seed one is chosen at random and reported. All outputs are kept (8 bytes per draw: 80 MB
for 10^7) so P10/P50/P90 are exact order statistics over every chunk (``numpy.percentile``,
linear interpolation).
"""
from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.inputs import Scenario
from ...model.results import quantity_json
from .base import DEFAULT_OUTPUT, Base
from .distributions import Distribution, distribution_from_text
from .inputs import SensitivityError, Var, var_for

__all__ = ["monte_carlo", "sample_inputs", "MonteCarlo", "CHUNK_SIZE", "MAX_DRAWS",
           "OUTSIDE_TOLERANCE"]

CHUNK_SIZE = 1_000_000  # draws evaluated per Evaluator call
MAX_DRAWS = 100_000_000  # 800 MB of kept outputs
OUTSIDE_TOLERANCE = 1e-6  # share of a distribution allowed outside the valid range untruncated
MIN_INSIDE = 0.01  # a truncated distribution must keep at least this share of its draws
MAX_REDRAW_ROUNDS = 1000


def _share(p: float) -> str:
    return f"{p:.3g}" if p < 1e-4 else f"{p:.2%}"


@dataclass(frozen=True)
class _Drawn:
    """One varied input, its distribution in the input's unit, and its random stream."""
    var: Var
    dist: Distribution  # parameters [var.unit]
    rng: np.random.Generator


class _Sampler:
    """Validated distributions with one random stream each; draws chunk after chunk."""

    def __init__(self, b: Base, distributions: Mapping[str, Distribution | str],
                 seed: int | None, truncate: bool):
        if not distributions:
            raise SensitivityError("--dist", "give at least one distribution")
        if seed is None:
            seed = secrets.randbits(32)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise SensitivityError("seed", f"must be a whole number >= 0, got {seed!r}")
        self.seed = int(seed)
        resolved: list[tuple[Var, Distribution]] = []
        seen: set[str] = set()
        for key, spec in distributions.items():
            var = var_for(key)
            if var.key in seen:
                raise SensitivityError(var.key, "given more than one distribution")
            seen.add(var.key)
            if var.count:
                raise SensitivityError(var.key, "is a whole-number count; a continuous "
                                                "distribution cannot vary it (use a grid)")
            b.check_live(var)
            resolved.append((var, self._checked(var, spec, truncate)))
        rngs = np.random.default_rng(self.seed).spawn(len(resolved))
        self.items = [_Drawn(var, dist, rng) for (var, dist), rng in zip(resolved, rngs,
                                                                          strict=True)]
        self.redrawn = {d.var.key: 0 for d in self.items}

    @staticmethod
    def _checked(var: Var, spec: Distribution | str, truncate: bool) -> Distribution:
        """``spec`` in ``var``'s unit, refused if too much of it lies outside the range."""
        if isinstance(spec, str):
            spec = distribution_from_text(spec, var.key)
        if not isinstance(spec, Distribution):
            raise SensitivityError(var.key, f"expected a distribution, got {spec!r}")
        dist = spec.in_unit(var)
        share = dist.share_outside(var.lower, var.upper)
        if share > OUTSIDE_TOLERANCE and not truncate:
            raise SensitivityError(var.key, f"{spec} puts {_share(share)} of its draws "
                                            f"outside the valid range ({var.rules()}); "
                                            f"narrow it, or accept truncation "
                                            f"(--truncate), which draws them again")
        if 1 - share < MIN_INSIDE:
            raise SensitivityError(var.key, f"{spec} puts {_share(share)} of its draws "
                                            f"outside the valid range ({var.rules()}); "
                                            f"too little is left to truncate")
        return dist

    def draw(self, n: int) -> dict[str, np.ndarray]:
        """``n`` draws of every varied input [its unit], all inside the valid range."""
        out: dict[str, np.ndarray] = {}
        for d in self.items:
            x = d.dist.draw(d.rng, n)
            bad = np.flatnonzero(~d.var.valid(x))
            rounds = 0
            while bad.size:
                self.redrawn[d.var.key] += int(bad.size)
                rounds += 1
                if rounds > MAX_REDRAW_ROUNDS:
                    raise SensitivityError(d.var.key, f"{d.dist}: could not draw values "
                                                      f"inside the valid range "
                                                      f"({d.var.rules()})")
                x[bad] = d.dist.draw(d.rng, bad.size)
                bad = bad[~d.var.valid(x[bad])]
            out[d.var.name] = x
        return out


def _check_draws(draws: Any) -> int:
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) \
            or not 1 <= draws <= MAX_DRAWS:
        raise SensitivityError("draws", f"must be a whole number from 1 to {MAX_DRAWS:,}, "
                                        f"got {draws!r}")
    return int(draws)


def sample_inputs(scenario: Scenario, distributions: Mapping[str, Distribution | str], *,
                  draws: int, seed: int | None = None, truncate: bool = False,
                  output: str = DEFAULT_OUTPUT) -> tuple[dict[str, Any], dict[str, int]]:
    """The evaluator inputs of ``draws`` Monte Carlo draws in one batch (the base scenario
    with the varied inputs as arrays [canonical units]) and the redrawn count per key; the
    same draws :func:`monte_carlo` evaluates for this seed when it runs in one chunk."""
    b = Base(scenario, output)
    sampler = _Sampler(b, distributions, seed, truncate)
    return b.env(sampler.draw(_check_draws(draws))), dict(sampler.redrawn)


@dataclass(frozen=True)
class MonteCarlo:
    """Summary of the output over every draw [unit]; ``edges`` has ``len(counts) + 1``."""
    output: str
    unit: str
    base: float
    draws: int
    seed: int
    p10: float
    p50: float
    p90: float
    mean: float
    std: float
    min: float
    max: float
    edges: np.ndarray
    counts: np.ndarray
    redrawn: dict[str, int]  # per key: draws outside the valid range, drawn again
    nonfinite: int  # outputs that were not finite numbers (left out of the statistics)
    truncate: bool
    distributions: dict[str, dict[str, Any]]  # key -> {"kind", "text", parameters}

    def to_json(self) -> dict[str, Any]:
        q = quantity_json
        return {"output": self.output, "unit": self.unit,
                "p10": q(self.p10, self.unit), "p50": q(self.p50, self.unit),
                "p90": q(self.p90, self.unit), "mean": q(self.mean, self.unit),
                "std": q(self.std, self.unit), "min": q(self.min, self.unit),
                "max": q(self.max, self.unit), "base": q(self.base, self.unit),
                "draws": self.draws, "seed": self.seed, "truncate": self.truncate,
                "redrawn": dict(self.redrawn), "nonfinite": self.nonfinite,
                "distributions": self.distributions,
                "histogram": {"unit": self.unit, "edges": [float(e) for e in self.edges],
                              "counts": [int(c) for c in self.counts]}}


def monte_carlo(scenario: Scenario, distributions: Mapping[str, Distribution | str], *,
                draws: int = 1_000_000, seed: int | None = None,
                output: str = DEFAULT_OUTPUT, bins: int = 50, truncate: bool = False,
                chunk_size: int = CHUNK_SIZE,
                progress: Callable[[int, int], None] | None = None) -> MonteCarlo:
    """Draw the inputs in ``distributions`` (key -> :class:`Distribution` or its text, e.g.
    ``"uniform(0.05 USD/kWh, 0.15 USD/kWh)"``), evaluate the output for every draw and
    summarise: P10/P50/P90, mean, std, min, max and a ``bins``-bin histogram [output unit].

    Evaluated in chunks of ``chunk_size`` draws, one evaluator call each; ``progress(done,
    total)`` is called after every chunk. See the module docstring for the out-of-range
    policy (``truncate``) and reproducibility (``seed``).
    """
    draws = _check_draws(draws)
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= 10_000:
        raise SensitivityError("bins", f"must be a whole number from 1 to 10,000, got {bins!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise SensitivityError("chunk_size", f"must be a whole number >= 1, got {chunk_size!r}")
    b = Base(scenario, output)
    sampler = _Sampler(b, distributions, seed, truncate)
    outputs = np.empty(draws)
    done = 0
    while done < draws:
        n = min(chunk_size, draws - done)
        outputs[done:done + n] = b.evaluate(sampler.draw(n), n)
        done += n
        if progress is not None:
            progress(done, draws)
    finite = np.isfinite(outputs)
    nonfinite = int(draws - np.count_nonzero(finite))
    values = outputs if nonfinite == 0 else outputs[finite]
    if values.size == 0:
        raise SensitivityError("output", f"{b.output} has no value for any draw in this "
                                         f"scenario (an input it needs is absent)")
    p10, p50, p90 = np.percentile(values, [10, 50, 90])
    counts, edges = np.histogram(values, bins=bins)
    return MonteCarlo(b.output, b.unit, b.value, draws, sampler.seed, float(p10), float(p50),
                      float(p90), float(values.mean()), float(values.std()),
                      float(values.min()), float(values.max()), edges, counts,
                      dict(sampler.redrawn), nonfinite, bool(truncate),
                      {d.var.key: d.dist.to_json(d.var.unit) for d in sampler.items})
