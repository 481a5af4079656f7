"""Every figure the published articles below print, and the arithmetic they show, reproduced
from the fixtures through the engine, to the published rounding.

Sources: "OpenAI's Jalapeño Turns Latency Into a Power Bill" (The Weighted Average, Aug 2026),
"Jalapeño's Perf-Per-Watt Number Divides by the Datasheet, Not the Meter" (2026-08-25),
"OpenAI Jalapeño Clocks 56x More Interactive Throughput Per Kilowatt..." (Aug 2026),
"Jalapeño vs Blackwell: what the 1.9x perf/watt actually measures" (Aug 2026).
"""
from __future__ import annotations

import pytest

# (model, comparison system, published peak tok/s/kW: Jalapeño, comparison)
PEAKS = [("gpt-oss-120b", "gb200", 85448, 44960),
         ("deepseek-r1", "gb300", 19641, 11781),
         ("kimi-k2.5", "gb300", 18195, 11862)]


@pytest.mark.parametrize("model,system,jal,cmp", PEAKS)
def test_peak_throughput_per_kw_round_trips(published, model, system, jal, cmp):
    # The engine turns the per-kW figure into throughput per accelerator (x normalising power)
    # and back at the chip/rated boundary: it must give the published figure exactly.
    assert published(model, "jalapeno", "peak").value("throughput_per_kw") == pytest.approx(
        jal, rel=1e-12)
    assert published(model, system, "peak").value("throughput_per_kw") == pytest.approx(
        cmp, rel=1e-12)


def test_throughput_per_accelerator_is_figure_times_normalising_power(published):
    # 19,641 token/s/kW x 0.7 kW rated = 13,748.7 token/s
    assert published("deepseek-r1", "jalapeno", "peak").value("throughput") == pytest.approx(
        13748.7, rel=1e-12)
    # 11,781 x 1.4 kW = 16,493.4 token/s
    assert published("deepseek-r1", "gb300", "peak").value("throughput") == pytest.approx(
        16493.4, rel=1e-12)


@pytest.mark.parametrize("system,point,millions", [
    ("jalapeno", "peak", 70.7),     # 19,641 x 3,600 = 70.7 M tokens/kWh
    ("gb300", "peak", 42.4),        # 11,781 x 3,600 = 42.4 M
    ("jalapeno", "matched", 44.1),  # 12,258 x 3,600 = 44.1 M
])
def test_tokens_per_kwh(published, system, point, millions):
    v = published("deepseek-r1", system, point).value("tokens_per_kwh")
    assert round(v / 1e6, 1) == millions


def test_tokens_per_kwh_gb300_interactive(published):
    # 118 x 3,600 = 424,800: "425,000 tokens per kilowatt-hour"
    v = published("deepseek-r1", "gb300", "matched").value("tokens_per_kwh")
    assert v == pytest.approx(424800, rel=1e-12)
    assert round(v, -3) == 425000


@pytest.mark.parametrize("system,point,published_usd,digits", [
    ("jalapeno", "peak", 0.00123, 5),     # $0.00123/Mtok
    ("gb300", "peak", 0.00205, 5),        # $0.00205/Mtok
    ("jalapeno", "matched", 0.00197, 5),  # $0.00197/Mtok at 169 tok/s/user
    ("gb300", "matched", 0.205, 3),       # $0.205/Mtok at 169 tok/s/user
])
def test_electricity_per_mtok_at_eia_may_2026(published, system, point, published_usd, digits):
    r = published("deepseek-r1", system, point)
    assert r.scenario.electricity.price == pytest.approx(0.0871)  # 8.71 cents/kWh
    assert round(r.value("cost_per_mtok_energy"), digits) == published_usd
    # and exactly the articles' formula: price / tokens per kWh x 10^6
    assert r.value("cost_per_mtok_energy") == pytest.approx(
        0.0871 / r.value("tokens_per_kwh") * 1e6, rel=1e-12)


def test_hundredfold_jump_at_the_interactive_point(published):
    peak = published("deepseek-r1", "gb300", "peak").value("cost_per_mtok_energy")
    inter = published("deepseek-r1", "gb300", "matched").value("cost_per_mtok_energy")
    assert round(inter / peak) == 100  # 11,781 / 118 = 99.8: "a hundredfold jump"


@pytest.mark.parametrize("model,system,rated,measured", [
    ("gpt-oss-120b", "gb200", 1.9, 2.4),
    ("deepseek-r1", "gb300", 1.7, 2.1),
    ("kimi-k2.5", "gb300", 1.5, 1.9),
])
def test_rated_to_measured_shift(published, model, system, rated, measured):
    """Dividing Jalapeño by its measured 550 W instead of 700 W rated: x 700/550 (~27%)."""
    jal_rated = published(model, "jalapeno", "peak")
    jal_measured = published(model, "jalapeno", "peak", "power.basis=measured")
    other = published(model, system, "peak")  # no measured figure published: rated
    assert jal_measured.disclosure()["power_basis"] == "measured"
    assert jal_measured.value("power_per_accelerator") == 550
    lift = jal_measured.value("throughput_per_kw") / jal_rated.value("throughput_per_kw")
    assert lift == pytest.approx(700 / 550, rel=1e-12)
    assert round(lift - 1, 2) == 0.27
    tpk = "throughput_per_kw"
    assert round(jal_rated.value(tpk) / other.value(tpk), 1) == rated
    exact = jal_measured.value(tpk) / other.value(tpk)
    # "about 2.4x / closer to 2.1x / roughly 1.9x": the exact ratios are 2.42, 2.12 and 1.95
    # (Kimi's 1.9 is its rounded 1.5x scaled by 1.27), so the published figures are within 0.06.
    assert abs(exact - measured) < 0.06


@pytest.mark.parametrize("model,system,interactivity,ratio", [
    ("gpt-oss-120b", "gb200", 535, 53.7),   # 22,935 / 427
    ("deepseek-r1", "gb300", 169, 104),     # 12,258 / 118
    ("kimi-k2.5", "gb300", 182.46, 56),     # 6,744 / 120
])
def test_matched_interactivity_ratios(published, model, system, interactivity, ratio):
    from conftest import PUBLISHED

    from costmodel.app.build import load_scenario_file
    from costmodel.model.chain import compare
    files = [PUBLISHED / f"{model}_{s}_matched.toml" for s in (system, "jalapeno")]
    loaded = [load_scenario_file(f) for f in files]
    c = compare([(x.scenario, x.provenance) for x in loaded])
    r = c.ratios("throughput_per_kw")[1]
    digits = 1 if ratio == 53.7 else 0
    assert round(r, digits) == ratio
    for res in c.results:
        d = res.disclosure()["operating_point"]
        assert d["interactivity"] == {"value": interactivity, "unit": "token/s/user"}
        assert d["chosen"].startswith("published point")


def test_bandwidth_per_watt_gap(published):
    """22 GB/s/W against 6.7 (GB200) and 5.7 (GB300): the quoted 3.3-3.9x gap."""
    jal = published("deepseek-r1", "jalapeno", "peak").value("bandwidth_per_watt")
    gb200 = published("gpt-oss-120b", "gb200", "peak").value("bandwidth_per_watt")
    gb300 = published("deepseek-r1", "gb300", "peak").value("bandwidth_per_watt")
    assert round(jal) == 22        # 15.4 TB/s / 700 W
    assert round(gb200, 1) == 6.7  # 8 TB/s / 1,200 W
    assert round(gb300, 1) == 5.7  # 8 TB/s / 1,400 W
    assert round(jal / gb200, 1) == 3.3
    assert round(jal / gb300, 1) == 3.9


def test_published_scenarios_disclose_their_denominator(published):
    r = published("deepseek-r1", "gb300", "matched")
    d = r.disclosure()
    assert (d["boundary"], d["power_basis"], d["token_kind"]) == ("chip", "rated", "mixed")
    assert d["electricity"]["date"] == "2026-05"
    assert "EIA" in d["electricity"]["source"]
    assert d["workload"]["precision"] == "MXFP4"
    assert d["workload"]["isl"]["value"] == 8192 and d["workload"]["osl"]["value"] == 1024
    assert d["workload"]["speculative_decoding"] == "mtp"
    assert d["operating_point"]["tbt"] == {"value": 5.90, "unit": "ms"}
    assert "118" not in d["sources"]["operating_point.throughput_per_kw"]  # a citation, not data
    assert "WA" in d["sources"]["operating_point.throughput_per_kw"]
    assert "1,400 W" in d["sources"]["accelerator.rated_power"]
