"""An agent's task (costmodel.decisions.task): its steps, latency at an operating point, cost
by token kind, and the lowest interactivity that meets a latency target. Every figure is
derived by hand in the comments."""
from __future__ import annotations

import numpy as np
import pytest

from costmodel.decisions.task import (
    MAX_TASK_STEPS,
    fastest_needed,
    latency,
    mismatches,
    task_cost,
    validate_task,
)
from costmodel.model.curves import Curve, CurveKey
from costmodel.model.errors import InputError

# the example: 40 steps; context grows by 1,500 tokens a step from 8,000; 300 output
# tokens a step; 80 % of each step's input cached; 1.2 s of tool time a step
AGENT = {"steps": 40, "context": "8000 token", "growth": "1500 token", "output": 300,
         "cached_share": 0.8, "tool_time": "1.2 s"}


def test_a_repeated_step_grows_its_context():
    steps = validate_task(AGENT).arrays()
    assert len(steps) == 40
    assert steps.input[[0, 1, 39]].tolist() == [8000, 9500, 8000 + 39 * 1500]
    # input: 40 x 8,000 + 1,500 x (0 + 1 + ... + 39 = 780) = 1,490,000 token
    assert steps.input.sum() == 1_490_000
    assert steps.cached.sum() == pytest.approx(0.8 * 1_490_000)
    assert steps.new.sum() == pytest.approx(298_000)
    assert steps.output.sum() == 12_000
    # tool time before every step but the first: 39 x 1.2 s
    assert steps.tool_time.sum() == pytest.approx(46.8)
    assert steps.tokens("mixed") == 1_502_000


def test_task_latency_sums_ttft_decoding_and_tool_time():
    steps = validate_task(AGENT).arrays()
    took = latency(steps, 169.0, 0.5)
    # 40 x 0.5 s + 12,000 / 169 s + 46.8 s = 20 + 71.0059 + 46.8
    assert took.total == pytest.approx(20 + 12_000 / 169 + 46.8, rel=1e-12)
    assert (took.ttft, took.tool) == (0.5, pytest.approx(46.8))
    assert took.per_step[0] == pytest.approx(0.5 + 300 / 169)  # no tool before the first
    assert took.per_step[1] == pytest.approx(1.2 + 0.5 + 300 / 169)
    # no TTFT measured: decoding and tool time only
    assert latency(steps, 169.0, None).total == pytest.approx(12_000 / 169 + 46.8)


def test_step_tables_are_taken_as_given():
    steps = validate_task({"step": [
        {"input": 1000, "output": 100},
        {"input": "3000 token", "cached": 2000, "output": 50, "tool_time": "2 s"}]}).arrays()
    assert steps.input.tolist() == [1000, 3000]
    assert steps.new.tolist() == [1000, 1000]
    assert latency(steps, 50.0, 1.0).total == pytest.approx(1 + 2 + 1 + 2 + 1)


# ---- the published case: DeepSeek R1 at 169 token/s/user ------------------------------------
# GB300: 118 mixed token/s/kW; Jalapeno: 12,258 (the source articles, WA and PPW). A task of
# 40 steps of 2,400 input and 300 output tokens (the workload's 8:1, 8,192 x 1,024, so that the
# allocation rule gives the task the mixed tokens' own share): 40 x 2,700 = 108,000 tokens.
TASK_TOKENS = 40 * (2400 + 300)
PRICE = 0.0871  # USD/kWh (EIA, May 2026, the catalog's default)


@pytest.mark.parametrize("per_kw", [118.0, 12_258.0])
def test_the_published_case_by_hand(per_kw):
    steps = validate_task({"steps": 40, "context": 2400, "output": 300}).arrays()
    # the scenario's figures for one 8,192 x 1,024 request at 1 kW, at the chip boundary
    isl, osl, weight = 8192.0, 1024.0, 4.0
    joules_per_token = 1000.0 / per_kw  # 1 kW over per_kw token/s
    per_request = isl + osl
    energy_per_request = PRICE * joules_per_token * per_request / 3.6e6  # [USD]
    cost = task_cost(steps, cost_per_request={"energy": energy_per_request, "capex": 0.0,
                                              "opex": 0.0, "total": energy_per_request},
                     tokens_per_request=per_request,
                     weighted_tokens_per_request=isl + weight * osl,
                     joules_per_token=joules_per_token, tokens_per_hour=per_kw * 3600,
                     output_weight=weight, cached_weight=1.0, gross_margin=0.5)
    # energy: 108,000 token / per_kw token/s/kW = 108,000 / per_kw kJ
    assert cost.energy == pytest.approx(TASK_TOKENS * 1000 / per_kw, rel=1e-12)
    # at 8.71 cent/kWh: GB300 0.254237 kWh -> 0.022144 USD; Jalapeno 0.0024474 kWh ->
    # 0.00021317 USD (0.205 and 0.00197 USD/Mtok, as published, x 0.108 Mtok)
    kwh = TASK_TOKENS / per_kw / 3600
    assert cost.energy_cost == pytest.approx(kwh * PRICE, rel=1e-12)
    assert cost.energy_cost / (TASK_TOKENS / 1e6) == pytest.approx(
        {118.0: 0.205, 12_258.0: 0.00197}[per_kw], rel=0.01)
    assert cost.price == pytest.approx(2 * cost.cost)  # margin 50 %
    # tasks an hour at 1 kW: per_kw x 3,600 tokens / 108,000
    assert cost.tasks_per_hour == pytest.approx(per_kw * 3600 / TASK_TOKENS, rel=1e-12)
    # latency at 169 token/s/user with no TTFT published: 40 x 300 / 169 = 71.006 s
    assert latency(steps, 169.0, None).total == pytest.approx(12_000 / 169, rel=1e-12)


def test_cached_tokens_are_priced_at_their_weight():
    steps = validate_task({"steps": 2, "context": 1000, "output": 100,
                           "cached_share": 0.5}).arrays()
    args = dict(cost_per_request={"energy": 1.0, "capex": 2.0, "opex": 3.0, "total": 6.0},
                tokens_per_request=1100.0, weighted_tokens_per_request=1000 + 4 * 100,
                joules_per_token=1.0, tokens_per_hour=1e6, output_weight=4.0,
                gross_margin=0.0)
    # 1,000 new + 0.1 x 1,000 cached + 4 x 200 output = 1,900 equivalents; a request is 1,400
    cost = task_cost(steps, cached_weight=0.1, **args)
    assert cost.weighted_tokens == pytest.approx(1900)
    assert cost.cost == pytest.approx(6.0 * 1900 / 1400)
    assert (cost.energy_cost, cost.capex_cost, cost.opex_cost) == pytest.approx(
        (1900 / 1400, 2 * 1900 / 1400, 3 * 1900 / 1400))
    assert task_cost(steps, cached_weight=1.0, **args).weighted_tokens == pytest.approx(2800)


# ---- the inverse question -------------------------------------------------------------------
# an illustrative curve: (interactivity token/s/user, throughput token/s, median TTFT s)
POINTS = [(20, 1000, 2.0), (50, 600, 1.0), (100, 300, 0.5), (200, 100, 0.3)]
CURVE = Curve.from_points(CurveKey("x", "m", isl=1024, osl=500), [
    {"interactivity": x, "throughput": y, "ttft": t} for x, y, t in POINTS],
    source="illustrative assumption")
TEN = validate_task({"steps": 10, "context": 1000, "output": 500}).arrays()


def _needed(target: float):
    frontier = CURVE.frontier()
    from costmodel.decisions.task import frontier_ttft
    return fastest_needed(TEN, frontier, frontier_ttft(CURVE, frontier, "median"), target)


def test_the_lowest_interactivity_that_meets_a_target():
    # latency(X) = 10 x TTFT(X) + 5,000 / X: 270 s at 20, 110 at 50, 55 at 100, 28 at 200.
    # For 60 s: between 50 (110 s) and 100 (55 s), TTFT = 1.5 - 0.01 X, so
    # 15 - 0.1 X + 5,000 / X = 60 -> X^2 + 450 X - 50,000 = 0 -> X = 92.2144
    needed = _needed(60.0)
    x = (-450 + (450 ** 2 + 4 * 50_000) ** 0.5) / 2
    assert needed.interactivity == pytest.approx(x, rel=1e-9)
    assert needed.latency == pytest.approx(60.0, rel=1e-9)
    # it meets the target; the next cheaper point (a lower interactivity) does not
    assert latency(TEN, needed.interactivity, 1.5 - 0.01 * needed.interactivity).total <= 60
    below = needed.interactivity * (1 - 1e-6)
    assert latency(TEN, below, 1.5 - 0.01 * below).total > 60
    assert latency(TEN, 50, 1.0).total > 60  # the cheaper measured point
    assert (needed.fastest, needed.best) == (200, pytest.approx(28.0))


def test_a_loose_target_is_met_at_peak_throughput():
    assert _needed(300.0).interactivity == 20


def test_a_target_no_point_meets_says_by_how_much():
    needed = _needed(20.0)
    assert needed.interactivity is None
    assert needed.miss(20.0) == pytest.approx(8.0)  # 28 s at its fastest, 200 token/s/user


# ---- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("data,path", [
    ({**AGENT, "output": -5}, "task.output"),
    ({**AGENT, "cached_share": 1.5}, "task.cached_share"),
    ({**AGENT, "steps": 1_000_000}, "task.steps"),
    ({**AGENT, "output": "1e308 token"}, "task.output"),  # (every sum stays finite)
    ({**AGENT, "tool_time": "1e7 s"}, "task.tool_time"),
    ({**AGENT, "steps": 4.5}, "task.steps"),
    ({**AGENT, "tool_time": "3 W"}, "task.tool_time"),
    ({**AGENT, "percentile": "p42"}, "task.percentile"),
    ({"step": [{"input": 10, "cached": 20, "output": 5}]}, "task.step[0]"),
    ({"steps": 3, "output": 5}, "task"),
    ({**AGENT, "step": [{"input": 10, "output": 5}]}, "task"),
    ({"step": [{"input": 1, "output": 1}] * (MAX_TASK_STEPS + 1)}, "task.step"),
])
def test_bad_tasks_name_the_field(data, path):
    with pytest.raises(InputError) as caught:
        validate_task(data)
    assert caught.value.errors[0][0] == path, caught.value.errors


def test_a_mismatch_with_the_measured_shape_is_said():
    steps = validate_task(AGENT).arrays()
    said = mismatches(steps, 8192.0, 1024.0)
    assert any("8,000 to 66,500 input tokens" in s and "8,192" in s for s in said)
    assert any("write 300 output tokens" in s and "1,024" in s for s in said)
    assert any("prefix cache" in s for s in said)
    assert mismatches(validate_task({"steps": 2, "context": 8000, "output": 1000}).arrays(),
                      8192.0, 1024.0) == []


def test_arrays_are_float_arrays():
    steps = validate_task(AGENT).arrays()
    assert all(isinstance(a, np.ndarray) and a.dtype == float for a in
               (steps.input, steps.cached, steps.output, steps.tool_time))
