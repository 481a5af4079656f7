"""The public InferenceX API's export (`GET /api/v1/benchmarks`, rows nesting their numbers in
`metrics`): import, disaggregated throughput per deployment GPU, measured power priced, latency
percentiles kept and read, TTFT ceilings, and the edge cases. The samples in
tests/data/inferencex-api/ are MADE UP (see the README there); every expected number below is
worked out by hand from them."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DATA

from costmodel import app
from costmodel.cli import main
from costmodel.model.curves import AboveCeiling, TtftCeiling, Unreachable, select
from costmodel.model.errors import UnreachablePoint
from costmodel.model.inputs import InputError
from costmodel.sources.curve_files import (
    MAX_FILE_BYTES,
    curves_csv_text,
    read_curve_text,
    read_curves,
)
from costmodel.sources.curve_point import locate_curve, parse_target, parse_ttft_max
from costmodel.store.repo import curve_of, curve_record

API = DATA / "inferencex-api"
EXPORT = API / "benchmarks-dsr1.json"
B200 = "b200/dsr1/sglang/fp8/1024x1024/none/agg/8gpu"
B200_4 = "b200/dsr1/sglang/fp8/1024x1024/none/agg/4gpu"
MI355X = "mi355x/dsr1/vllm/fp8/1024x1024/none/agg/8gpu"
GB200 = "gb200/dsr1/dynamo-sglang/fp8/1024x1024/none/disagg/p8-d16"


def _curves(path: Path = EXPORT) -> dict:
    return {c.key.id: c for c in read_curves(path)}


def _rows() -> list[dict]:
    return json.loads(EXPORT.read_text())


def _read(rows: list[dict], name: str = "export.json"):
    return read_curve_text(json.dumps(rows), name=name)


# ---- import ---------------------------------------------------------------------------------

def test_export_of_several_hardware_imports_one_curve_a_configuration():
    curves = _curves()
    # 15 rows: 4 configurations (the B200 on 8 and on 4 GPUs are two of them)
    assert {k: len(c) for k, c in curves.items()} == {B200: 4, B200_4: 2, MI355X: 4, GB200: 3}
    assert sum(len(c) for c in curves.values()) == len(_rows()) == 13
    c = curves[B200]
    assert (c.key.prefill_gpus, c.key.decode_gpus, c.key.deployment_gpus) == (8, 8, 8)
    assert curves[GB200].key.deployment_gpus == 8 + 16
    assert c.concurrency.tolist() == [4, 16, 64, 256]
    assert c.throughput.tolist() == [400, 1200, 3000, 4800]       # tput_per_gpu as published
    assert c.interactivity.tolist() == [100, 70, 40, 15]          # median_intvty
    assert c.power.tolist() == [500, 600, 700, 750]               # avg_power_w
    assert np.all(np.isnan(curves[MI355X].power))                  # no power measured there
    # a consistent sample: no note on any curve
    assert all(not x.notes for x in curves.values())
    # every point keeps its date and run_url as its source
    assert c.point_sources[1] == ("InferenceX via benchmarks-dsr1.json, date 2026-06-11, run_url "
                                  "https://example.invalid/inferencex/runs/1001/attempts/1, "
                                  "image example/sglang:made-up")
    assert "date 2026-06-09" in curves[GB200].point_sources[0]
    assert "runs/1004" in curves[GB200].point_sources[2]


def test_disaggregated_output_and_input_per_gpu_of_the_whole_deployment():
    c = _curves()[GB200]
    rows = [r for r in _rows() if r["disagg"]]
    # conc 64: output_tput_per_gpu 750 per decode GPU x 16 decode GPUs / 24 GPUs = 500;
    # input_tput_per_gpu 1,500 per prefill GPU x 8 prefill GPUs / 24 = 500; 500 + 500 = 1,000 =
    # tput_per_gpu (per GPU of the 24)
    assert rows[1]["metrics"]["output_tput_per_gpu"] == 750
    assert rows[1]["metrics"]["input_tput_per_gpu"] == 1500
    assert c.output_throughput[1] == pytest.approx(750 * 16 / 24) == 500
    assert c.input_throughput[1] == pytest.approx(1500 * 8 / 24) == 500
    assert c.throughput[1] == 1000
    np.testing.assert_allclose(c.output_throughput + c.input_throughput, c.throughput)
    assert c.point_notes[1] == (
        "output throughput = output_tput_per_gpu (per decode GPU) x 16 decode GPUs / 24 GPUs; "
        "input throughput = input_tput_per_gpu (per prefill GPU) x 8 prefill GPUs / 24 GPUs")
    # the aggregated rows count the deployment's GPUs in both: nothing converted
    b200 = _curves()[B200]
    assert b200.output_throughput.tolist() == [200, 600, 1500, 2400]
    assert b200.point_notes == ["", "", "", ""]


def test_parts_that_disagree_with_the_total_are_noted():
    rows = [r for r in _rows() if r["disagg"]]
    rows[1]["metrics"]["output_tput_per_gpu"] = 810  # 810 x 16 / 24 = 540; 540 + 500 = 1,040
    (c,) = _read(rows)
    assert c.output_throughput[1] == pytest.approx(540)
    (note,) = c.notes
    assert note.startswith("export.json row 2: output + input throughput (per deployment GPU, "
                           "converted) 1040 token/s disagrees with tput_per_gpu 1000 token/s")
    assert "(+4%)" in note
    rows[1]["metrics"]["output_tput_per_gpu"] = 765  # 510 + 500 = 1,010: within 2%
    (c,) = _read(rows)
    assert not c.notes


def test_disaggregated_without_gpu_counts_leaves_the_parts_out():
    rows = [r for r in _rows() if r["disagg"]][:1]
    rows[0]["num_prefill_gpu"] = rows[0]["num_decode_gpu"] = None
    (c,) = _read(rows)
    assert c.key.id == "gb200/dsr1/dynamo-sglang/fp8/1024x1024/none/disagg"  # no GPU part
    assert c.throughput[0] == 300
    assert np.isnan(c.output_throughput[0]) and np.isnan(c.input_throughput[0])
    assert "cannot be put per GPU of the deployment" in c.notes[0]


def test_joules_per_token_checked_against_the_row_to_half_a_percent():
    rows = [r for r in _rows() if r["hardware"] == "b200"][:2]
    # conc 16: 600 W / 1,200 token/s = 0.5 J/token; the row says 0.5
    rows[1]["metrics"]["joules_per_total_token"] = 0.502     # +0.4%: within 0.5%
    (c,) = _read(rows)
    assert not c.notes
    rows[1]["metrics"]["joules_per_total_token"] = 0.504     # 0.5 / 0.504 - 1 = -0.79%
    (c,) = _read(rows)
    (note,) = c.notes
    assert note == ("export.json row 2: avg_power_w / tput_per_gpu = 600 W / 1200 token/s = 0.5 "
                    "J/token disagrees with joules_per_total_token 0.504 J/token (-0.794%)")


def test_percentiles_gpu_counts_sources_and_notes_survive_the_curve_csv_and_the_store():
    curves = list(_curves().values())
    text = curves_csv_text(curves)
    header = text.splitlines()[0].split(",")
    for col in ("prefill_gpus", "decode_gpus", "interactivity_p90 [token/s/user]",
                "interactivity_mean [token/s/user]", "interactivity_p99 [token/s/user]",
                "ttft_mean [s]", "ttft_p90 [s]", "ttft_p99 [s]", "e2e_latency_p90 [s]",
                "tpot_median [s]", "tpot_p90 [s]", "itl_median [s]", "source", "note"):
        assert col in header
    back = {c.key.id: c for c in read_curve_text(text, name="back.csv")}
    assert set(back) == {c.key.id for c in curves}
    for c in curves:
        b = back[c.key.id]
        assert b.key == c.key
        for name in ("interactivity", "throughput", "output_throughput", "input_throughput",
                     "ttft", "e2e_latency", "power", "concurrency"):
            np.testing.assert_array_equal(getattr(b, name), getattr(c, name))
        assert set(b.latency) == set(c.latency)
        for name, values in c.latency.items():
            np.testing.assert_array_equal(b.latency[name], values)
        assert b.point_sources == c.point_sources and b.point_notes == c.point_notes
    # the service stores curve CSV text: the same comes back from a stored row
    mi = _curves()[MI355X]
    stored = curve_of(curve_record(mi, origin="test"))
    assert stored.key.id == MI355X
    assert stored.column("interactivity", "p90").tolist() == [80, 50, 20, 12]
    assert stored.column("ttft", "p90").tolist() == [0.4, 1.0, 2.5, 4.0]
    assert stored.point_sources == mi.point_sources


def test_a_curve_without_the_new_columns_writes_the_columns_it_always_had():
    fixture = DATA.parent.parent / "fixtures" / "curves" / "illustrative-gpt-oss-120b.csv"
    text = curves_csv_text(read_curves(fixture))
    assert text.splitlines()[0] == (
        "hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,concurrency,"
        "interactivity [token/s/user],throughput [token/s],output_throughput [token/s],"
        "input_throughput [token/s],ttft [s],e2e_latency [s],power [W],source")


# ---- measured power priced -----------------------------------------------------------------

def _price(op: dict, **power):
    data = {"accelerator": "b200", "power": {"boundary": "chip", "basis": "measured", **power},
            "operating_point": {"curve": str(EXPORT), **op}}
    return app.price(app.LocalContext(), app.ScenarioSpec(app.InlineScenario(data))).result


@pytest.mark.parametrize("at", [{"concurrency": 16}, {"interactivity": "70 token/s/user"}])
def test_measured_power_point_at_the_chip_gives_the_rows_joules_per_token(at):
    r = _price({"curve_id": B200, "at": at})
    # the conc-16 row: tput_per_gpu 1,200 token/s at avg_power_w 600 W;
    # J/token = 600 / 1,200 = 0.5 = its joules_per_total_token
    assert r.value("throughput") == 1200
    assert r.value("power_per_accelerator") == 600
    assert r.value("joules_per_token") == pytest.approx(0.5, rel=1e-3)
    assert "measured on curve" in r.disclosure()["sources"]["accelerator.measured_power"]
    op = r.disclosure()["operating_point"]
    assert "runs/1001" in op["source"] and "2026-06-11" in op["source"]


def test_disaggregated_measured_power_point_from_a_scenario_file(tmp_path: Path):
    (tmp_path / "file.json").write_text(EXPORT.read_text())
    scenario = tmp_path / "gb200.toml"
    scenario.write_text(f'accelerator = "gb200"\n\n[power]\nboundary = "chip"\n'
                        f'basis = "measured"\n\n[operating_point]\ncurve = "file.json"\n'
                        f'curve_id = "{GB200}"\nat = {{ concurrency = 256 }}\n')
    r = app.price(app.LocalContext(), app.ScenarioSpec(app.FileScenario(scenario))).result
    # the conc-256 row: tput_per_gpu 2,400 per GPU of the 24 at 720 W per GPU:
    # J/token = 720 / 2,400 = 0.3 = its joules_per_total_token
    assert r.value("throughput") == 2400
    assert r.value("joules_per_token") == pytest.approx(0.3, rel=1e-3)
    op = r.disclosure()["operating_point"]
    assert "x 16 decode GPUs / 24 GPUs" in op["note"]   # the point's note: the conversion
    assert r.disclosure()["workload"]["disaggregated"] is True


# ---- percentiles and TTFT ceilings, by hand ---------------------------------------------------
# The MI355X sample (conc: tput, median / p90 interactivity, median / p90 TTFT [s]):
#   4: 500, 90 / 80, 0.2 / 0.4     16: 1,500, 60 / 50, 0.5 / 1.0
#  64: 3,000, 30 / 20, 1.2 / 2.5  128: 3,600, 20 / 12, 2.0 / 4.0

def test_a_p90_read_uses_the_p90_interactivity_column():
    c = _curves()[MI355X]
    s = select(c, "interactivity", 50, percentile="p90")
    assert (s.status, s.throughput, s.concurrency) == ("exact", 1500, 16)  # p90 = 50 at conc 16
    assert "on the p90 interactivity" in s.description
    # at the median, 50 token/s/user lies between conc 16 (60) and conc 64 (30)
    m = select(c, "interactivity", 50)
    assert m.status == "interpolated" and 1500 < m.throughput < 3000
    assert "on the median interactivity" in m.description and m.points == (2, 1)
    # a p90 TBT of 20 ms is a p90 interactivity of 1,000 / 20 = 50 token/s/user
    assert select(c, "tbt", 20, percentile="p90").throughput == 1500
    # the best p90 interactivity is 80 (conc 4): 85 is unreachable there, not at the median
    with pytest.raises(Unreachable, match=r"best is 80 token/s/user on curve .* \(p90 inter"):
        select(c, "interactivity", 85, percentile="p90")
    assert select(c, "interactivity", 85).status == "interpolated"
    with pytest.raises(LookupError, match="has no p90 interactivity"):
        select(_curves()[B200_4], "interactivity", 50, percentile="p90")


def test_a_ttft_ceiling_leaves_the_points_above_it_out():
    c = _curves()[MI355X]
    p90 = TtftCeiling(2.0, "p90")  # p90 TTFT <= 2 s: conc 4 (0.4) and 16 (1.0); not 64 (2.5)
    assert select(c, "peak", ttft_max=p90).throughput == 1500      # not 3,600 (conc 128)
    # two frontier points (60, 1,500) and (90, 500): PCHIP on two points is the line,
    # at 75: 1,500 + (75 - 60) / (90 - 60) x (500 - 1,500) = 1,000
    s = select(c, "interactivity", 75, ttft_max=p90)
    assert s.throughput == pytest.approx(1000)
    assert s.frontier_points == 2 and s.points == (1, 0)
    assert "2 of 4 points left out by the ceiling p90 TTFT at most 2 s" in s.description
    # a p90 read under the same ceiling: (50, 1,500), (80, 500); at 65: 1,500 - 15/30 x 1,000
    assert select(c, "interactivity", 65, percentile="p90", ttft_max=p90).throughput == \
        pytest.approx(1000)
    # the median TTFT of every point is at most 2 s (conc 128: 2.0, the ceiling included)
    assert select(c, "peak", ttft_max=TtftCeiling(2.0)).throughput == 3600
    with pytest.raises(AboveCeiling, match="above the TTFT ceiling"):
        select(c, "concurrency", 64, ttft_max=p90)
    with pytest.raises(AboveCeiling, match=r"lowest p90 TTFT is 0.4 s"):
        select(c, "peak", ttft_max=TtftCeiling(0.1, "p90"))
    with pytest.raises(AboveCeiling, match="has no p99 TTFT"):
        select(_curves()[B200_4], "peak", ttft_max=TtftCeiling(1.0, "p99"))


def _mi355x(op: dict):
    data = {"accelerator": "mi355x", "power": {"boundary": "chip"},
            "operating_point": {"curve": str(EXPORT), "curve_id": MI355X, **op}}
    return app.price(app.LocalContext(), app.ScenarioSpec(app.InlineScenario(data))).result


def test_scenarios_read_at_a_percentile_under_a_ceiling():
    r = _mi355x({"at": {"interactivity": "50 token/s/user", "percentile": "p90"}})
    op = r.disclosure()["operating_point"]
    assert r.value("throughput") == 1500
    assert op["interactivity"] == {"value": 50.0, "unit": "token/s/user"}
    assert "p90 interactivity" in op["chosen"]
    r = _mi355x({"at": {"interactivity": "75 token/s/user"},
                 "ttft_max": {"value": "2 s", "percentile": "p90"}})
    assert r.value("throughput") == pytest.approx(1000)
    assert "ceiling p90 TTFT at most 2 s" in r.disclosure()["operating_point"]["chosen"]
    assert _mi355x({"ttft_max": "2000 ms"}).value("throughput") == 3600  # median: all four
    with pytest.raises(InputError) as info:
        _mi355x({"ttft_max": {"value": 100, "unit": "ms", "percentile": "p90"}})
    assert info.value.errors[0][0] == "operating_point.ttft_max"
    with pytest.raises(UnreachablePoint):
        _mi355x({"at": {"tbt": "12 ms", "percentile": "p90"}})  # 83.3 > 80


def test_the_scenarios_percentile_and_ceiling_apply_to_its_matched_frontier():
    op = {"curve": str(EXPORT), "curve_id": MI355X,
          "at": {"interactivity": "50 token/s/user", "percentile": "p90"}}
    ref = locate_curve({"operating_point": op}, None)
    assert ref.frontier().best_interactivity == 80             # p90, not the median's 90
    ref = locate_curve({"operating_point": {**op, "ttft_max": {"value": "0.5 s",
                                                                 "percentile": "p90"}}}, None)
    assert ref.frontier().best_interactivity == 80 and len(ref.frontier().throughput) == 1


@pytest.mark.parametrize("at,where,fragment", [
    ({"percentile": "p90"}, "operating_point.at", "expected"),
    ({"concurrency": 4, "percentile": "p90"}, "operating_point.at.percentile",
     "not at concurrency"),
    ({"interactivity": "50 token/s/user", "percentile": "p95"}, "operating_point.at.percentile",
     "unknown percentile 'p95'"),
    ({"interactivity": "50 token/s/user", "tbt": "20 ms"}, "operating_point.at", "expected"),
    ({"interactivity": "5 W", "percentile": "p90"}, "operating_point.at.interactivity", ""),
])
def test_bad_percentile_targets(at, where, fragment):
    with pytest.raises(InputError) as info:
        parse_target(at)
    assert info.value.errors[0][0] == where and fragment in info.value.errors[0][1]


def test_ttft_max_syntax():
    assert parse_ttft_max("2 s") == TtftCeiling(2.0, "median")
    assert parse_ttft_max({"value": "2 s", "percentile": "p90"}) == TtftCeiling(2.0, "p90")
    assert parse_ttft_max({"value": 1500, "unit": "ms", "percentile": "p99"}) == \
        TtftCeiling(1.5, "p99")
    for bad in ({"percentile": "p90"}, {"value": "2 s", "percentile": "p50"}, "2 W",
                {"value": "2 s", "at": 1}):
        with pytest.raises(InputError) as info:
            parse_ttft_max(bad)
        assert info.value.errors[0][0].startswith("operating_point.ttft_max")
    with pytest.raises(InputError, match=r"give operating_point\.curve"):
        locate_curve({"operating_point": {"throughput": "1 token/s", "ttft_max": "2 s"}}, None)


# ---- edge cases -------------------------------------------------------------------------------

def _cli_import(path: Path):
    return CliRunner().invoke(main, ["curves", "import", str(path)])


def test_a_row_without_metrics_is_refused_naming_it():
    r = _cli_import(API / "edge-no-metrics.json")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f'costmodel: error: {API / "edge-no-metrics.json"} row 2: no "metrics": a row of '
        f'/api/v1/benchmarks carries its numbers in a "metrics" object']


def test_nulls_are_not_measured():
    (c,) = read_curves(API / "edge-nulls.json")
    assert len(c) == 2 and c.throughput.tolist() == [400, 1200]
    assert np.isnan(c.power[1]) and np.isnan(c.ttft[1]) and np.isnan(c.e2e_latency[1])
    assert np.isnan(c.column("interactivity", "p90")[1])  # null p90_intvty and p90_tpot
    assert c.column("interactivity", "p90")[0] == 95
    assert c.point_sources[1] == "InferenceX via edge-nulls.json, date 2026-06-11"
    assert not c.notes
    # a null throughput on a row with measured power: W / (J/token) = 600 / 0.5 = 1,200
    rows = _rows()[:2]
    rows[1]["metrics"]["tput_per_gpu"] = None
    (c,) = _read(rows)
    assert c.throughput[1] == pytest.approx(1200)


@pytest.mark.parametrize("change,fragment", [
    (lambda r: r["metrics"].update(tput_per_gpu=None, avg_power_w=None),
     "no throughput: needs tput_per_gpu"),
    (lambda r: r.update(hardware=None), "needs hw/hardware and model"),
    (lambda r: r.update(metrics=[1, 2]), "metrics must be an object"),
    (lambda r: r.update(framework={"name": "x"}), "framework must be text"),
    (lambda r: r["metrics"].update(median_ttft="fast"), "median_ttft must be a number"),
    (lambda r: r["metrics"].update(tput_per_gpu=-5), "must not be negative"),
    (lambda r: r.update(num_decode_gpu=7.5), "num_decode_gpu must be a whole number"),
    (lambda r: r.update(conc=0), "conc must be above zero"),
    (lambda r: r["metrics"].update(tput_per_gpu=0), "tput_per_gpu must be above zero"),
    # a line break in a name would change the curve's id on its way through the curve CSV
    (lambda r: r.update(hardware="b2\n00"), "hardware must be printable text"),
])
def test_bad_rows_are_one_line_errors(tmp_path: Path, change, fragment):
    rows = _rows()[:3]
    change(rows[1])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(rows))
    r = _cli_import(path)
    assert r.exit_code == 2 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"costmodel: error: {path} row 2: ") and fragment in line


def test_every_imported_curve_reads_back_from_its_curve_csv():
    # the service stores the CSV text and parses it on every later read: what the import
    # accepts must come back, also with line breaks in a source
    rows = _rows()
    rows[0]["run_url"] = "https://example.invalid/x\n# not a comment line\u2028y"
    curves = _read(rows)
    back = read_curve_text(curves_csv_text(curves), name="back.csv")
    assert [len(c) for c in back] == [len(c) for c in curves]
    assert back[0].point_sources[0].endswith("run_url https://example.invalid/x # not a "
                                             "comment line y, image example/sglang:made-up")


def test_deeply_nested_json_is_an_error_not_a_crash():
    with pytest.raises(InputError, match="nested too deeply"):
        read_curve_text("[" * 100_000 + "]" * 100_000, name="deep.json", max_chars=None)


def test_unknown_hardware_is_a_free_name_with_a_note():
    (c,) = read_curves(API / "edge-unknown-hardware.json")
    assert c.key.hardware == "tpu-v7x"                            # lower-cased, as every name
    assert c.notes == ["hardware 'tpu-v7x' is not one InferenceX publishes (h100, h200, b200, "
                       "b300, gb200, gb300, mi300x, mi325x, mi355x): taken as a free name"]
    r = _cli_import(API / "edge-unknown-hardware.json")
    assert r.exit_code == 0 and "note: hardware 'tpu-v7x'" in r.stderr


def test_duplicate_rows_keep_the_newer_with_a_note():
    (c,) = read_curves(API / "edge-duplicates.json")
    # rows 1 and 2: concurrency 4 twice (2026-06-10 at 500, 2026-06-12 at 3,100 token/s)
    assert c.concurrency.tolist() == [4, 16]
    assert c.throughput.tolist() == [3100, 1500]
    assert "runs/1005" in c.point_sources[0]
    assert c.notes == [f"{API / 'edge-duplicates.json'}: rows 1 and 2 measure the same "
                       f"configuration, parallelism and concurrency 4: row 2 kept (date "
                       f"2026-06-12), row 1 dropped (date 2026-06-10)"]


def test_other_parallelism_at_one_concurrency_is_not_a_duplicate():
    rows = [r for r in _rows() if r["hardware"] == "mi355x"][:2]
    other = json.loads(json.dumps(rows[0]))
    other["prefill_dp_attention"] = other["decode_dp_attention"] = True
    (c,) = _read([*rows, other])
    assert len(c) == 3 and not c.notes


def test_rows_of_other_benchmark_types_are_skipped_with_a_note():
    rows = _rows()[:2]
    agentic = {**rows[0], "benchmark_type": "agentic_traces", "isl": None, "osl": None}
    (c,) = _read([{**rows[0], "benchmark_type": "single_turn"}, agentic, rows[1]])
    assert len(c) == 2
    assert c.notes == ["export.json: 1 rows of benchmark_type 'agentic_traces' skipped (rows 2): "
                       "a curve is a single_turn sweep at one ISL/OSL"]
    with pytest.raises(InputError, match="no single_turn rows"):
        _read([agentic])


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path):
    big = tmp_path / "huge.json"
    with big.open("wb") as fh:  # a sparse 50 MB file: its size is checked, never its content
        fh.truncate(50_000_000)
    r = _cli_import(big)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"costmodel: error: {big}: 50.0 MB; the limit is {MAX_FILE_BYTES / 1e6:g} MB a curve "
        f"file (split it, e.g. by model or hardware)"]
    with pytest.raises(InputError, match="1,001 characters; the limit is 1,000"):
        read_curve_text("[" + " " * 1000, name="t", max_chars=1000)


def test_flat_exports_keep_their_curve_ids():
    # powerx.csv (a flat export) carries num_prefill_gpu / num_decode_gpu too: its curves keep
    # the ids without GPU counts, so the fixtures' and stored curves' ids stay valid
    ids = {c.key.id for c in read_curves(DATA / "inferencex" / "powerx.csv")}
    assert "b200/dsv4/vllm/fp4/8192x1024/none/agg" in ids
    assert not any(i.endswith("gpu") or "/p8-" in i for i in ids)


# ---- through the service (stored as curve CSV text) -------------------------------------------

def test_service_imports_the_export_and_reads_it_at_a_percentile(client, tokens):
    from conftest import auth
    hw = f"mi355x-{uuid.uuid4().hex[:8]}"  # a fresh curve id on each backend and run
    rows = [{**r, "hardware": hw} for r in _rows() if r["hardware"] == "mi355x"]
    created = client.post("/api/v1/curves", json={"content": json.dumps(rows)},
                          headers=auth(tokens["editor"]))
    assert created.status_code == 201, created.get_data(as_text=True)
    cid = MI355X.replace("mi355x", hw, 1)
    assert [c["curve_id"] for c in created.get_json()["items"]] == [cid]
    stored = client.get(f"/api/v1/curves/{cid}", headers=auth(tokens["viewer"])).get_json()
    assert "interactivity_p90 [token/s/user]" in stored["csv"] and "ttft_p90 [s]" in stored["csv"]
    scenario = {"accelerator": "mi355x", "operating_point": {
        "curve": cid, "at": {"interactivity": "50 token/s/user", "percentile": "p90"}}}
    resp = client.post("/api/v1/price", json={"scenario": scenario},
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["throughput"]["value"] == 1500  # p90 = 50 at conc 16, by hand above
    scenario["operating_point"] = {"curve": cid, "at": {"interactivity": "75 token/s/user"},
                                   "ttft_max": {"value": "2 s", "percentile": "p90"}}
    resp = client.post("/api/v1/price", json={"scenario": scenario},
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["throughput"]["value"] == pytest.approx(1000)


def test_a_row_measured_three_times_keeps_the_newest_and_notes_both_others():
    row = next(r for r in _rows() if r["hardware"] == "mi355x")
    rows = [{**row, "date": d} for d in ("2026-06-10", "2026-06-08", "2026-06-12")]
    (c,) = _read(rows)
    assert len(c) == 1 and "date 2026-06-12" in c.point_sources[0]
    # row 2 loses to row 1, then row 1 to row 3: both notes name row 3, the one kept
    assert c.notes == [
        "export.json: rows 2 and 3 measure the same configuration, parallelism and concurrency "
        "4: row 3 kept (date 2026-06-12), row 2 dropped (date 2026-06-08)",
        "export.json: rows 1 and 3 measure the same configuration, parallelism and concurrency "
        "4: row 3 kept (date 2026-06-12), row 1 dropped (date 2026-06-10)"]
