"""An agent's task: many model calls, each waiting on the one before; its latency and cost.

A chat user waits for one answer; an agent's user waits for every step of a task. A
:class:`Task` is the shape of one: steps with input tokens (some served from the prefix
cache), output tokens and the tool time before each, given step by step or as a repeated
step whose context grows. At an operating point (an interactivity and a TTFT, at one
percentile) each step takes

    its tool time + TTFT + output tokens / interactivity          [s]

and the task the sum over its steps. The TTFT is the curve's at that point, whatever the
step's input: a curve is measured at one request shape (ISL/OSL), and the task is priced at
the measured configuration's rates, its mismatch with the shape said (:func:`mismatches`).

Cost. A scenario's cost per million tokens counts tokens of its operating point's kind;
the engine's allocation rule (an output token costs ``pricing.output_weight`` input tokens)
gives a cost per input-token equivalent. A task's tokens in input-token equivalents are its
new input tokens + ``cached_weight`` x its cached ones + the output weight x its output
tokens, and its cost (each part: energy, capital, operating) is that many equivalents at the
scenario's cost of one. ``cached_weight`` defaults to 1: curves are measured without a
prefix cache, so a cached token is priced as the measurement priced it until the scenario
says otherwise.

The formulas (a step's latency and input-token equivalents, the task's cost by part, price,
energy and tasks an hour) are declared once in :mod:`.task_calculation`, which the
functions here evaluate and the workbook's Task sheet writes as formulas.

The inverse question (:func:`fastest_needed`): on a curve's Pareto frontier, the lowest
interactivity at which the task meets a latency target is the cheapest point that meets it
(throughput falls as interactivity rises along the frontier). TTFT between two frontier
points is read linearly in interactivity, as the frontier's power is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import Field, ValidationError, model_validator

from ..model.curves import PERCENTILES, Curve, Frontier
from ..model.inputs import InputError, Qty, Section, error_message, error_path
from . import task_calculation as calc

__all__ = ["Task", "TaskStep", "Steps", "validate_task", "MAX_TASK_STEPS", "Latency",
           "latency", "TaskCost", "task_cost", "Needed", "fastest_needed", "mismatches",
           "TOOL_RULE", "TTFT_RULE"]

# steps of one task: an agent's longest runs are hundreds of calls; ten thousand bounds the
# arrays and the work of one request (a million is refused, at once)
MAX_TASK_STEPS = 10_000
TOOL_RULE = ("a step's tool time is the wait before it (the repeated form: before every step "
             "but the first)")
TTFT_RULE = ("each step's TTFT is the operating point's, at the task's percentile, whatever "
             "the step's input (the curve's measured request shape)")


# a step's tokens and tool time past these are no agent's (the longest contexts are 10^7
# tokens; a day is 86,400 s): bounds that keep every sum finite
MAX_STEP_TOKENS = 1e8  # [token]
MAX_TOOL_TIME = 1e6  # [s]


def _tokens(description: str, positive: bool = False):
    return Qty("token", positive=positive, maximum=MAX_STEP_TOKENS, description=description)


def _tool(description: str):
    return Qty("s", maximum=MAX_TOOL_TIME, description=description)


class TaskStep(Section):
    """One step: ``input`` tokens, of which ``cached`` come from the prefix cache, ``output``
    tokens, and the ``tool_time`` [s] before it."""
    input: _tokens("input tokens of the step (new and cached)")
    cached: _tokens("of them, served from the prefix cache") = 0.0
    output: _tokens("output tokens of the step", positive=True)
    tool_time: _tool("tool time before the step") = 0.0

    @model_validator(mode="after")
    def _cached_within(self):
        if self.cached > self.input:
            raise ValueError(f"cached ({self.cached:g} token) is more than the step's input "
                             f"({self.input:g} token)")
        return self


class Task(Section):
    """A task: ``step`` tables, or ``steps`` repeated steps whose input starts at ``context``
    tokens and grows by ``growth`` a step, ``cached_share`` of it from the prefix cache,
    ``output`` tokens each, ``tool_time`` [s] before each but the first. ``target`` [s] is
    the task latency the buyer needs, at ``percentile`` (median, mean, p90, p99: the columns
    read); ``cached_weight`` prices a cached input token against a new one."""
    name: str | None = None
    steps: int | None = Field(None, ge=1, le=MAX_TASK_STEPS, strict=True)
    context: _tokens("input tokens of the first step") | None = None
    growth: _tokens("more input tokens each step") = 0.0
    output: _tokens("output tokens a step", positive=True) | None = None
    cached_share: Qty("dimensionless", maximum=1.0,
                      description="share of each step's input from the prefix cache") = 0.0
    tool_time: _tool("tool time before each step but the first") = 0.0
    step: list[TaskStep] | None = Field(None, min_length=1, max_length=MAX_TASK_STEPS)
    target: Qty("s", positive=True, maximum=MAX_TASK_STEPS * MAX_TOOL_TIME,
                description="the task latency needed") | None = None
    percentile: Literal[PERCENTILES] = "median"  # type: ignore[valid-type]
    cached_weight: Qty("dimensionless", maximum=1.0, description=(
        "cost of a cached input token, as a share of a new one")) = 1.0

    @model_validator(mode="after")
    def _one_form(self):
        repeated = {k: getattr(self, k) for k in ("steps", "context", "output")}
        if self.step is not None:
            given = [k for k in ("steps", "context", "output") if repeated[k] is not None]
            if given or "growth" in self.model_fields_set \
                    or "cached_share" in self.model_fields_set \
                    or "tool_time" in self.model_fields_set:
                raise ValueError("give step tables, or steps with context and output, not "
                                 "both")
        else:
            missing = [k for k, v in repeated.items() if v is None]
            if missing:
                raise ValueError(f"give {', '.join(missing)} (a repeated step), or step "
                                 f"tables")
        return self

    def arrays(self) -> Steps:
        """The steps as arrays, one value a step."""
        if self.step is not None:
            return Steps(*(np.array([getattr(s, k) for s in self.step], dtype=float)
                           for k in ("input", "cached", "output", "tool_time")))
        n = self.steps
        inputs = self.context + self.growth * np.arange(n, dtype=float)
        tool = np.full(n, self.tool_time)
        tool[0] = 0.0
        return Steps(inputs, inputs * self.cached_share, np.full(n, self.output), tool)


def validate_task(data: object, where: str = "task") -> Task:
    """A task from plain data; :class:`InputError` with field paths otherwise."""
    if not isinstance(data, dict):
        raise InputError([(where, "a task must be a table/object")])
    steps = data.get("step")
    if isinstance(steps, list) and len(steps) > MAX_TASK_STEPS:  # before validating each
        raise InputError([(f"{where}.step", f"at most {MAX_TASK_STEPS:,} steps (got "
                                            f"{len(steps):,})")])
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:
        raise InputError([(f"{where}.{error_path(e['loc'])}".rstrip("."), error_message(e))
                          for e in exc.errors()]) from None
    return task


@dataclass(frozen=True)
class Steps:
    """A task's steps [token, token, token, s]: one value a step."""
    input: np.ndarray
    cached: np.ndarray
    output: np.ndarray
    tool_time: np.ndarray

    def __len__(self) -> int:
        return len(self.input)

    @property
    def new(self) -> np.ndarray:
        return self.input - self.cached

    def weighted(self, output_weight: float, cached_weight: float) -> float:
        """The task's tokens in input-token equivalents [token]."""
        return calc.weighted(self, output_weight, cached_weight)

    def tokens(self, kind: str) -> float:
        """Tokens of ``kind`` (mixed | input | output) in the task [token]."""
        return float({"mixed": self.input.sum() + self.output.sum(),
                      "input": self.input.sum(), "output": self.output.sum()}[kind])


@dataclass(frozen=True)
class Latency:
    """A task's latency at one operating point [s]: each step's, and the parts of the sum."""
    per_step: np.ndarray  # [s]
    ttft: float  # [s], each step's
    decode: float  # [s], all steps' output tokens / interactivity
    tool: float  # [s]

    @property
    def total(self) -> float:
        return float(self.per_step.sum())


def latency(steps: Steps, interactivity: float, ttft: float | None) -> Latency:
    """The task's latency at ``interactivity`` [token/s/user] and ``ttft`` [s] (None: not
    measured, counted as 0 and said by the caller)."""
    first = 0.0 if ttft is None else ttft
    per_step, decode = calc.latency_figures(steps, interactivity, first)
    return Latency(per_step, first, decode, calc.total(steps.tool_time))


@dataclass(frozen=True)
class TaskCost:
    """What one task costs [USD] (and its energy [J]) at a priced operating point."""
    weighted_tokens: float  # [token], input-token equivalents
    cost: float
    energy_cost: float
    capex_cost: float
    opex_cost: float
    price: float
    energy: float  # [J]
    tasks_per_hour: float  # per accelerator, at the scenario's utilisation [1/h]
    # [gCO2e] by basis (location, market, location_total, market_total); NaN: no factor
    emissions: dict[str, float] = field(default_factory=dict)


def task_cost(steps: Steps, *, cost_per_request: dict[str, float], tokens_per_request: float,
              weighted_tokens_per_request: float, joules_per_token: float,
              tokens_per_hour: float, output_weight: float, cached_weight: float,
              gross_margin: float,
              emissions_per_mtok: dict[str, float] | None = None) -> TaskCost:
    """A task priced from one request's figures of a priced scenario: ``cost_per_request``
    [USD] by part (energy, capex, opex, total); ``tokens_per_request`` [token of the point's
    kind] and ``weighted_tokens_per_request`` [input-token equivalents]; ``joules_per_token``
    [J/token of the kind]; ``tokens_per_hour`` [token of the kind/h per accelerator]."""
    v = calc.cost_figures(
        steps, cost_per_request=cost_per_request, tokens_per_request=tokens_per_request,
        weighted_tokens_per_request=weighted_tokens_per_request,
        joules_per_token=joules_per_token, tokens_per_hour=tokens_per_hour,
        output_weight=output_weight, cached_weight=cached_weight, gross_margin=gross_margin,
        emissions_per_mtok=emissions_per_mtok)
    return TaskCost(v["task_weighted"], v["task_cost_total"], v["task_cost_energy"],
                    v["task_cost_capex"], v["task_cost_opex"], v["task_price"],
                    v["task_energy"], v["tasks_per_hour"],
                    {k: v[f"task_emissions_{k}"] for k in calc.EMISSIONS})


@dataclass(frozen=True)
class Needed:
    """Where a task meets its latency target on a frontier: ``interactivity`` [token/s/user],
    the lowest that meets it (None: none does), the task's ``latency`` there [s], and at the
    frontier's fastest point ``fastest`` [token/s/user] its latency ``best`` [s]."""
    interactivity: float | None
    latency: float | None
    fastest: float
    best: float
    ttft_measured: bool

    def miss(self, target: float) -> float:
        """How much the fastest point misses the target by [s] (0 when it meets it)."""
        return max(0.0, self.best - target)


def frontier_ttft(curve: Curve, frontier: Frontier, percentile: str) -> np.ndarray | None:
    """The TTFT [s] at ``percentile`` of each frontier point; NaN where a point lacks it,
    None where the curve has none."""
    ttft = curve.column("ttft", percentile)[frontier.indices]
    return None if np.all(np.isnan(ttft)) else ttft


def ttft_at(frontier: Frontier, ttft: np.ndarray | None, x: float) -> float | None:
    """TTFT [s] at interactivity ``x``, linear between the frontier points that have one."""
    if ttft is None:
        return None
    ok = ~np.isnan(ttft)
    return float(np.interp(x, frontier.interactivity[ok], ttft[ok]))


def fastest_needed(steps: Steps, frontier: Frontier, ttft: np.ndarray | None,
                   target: float) -> Needed:
    """The lowest interactivity on ``frontier`` at which the task takes at most ``target``
    [s]: a measured point, or the point between two where it takes exactly ``target``
    (bisection, to 1e-12 of the interval)."""
    xs = frontier.interactivity

    def took(x: float) -> float:
        return latency(steps, x, ttft_at(frontier, ttft, x)).total

    times = np.array([took(float(x)) for x in xs])
    fastest = float(xs[-1])
    best = float(times.min())
    meets = np.flatnonzero(times <= target)
    if meets.size == 0:
        return Needed(None, None, fastest, best, ttft is not None)
    j = int(meets[0])
    if j == 0 or math.isclose(times[j], target, rel_tol=1e-12):
        return Needed(float(xs[j]), float(times[j]), fastest, best, ttft is not None)
    lo, hi = float(xs[j - 1]), float(xs[j])  # took(lo) > target >= took(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if took(mid) <= target:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-12 * hi:
            break
    return Needed(hi, took(hi), fastest, best, ttft is not None)


def mismatches(steps: Steps, isl: float, osl: float) -> list[str]:
    """How the task's steps differ from the request shape a curve was measured at [token]:
    the task is priced at the measured configuration's rates."""
    out = []
    if not _near(steps.input, isl):
        out.append(f"the task's steps take {_span(steps.input)} input tokens; the point was "
                   f"measured at {isl:,.0f} (its TTFT and rates are the measured ones)")
    if not _near(steps.output, osl):
        out.append(f"the task's steps write {_span(steps.output)} output tokens; the point "
                   f"was measured at {osl:,.0f}")
    if float(steps.cached.sum()) > 0:
        out.append("the measured point had no prefix cache: cached input tokens are priced "
                   "at the task's cached_weight and take the measured TTFT")
    return out


def _near(values: np.ndarray, measured: float) -> bool:
    """Every value within a factor of two of the measured one."""
    return bool(np.all((0.5 * measured <= values) & (values <= 2.0 * measured)))


def _span(values: np.ndarray) -> str:
    low, high = float(values.min()), float(values.max())
    return f"{low:,.0f}" if low == high else f"{low:,.0f} to {high:,.0f}"
