"""Sensitivity use cases: tornado, grid and Monte Carlo on one scenario, and their workbook.

The analyses themselves are the core's (:mod:`costmodel.decisions.sensitivity`); here a spec is
loaded
and priced once, the analysis runs on its validated scenario, and the result carries the
priced scenario so a face can also write the workbook with a Sensitivity sheet.

A scenario stating another currency (its ``[money]``) has a money output analysed in it: the
output's step in the currency results are shown in (``<output>_shown``: the USD figure times
the stated rate), named and united as the output in that currency (``EUR/Mtok``); the rate
is in the priced result's disclosure. The inputs moved keep their units as given.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..decisions import sensitivity as core
from ..model.steps import MODEL, SHOWN, shown
from ..model.units import SHOWN_CURRENCY
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
        """The analysis; in another currency, with the scenario's money disclosed (its
        rate, date and source: ``money``, as a priced result's disclosure says it)."""
        r = self.priced.result
        money = {} if r.currency == "USD" else {"money": r.money_disclosure()}
        return {"scenario": self.scenario_name, **self.result.to_json(), **money}


def _step(output: str) -> str:
    """An output's step name (``cost_per_mtok.total`` is ``cost_per_mtok_total``); a name
    naming none is kept, for the core to refuse."""
    if output in MODEL.steps:
        return output
    return next((s.name for s in MODEL.steps.values()
                 if s.group and f"{s.group}.{s.member}" == output), output)


def _run(ctx: Context, spec: ScenarioSpec, output: str,
         run: Callable[[Any, str], Any]) -> Analysis:
    """``run(scenario, output)`` on the priced scenario; a money output in the scenario's
    currency when it states one (see the module docstring)."""
    priced = price(ctx, spec)
    r, name = priced.result, _step(output.strip())
    if r.currency == "USD" or name not in SHOWN:
        return Analysis(priced, run(r.scenario, output))
    result = run(r.scenario, shown(name))
    return Analysis(priced, replace(result, output=name,
                                    unit=result.unit.replace(SHOWN_CURRENCY, r.currency)))


def tornado(ctx: Context, spec: ScenarioSpec, *, output: str = core.DEFAULT_OUTPUT,
            swing: float = 0.2, inputs: Sequence[str] | None = None,
            ranges: Mapping[str, Any] | None = None) -> Analysis:
    """Each input moved alone (base -/+ ``swing``, or across its range), ranked by swing."""
    return _run(ctx, spec, output, lambda s, out: core.tornado(
        s, inputs=inputs, ranges=dict(ranges or {}), output=out, default_swing=swing))


def grid(ctx: Context, spec: ScenarioSpec, x: Any, y: Any, *,
         output: str = core.DEFAULT_OUTPUT) -> Analysis:
    """The output over every pair of values of two inputs."""
    return _run(ctx, spec, output, lambda s, out: core.grid(s, x, y, output=out))


def monte_carlo(ctx: Context, spec: ScenarioSpec, distributions: Mapping[str, Any], *,
                draws: int, seed: int | None = None, output: str = core.DEFAULT_OUTPUT,
                bins: int = 50, truncate: bool = False,
                progress: Callable[[int, int], None] | None = None) -> Analysis:
    """P10/P50/P90, mean and histogram of the output with inputs drawn from
    ``distributions``."""
    check_count(ctx, draws, MAX_DRAWS, "draws", "draws")
    kwargs = {"progress": progress} if progress is not None else {}
    return _run(ctx, spec, output, lambda s, out: core.monte_carlo(
        s, dict(distributions), draws=draws, seed=seed, output=out, bins=bins,
        truncate=truncate, **kwargs))


def analysis_workbook(analysis: Analysis) -> WorkbookFile:
    """The scenario's workbook with a Sensitivity sheet holding the analysis."""
    return render_workbook([analysis.priced], sensitivity=[analysis.result])
