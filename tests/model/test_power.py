"""Measured power: reading logs, trapezoid energy over a window, validity, J/token.

Every expected number is hand arithmetic written beside it.
"""
from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from conftest import DATA as TEST_DATA

from costmodel.model.inputs import InputError
from costmodel.model.power import PowerTrace, integrate, joules_per_token
from costmodel.sources.power_log import (
    parse_power_log,
    read_inferencex_metrics,
    read_power_log,
)

DATA = TEST_DATA / "power"
POWERX = TEST_DATA / "inferencex" / "powerx.csv"


def _message(info) -> str:
    return str(info.value)


# --- reading nvidia-smi logs and integrating them -------------------------------------------

def test_one_gpu_no_header_no_units_at_1s():
    trace = read_power_log(DATA / "one_gpu_1s.log", sample_period=1.0)
    report = integrate(trace)
    gpu = report.gpus[0]
    # 100, 200, 300 W one second apart: (100+200)/2*1 + (200+300)/2*1 = 150 + 250 = 400 J
    assert gpu.energy == pytest.approx(400.0)
    assert gpu.duration == pytest.approx(2.0)  # 3 samples, 2 intervals of 1 s
    assert gpu.average_power == pytest.approx(200.0)  # 400 J / 2 s
    assert gpu.peak_power == pytest.approx(300.0)
    assert gpu.samples == 3
    assert report.valid and report.verdict == "valid" and report.reasons == ()
    assert report.total_energy == pytest.approx(400.0)
    assert trace.warnings == ()


def test_sample_period_scales_time():
    trace = read_power_log(DATA / "one_gpu_1s.log", sample_period=2.0)
    # same readings 2 s apart: (150 + 250) W * 2 s = 800 J over 4 s, still 200 W on average
    report = integrate(trace)
    assert report.total_energy == pytest.approx(800.0)
    assert report.mean_average_power == pytest.approx(200.0)


def test_no_timestamps_and_no_sample_period_is_a_clear_error():
    with pytest.raises(InputError) as info:
        read_power_log(DATA / "one_gpu_1s.log")
    assert "one_gpu_1s.log" in _message(info)
    assert "sample_period" in _message(info)


def _check_two_gpus(report):
    gpu0, gpu1 = report.gpus
    assert (gpu0.gpu, gpu1.gpu) == ("0", "1")
    # GPU 0: 100, 200, 300 W at 1 s -> 150 + 250 = 400 J
    assert gpu0.energy == pytest.approx(400.0)
    # GPU 1: 400 W flat for 2 s -> 800 J
    assert gpu1.energy == pytest.approx(800.0)
    assert report.total_energy == pytest.approx(1200.0)  # 400 + 800
    assert report.duration == pytest.approx(2.0)
    assert report.total_average_power == pytest.approx(600.0)  # 1200 J / 2 s
    assert report.mean_average_power == pytest.approx(300.0)  # (200 + 400) W / 2 GPUs
    assert report.peak_power == pytest.approx(400.0)
    assert report.valid


def test_two_gpus_header_units_timestamps():
    trace = read_power_log(DATA / "two_gpus_header.csv")
    assert trace.gpu_ids == ("0", "1")
    assert "POSIX" in trace.clock
    # 2026/05/27 07:50:26.250 read as UTC
    first = datetime(2026, 5, 27, 7, 50, 26, 250000, tzinfo=UTC).timestamp()
    assert trace.gpus[0].times[0] == pytest.approx(first)
    _check_two_gpus(integrate(trace))


def test_two_gpus_without_header_or_units_given_the_query():
    trace = read_power_log(DATA / "two_gpus_noheader_nounits.csv",
                           query="timestamp,index,power.draw,utilization.gpu")
    _check_two_gpus(integrate(trace))


def test_two_gpus_cycling_lines_without_index_or_timestamps():
    # lines alternate GPU 0, GPU 1: 100, 400, 200, 400, 300, 400
    trace = read_power_log(DATA / "two_gpus_cycle.log", gpus=2, sample_period=1.0)
    _check_two_gpus(integrate(trace))


def test_naive_timestamps_in_another_zone_shift_the_clock_not_the_energy():
    plus2 = timezone(timedelta(hours=2))
    utc = read_power_log(DATA / "two_gpus_header.csv")
    local = read_power_log(DATA / "two_gpus_header.csv", naive_tz=plus2)
    # 07:50 at UTC+2 is 05:50 UTC, 7200 s earlier
    assert utc.gpus[0].times[0] - local.gpus[0].times[0] == pytest.approx(7200.0)
    assert integrate(local).total_energy == pytest.approx(1200.0)


def test_iso_timestamps():
    report = integrate(read_power_log(DATA / "iso_one_gpu.csv"))
    # 100, 200, 300 W at 1 s -> 400 J over 2 s
    assert report.total_energy == pytest.approx(400.0)
    assert report.duration == pytest.approx(2.0)


def test_header_less_log_with_timestamp_and_power_only():
    text = "2026/05/27 07:50:26.000, 100\n2026/05/27 07:50:27.000, 300\n"
    report = integrate(parse_power_log(text))
    assert report.total_energy == pytest.approx(200.0)  # (100+300)/2 W * 1 s


def test_header_less_log_finds_the_value_with_watts():
    text = "0, 97 %, 100.00 W\n0, 97 %, 300.00 W\n"
    report = integrate(parse_power_log(text, sample_period=1.0))
    assert report.total_energy == pytest.approx(200.0)  # (100+300)/2 W * 1 s


def test_header_less_log_with_ambiguous_columns_asks_for_the_query():
    with pytest.raises(InputError) as info:
        parse_power_log("0, 97, 100\n0, 97, 300\n", source="q.log", sample_period=1.0)
    assert "q.log" in _message(info) and "query" in _message(info)


def test_milliwatt_and_kilowatt_units():
    text = "power.draw [mW]\n100000\n0.3 kW\n"  # 100 W from the header unit, 300 W from its own
    report = integrate(parse_power_log(text, sample_period=1.0))
    assert report.total_energy == pytest.approx(200.0)  # (100+300)/2 W * 1 s


def test_several_gpus_without_index_and_repeating_timestamps_need_a_count():
    text = ("2026/05/27 07:50:26.000, 100 W\n2026/05/27 07:50:26.000, 400 W\n"
            "2026/05/27 07:50:27.000, 200 W\n2026/05/27 07:50:27.000, 400 W\n")
    with pytest.raises(InputError) as info:
        parse_power_log(text, source="multi.log")
    assert "multi.log line 2" in _message(info) and "gpus=N" in _message(info)
    report = integrate(parse_power_log(text, gpus=2))
    # GPU 0: (100+200)/2 * 1 s = 150 J; GPU 1: 400 W * 1 s = 400 J
    assert [g.energy for g in report.gpus] == pytest.approx([150.0, 400.0])


def test_gpu_count_is_checked_against_the_index_column():
    with pytest.raises(InputError) as info:
        read_power_log(DATA / "two_gpus_header.csv", gpus=4)
    assert "4 GPUs expected" in _message(info) and "0, 1" in _message(info)


# --- gaps, missing readings, truncation, malformed lines -------------------------------------

def test_gap_of_5s_is_invalid_and_names_the_gpu_and_the_gap():
    report = integrate(read_power_log(DATA / "gap_5s.csv"))
    gpu = report.gpus[0]
    assert not report.valid and report.verdict == "invalid"
    assert len(gpu.gaps) == 1
    assert gpu.gaps[0].length == pytest.approx(5.0)  # samples at 2 s and 7 s
    assert len(report.reasons) == 1
    reason = report.reasons[0]
    assert "GPU 0" in reason and "5 s" in reason and "from 2 s to 7 s" in reason
    # the number is still there, beside the verdict: 100 W * 8 s = 800 J
    assert gpu.energy == pytest.approx(800.0)
    as_dict = report.as_dict()
    assert as_dict["verdict"] == "invalid" and as_dict["gpus"][0]["verdict"] == "invalid"
    with pytest.raises(ValueError) as info:
        report.require_valid()
    assert "GPU 0" in str(info.value) and "5 s" in str(info.value)


def test_a_larger_gap_limit_accepts_the_same_trace():
    report = integrate(read_power_log(DATA / "gap_5s.csv"), max_gap=5.0)
    assert report.valid  # a 5 s gap is not longer than a 5 s limit
    assert report.require_valid() is report


def test_not_available_readings_are_gaps_not_zeros():
    report = integrate(read_power_log(DATA / "not_available.csv"))
    gpu = report.gpus[0]
    # valid readings 100, 300, 500 W at 0, 2, 4 s; [N/A] at 1 s and [Not Supported] at 3 s
    # (100+300)/2 * 2 s + (300+500)/2 * 2 s = 400 + 800 = 1200 J
    # (as zeros it would be 50 + 150 + 150 + 250 = 600 J)
    assert gpu.energy == pytest.approx(1200.0)
    assert gpu.missing == 2
    assert gpu.samples == 3
    assert report.valid  # the 2 s holes are within the 3 s limit


def test_missing_readings_that_make_a_long_gap_are_invalid():
    text = "100\n[N/A]\n[N/A]\n[N/A]\n100\n"
    report = integrate(parse_power_log(text, sample_period=1.0))
    # valid at 0 s and 4 s: a 4 s hole with 3 readings missing, over the 3 s limit
    assert not report.valid
    assert report.gpus[0].gaps[0].missing == 3
    assert "3 readings missing" in report.reasons[0]
    assert report.total_energy == pytest.approx(400.0)  # 100 W * 4 s


def test_truncated_last_value_is_dropped_with_a_warning():
    trace = read_power_log(DATA / "truncated_value.log", sample_period=1.0)
    # "300\n65" with no end-of-line: the 65 is a cut 652.3-like value, dropped
    assert len(trace.warnings) == 1
    assert "truncated_value.log line 4" in trace.warnings[0]
    report = integrate(trace)
    assert report.total_energy == pytest.approx(400.0)  # 100, 200, 300 W -> 150 + 250 J
    assert report.valid and report.warnings == trace.warnings


def test_truncated_last_line_missing_fields_is_dropped_with_a_warning():
    trace = read_power_log(DATA / "truncated_fields.csv")
    assert len(trace.warnings) == 1 and "line 5" in trace.warnings[0]
    assert integrate(trace).total_energy == pytest.approx(400.0)  # 150 + 250 J


def test_malformed_line_is_an_input_error_naming_file_and_line():
    with pytest.raises(InputError) as info:
        read_power_log(DATA / "malformed.log", sample_period=1.0)
    assert "malformed.log line 3: cannot read '6x2.1' as power" in _message(info)


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ("timestamp, power.draw [W]\n", "only a header"),
    ("timestamp, power.draw [W]\n2026/05/27 07:50:26, 100 W\nyesterday, 100 W\n",
     "line 3: cannot read 'yesterday' as a timestamp"),
    ("timestamp, power.draw [W]\n2026/05/27 07:50:26, 100 W, 5\n2026/05/27 07:50:27, 1 W\n",
     "line 2: expected 2 fields, found 3"),
    ("index, power.draw [W]\n0, -5 W\n0, 5 W\n", "cannot read '-5 W' as power"),
    ("index, power.draw [V]\n0, 5\n0, 5\n", "not in watts"),
    ("index, temperature.gpu\n0, 50\n", "no power column"),
    ("timestamp, index, power.draw [W]\n2026/05/27 07:50:27, 0, 1 W\n"
     "2026/05/27 07:50:26, 0, 1 W\n", "line 3: GPU 0's timestamp goes back in time"),
])
def test_other_malformed_input(text, message):
    with pytest.raises(InputError) as info:
        parse_power_log(text, source="p.log", sample_period=1.0)
    assert message in _message(info)
    assert _message(info).startswith("p.log")


def test_readings_sharing_a_timestamp_are_averaged():
    text = ("timestamp,gpu,power_w\n0,0,100\n0,0,300\n1,0,200\n")
    trace = parse_power_log(text)
    # two readings at 0 s average to 200 W; 200 W flat for 1 s = 200 J
    assert list(trace.gpus[0].power) == [200.0, 200.0]
    assert integrate(trace).total_energy == pytest.approx(200.0)


# --- InferenceX gpu_metrics.csv ---------------------------------------------------------------

def test_inferencex_nvidia_gpu_metrics():
    trace = read_inferencex_metrics(DATA / "inferencex_nvidia_gpu_metrics.csv", gpus=2)
    report = integrate(trace)
    gpu0, gpu1 = report.gpus
    # window = trace span 26.101 .. 28.104 s = 2.003 s
    assert report.duration == pytest.approx(2.003)
    # GPU 0 at 26.101, 27.101, 28.101: (600+650)/2 + (650+700)/2 = 625 + 675 = 1300 J,
    # plus its last reading held for the 0.003 s to the window end: 700 * 0.003 = 2.1 J
    assert gpu0.energy == pytest.approx(1302.1)
    # GPU 1 starts 0.003 s into the window: 500 W * 2.003 s = 1001.5 J
    assert gpu1.energy == pytest.approx(1001.5)
    assert report.valid
    # inside GPU 0's own samples the edges are interpolated, nothing held: 1300 J
    inner = integrate(trace, start=trace.gpus[0].times[0], end=trace.gpus[0].times[-1])
    assert inner.gpus[0].energy == pytest.approx(1300.0)


def test_inferencex_amd_gpu_metrics():
    report = integrate(read_inferencex_metrics(DATA / "inferencex_amd_gpu_metrics.csv"))
    gpu0, gpu1 = report.gpus
    # socket_power, not power_management; epoch seconds 1779868226..28
    assert report.start == 1779868226.0 and report.duration == pytest.approx(2.0)
    assert gpu0.energy == pytest.approx(1420.0)  # (700+710)/2 + (710+720)/2 = 705 + 715
    assert gpu1.energy == pytest.approx(1380.0)  # (680+690)/2 + (690+700)/2 = 685 + 695
    assert report.total_energy == pytest.approx(2800.0)
    assert report.mean_average_power == pytest.approx(700.0)  # 2800 J / 2 s / 2 GPUs


def test_generic_long_format():
    report = integrate(read_inferencex_metrics(DATA / "long_format.csv"))
    gpu = report.gpus[0]
    assert gpu.gpu == "a"
    # (100+300)/2 * 0.5 s + (300+100)/2 * 1 s = 100 + 200 = 300 J over 1.5 s
    assert gpu.energy == pytest.approx(300.0)
    assert gpu.average_power == pytest.approx(200.0)


def test_inferencex_reader_needs_a_gpu_column():
    with pytest.raises(InputError) as info:
        read_inferencex_metrics(DATA / "iso_one_gpu.csv")
    assert "no GPU column" in _message(info)


# --- the window ---------------------------------------------------------------------------------

def _ramp():
    # P = 100 + 100 t W at t = 0..4 s
    return PowerTrace.from_arrays({"0": ([0, 1, 2, 3, 4], [100, 200, 300, 400, 500])},
                                  source="ramp")


def test_window_clipping_interpolates_the_boundaries():
    report = integrate(_ramp(), start=0.5, end=3.5)
    gpu = report.gpus[0]
    # boundary values 150 W at 0.5 s and 450 W at 3.5 s;
    # (150+200)/2*0.5 + (200+300)/2 + (300+400)/2 + (400+450)/2*0.5
    # = 87.5 + 250 + 350 + 212.5 = 900 J  (= integral of 100+100t from 0.5 to 3.5)
    assert gpu.energy == pytest.approx(900.0)
    assert gpu.duration == pytest.approx(3.0)
    assert gpu.average_power == pytest.approx(300.0)  # 900 J / 3 s
    assert gpu.peak_power == pytest.approx(450.0)  # the interpolated end, not the 500 W outside
    assert gpu.samples == 5  # 1, 2, 3 inside and 0, 4 bracketing
    assert report.valid


def test_window_between_two_samples():
    gpu = integrate(_ramp(), start=1.25, end=1.75).gpus[0]
    # 225 W and 275 W at the ends: (225+275)/2 * 0.5 s = 125 J
    assert gpu.energy == pytest.approx(125.0)
    assert gpu.samples == 2


def test_window_edge_not_covered_within_the_limit_holds_the_first_reading():
    report = integrate(_ramp(), start=-2.0, end=4.0)
    # 100 W held for the 2 s before the first sample: 200 J, plus 0..4 s:
    # 150 + 250 + 350 + 450 = 1200 J; total 1400 J, valid (2 s <= 3 s)
    assert report.total_energy == pytest.approx(1400.0)
    assert report.valid


def test_window_edge_not_covered_beyond_the_limit_is_invalid():
    report = integrate(_ramp(), start=-4.0, end=8.0)
    assert not report.valid
    assert any("first valid sample 4 s after the window start" in r for r in report.reasons)
    assert any("last valid sample 4 s before the window end" in r for r in report.reasons)


def test_too_few_samples_is_invalid():
    trace = PowerTrace.from_arrays({"0": ([0.0, 1.0], [100.0, float("nan")])})
    report = integrate(trace, start=0.0, end=0.5)
    assert not report.valid
    assert "only 1 valid sample" in report.reasons[0]
    no_reading = PowerTrace.from_arrays({"0": ([0.0, 1.0], [float("nan")] * 2)})
    bad = integrate(no_reading)
    assert not bad.valid and np.isnan(bad.total_energy) and "no valid sample" in bad.reasons[0]


def test_bad_windows_and_traces_raise():
    with pytest.raises(ValueError):
        integrate(_ramp(), start=3.0, end=1.0)
    with pytest.raises(ValueError):
        integrate(_ramp(), max_gap=0.0)
    with pytest.raises(ValueError):
        PowerTrace.from_arrays({"0": ([0.0, 0.0], [1.0, 1.0])})  # times must increase
    with pytest.raises(ValueError):
        PowerTrace.from_arrays({"0": ([0.0, 1.0], [1.0, -1.0])})  # no negative power


# --- joules per token ---------------------------------------------------------------------------

def test_joules_per_token_from_counts():
    report = integrate(read_power_log(DATA / "two_gpus_header.csv"))  # 1200 J, see above
    j = joules_per_token(report, input_tokens=1000, output_tokens=200)
    assert j.input == pytest.approx(1.2)  # 1200 J / 1000 tokens
    assert j.output == pytest.approx(6.0)  # 1200 J / 200 tokens
    assert j.total == pytest.approx(1.0)  # 1200 J / (1000 + 200) tokens
    assert j.valid
    only_total = joules_per_token(report, total_tokens=2400)
    assert only_total.total == pytest.approx(0.5)  # 1200 / 2400
    assert only_total.input is None and only_total.output is None


def test_joules_per_token_carries_the_verdict():
    report = integrate(read_power_log(DATA / "gap_5s.csv"))  # 800 J, invalid
    j = joules_per_token(report, output_tokens=100)
    assert j.output == pytest.approx(8.0)  # 800 J / 100 tokens
    assert not j.valid and "GPU 0" in j.reasons[0]


@pytest.mark.parametrize("kwargs", [{}, {"total_tokens": 0}, {"output_tokens": True},
                                    {"input_tokens": -5}])
def test_joules_per_token_rejects_bad_counts(kwargs):
    with pytest.raises(ValueError):
        joules_per_token(integrate(_ramp()), **kwargs)


def test_powerx_joules_per_token_relation():
    """InferenceX divides the whole energy E by each count (see joules_per_token).

    So 1/J_total = 1/J_in + 1/J_out, i.e. J_total = J_in*J_out/(J_in+J_out), on every row.
    The columns are rounded to 6 decimals (±5e-7 each); the relation's error bound is
    5e-7 * (1 + dJ_total/dJ_in + dJ_total/dJ_out), with the partial derivatives
    (J_out/(J_in+J_out))^2 and (J_in/(J_in+J_out))^2.
    With ISL/OSL 8192/1024, J_out/J_in = N_in/N_out is near but not exactly 8192/1024 = 8:
    the measured lengths differ from the nominal ones (within 1.5% on these rows).
    """
    with POWERX.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 37
    for row in rows:
        j_in, j_out, j_total = (float(row[f"joules_per_{k}_token"])
                                for k in ("input", "output", "total"))
        assert (row["isl"], row["osl"]) == ("8192", "1024")
        harmonic = j_in * j_out / (j_in + j_out)
        bound = 5e-7 * (1 + (j_out / (j_in + j_out)) ** 2 + (j_in / (j_in + j_out)) ** 2)
        assert abs(harmonic - j_total) <= bound, row["id"]
        assert abs(j_out / j_in / 8.0 - 1) < 0.015, row["id"]


def test_report_as_dict_has_no_nan():
    no_reading = PowerTrace.from_arrays({"0": ([0.0, 1.0], [float("nan")] * 2)})
    data = integrate(no_reading).as_dict()
    assert data["verdict"] == "invalid" and data["total_energy_j"] is None
    assert data["gpus"][0]["energy_j"] is None
