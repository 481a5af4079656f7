"""What the disclosure cites, in every rendering (JSON, terminal, workbook, API):

- an input set by anyone but its source (``--set``, an API ``overrides`` entry, an edited
  workbook cell) never keeps the old citation: the electricity price's source and date, a
  published operating point's label and source are replaced by where the value came from;
- no output sent out (JSON, workbooks, API answers, saved revisions) names a file by an
  absolute path of the machine that wrote it.
"""
from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SCENARIOS, auth, price_data
from openpyxl import load_workbook

from costmodel import app
from costmodel.cli import main
from costmodel.render.report import result_table
from costmodel.render.workbook.export import FIRST_COL
from costmodel.render.workbook.names import named_cells
from costmodel.sources.paths import shown_path

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SAMPLE = SCENARIOS / "sample-tco.toml"  # electricity from the catalog (EIA, May 2026)
NEW_PRICE = 0.1742  # USD/kWh: not the EIA figure
GB300_PEAK = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
ILLUSTRATIVE = ROOT / "fixtures" / "curves" / "illustrative-gpt-oss-120b.csv"
B200_CURVE = "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
H100_CURVE = "h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
TRACE = ROOT / "tests" / "data" / "power" / "two_gpus_header.csv"


def cli(*args) -> str:
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.fixture
def defaulted(tmp_path) -> Path:
    """A scenario with no [electricity] table: the price is the default, cited to EIA."""
    path = tmp_path / "defaulted.toml"
    path.write_text('name = "gb300 defaults"\naccelerator = "gb300"\n'
                    'operating_point = "deepseek-r1/gb300/peak"\n', encoding="utf-8")
    return path


# ---- what each rendering must say -------------------------------------------------------------

def check_json(result: dict, where: str) -> None:
    """A JSON result whose electricity price came from ``where``: the disclosure says so."""
    d = result["disclosure"]
    e = d["electricity"]
    assert e["price"] == {"value": pytest.approx(NEW_PRICE), "unit": "USD/kWh"}
    assert e["source"] == where and e["date"] is None
    electricity = {k: v for k, v in d["sources"].items() if k.startswith("electricity.")
                   and k != "electricity.carbon_intensity"}
    assert electricity == {"electricity.price": where, "electricity.source": where,
                           "electricity.date": where}
    assert not any(k.startswith(("electricity.price", "electricity.source", "electricity.date"))
                   for k in d["defaults_used"])
    assert "EIA" not in json.dumps(e) + json.dumps(electricity)


def flat(text: str) -> str:
    """Terminal text with its wrapping and column padding read as one line."""
    return " ".join(text.split())


def check_terminal(text: str, where: str) -> None:
    # the electricity item, up to the next item's label
    assert f"Electricity 0.1742 USD per kWh ({where}; undated) Financing" in flat(text)
    assert "EIA" not in text


def _cover(wb) -> dict[str, list]:
    """Cover rows by their item: the values in the system columns."""
    return {row[0].value: [c.value for c in row[FIRST_COL - 1:]]
            for row in wb["Cover"].iter_rows() if isinstance(row[0].value, str)}


def _sources(wb) -> dict[tuple[str, str], str]:
    """Sources rows: (system, input) -> source. The sheet lists each source once with the
    keys it gives, under a section naming the system (or every system, in a comparison)."""
    from costmodel.render.workbook.cover import SHARED_SOURCES
    rows = wb["Sources"].iter_rows(min_row=4, max_col=2, values_only=True)
    names = [n for n in _cover(wb)["item"] if n]
    out, section = {}, None
    for source, keys in rows:
        if source is None:
            break
        if keys is None:  # a section: the system it lists
            section = source
            continue
        for key in keys.split(", "):
            for system in (names if section == SHARED_SOURCES else [section]):
                out[(system, key)] = source
    return out


def check_workbook(book: bytes | Path, where: str) -> None:
    """The Cover and Sources sheets of a workbook whose first system's price came from
    ``where``."""
    wb = load_workbook(io.BytesIO(book) if isinstance(book, bytes) else book)
    cover = _cover(wb)
    assert cover["electricity source"][0] == where
    assert cover["electricity date"][0] == "undated"
    # live, from Inputs: the flat price, or a tariff's price per kWh drawn
    assert cover["electricity price"][0] == "=electricity_effective_price"
    system = cover["item"][0]  # the header row names the systems
    sources = _sources(wb)
    for key in ("electricity.price", "electricity.source", "electricity.date"):
        assert sources[(system, key)] == where, key
    cover_text = " ".join(str(v) for row in cover.values() for v in row[:1] if v)
    assert "EIA" not in cover_text
    assert not any("EIA" in (v or "") for (s, k), v in sources.items()
                   if s == system and k.startswith("electricity."))


def check_baseline(result: dict) -> None:
    """Without an override the same scenario cites EIA: the checks above are not vacuous."""
    e = result["disclosure"]["electricity"]
    assert e["price"]["value"] == pytest.approx(0.0871)
    assert "EIA" in e["source"] and e["date"] == "2026-05"


# ---- 1. --set on the command line -------------------------------------------------------------

@pytest.mark.parametrize("which", ["catalog", "default"])
def test_set_electricity_price_replaces_its_citation_everywhere(which, defaulted, tmp_path):
    scenario = SAMPLE if which == "catalog" else defaulted
    check_baseline(json.loads(cli("price", scenario, "--json")))
    setting = f"electricity.price={NEW_PRICE} USD/kWh"
    where = f"--set {setting}"
    check_json(json.loads(cli("price", scenario, "--set", setting, "--json")), where)
    check_terminal(cli("price", scenario, "--set", setting), where)
    # compare: every scenario is overridden; the table's lines and the JSON say so
    both = json.loads(cli("compare", scenario, SAMPLE, "--set", setting, "--json"))
    for result in both["scenarios"]:
        check_json(result, where)
    table = cli("compare", scenario, SAMPLE, "--set", setting)
    # both systems share the price and its citation: said once, for all systems
    assert flat(table).count(f"Electricity 0.1742 USD per kWh ({where}; undated)") == 1
    assert "All systems" in table and "EIA" not in table
    out = tmp_path / "set.xlsx"
    cli("workbook", scenario, "-o", out, "--set", setting)
    check_workbook(out, where)


def test_set_source_with_the_price_keeps_the_users_citation():
    from conftest import price_file
    r = price_file(SAMPLE, [f"electricity.price={NEW_PRICE} USD/kWh",
                            'electricity.source="PPA with Example Power, signed 2026-09"'])
    e = r.disclosure()["electricity"]
    assert e["source"] == "PPA with Example Power, signed 2026-09"
    assert e["date"] is None  # the EIA period is not the PPA's
    assert r.disclosure()["sources"]["electricity.date"].startswith("--set electricity.price")


def test_set_throughput_replaces_the_published_points_label_and_source(tmp_path):
    setting = "operating_point.throughput_per_kw=5000 token/s/kW"
    where = f"--set {setting}"
    plain = json.loads(cli("price", SAMPLE, "--json"))["disclosure"]["operating_point"]
    assert plain["chosen"] == "published point 'deepseek-r1/gb300/peak'" and plain["label"]
    d = json.loads(cli("price", SAMPLE, "--set", setting, "--json"))["disclosure"]
    op = d["operating_point"]
    assert op["chosen"] == f"given: {where}"
    assert op["label"] is None and op["source"] == where
    assert op["throughput_per_kw_as_given"]["value"] == 5000
    for key in ("operating_point.chosen", "operating_point.source",
                "operating_point.throughput_per_kw"):
        assert d["sources"][key] == where
    assert "operating_point.label" not in d["sources"]
    # what the override did not touch keeps its citation
    assert d["sources"]["operating_point.normalised_by"].startswith(
        "catalog operating_point 'deepseek-r1/gb300/peak': WA")
    text = cli("price", SAMPLE, "--set", setting)
    assert f"Operating point given: {where} As published" in flat(text)
    assert "published point" not in text
    out = tmp_path / "op.xlsx"
    cli("workbook", SAMPLE, "-o", out, "--set", setting)
    wb = load_workbook(out)
    assert _cover(wb)["operating point"][0] == f"given: {where}"
    sources = {k: v for (_, k), v in _sources(wb).items()}
    assert sources["operating_point.source"] == where


def test_a_curve_point_cannot_be_overridden_and_says_why():
    r = CliRunner().invoke(main, ["price", str(SCENARIOS / "curve-gpt-oss-120b-b200.toml"),
                                  "--set", "operating_point.throughput=5000 token/s"])
    assert r.exit_code != 0
    assert "operating_point.throughput: given by the curve" in r.stderr


def test_a_price_given_without_a_source_has_none():
    # in the file, or over a catalog entry: the EIA citation is the catalog price's only
    for electricity in ({"price": "12 cent/kWh"},
                        {"catalog": "eia-2026-05-us-industrial", "price": "12 cent/kWh"}):
        r = price_data({**GB300_PEAK, "electricity": electricity})
        e = r.disclosure()["electricity"]
        assert e["source"] is None and e["date"] is None, electricity
        assert "EIA" not in json.dumps(r.disclosure()["sources"])
        assert "Electricity 0.1200 USD per kWh (no source given; undated)" in \
            flat(result_table(r))
    # a catalog point whose throughput the file gives is not the published point
    r = price_data({"accelerator": "gb300", "operating_point": {
        "catalog": "deepseek-r1/gb300/peak", "throughput_per_kw": "9000 token/s/kW"}})
    op = r.disclosure()["operating_point"]
    assert op["chosen"] == "given" and op["label"] is None and op["source"] is None
    # a price with its own source and date keeps them
    r = price_data({**GB300_PEAK, "electricity": {"price": "12 cent/kWh", "source": "PPA",
                                                  "date": "2026-09"}})
    assert (r.scenario.electricity.source, r.scenario.electricity.date) == ("PPA", "2026-09")


# ---- 2. API overrides ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def viewer(tokens):
    return auth(tokens["viewer"])


@pytest.fixture(scope="module")
def editor(tokens):
    return auth(tokens["editor"])


def _ok(resp, status=200):
    assert resp.status_code == status, resp.get_data(as_text=True)
    return resp


def test_api_overrides_replace_the_citation_everywhere(client, viewer, editor):
    overrides = {"electricity.price": f"{NEW_PRICE} USD/kWh"}
    where = f"overrides electricity.price={NEW_PRICE} USD/kWh"
    check_baseline(_ok(client.post(f"{API}/price", json={"scenario": GB300_PEAK},
                                   headers=viewer)).get_json())
    body = _ok(client.post(f"{API}/price", json={"scenario": GB300_PEAK,
                                                 "overrides": overrides},
                           headers=viewer)).get_json()
    check_json(body, where)
    # the terminal rendering of the same priced result
    spec = app.ScenarioSpec(app.InlineScenario(GB300_PEAK), app.overrides_from_mapping(overrides))
    services = client.application.extensions["costmodel"]
    with services.sessions(write=False) as session:
        priced = app.price(services.context(session), spec).result
    check_terminal(result_table(priced), where)
    # a saved scenario priced with overrides
    saved = _ok(client.post(f"{API}/scenarios", json={"name": "citations", "scenario":
                                                       GB300_PEAK}, headers=editor), 201)
    sid = saved.get_json()["scenario_id"]
    check_baseline({"disclosure": saved.get_json()["result"]["disclosure"]})
    check_json(_ok(client.post(f"{API}/price", json={"scenario_id": sid,
                                                     "overrides": overrides},
                               headers=viewer)).get_json(), where)
    compared = _ok(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario": GB300_PEAK, "overrides": overrides},
        {"scenario": GB300_PEAK}]}, headers=viewer)).get_json()
    check_json(compared["scenarios"][0], where)
    check_baseline(compared["scenarios"][1])
    book = _ok(client.post(f"{API}/workbook", json={"scenarios": [
        {"scenario": GB300_PEAK, "overrides": overrides}]}, headers=viewer)).data
    check_workbook(book, where)


def test_api_saved_revision_cites_no_default_for_a_given_price(client, editor):
    scenario = {**GB300_PEAK, "electricity": {"price": f"{NEW_PRICE} USD/kWh"}}
    saved = _ok(client.post(f"{API}/scenarios", json={"name": "own price",
                                                       "scenario": scenario},
                            headers=editor), 201).get_json()
    e = saved["result"]["disclosure"]["electricity"]
    assert e["source"] is None and e["date"] is None
    again = _ok(client.get(f"{API}/scenarios/{saved['scenario_id']}", headers=editor))
    assert "EIA" not in json.dumps(again.get_json()["result"]["disclosure"]["electricity"])


# ---- 3. an edited workbook, re-priced -----------------------------------------------------------

def _edited(tmp_path: Path, scenario: Path) -> tuple[Path, str]:
    """A workbook of ``scenario`` with its electricity price edited; (file, where)."""
    out = tmp_path / "export.xlsx"
    cli("workbook", scenario, "-o", out)
    wb = load_workbook(out)
    cell = named_cells(wb, "electricity_price")[0]
    cell.value = NEW_PRICE
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    return edited, f"edited in workbook edited.xlsx, cell Inputs!{cell.coordinate}"


@pytest.mark.parametrize("which", ["catalog", "default"])
def test_edited_workbook_reprices_with_the_edited_cell_as_source(which, defaulted, tmp_path):
    edited, where = _edited(tmp_path, SAMPLE if which == "catalog" else defaulted)
    body = json.loads(cli("reprice", edited, "--json"))
    check_json(body["results"][0], where)
    check_terminal(cli("reprice", edited), where)
    imported = app.reprice(edited, name="edited.xlsx")
    book = app.render_workbook([app.Priced(r) for r in imported.results])
    check_workbook(book.content, where)
    # read back unedited, the re-rendered workbook keeps the edited cell as the source: the
    # cleared date does not fall back to the EIA default
    again = app.reprice(book.content, name="again.xlsx")
    check_json(again.results[0].to_json(), where)
    assert again.changes == []


def test_edited_throughput_in_a_workbook_replaces_the_curve_reading(tmp_path):
    out = tmp_path / "curve.xlsx"
    cli("workbook", SCENARIOS / "curve-gpt-oss-120b-b200.toml", "-o", out)
    wb = load_workbook(out)
    cell = named_cells(wb, "operating_point_throughput")[0]
    cell.value = 1234.0
    wb.save(tmp_path / "thr.xlsx")
    where = f"edited in workbook thr.xlsx, cell Inputs!{cell.coordinate}"
    r = app.reprice(tmp_path / "thr.xlsx", name="thr.xlsx").results[0]
    op = r.disclosure()["operating_point"]
    assert op["chosen"] == f"given: {where}" and op["source"] == where
    assert r.scenario.operating_point.curve is None
    assert r.scenario.operating_point.read_status is None
    assert r.disclosure()["sources"]["operating_point.throughput"] == where
    assert "curve" not in r.disclosure()["sources"]["operating_point.chosen"]


def test_api_reprice_names_the_edited_cell(client, viewer, tmp_path):
    edited, _ = _edited(tmp_path, SAMPLE)
    coordinate = named_cells(load_workbook(edited), "electricity_price")[0].coordinate
    body = _ok(client.post(f"{API}/workbook/reprice", data=edited.read_bytes(),
                           content_type=XLSX, headers=viewer)).get_json()
    check_json(body["results"][0], f"edited in workbook upload, cell Inputs!{coordinate}")


# ---- local paths never leave the machine --------------------------------------------------------

def test_shown_path_rules(tmp_path, monkeypatch):
    deal = tmp_path / "deal"
    (deal / "curves").mkdir(parents=True)
    curve = deal / "curves" / "x.csv"
    curve.write_text("", encoding="utf-8")
    assert shown_path(curve, deal) == "curves/x.csv"
    assert shown_path(deal / "sub" / ".." / "curves" / "x.csv", deal) == "curves/x.csv"
    assert shown_path(curve, deal / "curves") == "x.csv"
    assert shown_path(curve, tmp_path / "elsewhere") == "x.csv"  # outside: its name alone
    assert shown_path(curve) == "x.csv"
    assert shown_path(ILLUSTRATIVE, deal) == "fixtures/curves/illustrative-gpt-oss-120b.csv"
    assert shown_path(SCENARIOS / "curves" / ".." / "sample-tco.toml", SCENARIOS) == \
        "fixtures/scenarios/sample-tco.toml"
    monkeypatch.chdir(deal)
    assert shown_path("curves/x.csv", deal) == "curves/x.csv"
    monkeypatch.setenv("COSTMODEL_FIXTURES", str(deal))  # another fixtures folder
    assert shown_path(curve) == "fixtures/curves/x.csv"


@pytest.fixture
def deal(tmp_path) -> list[Path]:
    """Scenario files in a folder of the user's: a curve beside them, one outside the
    folder, a fixture curve named by its absolute path, and a power trace."""
    folder = tmp_path / "clients" / "acme" / "deal"
    (folder / "curves").mkdir(parents=True)
    (folder / "runs").mkdir()
    (tmp_path / "common").mkdir()
    shutil.copy(ILLUSTRATIVE, folder / "curves" / "mine.csv")
    shutil.copy(ILLUSTRATIVE, tmp_path / "common" / "other.csv")
    shutil.copy(TRACE, folder / "runs" / "power.csv")
    point = '[operating_point]\ncurve = "{}"\ncurve_id = "{}"\nat = "peak"\n'
    files = {
        "beside.toml": 'name = "beside"\naccelerator = "b200"\n'
                       + point.format("curves/mine.csv", B200_CURVE),
        "outside.toml": 'name = "outside"\naccelerator = "h100"\n'
                        + point.format("../../../common/other.csv", H100_CURVE),
        "fixture.toml": 'name = "fixture"\naccelerator = "b200"\n'
                        + point.format(ILLUSTRATIVE.as_posix(), B200_CURVE),
        "by-id.toml": 'name = "by id"\naccelerator = "h100"\n'
                      + point.format(H100_CURVE, H100_CURVE),
        "trace.toml": 'name = "trace"\naccelerator = "b200"\n'
                      '[operating_point]\nthroughput = "1000 token/s"\n'
                      '[power]\nbasis = "measured"\ntrace = "runs/power.csv"\n',
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]


def _leaks(text: str, tmp_path: Path) -> list[str]:
    found = {str(tmp_path), str(tmp_path.resolve()), str(ROOT), str(ROOT.resolve())}
    return sorted(p for p in found if p in text)


def _parts(book: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(book)) as z:
        return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist()}


def test_no_absolute_path_in_any_output(deal, tmp_path, client, viewer, editor):
    priced = json.loads(cli("price", deal[0], "--json"))
    compared = json.loads(cli("compare", *deal, "--json"))
    out = tmp_path / "deal.xlsx"
    cli("workbook", *deal, "-o", out)
    book = out.read_bytes()
    outputs = {"price --json": json.dumps(priced), "compare --json": json.dumps(compared),
               **{f"workbook {n}": t for n, t in _parts(book).items()}}
    # the same workbook read back, through the CLI and the API
    outputs["reprice --json"] = cli("reprice", out, "--json")
    outputs["API reprice"] = _ok(client.post(f"{API}/workbook/reprice", data=book,
                                             content_type=XLSX, headers=viewer)).get_data(
        as_text=True)
    # the API: inline scenarios on the database's curves, a saved revision, a workbook
    curve_point = {"accelerator": "b200", "operating_point": {"curve": B200_CURVE}}
    outputs["API price"] = _ok(client.post(f"{API}/price", json={"scenario": curve_point},
                                           headers=viewer)).get_data(as_text=True)
    outputs["API compare"] = _ok(client.post(f"{API}/compare", json={"scenarios": [
        {"scenario": curve_point}, {"scenario": GB300_PEAK}]}, headers=viewer)).get_data(
        as_text=True)
    saved = _ok(client.post(f"{API}/scenarios", json={"name": "paths", "scenario": curve_point},
                            headers=editor), 201).get_json()
    outputs["API revision"] = _ok(client.get(f"{API}/scenarios/{saved['scenario_id']}",
                                             headers=viewer)).get_data(as_text=True)
    api_book = _ok(client.post(f"{API}/workbook", json={"scenarios": [
        {"scenario": curve_point}]}, headers=viewer)).data
    outputs.update({f"API workbook {n}": t for n, t in _parts(api_book).items()})
    leaks = {name: _leaks(text, tmp_path) for name, text in outputs.items()}
    assert {k: v for k, v in leaks.items() if v} == {}
    # and the files are named the way the rules say
    sources = [r["disclosure"]["sources"] for r in compared["scenarios"]]
    assert sources[0]["name"] == "beside.toml"
    assert "(curves/mine.csv;" in sources[0]["operating_point.throughput"]
    assert "(other.csv;" in sources[1]["operating_point.throughput"]
    assert "(fixtures/curves/illustrative-gpt-oss-120b.csv;" in \
        sources[2]["operating_point.throughput"]
    assert "(fixtures/curves/illustrative-gpt-oss-120b.csv;" in \
        sources[3]["operating_point.throughput"]
    assert sources[4]["accelerator.measured_power"].startswith("power trace runs/power.csv:")
    curves = "\n".join(t for n, t in outputs.items() if n.startswith("workbook xl/"))
    assert "from curves/mine.csv;" in curves and "from other.csv;" in curves


def test_energy_json_names_the_trace_without_its_folder(tmp_path):
    trace = tmp_path / "gpu_metrics.csv"
    shutil.copy(TRACE, trace)
    d = json.loads(cli("energy", trace, "--json"))
    assert d["source"] == "gpu_metrics.csv"


def test_cli_errors_may_still_name_the_path_typed(tmp_path):
    # an error goes to the user's own terminal, not out: it names the file as typed
    missing = tmp_path / "nowhere.toml"
    r = CliRunner().invoke(main, ["price", str(missing)])
    assert r.exit_code != 0 and str(missing) in r.stderr
