"""An agent's task priced on each system (costmodel.app.price_task): the published DeepSeek R1
case, and an illustrative pair of curves where the cheapest system per token is not the
cheapest per task at a 60 s target. Figures derived by hand in the comments."""
from __future__ import annotations

import pytest

from costmodel import app
from costmodel.decisions.task import validate_task
from costmodel.model.curves import Curve, CurveKey
from costmodel.model.errors import InputError
from costmodel.sources.curve_point import CurveLibrary


def _curve(hardware: str, points: list[tuple[float, float, float]]) -> Curve:
    """(interactivity token/s/user, throughput token/s per accelerator, median TTFT s)."""
    return Curve.from_points(CurveKey(hardware, "agent-model", "engine", "fp8", 1000, 500,
                                      "none", False),
                             [{"interactivity": x, "throughput": y, "ttft": t}
                              for x, y, t in points], source="illustrative assumption")


# Dense packs many users at peak (5,000 token/s) but slows each one; Fast serves fewer at
# peak (2,500) and holds its throughput at higher interactivity.
DENSE = _curve("dense", [(20, 5000, 2.0), (50, 3000, 1.5), (100, 400, 1.0), (200, 100, 0.5)])
FAST = _curve("fast", [(50, 2500, 1.0), (100, 2000, 1.0), (200, 500, 0.5)])


class Context(app.LocalContext):
    def curves(self, fresh: bool = False) -> CurveLibrary:
        return CurveLibrary({c.key.id: (c, "illustrative") for c in (DENSE, FAST)})


def _spec(curve: Curve) -> app.ScenarioSpec:
    return app.ScenarioSpec(app.InlineScenario({
        "name": curve.key.hardware,
        "accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
        "operating_point": {"curve": curve.key.id}}), subject=curve.key.hardware)


SPECS = [_spec(DENSE), _spec(FAST)]
# 10 steps of 1,000 input and 500 output tokens, no tool time: latency(X) = 10 TTFT(X) +
# 5,000 / X
TEN = {"steps": 10, "context": 1000, "output": 500}


def test_the_cheapest_per_token_is_not_the_cheapest_per_task_at_60_s():
    at_peak = app.price_task(Context(), app.TaskRequest(SPECS, validate_task(TEN)))
    dense, fast = at_peak.systems
    # at their own (peak) points: the same accelerator, power and price, so the cost per
    # token goes as 1 / throughput: Dense (5,000 token/s) is half Fast's (2,500)
    assert dense.priced.result.value("cost_per_mtok_total") == pytest.approx(
        fast.priced.result.value("cost_per_mtok_total") / 2, rel=1e-12)
    assert at_peak.cheapest == "dense"

    answer = app.price_task(Context(), app.TaskRequest(SPECS, validate_task(
        {**TEN, "target": "60 s"})))
    dense, fast = answer.systems
    # Dense: 115 s at 50 token/s/user (10 x 1.5 + 5,000 / 50), 60 s at 100 (10 x 1.0 + 50):
    # read at 100, 400 token/s. Fast: 110 s at 50, 60 s at 100: read at 100, 2,000 token/s.
    for system, throughput in ((dense, 400), (fast, 2000)):
        assert system.interactivity == pytest.approx(100)
        assert system.latency.total == pytest.approx(60.0, rel=1e-12)
        assert system.meets is True
        assert system.priced.result.value("throughput") == pytest.approx(throughput)
    # the next cheaper point of each frontier (50 token/s/user) does not meet 60 s
    assert (dense.needed.interactivity, fast.needed.interactivity) == (100, 100)
    # cost per task goes as 1 / throughput: Dense's is 2,000 / 400 = 5 times Fast's
    assert dense.cost.cost == pytest.approx(5 * fast.cost.cost, rel=1e-12)
    assert dense.cost.energy == pytest.approx(5 * fast.cost.energy, rel=1e-12)
    assert answer.cheapest == "fast"
    # energy per task: Fast at 1 kW and 2,000 token/s = 0.5 J a (mixed) token; the task in
    # requests of the curve's 1,000 x 500 shape: its input-token equivalents (10,000 + 4 x
    # 5,000 = 30,000) over a request's (1,000 + 4 x 500 = 3,000) = 10 requests of 1,500
    # tokens: 15,000 tokens, 7,500 J
    assert fast.cost.energy == pytest.approx(7_500, rel=1e-12)
    assert fast.cost.tasks_per_hour == pytest.approx(2000 * 3600 / 15_000, rel=1e-12)


def test_a_target_no_system_meets_is_refused_naming_it():
    with pytest.raises(InputError) as caught:
        app.price_task(Context(), app.TaskRequest(SPECS, validate_task(
            {**TEN, "target": "20 s"})))
    path, message = caught.value.errors[0]
    # Dense at 200 token/s/user: 10 x 0.5 + 25 = 30 s; Fast the same
    assert path == "task.target"
    assert "no system meets 20 s" in message and "dense takes 30 s" in message


SLOW = _curve("slow", [(50, 2500, 1.0), (100, 2000, 1.0)])  # at best 100 token/s/user


class WithSlow(Context):
    def curves(self, fresh: bool = False) -> CurveLibrary:
        return CurveLibrary({c.key.id: (c, "illustrative") for c in (DENSE, FAST, SLOW)})


def test_between_two_points_and_a_system_that_misses():
    answer = app.price_task(WithSlow(), app.TaskRequest(
        [_spec(DENSE), _spec(FAST), _spec(SLOW)], validate_task({**TEN, "target": "35 s"})))
    dense, fast, slow = answer.systems
    # Dense and Fast: between 100 (60 s) and 200 (30 s) both curves' TTFT falls from 1.0 to
    # 0.5 s, TTFT(X) = 1.5 - 0.005 X: 15 - 0.05 X + 5,000 / X = 35 -> 0.05 X^2 + 20 X
    # - 5,000 = 0 -> X = 182.84 token/s/user
    x = (-20 + (400 + 4 * 0.05 * 5000) ** 0.5) / 0.1
    for system in (dense, fast):
        assert system.meets and system.interactivity == pytest.approx(x, rel=1e-9)
        assert system.latency.total == pytest.approx(35.0, rel=1e-9)
        assert system.ttft == pytest.approx(1.5 - 0.005 * x, rel=1e-9)
    # Slow reaches 100 token/s/user at best: 60 s, 25 s too slow; priced at that point
    assert slow.meets is False
    assert (slow.needed.fastest, slow.needed.best) == (100, pytest.approx(60.0))
    assert slow.needed.miss(35.0) == pytest.approx(25.0)
    assert slow.interactivity == 100
    assert answer.to_json()["systems"][2]["misses_by"] == {"value": pytest.approx(25.0),
                                                           "unit": "s"}


PUBLISHED = [app.ScenarioSpec(app.InlineScenario({
    "accelerator": hw, "operating_point": f"deepseek-r1/{hw}/matched"}), subject=hw)
    for hw in ("gb300", "jalapeno")]


def test_the_published_case_on_both_systems():
    """DeepSeek R1 at 169 token/s/user (the source articles): GB300 118 mixed token/s/kW,
    Jalapeno 12,258. 40 steps of 2,400 input and 300 output tokens (the 8,192 x 1,024
    workload's 8:1): 108,000 mixed tokens a task."""
    answer = app.price_task(app.LocalContext(), app.TaskRequest(PUBLISHED, validate_task(
        {"steps": 40, "context": 2400, "output": 300})))
    gb300, jalapeno = answer.systems
    for system, per_kw in ((gb300, 118), (jalapeno, 12_258)):
        # energy: 108,000 tokens / per_kw token/s/kW, in kJ; at 8.71 cent/kWh (EIA, May 2026)
        kwh = 108_000 / per_kw / 3600
        assert system.cost.energy == pytest.approx(kwh * 3.6e6, rel=1e-9)
        assert system.cost.energy_cost == pytest.approx(kwh * 0.0871, rel=1e-9)
        # 40 x 300 tokens at 169 token/s/user; no TTFT published
        assert system.latency.total == pytest.approx(12_000 / 169, rel=1e-12)
        assert system.ttft is None and "no TTFT" in system.ttft_from
    # GB300: 0.2542 kWh, 0.02214 USD of electricity a task; Jalapeno: 0.002447 kWh, 0.0002132
    assert gb300.cost.energy_cost == pytest.approx(0.022144, rel=1e-4)
    assert jalapeno.cost.energy_cost == pytest.approx(0.00021317, rel=1e-4)
    assert gb300.cost.energy / jalapeno.cost.energy == pytest.approx(12_258 / 118)


def test_a_percentile_the_curve_lacks_names_the_field():
    with pytest.raises(InputError) as caught:
        app.price_task(Context(), app.TaskRequest(SPECS, validate_task(
            {**TEN, "percentile": "p90", "target": "60 s"})))
    path, message = caught.value.errors[0]
    assert path == "task.percentile" and "p90" in message and "dense" in message


def test_a_fixed_point_that_misses_says_by_how_much():
    """10 steps of 2,000 output tokens, 110 s: GB300's published point (169 token/s/user, no
    TTFT) takes 20,000 / 169 = 118.34 s, 8.34 s too slow; Fast meets it between 100 and 200
    token/s/user: 10 (1.5 - 0.005 X) + 20,000 / X = 110 -> 0.05 X^2 + 95 X - 20,000 = 0 ->
    X = 191.27."""
    task = {"steps": 10, "context": 1000, "output": 2000, "target": "110 s"}
    answer = app.price_task(Context(), app.TaskRequest([_spec(FAST), PUBLISHED[0]],
                                                       validate_task(task)))
    fast, gb300 = answer.systems
    x = (-95 + (95 ** 2 + 4 * 0.05 * 20_000) ** 0.5) / 0.1
    assert fast.meets and fast.interactivity == pytest.approx(x, rel=1e-9)
    assert gb300.meets is False and gb300.needed is None
    assert gb300.latency.total == pytest.approx(20_000 / 169, rel=1e-12)
    assert answer.to_json()["systems"][1]["misses_by"]["value"] == pytest.approx(
        20_000 / 169 - 110, rel=1e-12)
    assert answer.to_json()["systems"][0]["misses_by"] is None
    assert answer.cheapest == "fast"
