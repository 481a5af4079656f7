"""Sensitivity and uncertainty: tornado, grid and Monte Carlo against hand arithmetic.

Every expected number is hand arithmetic from the scenario files and the documented formulas
(or a single-scenario run of the chain with ``--set`` overrides); none is pasted from a run of
the code. Monte Carlo tolerances are derived from the draw count below.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from costmodel.app.build import build_scenario, load_scenario_file
from costmodel.cli.sensitivity import sensitivity
from costmodel.decisions.sensitivity import (
    OUTSIDE_TOLERANCE,
    LogNormal,
    SensitivityError,
    Uniform,
    grid,
    monte_carlo,
    parse_axis,
    parse_distribution,
    parse_range,
    sample_inputs,
    tornado,
)
from costmodel.model.chain import price
from costmodel.model.inputs import InputError
from costmodel.render.display import format_number

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
GB300_PEAK = ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_peak.toml"

# ---- hand arithmetic for sample-tco.toml ----------------------------------------------------
# GB300 (1,400 W rated) at DeepSeek R1 peak, 11,781 token/s/kW normalised by the 1,400 W TDP:
THROUGHPUT = 11781 * 1400 / 1000  # token/s per accelerator = 16,493.4
# facility boundary, rated basis: node = (4 x 1,400 W + 1,200 W host) / 0.95 PSU;
# rack = (18 nodes x node + 7,200 W switch + 1,000 W other) / 0.97, split over 4 x 18 = 72;
# facility = rack x PUE 1.2  (~2,354.7 W)
FACILITY_W = (18 * (4 * 1400 + 1200) / 0.95 + 7200 + 1000) / 0.97 / 72 * 1.2
LOAD_FACTOR = 0.7 + (1 - 0.7) * 0.3  # utilisation 0.7, idle power 0.3
TOKENS_PER_HOUR = 0.7 * THROUGHPUT * 3600


def energy_per_mtok(price_usd_per_kwh: float) -> float:
    """Electricity per Mtok [USD/Mtok] for sample-tco at an electricity price [USD/kWh]:
    linear in the price."""
    return FACILITY_W * LOAD_FACTOR / 1000 * price_usd_per_kwh / TOKENS_PER_HOUR * 1e6


def load(path: Path, *sets: str):
    return load_scenario_file(path, list(sets)).scenario


def chain_value(path: Path, output: str, *sets: str) -> float:
    """The output of one scenario priced through the whole chain with --set overrides."""
    loaded = load_scenario_file(path, list(sets))
    return price(loaded.scenario, loaded.provenance).values[output]


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


@pytest.fixture(scope="module")
def peak():
    return load(GB300_PEAK)


def test_hand_energy_matches_the_chain():
    # guards the arithmetic above: 0.0871 USD/kWh gives ~0.003898 USD/Mtok
    assert round(FACILITY_W, 1) == 2354.7
    assert chain_value(SAMPLE, "cost_per_mtok_energy") == pytest.approx(
        energy_per_mtok(0.0871), rel=1e-12)
    assert round(energy_per_mtok(0.0871), 6) == 0.003898


# ---- tornado ----------------------------------------------------------------------------------

def test_tornado_electricity_price_moves_energy_cost_by_exactly_20_percent(sample):
    t = tornado(sample, inputs=["electricity.price"], output="cost_per_mtok_energy")
    (bar,) = t.bars
    assert (bar.key, bar.unit, bar.note) == ("electricity.price", "USD/kWh", None)
    assert bar.low == pytest.approx(0.0871 * 0.8, rel=1e-12)
    assert bar.high == pytest.approx(0.0871 * 1.2, rel=1e-12)
    assert t.base == pytest.approx(energy_per_mtok(0.0871), rel=1e-12)
    assert bar.output_low == pytest.approx(0.8 * t.base, rel=1e-12)
    assert bar.output_high == pytest.approx(1.2 * t.base, rel=1e-12)
    assert bar.swing == pytest.approx(0.4 * t.base, rel=1e-12)
    assert t.unit == "USD/Mtok" and t.output == "cost_per_mtok_energy"


def test_tornado_range_per_input_and_ranking(sample):
    t = tornado(sample, ranges={"electricity.price": "0.05..0.15 USD/kWh",
                                "utilisation": ("0.5", "0.9")})
    bars = {b.key: b for b in t.bars}
    e = bars["electricity.price"]
    assert (e.low, e.high) == (pytest.approx(0.05), pytest.approx(0.15))
    assert e.output_low == pytest.approx(
        chain_value(SAMPLE, "cost_per_mtok_total", "electricity.price=0.05 USD/kWh"), rel=1e-12)
    assert e.output_high == pytest.approx(
        chain_value(SAMPLE, "cost_per_mtok_total", "electricity.price=0.15 USD/kWh"), rel=1e-12)
    u = bars["utilisation"]
    assert u.output_low == pytest.approx(
        chain_value(SAMPLE, "cost_per_mtok_total", "utilisation=0.5"), rel=1e-12)
    swings = [b.swing for b in t.bars]
    assert swings == sorted(swings, reverse=True)


def test_tornado_default_inputs_are_what_the_cost_reads(sample):
    # facility boundary, rated basis, owned accelerator, a per-kW operating point: the cost
    # reads these 19 decided inputs; counts, carbon intensity, ISL/OSL, pricing, measured
    # power and memory bandwidth are left out (counts only when named), and so is
    # operating_point.normalised_by, which is part of the per-kW figure's unit
    t = tornado(sample)
    assert {b.key for b in t.bars} == {
        "accelerator.rated_power", "accelerator.price", "node.host_power",
        "node.psu_efficiency", "node.price", "rack.switch_power", "rack.other_power",
        "rack.power_delivery_efficiency", "rack.price", "facility.pue", "facility.hosting",
        "financing.life", "financing.cost_of_capital", "financing.salvage",
        "financing.maintenance", "electricity.price", "utilisation", "idle_power",
        "operating_point.throughput_per_kw"}
    assert t.base == pytest.approx(chain_value(SAMPLE, "cost_per_mtok_total"), rel=1e-12)


def test_tornado_never_makes_a_bar_of_the_normalising_power(peak):
    # a published token/s/kW was divided by the rated power: normalised_by is part of the
    # figure's unit (it moves with the rated power), not something a person decides
    assert peak.operating_point.throughput_per_kw is not None
    keys = {b.key for b in tornado(peak).bars}
    assert "operating_point.normalised_by" not in keys
    assert {"accelerator.rated_power", "operating_point.throughput_per_kw"} <= keys
    for call in (lambda: tornado(peak, inputs=["operating_point.normalised_by"]),
                 lambda: tornado(peak, ranges={"operating_point.normalised_by":
                                               "1000..1400 W"})):
        with pytest.raises(SensitivityError, match=r"operating_point\.normalised_by: is part "
                                                   r"of the unit of operating_point\."
                                                   r"throughput_per_kw .*not a decision"):
            call()


def test_tornado_ranges_as_text_or_pairs(sample):
    # structured callers pass a mapping of key -> "LOW..HIGH unit" or [low, high]
    as_text = tornado(sample, ranges={"electricity.price": "5..15 cent/kWh"})
    as_pair = tornado(sample, ranges={"electricity.price": ["0.05 USD/kWh",
                                                            {"value": 0.15,
                                                             "unit": "USD/kWh"}]})
    (a,), (b,) = ([x for x in t.bars if x.key == "electricity.price"]
                  for t in (as_text, as_pair))
    assert (a.low, a.high) == (pytest.approx(0.05), pytest.approx(0.15))
    assert (a.output_low, a.output_high) == (pytest.approx(b.output_low, rel=1e-12),
                                             pytest.approx(b.output_high, rel=1e-12))
    with pytest.raises(SensitivityError, match=r"electricity\.price: range: expected "
                                               r"'LOW\.\.HIGH' or \[low, high\]"):
        tornado(sample, ranges={"electricity.price": {"value": 0.1, "unit": "USD/kWh"}})


def test_tornado_clips_fractions_and_says_so(peak, sample):
    # the published point serves every hour: utilisation 1.0 cannot rise 20%
    (bar,) = tornado(peak, inputs=["utilisation"]).bars
    assert bar.high == 1.0 and bar.low == pytest.approx(0.8)
    assert bar.note == "high clipped to 1 (must be at most 1)"
    assert bar.output_high == pytest.approx(chain_value(GB300_PEAK, "cost_per_mtok_total"),
                                            rel=1e-12)
    # a PUE of 1.2 cannot fall 20% to 0.96
    (pue,) = tornado(sample, inputs=["facility.pue"]).bars
    assert pue.low == 1.0 and pue.high == pytest.approx(1.44)
    assert pue.note == "low clipped to 1 (must be at least 1)"


def test_tornado_counts_only_when_named_and_rounded(sample):
    (bar,) = tornado(sample, inputs=["node.accelerators"]).bars
    assert (bar.low, bar.high) == (3.0, 5.0)  # 4 x 0.8 = 3.2 -> 3; 4 x 1.2 = 4.8 -> 5
    assert "whole numbers" in bar.note
    assert bar.output_low == pytest.approx(
        chain_value(SAMPLE, "cost_per_mtok_total", "node.accelerators=3"), rel=1e-12)


# ---- grid -------------------------------------------------------------------------------------

def test_grid_equals_single_scenario_runs_at_every_cell(sample):
    g = grid(sample, ("electricity.price", "0.05,0.1,0.15 USD/kWh"),
             ("utilisation", "0.5..0.9:3"))
    assert g.values.shape == (3, 3)  # rows y, columns x
    assert list(g.x.values) == [0.05, 0.1, 0.15] and g.x.unit == "USD/kWh"
    assert g.y.values == pytest.approx([0.5, 0.7, 0.9])
    for i, u in enumerate(g.y.values):
        for j, p in enumerate(g.x.values):
            expected = chain_value(SAMPLE, "cost_per_mtok_total",
                                   f"electricity.price={float(p)!r} USD/kWh",
                                   f"utilisation={float(u)!r}")
            assert g.values[i, j] == pytest.approx(expected, rel=1e-12), (u, p)


def test_grid_on_published_point_and_units(peak):
    # values in other units of the same dimension are converted: 8 cent/kWh = 0.08 USD/kWh
    g = grid(peak, "electricity.price=8 cent/kWh,12 cent/kWh", "financing.life=3..7 year:3")
    assert g.x.values == pytest.approx([0.08, 0.12])
    for i, life in enumerate([3, 5, 7]):
        for j, p in enumerate(["8 cent/kWh", "12 cent/kWh"]):
            expected = chain_value(GB300_PEAK, "cost_per_mtok_total",
                                   f"electricity.price={p}", f"financing.life={life} year")
            assert g.values[i, j] == pytest.approx(expected, rel=1e-12)


def test_grid_rated_power_moves_a_defaulted_normalising_power():
    # a per-kW point with no normalised_by is normalised by the rated power, so re-pricing
    # with another rated power changes the throughput too; the grid must agree
    data = {"accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
            "operating_point": {"throughput_per_kw": "10000 token/s/kW"}}
    scenario = build_scenario(data).scenario
    g = grid(scenario, ("accelerator.rated_power", ["800 W", "1200 W"]),
             ("electricity.price", ["0.05 USD/kWh", "0.1 USD/kWh"]))
    for i, p in enumerate(["0.05 USD/kWh", "0.1 USD/kWh"]):
        for j, w in enumerate(["800 W", "1200 W"]):
            loaded = build_scenario(data, [("accelerator.rated_power", w),
                                           ("electricity.price", p)])
            expected = price(loaded.scenario).values["cost_per_mtok_total"]
            assert g.values[i, j] == pytest.approx(expected, rel=1e-12)
    # a tornado bar on the rated power moves it too: 1,000 W -/+ 20% = 800 W / 1,200 W
    (bar,) = tornado(scenario, inputs=["accelerator.rated_power"]).bars
    for w, got in [("800 W", bar.output_low), ("1200 W", bar.output_high)]:
        loaded = build_scenario(data, [("accelerator.rated_power", w)])
        assert got == pytest.approx(price(loaded.scenario).values["cost_per_mtok_total"],
                                    rel=1e-12)


# ---- Monte Carlo ------------------------------------------------------------------------------

N = 1_000_000
# Sampling error: the empirical q-quantile of n draws has a standard error of
# sqrt(q (1 - q) / n) / f(x_q), f the density; for uniform(0.05, 0.15) USD/kWh, f = 10 per
# USD/kWh, so at n = 10^6: P10/P90 0.3e-3 / 10 = 3e-5 USD/kWh, P50 0.5e-3 / 10 = 5e-5 USD/kWh.
# The mean's standard error is (0.15 - 0.05) / sqrt(12) / sqrt(n) = 2.9e-5 USD/kWh.
# Tolerances are 5 standard errors, mapped through the linear energy cost.
SE_P10 = math.sqrt(0.1 * 0.9 / N) * 0.1
SE_P50 = math.sqrt(0.5 * 0.5 / N) * 0.1
SE_MEAN = 0.1 / math.sqrt(12) / math.sqrt(N)
K = energy_per_mtok(1.0)  # USD/Mtok per USD/kWh


def test_monte_carlo_uniform_price_through_linear_energy_cost(sample):
    m = monte_carlo(sample, {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"},
                    draws=N, seed=7, output="cost_per_mtok_energy")
    assert (m.output, m.unit, m.draws, m.seed) == ("cost_per_mtok_energy", "USD/Mtok", N, 7)
    assert m.p10 == pytest.approx(energy_per_mtok(0.06), abs=5 * K * SE_P10)
    assert m.p50 == pytest.approx(energy_per_mtok(0.10), abs=5 * K * SE_P50)
    assert m.p90 == pytest.approx(energy_per_mtok(0.14), abs=5 * K * SE_P10)
    assert m.mean == pytest.approx(energy_per_mtok(0.10), abs=5 * K * SE_MEAN)
    # the standard deviation of a uniform is (b - a) / sqrt(12)
    assert m.std == pytest.approx(K * 0.1 / math.sqrt(12), rel=0.01)
    assert energy_per_mtok(0.05) <= m.min < m.max <= energy_per_mtok(0.15)
    assert m.counts.sum() == N and len(m.edges) == 51
    assert m.edges[0] == m.min and m.edges[-1] == m.max
    assert m.redrawn == {"electricity.price": 0} and m.nonfinite == 0
    # and the chain agrees at the points used above
    assert energy_per_mtok(0.06) == pytest.approx(
        chain_value(SAMPLE, "cost_per_mtok_energy", "electricity.price=0.06 USD/kWh"),
        rel=1e-12)


@pytest.mark.parametrize("spec, p10, p50, p90, mean, n", [
    # triangular(0.05, 0.08, 0.14): mean (a + c + b) / 3 = 0.09; median: F(c) = 0.03/0.09 =
    # 1/3 < 0.5, so x50 = b - sqrt(0.5 (b - a)(b - c)) = 0.14 - sqrt(0.5 x 0.09 x 0.06)
    ("triangular(0.05 USD/kWh, 0.08 USD/kWh, 0.14 USD/kWh)",
     0.05 + math.sqrt(0.1 * 0.09 * 0.03), 0.14 - math.sqrt(0.5 * 0.09 * 0.06),
     0.14 - math.sqrt(0.1 * 0.09 * 0.06), 0.09, 200_000),
    # normal(0.1, 0.01): z10 = -1.2815516; the mass below zero is Phi(-10), none
    ("normal(0.1 USD/kWh, 0.01 USD/kWh)", 0.1 - 1.2815516 * 0.01, 0.1,
     0.1 + 1.2815516 * 0.01, 0.1, 200_000),
    # lognormal(median 0.1, gsd 1.5): x_q = 0.1 x 1.5^z_q; mean = median x exp(ln(1.5)^2 / 2)
    ("lognormal(0.1 USD/kWh, 1.5)", 0.1 * 1.5 ** -1.2815516, 0.1, 0.1 * 1.5 ** 1.2815516,
     0.1 * math.exp(math.log(1.5) ** 2 / 2), 200_000),
])
def test_monte_carlo_closed_forms(sample, spec, p10, p50, p90, mean, n):
    m = monte_carlo(sample, {"electricity.price": spec}, draws=n, seed=11,
                    output="cost_per_mtok_energy")
    # each within 2% relative: for these spreads and n = 2 x 10^5 the standard errors of the
    # quantiles and the mean are below 0.4% (sqrt(q(1-q)/n)/f(x_q) over x_q), so 2% is > 5 SE
    for got, want in [(m.p10, p10), (m.p50, p50), (m.p90, p90), (m.mean, mean)]:
        assert got == pytest.approx(energy_per_mtok(want), rel=0.02)


def test_monte_carlo_is_reproducible(sample):
    dists = {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)",
             "utilisation": "triangular(0.5, 0.7, 0.9)"}
    a = monte_carlo(sample, dists, draws=50_000, seed=3)
    b = monte_carlo(sample, dists, draws=50_000, seed=3)
    c = monte_carlo(sample, dists, draws=50_000, seed=4)
    assert (a.p10, a.p50, a.p90, a.mean) == (b.p10, b.p50, b.p90, b.mean)
    assert list(a.counts) == list(b.counts)
    assert (a.p10, a.p50, a.p90, a.mean) != (c.p10, c.p50, c.p90, c.mean)
    # without a seed one is chosen, reported, and reproduces the run
    d = monte_carlo(sample, dists, draws=50_000)
    e = monte_carlo(sample, dists, draws=50_000, seed=d.seed)
    assert (d.p50, d.mean) == (e.p50, e.mean)


def test_monte_carlo_chunks_report_progress_and_keep_exact_percentiles(sample):
    dists = {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)",
             "financing.life": "triangular(4 year, 5 year, 7 year)"}
    calls = []
    chunked = monte_carlo(sample, dists, draws=2500, seed=5, chunk_size=1000,
                          progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1000, 2500), (2000, 2500), (2500, 2500)]
    whole = monte_carlo(sample, dists, draws=2500, seed=5)
    assert (chunked.p10, chunked.p50, chunked.p90) == (whole.p10, whole.p50, whole.p90)
    # and they are the order statistics of the draws themselves
    inputs, redrawn = sample_inputs(sample, dists, draws=2500, seed=5)
    from costmodel.model.evaluate import Evaluator
    from costmodel.model.steps import MODEL
    out = Evaluator(MODEL, outputs=["cost_per_mtok_total"])(inputs)["cost_per_mtok_total"]
    assert np.percentile(out, [10, 50, 90]) == pytest.approx(
        [whole.p10, whole.p50, whole.p90], rel=1e-15)
    assert redrawn == {"electricity.price": 0, "financing.life": 0}


def test_out_of_range_distributions_are_refused_or_truncated(sample):
    normal = {"electricity.price": "normal(0.1 USD/kWh, 0.05 USD/kWh)"}
    # Phi(-2) = 2.275% of such prices would be negative
    with pytest.raises(SensitivityError, match=r"electricity\.price: normal\(0\.1 USD/kWh, "
                                               r"0\.05 USD/kWh\) puts 2\.28% of its draws "
                                               r"outside the valid range"):
        monte_carlo(sample, normal, draws=1000, seed=1)
    n = 200_000
    m = monte_carlo(sample, normal, draws=n, seed=1, truncate=True,
                    output="cost_per_mtok_energy")
    # redrawn draws ~ binomial(n, 0.02275) (plus a few of their own redraws): sd ~ 67
    assert m.redrawn["electricity.price"] == pytest.approx(0.02275 * n / (1 - 0.02275),
                                                           abs=5 * 70)
    assert m.min >= 0 and m.truncate
    inputs, _ = sample_inputs(sample, normal, draws=n, seed=1, truncate=True)
    assert inputs["electricity_price"].min() >= 0
    # a uniform utilisation reaching 1.2: 0.2 / 0.7 = 28.57% outside
    # (its lower bound: the field's, 1e-6 since issue 22)
    with pytest.raises(SensitivityError, match="28.57% of its draws outside the valid range "
                                               r"\(utilisation must be at least 1e-06 "
                                               "and at most 1\\)"):
        monte_carlo(sample, {"utilisation": "uniform(0.5, 1.2)"}, draws=10, seed=1)
    # a normal throughput 10 standard deviations from zero is accepted untruncated
    assert 1 - 0.5 * (1 + math.erf(10 / math.sqrt(2))) < OUTSIDE_TOLERANCE
    ok = monte_carlo(sample, {"operating_point.throughput_per_kw":
                              "normal(11781 token/s/kW, 1178.1 token/s/kW)"}, draws=1000, seed=1)
    assert ok.redrawn == {"operating_point.throughput_per_kw": 0}


def test_distribution_objects_and_lognormal_parameterisation(sample):
    m = monte_carlo(sample, {"electricity.price": LogNormal("0.1 USD/kWh", 2.0),
                             "accelerator.price": Uniform("40000 USD", "60000 USD")},
                    draws=1000, seed=2)
    d = m.distributions["electricity.price"]
    assert d["kind"] == "lognormal" and d["gsd"] == 2.0
    assert d["median"] == {"value": 0.1, "unit": "USD/kWh"}
    assert m.distributions["accelerator.price"]["low"] == {"value": 40000.0, "unit": "USD"}


# ---- bad requests: one clear line naming the key ----------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("electricity.prise=uniform(0.05 USD/kWh, 0.15 USD/kWh)",
     "electricity.prise: not a numeric input of the calculation; did you mean "
     "electricity.price?"),
    ("power.boundary=uniform(1, 2)", "power.boundary: is categorical (chip, node, rack, "
                                     "facility)"),
    ("electricity.carbon_intensity=uniform(100 gCO2e/kWh, 200 gCO2e/kWh)",
     "electricity.carbon_intensity: does not affect cost_per_mtok_total in this scenario"),
    ("accelerator.measured_power=uniform(900 W, 1100 W)",
     "accelerator.measured_power: does not affect cost_per_mtok_total"),
    ("electricity.price=uniform(0.05, 0.15)", "electricity.price: uniform low: '0.05' has no "
                                              "unit"),
    ("electricity.price=uniform(0.05 W, 0.15 W)", "electricity.price: uniform low: energy "
                                                  "price expected"),
    ("electricity.price=gauss(0.1 USD/kWh, 0.01 USD/kWh)",
     "electricity.price: unknown distribution 'gauss'; use uniform(low, high)"),
    ("electricity.price=uniform(0.05 USD/kWh)",
     "electricity.price: uniform takes 2 parameters (low, high)"),
    ("electricity.price=uniform(0.15 USD/kWh, 0.05 USD/kWh)", "low must be below high"),
    ("utilisation=triangular(0.5, 0.95, 0.9)", "mode must lie between low and high"),
    ("electricity.price=normal(0.1 USD/kWh, 0 USD/kWh)",
     "electricity.price: normal(0.1 USD/kWh, 0 USD/kWh): sd must be greater than zero"),
    ("accelerator.price=lognormal(50000 USD, 0.5)", "gsd (geometric standard deviation) must "
                                                    "be above 1"),
    ("node.accelerators=uniform(2, 8)", "node.accelerators: is a whole-number count"),
    ("electricity.price", "--dist: expected key=DISTRIBUTION"),
])
def test_bad_distribution_specs(sample, text, message):
    with pytest.raises(InputError) as info:
        key, dist = parse_distribution(text)
        monte_carlo(sample, {key: dist}, draws=10, seed=1)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("call, message", [
    (lambda s: tornado(s, ranges=dict([parse_range("utilisation=0.5..1.2")])),
     "utilisation: range high: must be at most 1, got 1.2"),
    (lambda s: tornado(s, ranges={"electricity.price": "0.15..0.05 USD/kWh"}),
     "low 0.15 USD/kWh must be below high 0.05 USD/kWh"),
    (lambda s: tornado(s, default_swing=2), "swing: must be a fraction in (0, 1]"),
    (lambda s: tornado(s, inputs=["rack.other_power"], default_swing=0.2, output="nope"),
     "output: unknown output 'nope'"),
    (lambda s: tornado(s, inputs=["electricity.carbon_intensity"], output="emissions_per_mtok",
                       ranges={"idle_power": "0..-1"}), "idle_power: range high: "),
    (lambda s: grid(s, parse_axis("node.accelerators=1..8:3"), ("utilisation", "0.5,1")),
     "node.accelerators: grid: 1..8:3 does not give whole numbers"),
    (lambda s: grid(s, ("utilisation", "0.5,1"), ("utilisation", "0.6,0.7")),
     "utilisation: grid: x and y must be different inputs"),
    (lambda s: grid(s, ("facility.pue", "0.9,1.1"), ("utilisation", "0.5,1")),
     "facility.pue: grid value: must be at least 1, got 0.9"),
    (lambda s: grid(s, ("utilisation", "0.5..1:1"), ("facility.pue", "1.1,1.2")),
     "the count after ':' must be a whole number of at least 2"),
    (lambda s: monte_carlo(s, {"utilisation": "uniform(0.5, 0.9)"}, draws=0),
     "draws: must be a whole number from 1"),
])
def test_bad_tornado_and_grid_requests(sample, call, message):
    with pytest.raises(InputError) as info:
        call(sample)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


# ---- the command line -------------------------------------------------------------------------

def invoke(*args: str, code: int = 0):
    result = CliRunner().invoke(sensitivity, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.stderr or result.stdout
    return result


def test_cli_tornado_text_and_json():
    text = invoke("tornado", SAMPLE, "--range", "electricity.price=0.05..0.15 USD/kWh").stdout
    assert "Cost per million tokens (cost_per_mtok_total)" in text and "facility.pue *" in text
    assert "low clipped to 1 (must be at least 1)" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    # the price's row: its range in USD per kWh, the cost at each end by the display rules
    # (4 decimals from 0.01 USD/Mtok), the swing the difference
    low, high = (chain_value(SAMPLE, "cost_per_mtok_total", f"electricity.price={p} USD/kWh")
                 for p in (0.05, 0.15))
    row = next(x for x in text.splitlines() if x.startswith("electricity.price "))
    assert row.split()[:8] == ["electricity.price", "0.0500", "0.1500", "USD", "per", "kWh",
                               format_number(low, "USD/Mtok"), format_number(high, "USD/Mtok")]
    # fractions as percentages: utilisation 70% -/+ 20%
    assert next(x for x in text.splitlines()
                if x.startswith("utilisation ")).split()[1:3] == ["56.0%", "84.0%"]
    data = json.loads(invoke("tornado", GB300_PEAK, "--input", "electricity.price",
                             "--output", "cost_per_mtok.energy", "--swing", "10 %",
                             "--json").stdout)
    assert data["output"] == "cost_per_mtok_energy" and data["default_swing"] == 0.1
    (bar,) = data["bars"]
    # 0.0871 USD/kWh / (11,781 token/s/kW x 3,600 s/h) x 10^6 at the chip boundary, x 1.1
    base = 0.0871 / (11781 * 3600) * 1e6
    assert data["base"]["value"] == pytest.approx(base, rel=1e-12)
    assert bar["output_high"] == {"value": pytest.approx(1.1 * base, rel=1e-12),
                                  "unit": "USD/Mtok"}
    assert bar["low"]["unit"] == "USD/kWh"


def test_cli_grid_text_and_json():
    args = ["grid", SAMPLE, "--x", "electricity.price=0.05,0.1,0.15 USD/kWh",
            "--y", "utilisation=0.5..0.9:3"]
    text = invoke(*args).stdout
    assert "rows: utilisation (%); columns: electricity.price (USD per kWh)" in text
    # the 50% row, 0.05 USD/kWh column, by the display rules
    row = next(x for x in text.splitlines() if x.startswith("50.0% "))
    at = chain_value(SAMPLE, "cost_per_mtok_total", "electricity.price=0.05 USD/kWh",
                     "utilisation=0.5")
    assert row.split()[1] == format_number(at, "USD/Mtok")
    data = json.loads(invoke(*args, "--json").stdout)
    assert data["x"] == {"key": "electricity.price", "unit": "USD/kWh",
                         "values": [0.05, 0.1, 0.15]}
    assert data["values"][1][0] == pytest.approx(
        chain_value(SAMPLE, "cost_per_mtok_total", "electricity.price=0.05 USD/kWh",
                    "utilisation=0.7"), rel=1e-12)


def test_cli_montecarlo_json_and_text():
    args = ["montecarlo", SAMPLE, "--dist",
            "electricity.price=uniform(0.05 USD/kWh, 0.15 USD/kWh)", "--draws", "200000",
            "--seed", "7", "--output", "cost_per_mtok_energy"]
    r = invoke(*args, "--json")
    assert r.stderr == ""  # no progress bar for a short run off a terminal
    data = json.loads(r.stdout)
    assert data["output"] == "cost_per_mtok_energy"
    assert (data["draws"], data["seed"]) == (200_000, 7)
    for key in ("p10", "p50", "p90", "mean"):
        assert data[key]["unit"] == "USD/Mtok"
    # n = 2 x 10^5: the median's standard error is sqrt(0.25 / n) x 0.1 = 1.1e-4 USD/kWh
    assert data["p50"]["value"] == pytest.approx(energy_per_mtok(0.1),
                                                 abs=5 * K * 0.5 / math.sqrt(2e5) * 0.1)
    assert sum(data["histogram"]["counts"]) == 200_000
    assert len(data["histogram"]["edges"]) == 51
    text = invoke(*args).stdout
    assert "200,000 draws, seed 7" in text and "histogram" in text
    median = next(x for x in text.splitlines() if x.startswith("P50 (median)"))
    assert median.split()[2:] == [format_number(data["p50"]["value"], "USD/Mtok"), "USD", "per",
                                  "million", "tokens"]


def test_cli_montecarlo_long_run_shows_progress_on_stderr_only():
    r = invoke("montecarlo", SAMPLE, "--dist", "utilisation=triangular(0.5, 0.7, 0.9)",
               "--draws", "1.2e6", "--seed", "1", "--json")
    assert "drawing" in r.stderr
    assert json.loads(r.stdout)["draws"] == 1_200_000


@pytest.mark.parametrize("args, message", [
    (["montecarlo", SAMPLE, "--dist", "electricity.price=normal(0.1 USD/kWh, 0.05 USD/kWh)"],
     "electricity.price: normal(0.1 USD/kWh, 0.05 USD/kWh) puts 2.28% of its draws outside"),
    (["montecarlo", SAMPLE, "--dist", "utilisation=uniform(0.5, 0.9)", "--draws", "lots"],
     "--draws: must be a whole number"),
    (["montecarlo", SAMPLE, "--dist", "utilisation=uniform(0.5, 0.9)", "--seed", "-1"],
     "--seed: must be a whole number >= 0"),
    (["tornado", SAMPLE, "--swing", "2 W"], "--swing: "),
    (["tornado", SAMPLE, "--set", "electricity.price=-1 USD/kWh"], "electricity.price: "),
    (["tornado", "missing.toml"], "cannot read missing.toml"),
    (["grid", SAMPLE, "--x", "electricity.price", "--y", "utilisation=0.5,1"],
     "axis: expected key=V1,V2,... or key=LOW..HIGH:N"),
])
def test_cli_errors_are_one_line(args, message):
    r = invoke(*args, code=2)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("costmodel: error: ")
    assert message in lines[0]
