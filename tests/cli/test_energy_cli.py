"""`costmodel energy` and scenarios whose measured power comes from a power trace."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import ROOT, price_data

from costmodel.cli import main
from costmodel.model.inputs import InputError

DATA = ROOT / "tests" / "data" / "power"


def run(*args):
    return CliRunner().invoke(main, list(map(str, args)))


def test_energy_table_and_json():
    # GPU 0: 100, 200, 300 W at 1 s steps -> (150 + 250) J = 400 J; GPU 1: 400 W x 2 s = 800 J
    r = run("energy", DATA / "two_gpus_header.csv", "--tokens", 1000)
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.split())  # aligned columns read as one line
    assert "Total energy 1,200 joules" in text
    assert "Mean power per GPU 300 watts" in text           # 1,200 J / 2 s / 2 GPUs
    assert "Energy per total token 1.20 joules per token" in text  # 1,200 J / 1,000 tokens
    assert "0 400 200 300 3 0 valid" in text  # GPU 0: 100, 200, 300 W: 400 J, peak 300 W
    assert "2026-05-27T07:50:26.250+00:00" in r.stdout     # the window on the wall clock
    assert "verdict: VALID" in r.stdout
    r = run("energy", DATA / "two_gpus_header.csv", "--input-tokens", 800,
            "--output-tokens", 200, "--json")
    d = json.loads(r.stdout)
    assert d["total_energy_j"] == pytest.approx(1200)
    assert d["joules_per_token"]["input"] == {"value": pytest.approx(1.5), "unit": "J/token"}
    assert d["joules_per_token"]["output"]["value"] == pytest.approx(6.0)
    assert d["joules_per_token"]["total"]["value"] == pytest.approx(1.2)  # 1,200 J / 1,000


def test_energy_invalid_trace_exits_3_with_its_reasons():
    r = run("energy", DATA / "gap_5s.csv", "--tokens", 1000)
    assert r.exit_code == 3
    assert "verdict: INVALID" in r.stdout
    assert "GPU 0: no valid sample for 5 s" in r.stdout
    r = run("energy", DATA / "gap_5s.csv", "--max-gap", "6 s", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verdict"] == "valid"


def test_energy_bad_input_is_one_line():
    r = run("energy", DATA / "malformed.log", "--tokens", 10, "--sample-period", "1 s")
    assert r.exit_code == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "line" in r.stderr
    r = run("energy", DATA / "one_gpu_1s.log", "--sample-period", "1 kg")
    assert r.exit_code == 2 and "--sample-period: time expected" in r.stderr
    r = run("energy", DATA / "two_gpus_header.csv", "--tokens", -5)
    assert r.exit_code == 2 and "positive number of tokens" in r.stderr


BASE = {"accelerator": "b200", "operating_point": {"throughput": "1000 token/s"},
        "power": {"basis": "measured", "trace": str(DATA / "two_gpus_header.csv")}}


def test_scenario_measured_power_from_a_trace():
    r = price_data(BASE)
    assert r.value("power_per_accelerator") == pytest.approx(300)  # mean of 200 W and 400 W
    assert r.value("joules_per_token") == pytest.approx(300 / 1000)
    src = r.disclosure()["sources"]["accelerator.measured_power"]
    assert "two_gpus_header.csv" in src and "2 GPUs over 2 s" in src and "valid" in src


def test_scenario_invalid_trace_is_an_error():
    data = {**BASE, "power": {"basis": "measured", "trace": str(DATA / "gap_5s.csv")}}
    with pytest.raises(InputError) as info:
        price_data(data)
    path, message = info.value.errors[0]
    assert path == "power.trace" and "no valid sample for 5 s" in message
    data["power"]["trace_max_gap"] = "10 s"
    assert price_data(data).value("power_per_accelerator") == pytest.approx(100)


def test_scenario_trace_and_measured_power_both_given():
    data = {**BASE, "accelerator": {"catalog": "b200", "measured_power": "900 W"}}
    with pytest.raises(InputError, match="keep one"):
        price_data(data)
