"""An agent's task priced on each system: its latency as the user feels it and its cost
(``costmodel task``, ``POST /api/v1/task``).

Each scenario is priced at its own operating point, or, when the task has a latency
``target`` and the scenario reads a curve, at the cheapest point of the curve's frontier that
meets the target (:func:`costmodel.decisions.task.fastest_needed`): the curve read again at
that interactivity, at the task's percentile. A system that cannot meet the target is priced
at its fastest point and says by how much it misses. The task's figures come from the priced
result's own steps (cost per request by part, tokens per hour, J/token) and the task's shape
(:mod:`costmodel.decisions.task`).

Money is shown in the first scenario's currency (its ``[money]``), at its stated rate
(:mod:`costmodel.app.money`); scenarios stating another are refused.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..decisions import task as core
from ..decisions import task_calculation as calc
from ..model.errors import InputError
from ..model.results import quantity_json
from ..sources.curve_point import Target
from .caps import MAX_SCENARIOS, check_count, large_task, task_cells
from .context import Context
from .load import finish, prepare
from .money import USD_MONEY, ShownMoney, shown_money
from .pricing import Priced, WorkbookFile, _filename, price_loaded
from .specs import ScenarioSpec

__all__ = ["TaskRequest", "SystemTask", "TaskAnswer", "price_task", "task_workbook", "RULES",
           "steps_asked"]

_PARTS = ("energy", "capex", "opex", "total")


@dataclass(frozen=True)
class TaskRequest:
    """The systems (scenarios) and the task to price on each."""
    specs: Sequence[ScenarioSpec]
    task: core.Task


@dataclass(frozen=True)
class SystemTask:
    """One system's answer: where it was read (``interactivity`` [token/s/user] and ``ttft``
    [s] at the task's percentile, ``how``), the task's latency and cost there, whether it
    meets the target, and what differs from the measured configuration (``notes``)."""
    priced: Priced
    interactivity: float | None
    ttft: float | None
    how: str
    ttft_from: str
    latency: core.Latency | None
    cost: core.TaskCost
    meets: bool | None
    needed: core.Needed | None
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.priced.result.name

    def misses_by(self, target: float | None) -> float | None:
        """How far the system is from ``target`` [s] at its fastest point (a curve's) or its
        own; None when it meets it or there is no target."""
        if target is None or self.meets is not False:
            return None
        best = self.needed.best if self.needed is not None else self.latency.total
        return max(0.0, best - target)

    def to_json(self, target: float | None, money: ShownMoney = USD_MONEY,
                series: bool = True) -> dict[str, Any]:
        """The system's answer, money shown in ``money``'s currency; ``series``: with each
        step's latency (else ``per_step`` is null)."""
        r, c = self.priced.result, self.cost
        took = self.latency

        def m(value: float | None, unit: str = "USD") -> dict[str, Any] | None:
            return None if value is None else money.q(float(value), unit)
        return {
            "scenario": self.name,
            "operating_point": {
                "interactivity": _q(self.interactivity, "token/s/user"),
                "ttft": _q(self.ttft, "s"), "how": self.how, "ttft_from": self.ttft_from},
            "latency": None if took is None else {
                "total": _q(took.total, "s"), "ttft": _q(took.ttft * len(took.per_step), "s"),
                "decode": _q(took.decode, "s"), "tool": _q(took.tool, "s"),
                "per_step": {"unit": "s", "values": took.per_step.tolist()} if series
                else None},
            "meets_target": self.meets,
            "misses_by": _q(self.misses_by(target), "s"),
            "cost_per_task": {p: m(getattr(c, f"{p}_cost" if p != "total" else "cost"))
                              for p in _PARTS},
            "price_per_task": m(c.price),
            "cost_per_thousand_tasks": m(1000 * c.cost),
            "price_per_thousand_tasks": m(1000 * c.price),
            "energy_per_task": _q(c.energy / 3.6e6, "kWh"),
            "emissions_per_task": {k: _q(g, "gCO2e/task") for k, g in c.emissions.items()},
            "tasks_per_hour": _q(c.tasks_per_hour, "task/h"),
            "weighted_tokens": _q(c.weighted_tokens, "token"),
            "cost_per_mtok": money.q(r.values["cost_per_mtok_total"],
                                     r.quantity("cost_per_mtok_total")["unit"]),
            "notes": self.notes,
        }


@dataclass(frozen=True)
class TaskAnswer:
    """The task on each system; money shown in ``money``'s currency (the first scenario's
    ``[money]``: :func:`costmodel.app.money.shown_money`)."""
    task: core.Task
    steps: core.Steps
    systems: list[SystemTask]
    money: ShownMoney = USD_MONEY

    @property
    def cheapest(self) -> str | None:
        """The system with the lowest cost per task among those that meet the target (all,
        with no target)."""
        ok = [s for s in self.systems if self.task.target is None or s.meets]
        return min(ok, key=lambda s: s.cost.cost).name if ok else None

    @property
    def large(self) -> bool:
        """Whether the task is more than :data:`~costmodel.app.caps.MAX_TASK_CELLS` steps x
        systems (its per-step series is left out unless asked)."""
        return large_task(task_cells(len(self.steps), len(self.systems)))

    def to_json(self, series: bool | None = None) -> dict[str, Any]:
        """The answer; ``series``: each system's latency by step (``per_step``) too, or not;
        None: unless the task is :attr:`large` (the totals alone, a bounded answer)."""
        t, s = self.task, self.steps
        series = not self.large if series is None else series
        return {
            "engine": {"name": "costmodel", "version": __version__},
            "task": {"name": t.name, "steps": len(s),
                     "input_tokens": _q(float(s.input.sum()), "token"),
                     "cached_tokens": _q(float(s.cached.sum()), "token"),
                     "output_tokens": _q(float(s.output.sum()), "token"),
                     "tool_time": _q(float(s.tool_time.sum()), "s"),
                     "target": _q(t.target, "s"), "percentile": t.percentile,
                     "cached_weight": t.cached_weight},
            "systems": [x.to_json(t.target, self.money, series) for x in self.systems],
            "cheapest": self.cheapest,
            "rules": RULES,
            "disclosure": [x.priced.result.disclosure(sources=False) for x in self.systems],
        }


_SEARCH_RULE = ("with a target, a curve is read at the lowest interactivity (at the task's "
                "percentile) where the task takes at most the target: the cheapest point of "
                "its frontier that meets it, throughput falling as interactivity rises; "
                "TTFT between two measured points is read linearly in interactivity")
_COST_RULE = ("a task's tokens in input-token equivalents (new input + cached_weight x "
              "cached + pricing.output_weight x output) at the scenario's cost of one, by "
              "part; energy the same share of a request's")


RULES = [core.TTFT_RULE, core.TOOL_RULE, _SEARCH_RULE, _COST_RULE]


def steps_asked(data: Any) -> int | None:
    """The steps [count] a task as given (a request's ``task``, not yet validated) asks for:
    ``steps``, or the ``step`` tables counted; None when malformed or beyond
    :data:`~costmodel.decisions.task.MAX_TASK_STEPS` (its validation says why). Read to bound
    an answer before anything is priced."""
    if not isinstance(data, dict):
        return None
    steps, tables = data.get("steps"), data.get("step")
    if isinstance(tables, list) and steps is None:
        steps = len(tables)
    if isinstance(steps, bool) or not isinstance(steps, int):
        return None
    return steps if 1 <= steps <= core.MAX_TASK_STEPS else None


def _q(value: float | None, unit: str) -> dict[str, Any] | None:
    return None if value is None else quantity_json(float(value), unit)


def price_task(ctx: Context, request: TaskRequest, *, sources: bool = False) -> TaskAnswer:
    """Each scenario priced for the task (see the module docstring); ``sources``: each
    result with its per-input sources (a workbook's Sources sheet)."""
    check_count(ctx, len(request.specs), MAX_SCENARIOS, "scenarios", "scenarios")
    task, steps = request.task, request.task.arrays()
    systems = [_system(ctx, spec, task, steps, sources) for spec in request.specs]
    if task.target is not None and not any(s.meets for s in systems):
        raise InputError([("task.target", f"no system meets {task.target:g} s: " + "; ".join(
            f"{s.name} takes {s.latency.total:.4g} s at "
            + (f"its fastest point ({s.interactivity:.4g} token/s/user)" if s.needed
               else f"its operating point ({s.interactivity:.4g} token/s/user)")
            for s in systems))])
    money = shown_money([s.priced.result for s in systems], [s.subject for s in request.specs])
    return TaskAnswer(task, steps, systems, money)


def task_workbook(ctx: Context, request: TaskRequest, title: str | None = None) -> WorkbookFile:
    """The systems' workbook (live formulas), each priced at the point :func:`price_task`
    chose for it, with a Task sheet: the task's steps as rows and, per system, its latency,
    cost by part, price, energy and tasks an hour as formulas over the systems' named cells
    (:mod:`costmodel.render.workbook.task_sheet`)."""
    from ..render.workbook.export import WorkbookSystem, build_workbook
    from ..render.workbook.task_sheet import TaskBook, TaskPoint
    answer = price_task(ctx, request, sources=True)
    task = request.task
    what = task.name or f"{len(answer.steps):,} steps"
    target = "" if task.target is None else f", a target of {task.target:g} s"
    book = TaskBook(task, answer.steps, [TaskPoint(s.interactivity, s.ttft, s.how, s.ttft_from,
                                                   tuple(s.notes)) for s in answer.systems])
    wb = build_workbook([WorkbookSystem(s.priced.result, s.priced.curve)
                         for s in answer.systems],
                        title=title or f"Task: {what}{target}; each system at its point",
                        task=book)
    return WorkbookFile(wb.content, "task_" + _filename([s.name for s in answer.systems]))


def _system(ctx: Context, spec: ScenarioSpec, task: core.Task,
            steps: core.Steps, sources: bool = False) -> SystemTask:
    prepared = prepare(ctx, spec)
    loaded = finish(ctx, spec, prepared)
    notes: list[str] = []
    needed = None
    reading = loaded.curve
    if reading is not None:
        try:
            frontier = reading.curve.frontier(reading.kind, task.percentile)
        except ValueError as exc:  # no interactivity at that percentile
            raise InputError([("task.percentile", f"{loaded.scenario.name}: {exc}")]) from None
        ttfts = core.frontier_ttft(reading.curve, frontier, task.percentile)
        if task.target is None and reading.selection.percentile != task.percentile:
            notes.append(f"the point was read on the {reading.selection.percentile} "
                         f"interactivity (the scenario's own); its TTFT at the task's "
                         f"{task.percentile}")
        if task.target is not None:
            needed = core.fastest_needed(steps, frontier, ttfts, task.target)
            x = needed.interactivity if needed.interactivity is not None else needed.fastest
            label = (f"task: the lowest {task.percentile} interactivity where the task takes at "
                     f"most {task.target:g} s" if needed.interactivity is not None else
                     f"task: the fastest point ({task.target:g} s is not met)")
            loaded = finish(ctx, spec, prepared,
                            Target("interactivity", x, label, task.percentile))
            reading = loaded.curve
        x = reading.selection.interactivity
        ttft = core.ttft_at(frontier, ttfts, x) if x is not None else None
        how = reading.selection.description
        ttft_from = (f"the curve's {task.percentile} TTFT, linear between its frontier points"
                     if ttft is not None else f"none: the curve has no {task.percentile} TTFT "
                                              f"(the latency counts decoding and tool time)")
    else:
        point = loaded.scenario.operating_point
        x = point.effective_interactivity
        ttft = point.ttft
        how = "the scenario's own operating point"
        ttft_from = ("the operating point's ttft" if ttft is not None else
                     "none: the operating point states no TTFT (the latency counts decoding "
                     "and tool time)")
        if task.percentile != "median" and x is not None:
            notes.append(f"the operating point states one interactivity and TTFT; they are "
                         f"taken as the task's {task.percentile}")
    priced = price_loaded(loaded, sources=sources)
    took = None if x is None else core.latency(steps, x, ttft)
    if x is None:
        notes.append("the operating point states no interactivity: no task latency")
    workload = loaded.scenario.workload
    notes += core.mismatches(steps, workload.isl, workload.osl)
    meets = None
    if task.target is not None and took is not None:
        meets = calc.meets(took.total, task.target)
    elif task.target is not None:
        raise InputError([("task.target", f"{priced.result.name}: its operating point states "
                                          f"no interactivity, so no latency to hold to the "
                                          f"target")])
    return SystemTask(priced, x, ttft, how, ttft_from, took, _cost(priced, steps, task),
                      meets, needed, notes)


def _cost(priced: Priced, steps: core.Steps, task: core.Task) -> core.TaskCost:
    r = priced.result
    per_request = r.value("tokens_per_request")
    pricing = r.scenario.pricing
    return core.task_cost(
        steps,
        cost_per_request=calc.request_costs(r.values),
        tokens_per_request=per_request,
        weighted_tokens_per_request=r.value("weighted_tokens_per_request"),
        joules_per_token=r.value("joules_per_token"),
        tokens_per_hour=r.value("tokens_per_hour"),
        output_weight=pricing.output_weight, cached_weight=task.cached_weight,
        gross_margin=pricing.gross_margin,
        emissions_per_mtok={n: r.values[n] for n in calc.EMISSIONS.values()})
