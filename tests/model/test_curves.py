"""Curves: the Pareto frontier, monotone interpolation with hand-checked values, unreachable
and clamped targets, selections, and operating points in scenarios."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, price_data

from costmodel.model.curves import (
    Curve,
    CurveKey,
    Frontier,
    Unreachable,
    matched_interactivity,
    pareto_indices,
    select,
)
from costmodel.model.inputs import InputError

KEY = CurveKey("hw", "m")


def curve(points, key=KEY) -> Curve:
    names = ("interactivity", "throughput", "concurrency")
    return Curve.from_points(key, [dict(zip(names, p, strict=True)) for p in points])


# (interactivity, throughput, concurrency); (15, 500) is dominated by (20, 800), and (20, 700)
# duplicates interactivity 20 with less throughput: neither can be on the frontier.
RAW = [(20, 700, 8), (10, 1000, 16), (15, 500, 12), (40, 300, 2), (20, 800, 4)]


def test_frontier_drops_dominated_and_duplicate_points():
    f = curve(RAW).frontier()
    assert f.interactivity.tolist() == [10, 20, 40]
    assert f.throughput.tolist() == [1000, 800, 300]
    assert f.indices.tolist() == [1, 4, 3]  # positions in RAW


def test_pareto_indices_on_a_staircase():
    x = np.array([1.0, 2, 3, 4, 2.5])
    y = np.array([9.0, 8, 4, 1, 3])  # (2.5, 3) is dominated by (3, 4)
    assert pareto_indices(x, y).tolist() == [0, 1, 2, 3]


def test_pchip_value_by_hand():
    """Fritsch-Carlson PCHIP on (10, 1000), (20, 800), (40, 300), read at 12 token/s/user."""
    h0, h1 = 10.0, 20.0
    d0, d1 = (800 - 1000) / h0, (300 - 800) / h1          # secant slopes -20, -25
    # interior slope: weighted harmonic mean, w1 = 2h1 + h0, w2 = h1 + 2h0
    w1, w2 = 2 * h1 + h0, h1 + 2 * h0
    m1 = (w1 + w2) / (w1 / d0 + w2 / d1)                  # -21.95...
    m0 = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)       # one-sided end slope -18.33...
    t = (12 - 10) / h0
    expected = ((2 * t**3 - 3 * t**2 + 1) * 1000 + (t**3 - 2 * t**2 + t) * h0 * m0
                + (-2 * t**3 + 3 * t**2) * 800 + (t**3 - t**2) * h0 * m1)
    r = curve(RAW).frontier().read(12)
    assert r.status == "interpolated"
    assert r.throughput == pytest.approx(expected, rel=1e-12)
    assert round(expected, 4) == 962.7577


def test_interpolation_is_monotone_and_never_overshoots():
    f = curve(RAW).frontier()
    xs = np.linspace(10, 40, 1001)
    _, _, y = f.read_many(xs)
    assert np.all(np.diff(y) <= 1e-9)
    assert y.max() <= 1000 and y.min() >= 300


@pytest.mark.parametrize("target,status,throughput,read_at", [
    (10, "exact", 1000, 10),
    (20, "exact", 800, 20),
    (40, "exact", 300, 40),
    (5, "clamped", 1000, 10),       # below the frontier: its peak-throughput end
    (0.1, "clamped", 1000, 10),
])
def test_exact_and_clamped(target, status, throughput, read_at):
    r = curve(RAW).frontier().read(target)
    assert (r.status, r.throughput, r.interactivity) == (status, throughput, read_at)


def test_unreachable_is_not_a_number():
    r = curve(RAW).frontier().read(41)
    assert r.status == "unreachable"
    assert r.throughput is None and r.best_interactivity == 40
    with pytest.raises(Unreachable, match="best is 40 token/s/user"):
        select(curve(RAW), "interactivity", 41)


def test_two_point_frontier_is_linear():
    r = curve([(10, 100, 1), (20, 50, 2)]).frontier().read(15)
    assert r.throughput == pytest.approx(75)  # PCHIP on two points is the straight line


def test_single_point_frontier():
    f = curve([(57.49, 55.63, 4)]).frontier()
    assert f.read(57.49).status == "exact"
    assert f.read(30).status == "clamped" and f.read(30).throughput == 55.63
    assert f.read(60).status == "unreachable"


def test_selections():
    c = curve(RAW)
    assert select(c, "peak").throughput == 1000
    assert select(c, "concurrency", 2).throughput == 300
    assert select(c, "tbt", 50).interactivity == 20        # 50 ms -> 20 token/s/user
    assert select(c, "tbt", 50).throughput == 800
    with pytest.raises(LookupError, match="measured: 2, 4, 8, 12, 16"):
        select(c, "concurrency", 3)


def test_matched_interactivity_is_the_slowest_best():
    a = curve([(10, 1000, 1), (40, 300, 2)]).frontier()
    b = curve([(5, 2000, 1), (25, 400, 2)]).frontier()
    assert matched_interactivity([a, b]) == 25


def test_read_many_matches_read():
    f = Frontier.from_points(np.array([1.0, 2, 4, 8]), np.array([100.0, 80, 30, 10]))
    targets = np.array([0.5, 1, 1.5, 3, 8, 9])
    status, _, y = f.read_many(targets)
    for t, s, v in zip(targets, status, y, strict=True):
        r = f.read(float(t))
        assert ["exact", "interpolated", "clamped", "unreachable"][s] == r.status
        assert (np.isnan(v) and r.throughput is None) or v == pytest.approx(r.throughput)


# ---- scenarios read from curves -------------------------------------------------------------

CURVES = ROOT / "fixtures" / "curves" / "illustrative-gpt-oss-120b.csv"
B200 = "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"


def scenario(at, **op):
    return {"accelerator": "b200", "power": {"boundary": "chip"},
            "operating_point": {"curve": str(CURVES), "curve_id": B200, "at": at, **op}}


def test_scenario_at_interactivity_derives_cost_from_the_interpolated_throughput():
    r = price_data(scenario({"interactivity": "100 token/s/user"}))
    expected = select(curve([(320, 320, 1), (280, 1100, 4), (210, 3000, 16), (120, 6500, 64),
                             (50, 10800, 256), (28, 12000, 512)]), "interactivity", 100)
    assert r.value("throughput") == pytest.approx(expected.throughput, rel=1e-12)
    assert 6500 < r.value("throughput") < 10800  # between the measured neighbours
    # J/token is power / throughput, not interpolated: B200 chip 1,000 W rated
    assert r.value("joules_per_token") == pytest.approx(1000 / expected.throughput, rel=1e-12)
    op = r.disclosure()["operating_point"]
    assert op["interactivity"] == {"value": 100.0, "unit": "token/s/user"}
    assert "PCHIP" in op["chosen"] and B200 in op["chosen"]
    assert r.disclosure()["workload"]["precision"] == "fp8"
    assert r.scenario.operating_point.read_status == "interpolated"


def test_scenario_at_tbt_and_concurrency_and_peak():
    assert price_data(scenario({"tbt": "8.333333333333334 ms"})).value("throughput") == \
        pytest.approx(6500, rel=1e-9)  # 8.33 ms -> 120 token/s/user, a measured point
    r = price_data(scenario({"concurrency": 16}))
    assert r.value("throughput") == 3000
    assert r.disclosure()["operating_point"]["ttft"] == {"value": 0.25, "unit": "s"}
    assert price_data(scenario("peak")).value("throughput") == 12000


def test_scenario_unreachable_target_is_an_error_naming_the_best():
    with pytest.raises(InputError) as info:
        price_data(scenario({"interactivity": "400 token/s/user"}))
    path, message = info.value.errors[0]
    assert path == "operating_point.at.interactivity"
    assert "unreachable" in message and "320" in message


@pytest.mark.parametrize("op,path", [
    ({"throughput": "5 token/s"}, "operating_point.throughput"),
])
def test_scenario_curve_and_throughput_clash(op, path):
    with pytest.raises(InputError) as info:
        price_data(scenario("peak", **op))
    assert info.value.errors[0][0] == path


@pytest.mark.parametrize("at,fragment", [
    ({"interactivity": "100 token/s"}, "interactivity expected"),
    ({"speed": 3}, "unknown selection"),
    ("fastest", 'expected "peak"'),
    ({"concurrency": 0}, "positive"),
])
def test_scenario_bad_at(at, fragment):
    with pytest.raises(InputError) as info:
        price_data(scenario(at))
    assert fragment in info.value.errors[0][1]


def test_unknown_curve_lists_known_ids():
    data = {"accelerator": "b200", "operating_point": {"curve": "no/such/curve"}}
    with pytest.raises(InputError) as info:
        price_data(data)
    assert "mi355x/kimik2.5" in info.value.errors[0][1]


def test_fixture_curve_by_id_and_measured_power_from_the_export():
    # the powerx curve carries measured power: the measured basis takes it from the point
    data = {"accelerator": "b200",
            "operating_point": {"curve": "b200/dsv4/vllm/fp4/8192x1024/none/agg",
                                "at": {"concurrency": 1}},
            "power": {"basis": "measured"}}
    r = price_data(data)
    # powerx.csv has two vllm runs at concurrency 1: 389.949 W at 3.536672 J/token
    # (110.26 token/s) and 384.678 W at 3.801686 J/token (101.19 token/s); the better is chosen
    assert r.value("throughput") == pytest.approx(389.949 / 3.536672, rel=1e-12)
    assert r.value("power_per_accelerator") == pytest.approx(389.949, rel=1e-12)
    assert r.value("joules_per_token") == pytest.approx(3.536672, rel=1e-12)
    assert "measured on curve" in r.disclosure()["sources"]["accelerator.measured_power"]
