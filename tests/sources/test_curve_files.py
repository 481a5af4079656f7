"""Importing real InferenceX files, costmodel's curve CSV, and the curve commands."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DATA, ROOT

from costmodel.cli import main
from costmodel.model.inputs import InputError
from costmodel.sources.curve_files import curves_csv_text, read_curve_text, read_curves

INFX = DATA / "inferencex"
AGG = next(INFX.glob("agg_*.json"))
RAW = next(p for p in INFX.glob("kimik2.5_*.json"))
POWERX = INFX / "powerx.csv"


def test_agg_row():
    (c,) = read_curves(AGG)
    assert c.key.id == "mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg"
    assert round(c.interactivity[0], 2) == 57.49       # median_intvty
    assert round(c.throughput[0], 2) == 55.63          # tput_per_gpu
    assert round(c.output_throughput[0], 2) == 27.68 and round(c.input_throughput[0], 2) == 27.95
    assert c.concurrency[0] == 4 and round(c.ttft[0], 4) == 0.2970
    # interactivity is 1 / TPOT: the row's median_intvty and median_tpot agree
    assert c.interactivity[0] == pytest.approx(1 / 0.017393898241078155, rel=1e-6)


def test_raw_benchmark_needs_gpus_and_matches_the_agg_row():
    with pytest.raises(InputError, match="GPU count"):
        read_curves(RAW)
    (c,) = read_curves(RAW, gpus=8, hardware="MI355X")
    assert c.throughput[0] == pytest.approx(445.0136269213033 / 8, rel=1e-12)
    assert c.throughput[0] == pytest.approx(55.62670336516291, rel=1e-9)  # the agg row's value
    assert c.interactivity[0] == pytest.approx(1000 / 17.393898241078155, rel=1e-12)


def _powerx_rows():
    with POWERX.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_powerx_implied_throughput_and_token_accounting():
    rows = _powerx_rows()
    assert len(rows) == 37
    curves = read_curves(POWERX)
    assert sum(len(c) for c in curves) == 37
    points = {(c.key.framework, c.key.disaggregated, c.key.spec_decoding, c.concurrency[i],
               round(c.power[i], 3)): (c.throughput[i], c.output_throughput[i],
                                      c.input_throughput[i])
              for c in curves for i in range(len(c))}
    for r in rows:
        w = float(r["avg_power_w"])
        ji, jo, jt = (float(r[f"joules_per_{k}_token"]) for k in ("input", "output", "total"))
        key = (r["framework"], r["disagg"] == "true", r["spec_method"], float(r["conc"]),
               round(w, 3))
        total, out, inp = points[key]
        assert total == pytest.approx(w / jt, rel=1e-12)   # token/s = W / (J/token)
        assert out == pytest.approx(w / jo, rel=1e-12) and inp == pytest.approx(w / ji, rel=1e-12)
        # each J/token divides the same energy by a different count: 1/Jt = 1/Ji + 1/Jo
        assert 1 / jt == pytest.approx(1 / ji + 1 / jo, rel=1e-5)
        # input tokens per output token ~ ISL/OSL = 8192/1024 (sampled lengths vary ~1.5%)
        assert jo / ji == pytest.approx(8192 / 1024, rel=0.015)
        assert total == pytest.approx(out + inp, rel=1e-5)


def test_powerx_curve_has_no_interactivity():
    c = next(c for c in read_curves(POWERX) if c.key.id == "b200/dsv4/vllm/fp4/8192x1024/none/agg")
    assert len(c) == 23 and np.all(np.isnan(c.interactivity))
    with pytest.raises(ValueError, match="no point with both interactivity"):
        c.frontier()


def test_api_json_export_and_agreement_check():
    rows = _powerx_rows()[:2]
    rows[0]["tput_per_gpu"] = str(float(rows[0]["avg_power_w"]) / float(
        rows[0]["joules_per_total_token"]))                       # agrees
    rows[1]["tput_per_gpu"] = "2500"                              # 2,185 implied: disagrees
    (c,) = read_curve_text(json.dumps(rows), name="export.json")
    assert len(c) == 2
    assert c.throughput[1] == 2500  # the reported figure is kept ...
    assert any("disagrees" in n and "2500" in n for n in c.notes)  # ... and flagged
    assert not any("row 1" in n for n in c.notes)


def test_own_csv_round_trip_and_units_in_headers(tmp_path: Path):
    text = ("hardware,model,concurrency,tbt [ms],throughput [ktok/s],power [kW]\n"
            "x1,m,1,5,0.5,0.7\n"
            "x1,m,8,20,2.0,0.9\n")
    (c,) = read_curve_text(text, name="mine.csv")
    assert c.interactivity.tolist() == [200.0, 50.0]     # 1,000 / TBT in ms
    assert c.throughput.tolist() == [500.0, 2000.0]      # ktok/s -> token/s
    assert c.power.tolist() == [700.0, 900.0]
    (back,) = read_curve_text(curves_csv_text([c]), name="back.csv")
    for name in ("interactivity", "throughput", "power", "concurrency"):
        np.testing.assert_array_equal(getattr(back, name), getattr(c, name))
    assert back.key == c.key


@pytest.mark.parametrize("text,fragment", [
    ("hardware,model,throughput\nx,m,1\n", "needs its unit"),
    ("hardware,model,throughput [W]\nx,m,1\n", "throughput expected"),
    ("hardware,model,speed [token/s]\nx,m,1\n", "unknown column 'speed [token/s]'"),
    ("hardware,throughput [token/s]\nx,1\n", "missing column 'model'"),
    ("hardware,model,throughput [token/s]\nx,m,abc\n", "cannot read 'abc'"),
    ("hardware,model,throughput [token/s]\nx,m,-5\n", "negative"),
    ("hardware,model,throughput [token/s]\n", "no points"),
    ('{"hw": "x"', "malformed JSON"),
    ('[{"hw": "b200", "model": "m"}]', "no throughput"),
])
def test_bad_curve_files(text, fragment):
    with pytest.raises(InputError) as info:
        read_curve_text(text, name="bad")
    assert fragment in str(info.value)


def test_cli_curves_import_show_and_plot(tmp_path: Path):
    out = tmp_path / "curves.csv"
    r = CliRunner().invoke(main, ["curves", "import", str(AGG), str(POWERX), "--out", str(out),
                                  "--comment", "test import"])
    assert r.exit_code == 0, r.output
    assert "mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg: 1 points" in r.stderr
    assert out.read_text().startswith("# test import\n")
    assert len(read_curves(out)) == 5  # 1 from the agg row, 4 keys in powerx.csv
    png = tmp_path / "frontier.png"
    curves = ROOT / "fixtures" / "curves" / "illustrative-gpt-oss-120b.csv"
    r = CliRunner().invoke(main, ["curves", "show", str(curves), "--curve-id",
                                  "h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg",
                                  "--at-interactivity", "100 token/s/user", "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert "6 points, 6 on the Pareto frontier" in r.stdout
    assert "PCHIP" in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "frontier.svg"
    r = CliRunner().invoke(main, ["curves", "show", "mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg",
                                  "--plot", str(svg)])
    assert r.exit_code == 0, r.output
    assert b"<svg" in svg.read_bytes()[:400]


def test_cli_curves_show_text_rounds_by_the_display_rules():
    from costmodel import app
    from costmodel.render.display import format_number
    curves = ROOT / "fixtures" / "curves" / "illustrative-gpt-oss-120b.csv"
    cid = "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
    r = CliRunner().invoke(main, ["curves", "show", str(curves), "--curve-id", cid,
                                  "--at-interactivity", "100 token/s/user"])
    assert r.exit_code == 0, r.output
    view = app.show_curve(app.LocalContext(), str(curves), cid, "mixed", 100.0)
    c = view.curve
    # each point: concurrency a count, interactivity and throughput whole above 100, times
    # in seconds by magnitude, power "-" where the curve has none
    rows = {x.split()[1]: x.split()[1:] for x in r.stdout.splitlines() if x.startswith("*")}
    for i in range(len(c)):
        assert rows[f"{c.concurrency[i]:.0f}"] == [
            f"{c.concurrency[i]:.0f}", format_number(c.interactivity[i], "token/s/user"),
            format_number(c.throughput[i], "token/s"), format_number(c.ttft[i], "s"),
            format_number(c.e2e_latency[i], "s"), format_number(c.power[i], "W")]
    assert rows["64"][:3] == ["64", "120", "6,500"]
    shown = format_number(view.reading.throughput, "token/s")
    assert f"=> throughput {shown} tokens per second per accelerator" in r.stdout


def test_cli_curves_show_unreachable_is_one_line():
    r = CliRunner().invoke(main, ["curves", "show", "mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg",
                                  "--at-interactivity", "100 token/s/user"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "costmodel: error: --at-interactivity: 100 token/s/user is unreachable: the frontier's "
        "best is 57.49 token/s/user on curve mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg"]


SCEN = ROOT / "fixtures" / "scenarios"


def test_cli_compare_matched_and_named_interactivity():
    files = [str(SCEN / "curve-gpt-oss-120b-h100.toml"), str(SCEN / "curve-gpt-oss-120b-b200.toml")]
    r = CliRunner().invoke(main, ["compare", "--matched", "--json", *files])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    # H100's best interactivity is 180 token/s/user: both are read there
    for s in d["scenarios"]:
        assert s["disclosure"]["operating_point"]["interactivity"]["value"] == 180
    assert d["scenarios"][0]["throughput"]["value"] == 180      # H100's measured point
    b200 = d["scenarios"][1]["throughput"]["value"]
    assert 3000 < b200 < 6500                                   # between (210, 3000), (120, 6500)
    assert d["ratios"]["throughput"][1] == pytest.approx(b200 / 180, rel=1e-12)
    r = CliRunner().invoke(main, ["compare", "--at-interactivity", "300 token/s/user", *files])
    assert r.exit_code == 2
    assert "curve-gpt-oss-120b-h100.toml: operating_point.at.interactivity: 300 token/s/user " \
           "is unreachable: the frontier's best is 180 token/s/user" in r.stderr
    published = SCEN / "published"
    r = CliRunner().invoke(main, ["compare", "--matched", str(published /
                                  "deepseek-r1_gb300_peak.toml"), files[0]])
    assert r.exit_code == 2 and "needs an operating point read from a curve" in r.stderr


HOSTILE_CSV = """\
hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,concurrency,\
interactivity [token/s/user],throughput [token/s],source,note
{hw},@tiny,+vllm,fp8,1024,1024,none,false,1,200,200,"=HYPERLINK(""http://x"",""y"")",-a note
{hw},@tiny,+vllm,fp8,1024,1024,none,false,8,100,1000,a test sweep,=1+1
"""


def test_formula_leading_cells_are_neutralised_and_numbers_stay_numbers():
    from costmodel.sources.cells import neutralise_cell, unneutralise_cell
    for text, safe in [("=1+1", "'=1+1"), ("+x", "'+x"), ("-x", "'-x"),
                       ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
                       ("plain", "plain"), ("", ""), ("-5", "-5"), ("-1.5e-3", "-1.5e-3"),
                       ("+2", "+2"), ("'=x", "''=x"), ("'plain", "'plain")]:
        assert neutralise_cell(text) == safe, text
        assert unneutralise_cell(safe) == text, text
    # a text with its own apostrophe gets one more: every text reads back as it was
    assert unneutralise_cell(neutralise_cell("''@x")) == "''@x"


def test_curve_csv_neutralises_text_cells_and_reads_back_the_same():
    (c,) = read_curve_text(HOSTILE_CSV.format(hw="-chip"), name="h.csv")
    assert c.key.hardware == "-chip" and c.key.model == "@tiny"
    text = curves_csv_text([c])
    rows = list(csv.reader(text.splitlines()))
    assert rows[1][:3] == ["'-chip", "'@tiny", "'+vllm"]
    cells = [cell for row in rows[1:] for cell in row]
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in cells)
    # every cell starting with "-" is a number (none here is negative) or neutralised
    assert "'=HYPERLINK(\"http://x\",\"y\")" in cells and "'=1+1" in cells
    (again,) = read_curve_text(text, name="again.csv")
    assert again.key == c.key and again.point_sources == c.point_sources
    assert again.point_notes == c.point_notes
    assert list(again.throughput) == list(c.throughput)


def test_api_curve_csv_is_safe_to_open_in_a_spreadsheet(client, tokens):
    import uuid

    from conftest import auth
    hw = f"-chip{uuid.uuid4().hex[:6]}"
    r = client.post("/api/v1/curves", json={"content": HOSTILE_CSV.format(hw=hw)},
                    headers=auth(tokens["editor"]))
    assert r.status_code == 201, r.json
    cid = r.json["items"][0]["curve_id"]
    got = client.get(f"/api/v1/curves/{cid}", headers=auth(tokens["viewer"]))
    assert got.status_code == 200
    rows = list(csv.reader(got.json["csv"].splitlines()))
    assert rows[1][:2] == [f"'{hw}", "'@tiny"]
    at = {name: i for i, name in enumerate(rows[0])}
    assert [(r[at["source"]], r[at["note"]]) for r in rows[1:]] == [
        ("'=HYPERLINK(\"http://x\",\"y\")", "'-a note"), ("a test sweep", "'=1+1")]
    # the numbers are numbers still, and the file imports back as the same curve
    assert [float(r[at["throughput [token/s]"]]) for r in rows[1:]] == [200, 1000]
    (back,) = read_curve_text(got.json["csv"], name="saved.csv")
    assert back.key.id == cid and back.point_sources[0] == '=HYPERLINK("http://x","y")'

