"""Sensitivity use cases: tornado, grid and Monte Carlo on one scenario, and their workbook.

The analyses themselves are the core's (:mod:`costmodel.decisions.sensitivity`); here a spec is
loaded
and priced once, the analysis runs on its validated scenario, and the result carries the
priced scenario so a face can also write the workbook with a Sensitivity sheet.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..decisions import sensitivity as core
from .caps import MAX_DRAWS, check_count
from .context import Context
from .pricing import Priced, WorkbookFile, price, render_workbook
from .specs import ScenarioSpec

__all__ = ["Analysis", "tornado", "grid", "monte_carlo", "analysis_workbook"]


@dataclass(frozen=True)
class Analysis:
    """A sensitivity result (Tornado, Grid or MonteCarlo) and the scenario it ran on."""
    priced: Priced
    result: Any

    @property
    def scenario_name(self) -> str:
        return self.priced.result.name

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario_name, **self.result.to_json()}


def _run(ctx: Context, spec: ScenarioSpec, run: Callable[[Any], Any]) -> Analysis:
    priced = price(ctx, spec)
    return Analysis(priced, run(priced.result.scenario))


def tornado(ctx: Context, spec: ScenarioSpec, *, output: str = core.DEFAULT_OUTPUT,
            swing: float = 0.2, inputs: Sequence[str] | None = None,
            ranges: Mapping[str, Any] | None = None) -> Analysis:
    """Each input moved alone (base -/+ ``swing``, or across its range), ranked by swing."""
    return _run(ctx, spec, lambda s: core.tornado(s, inputs=inputs, ranges=dict(ranges or {}),
                                                  output=output, default_swing=swing))


def grid(ctx: Context, spec: ScenarioSpec, x: Any, y: Any, *,
         output: str = core.DEFAULT_OUTPUT) -> Analysis:
    """The output over every pair of values of two inputs."""
    return _run(ctx, spec, lambda s: core.grid(s, x, y, output=output))


def monte_carlo(ctx: Context, spec: ScenarioSpec, distributions: Mapping[str, Any], *,
                draws: int, seed: int | None = None, output: str = core.DEFAULT_OUTPUT,
                bins: int = 50, truncate: bool = False,
                progress: Callable[[int, int], None] | None = None) -> Analysis:
    """P10/P50/P90, mean and histogram of the output with inputs drawn from
    ``distributions``."""
    check_count(ctx, draws, MAX_DRAWS, "draws", "draws")
    kwargs = {"progress": progress} if progress is not None else {}
    return _run(ctx, spec, lambda s: core.monte_carlo(
        s, dict(distributions), draws=draws, seed=seed, output=output, bins=bins,
        truncate=truncate, **kwargs))


def analysis_workbook(analysis: Analysis) -> WorkbookFile:
    """The scenario's workbook with a Sensitivity sheet holding the analysis."""
    return render_workbook([analysis.priced], sensitivity=[analysis.result])
