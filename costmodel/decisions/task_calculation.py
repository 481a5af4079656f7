"""An agent's task, its calculation declared once: what :mod:`costmodel.decisions.task` computes
and what the workbook's Task sheet writes as formulas are renderings of the declarations here.

The task's calculation is three declarations in the model's small expression language
(:mod:`costmodel.model.declaration`: names, ``+ - * / **``, the literals 0 and 1, ``where``;
units checked when this module is imported) and one rule between them:

- :data:`REQUEST`: a scenario's cost of one request of its workload's shape, by part (energy,
  capital, operating, total), from its cost per million tokens [USD];
- :data:`STEP`: each step's input-token equivalents and latency, one value a step (the
  evaluator runs it on arrays; the sheet writes it along each step's row);
- :data:`SUMS`: a task's totals are the sums of its steps' values (``SUM`` of a column);
- :data:`TASK`: the task's cost by part, price, energy and tasks an hour from its totals and
  the scenario's figures, and whether it meets the latency target.

Names are those the workbook defines: the steps' inputs (``step_input``...) are a step's cells,
the scenario's figures (``cost_per_mtok_energy``, ``tokens_per_request``,
``pricing_output_weight``...) are the model's names, and the rest are the task's
(``task_``-prefixed, the request's ``request_cost_``). A step without a cell of its own in the
sheet is written inline where it is read.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..model.declaration import NUMPY, Constant, Declaration, Input, Step, compile_node
from ..model.steps import MODEL, model_input

__all__ = ["REQUEST", "STEP", "SUMS", "TASK", "STAGES", "PARTS", "STEP_FIELDS", "Stage",
           "NAMES", "total", "evaluate", "request_costs", "latency_figures", "weighted",
           "cost_figures", "meets"]

PARTS = ("energy", "capex", "opex", "total")
# a step's declared inputs -> the attributes of :class:`costmodel.decisions.task.Steps`
STEP_FIELDS = {"step_input": "input", "step_cached": "cached", "step_output": "output",
               "step_tool_time": "tool_time"}


def _task(name: str, unit: str, description: str) -> Input:
    return Input(name, unit, description, "task." + name.removeprefix("task_"))


_TASK_USERS = Constant("task_users", 1.0, "user",
                       "users a task serves (one, who waits on each step)")
_THOUSAND = Constant("tasks_per_thousand", 1000.0, "dimensionless", "tasks in a thousand")
_TOLERANCE = Constant("latency_tolerance", 1e-12, "dimensionless",
                      "tolerance of the target, relative (a sum's rounding)")

REQUEST = Declaration(
    [model_input(f"cost_per_mtok_{p}") for p in PARTS] + [model_input("tokens_per_request")], [],
    [MODEL.constants["tokens_per_mtok"]],
    [Step(f"request_cost_{p}", "USD", f"cost_per_mtok_{p} * tokens_per_request / "
                                      f"tokens_per_mtok", f"a request's {what} (the "
                                                          f"workload's shape)")
     for p, what in zip(PARTS, ("energy cost", "capital cost", "operating cost", "cost"),
                        strict=True)])

STEP = Declaration(
    [_task("step_input", "token", "input tokens of the step (new and cached)"),
     _task("step_cached", "token", "of them, served from the prefix cache"),
     _task("step_output", "token", "output tokens of the step"),
     _task("step_tool_time", "s", "tool time before the step"),
     _task("task_cached_weight", "dimensionless", "cost of a cached input token / a new one's"),
     model_input("pricing_output_weight"),
     _task("task_interactivity", "token/s/user", "interactivity at the chosen point"),
     _task("task_ttft", "s", "TTFT at the chosen point (each step's)")],
    [], [_TASK_USERS],
    [Step("step_weighted", "token", "step_input - step_cached + task_cached_weight * "
                                    "step_cached + pricing_output_weight * step_output",
          "input-token equivalents of the step"),
     Step("step_decode", "s", "step_output / (task_interactivity * task_users)",
          "the step's decoding time"),
     Step("step_latency", "s", "step_tool_time + task_ttft + step_decode",
          "latency of the step (tool time + TTFT + decoding)")])

# each total of a task: the sum of a step's value over its steps
SUMS = {"task_input": "step_input", "task_cached": "step_cached",
        "task_output": "step_output", "task_tool_time": "step_tool_time",
        "task_weighted": "step_weighted", "task_decode": "step_decode",
        "task_latency": "step_latency"}

# a task's emissions by basis: key -> the model's figure per million tokens (docs/emissions.md)
EMISSIONS = {"location": "emissions_per_mtok", "market": "emissions_market_per_mtok",
             "location_total": "emissions_total_per_mtok",
             "market_total": "emissions_market_total_per_mtok"}

TASK = Declaration(
    [_task("task_weighted", "token", "input-token equivalents of the task"),
     _task("task_latency", "s", "task latency (the sum of its steps')"),
     _task("task_target", "s", "target: the task latency needed"),
     *(_task(f"request_cost_{p}", "USD", REQUEST.steps[f"request_cost_{p}"].description)
       for p in PARTS),
     *map(model_input, ("weighted_tokens_per_request", "tokens_per_request", "joules_per_token",
                   "tokens_per_hour", "pricing_gross_margin", *EMISSIONS.values()))],
    [], [_THOUSAND, _TOLERANCE, MODEL.constants["watts_per_kilowatt"],
         MODEL.constants["seconds_per_hour"], MODEL.constants["tokens_per_mtok"]],
    [Step("task_requests", "dimensionless", "task_weighted / weighted_tokens_per_request",
          "the task in requests of the workload's shape"),
     *(Step(f"task_cost_{p}", "USD", f"request_cost_{p} * task_requests", f"{what} per task")
       for p, what in zip(PARTS, ("energy cost", "capital cost", "operating cost", "cost"),
                          strict=True)),
     Step("task_price", "USD", "task_cost_total / (1 - pricing_gross_margin)",
          "price per task (at the gross margin)"),
     Step("task_cost_thousand", "USD", "task_cost_total * tasks_per_thousand",
          "cost per thousand tasks"),
     Step("task_price_thousand", "USD", "task_price * tasks_per_thousand",
          "price per thousand tasks"),
     Step("task_energy", "J", "joules_per_token * tokens_per_request * task_requests",
          "energy per task"),
     Step("task_energy_kwh", "kWh", "task_energy / (watts_per_kilowatt * seconds_per_hour)",
          "energy per task"),
     Step("tasks_per_hour", "1/h", "tokens_per_hour / tokens_per_request / task_requests",
          "tasks an hour per accelerator (at the utilisation)"),
     *(Step(f"task_emissions_{k}", "gCO2e", f"{figure} * tokens_per_request * task_requests"
                                             f" / tokens_per_mtok",
            f"emissions per task ({k.replace('_total', ', with embodied')}-based)")
       for k, figure in EMISSIONS.items()),
     Step("task_meets", "dimensionless",
          "where(task_latency <= task_target * (1 + latency_tolerance), 1, 0)",
          "meets the target (1: it does)")])

STAGES = (REQUEST, STEP, TASK)


def _check() -> frozenset[str]:
    """Every name the task declares, checked against the model's (they share a workbook) and
    each total's unit against its steps'."""
    declared: set[str] = set()
    for stage in STAGES:
        declared |= set(stage.steps) | (set(stage.constants) - set(MODEL.constants))
        declared |= {n for n in stage.inputs if n not in MODEL.inputs and n not in MODEL.steps}
    declared |= set(SUMS)
    model = set(MODEL.inputs) | set(MODEL.enums) | set(MODEL.steps)
    shared = {n for n in declared if n in model or n in MODEL.constants}
    assert not shared, f"the task redeclares the model's names {sorted(shared)}"
    for name, step_name in SUMS.items():
        unit = (STEP.steps[step_name].unit if step_name in STEP.steps
                else STEP.inputs[step_name].unit)
        assert name not in TASK.inputs or TASK.inputs[name].unit == unit, name
    return frozenset(declared)


NAMES = _check()
"""Every name the task's calculation declares (beside the model's it reads)."""


class Stage:
    """One declaration evaluated with numpy: a step's value is an array (one value a step)
    where it reads the steps' arrays."""

    def __init__(self, declaration: Declaration):
        self.declaration = declaration
        self.compiled = {n: compile_node(s.tree, NUMPY) for n, s in declaration.steps.items()}
        self.constants = {c.name: c.value for c in declaration.constants.values()}
        self._orders: dict[tuple[str, ...], tuple[str, ...]] = {}

    def order(self, targets: tuple[str, ...]) -> tuple[str, ...]:
        """The steps ``targets`` need, in declaration order."""
        if targets not in self._orders:
            self._orders[targets] = tuple(self.declaration.dependencies(targets))
        return self._orders[targets]

    def evaluate(self, env: Mapping[str, Any], targets: Iterable[str]) -> dict[str, Any]:
        """``env`` (the inputs, each in its declared unit) with the steps ``targets`` need."""
        values = {**self.constants, **env}
        for name in self.order(tuple(targets)):
            values[name] = self.compiled[name](values)
        return values


_REQUEST, _STEP, _TASK = Stage(REQUEST), Stage(STEP), Stage(TASK)
_BY_DECLARATION = {id(s.declaration): s for s in (_REQUEST, _STEP, _TASK)}


def evaluate(declaration: Declaration, env: Mapping[str, Any],
             targets: Iterable[str]) -> dict[str, Any]:
    """One of :data:`STAGES` evaluated: ``env`` with the steps ``targets`` need."""
    return _BY_DECLARATION[id(declaration)].evaluate(env, targets)


def total(values: Any) -> float:
    """A task's total of a step's values (:data:`SUMS`)."""
    return float(np.sum(values))


def _steps(steps: Any) -> dict[str, Any]:
    return {name: getattr(steps, field) for name, field in STEP_FIELDS.items()}


def request_costs(figures: Mapping[str, float]) -> dict[str, float]:
    """A scenario's cost of one request by part (energy, capex, opex, total) [USD] from its
    ``figures`` (the model's names: cost_per_mtok_<part>, tokens_per_request)."""
    v = _REQUEST.evaluate(figures, [f"request_cost_{p}" for p in PARTS])
    return {p: float(v[f"request_cost_{p}"]) for p in PARTS}


def latency_figures(steps: Any, interactivity: float, ttft: float) -> tuple[np.ndarray, float]:
    """Each step's latency [s] and the task's decoding time [s] at ``interactivity``
    [token/s/user] and ``ttft`` [s]; ``steps`` has the arrays of :data:`STEP_FIELDS`."""
    v = _STEP.evaluate({**_steps(steps), "task_interactivity": interactivity,
                        "task_ttft": ttft}, ("step_latency", "step_decode"))
    per_step = np.broadcast_to(v["step_latency"], np.shape(steps.output)).astype(float)
    return per_step, total(v["step_decode"])


def weighted(steps: Any, output_weight: float, cached_weight: float) -> float:
    """The task's input-token equivalents [token]."""
    v = _STEP.evaluate({**_steps(steps), "pricing_output_weight": output_weight,
                        "task_cached_weight": cached_weight}, ("step_weighted",))
    return total(v["step_weighted"])


_COST = ("task_requests", *(f"task_cost_{p}" for p in PARTS), "task_price", "task_energy",
         "tasks_per_hour", *(f"task_emissions_{k}" for k in EMISSIONS))


def cost_figures(steps: Any, *, cost_per_request: Mapping[str, float],
                 tokens_per_request: float, weighted_tokens_per_request: float,
                 joules_per_token: float, tokens_per_hour: float, output_weight: float,
                 cached_weight: float, gross_margin: float,
                 emissions_per_mtok: Mapping[str, float] | None = None) -> dict[str, float]:
    """The task's cost figures (the names of :data:`TASK`, and ``task_weighted``);
    ``emissions_per_mtok`` [gCO2e/Mtok] by the model's figure names (NaN: none given)."""
    w = weighted(steps, output_weight, cached_weight)
    grams = emissions_per_mtok or {}
    v = _TASK.evaluate({"task_weighted": w,
                        **{f"request_cost_{p}": cost_per_request[p] for p in PARTS},
                        "tokens_per_request": tokens_per_request,
                        "weighted_tokens_per_request": weighted_tokens_per_request,
                        "joules_per_token": joules_per_token,
                        "tokens_per_hour": tokens_per_hour,
                        "pricing_gross_margin": gross_margin,
                        **{n: grams.get(n, math.nan) for n in EMISSIONS.values()}}, _COST)
    return {"task_weighted": w, **{n: float(v[n]) for n in _COST}}


def meets(latency: float, target: float) -> bool:
    """Whether a task of ``latency`` [s] meets ``target`` [s] (within the tolerance)."""
    v = _TASK.evaluate({"task_latency": latency, "task_target": target}, ("task_meets",))
    return bool(v["task_meets"] == 1)
