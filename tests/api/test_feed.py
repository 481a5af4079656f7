"""The spreadsheet feed, ``GET /api/v1/feed.csv`` and ``/feed.json``: its columns are a
contract, its figures are the API's own (``POST /api/v1/price`` of the same scenario, figure
for figure, also after LibreOffice imports the CSV), a refresh that changes nothing is a 304,
a cell that looks like a formula is text, and the key may come in the query string here and
nowhere else."""
from __future__ import annotations

import csv
import io
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from costmodel.app import feed as feed_use_case
from tests.conftest import PUBLISHED, ROOT, auth, require_libreoffice

API = "/api/v1"
# The columns as published in docs/feed.md: append only. A change here breaks every
# spreadsheet that refreshes from the feed.
CONTRACT = [
    "kind", "id", "name", "revision", "saved_at", "as_of", "currency", "cost_per_mtok",
    "cost_energy_per_mtok", "cost_capex_per_mtok", "cost_opex_per_mtok", "price_per_mtok",
    "price_input_per_mtok", "price_output_per_mtok", "cost_per_hour",
    "throughput_token_per_s", "power_per_accelerator_w", "boundary", "power_basis",
    "token_kind", "operating_point", "operating_point_label", "operating_point_source",
    "interactivity_token_per_s_per_user", "utilisation", "accelerator", "model",
    "electricity_price_usd_per_kwh", "electricity_source", "electricity_date", "cost_basis",
    "life_years", "cost_of_capital_per_year", "reference_rate", "gross_margin", "sources",
    "error", "exchange_rate", "exchange_rate_date", "exchange_rate_source"]
# (column, the API answer's path) of every figure compared
FIGURES = [("cost_per_mtok", ("cost_per_mtok", "total")),
           ("cost_energy_per_mtok", ("cost_per_mtok", "energy")),
           ("cost_capex_per_mtok", ("cost_per_mtok", "capex")),
           ("cost_opex_per_mtok", ("cost_per_mtok", "opex")),
           ("price_per_mtok", ("price_per_mtok", "total")),
           ("price_input_per_mtok", ("price_per_mtok", "input")),
           ("price_output_per_mtok", ("price_per_mtok", "output")),
           ("throughput_token_per_s", ("throughput",)),
           ("power_per_accelerator_w", ("power_per_accelerator",))]
INJECTION = "=HYPERLINK(\"http://x.invalid\",\"click\")"


def _at(data: dict, path: tuple[str, ...]) -> float:
    for part in path:
        data = data[part]
    return data["value"]


@pytest.fixture(scope="module")
def saved_ids(app, tokens):
    """Two saved scenarios: the EUR tariff sample, and one whose name is a formula."""
    client = app.test_client()
    ids = []
    for name, file in (("tou sample", "sample-tou.toml"), (INJECTION, "sample-tco.toml")):
        data = tomllib.loads((ROOT / "fixtures" / "scenarios" / file).read_text())
        r = client.post(f"{API}/scenarios", json={"name": name, "scenario": data},
                        headers=auth(tokens["editor"]))
        assert r.status_code == 201, r.get_json()
        ids.append(r.get_json()["scenario_id"])
    return ids


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_columns_are_the_contract():
    assert list(feed_use_case.NAMES) == CONTRACT
    assert all(c.description for c in feed_use_case.COLUMNS)
    documented = (ROOT / "docs" / "feed.md").read_text()
    for name in CONTRACT:  # every column is documented by its name
        assert f"`{name}`" in documented, name


def test_feed_figures_equal_the_price_api(app, tokens, saved_ids):
    client = app.test_client()
    viewer = auth(tokens["viewer"])
    r = client.get(f"{API}/feed.json", headers=viewer)
    assert r.status_code == 200
    body = r.get_json()
    assert [c["name"] for c in body["columns"]] == CONTRACT
    rows = {str(row["id"]): row for row in body["rows"]}
    published = sorted(PUBLISHED.glob("*.toml"))
    assert len(published) == 12  # one a catalog operating point (fixtures/catalog)
    for path in published:
        data = tomllib.loads(path.read_text())
        row = rows[f"fixture:published/{path.stem}"]
        answer = client.post(f"{API}/price", json={"scenario": data}, headers=viewer)
        assert answer.status_code == 200
        expected = answer.get_json()
        for column, where in FIGURES:
            assert row[column] == _at(expected, where), (path.stem, column)
        assert row["operating_point"] == f"published point {data['operating_point']!r}"
        assert (row["kind"], row["currency"], row["boundary"], row["power_basis"]) == \
            ("published", "USD", "chip", "rated")
        assert row["electricity_date"] == "2026-05"
        assert row["electricity_price_usd_per_kwh"] == pytest.approx(0.0871)  # EIA, May 2026
    for scenario_id in saved_ids:
        row = rows[str(scenario_id)]
        expected = client.post(f"{API}/price", json={"scenario_id": scenario_id},
                               headers=viewer).get_json()
        for column, where in FIGURES:
            assert row[column] == _at(expected, where), (scenario_id, column)
        assert (row["kind"], row["revision"], row["error"]) == ("saved", 1, None)
    tou = rows[str(saved_ids[0])]
    # the EUR sample: money in EUR at its stated rate (fixtures/scenarios/sample-tou.toml)
    assert (tou["currency"], tou["exchange_rate"], tou["exchange_rate_date"]) == \
        ("EUR", 0.92, "2026-11-30")
    # GB300 at peak: 1,400 W x 11,781 token/s/kW = 16,493.4 token/s (published, catalog)
    assert rows["fixture:published/deepseek-r1_gb300_peak"]["throughput_token_per_s"] == \
        pytest.approx(16493.4)
    assert body["saved_total"] == len(saved_ids) and body["truncated"] is False


def test_csv_etag_304_and_cache_control(app, tokens, saved_ids):
    client = app.test_client()
    viewer = auth(tokens["viewer"])
    first = client.get(f"{API}/feed.csv", headers=viewer)
    assert first.status_code == 200 and first.mimetype == "text/csv"
    assert first.headers["Cache-Control"] == "no-cache"
    tag = first.headers["ETag"]
    again = client.get(f"{API}/feed.csv", headers={**viewer, "If-None-Match": tag})
    assert again.status_code == 304 and again.data == b""
    assert again.headers["ETag"] == tag
    # a new saved revision changes the table, and its ETag
    data = tomllib.loads((ROOT / "fixtures" / "scenarios" / "sample-tco.toml").read_text())
    data["utilisation"] = 0.5
    r = client.post(f"{API}/scenarios", json={"name": "later", "scenario": data},
                    headers=auth(tokens["editor"]))
    assert r.status_code == 201
    changed = client.get(f"{API}/feed.csv", headers={**viewer, "If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["ETag"] != tag
    rows = _csv_rows(changed.get_data(as_text=True))
    assert list(rows[0]) == CONTRACT
    later = [row for row in rows if row["name"] == "later"]
    assert len(later) == 1 and later[0]["utilisation"] == "0.5"


def test_a_formula_is_text(app, tokens, saved_ids):
    text = app.test_client().get(f"{API}/feed.csv", headers=auth(tokens["viewer"])) \
        .get_data(as_text=True)
    (row,) = [r for r in _csv_rows(text) if r["id"] == str(saved_ids[1])]
    assert row["name"] == "'" + INJECTION
    assert not any(cell.startswith(("=", "+", "@")) for r in _csv_rows(text)
                   for cell in r.values())


def test_key_in_the_query_on_the_feed_only(app, tokens):
    client = app.test_client()
    assert client.get(f"{API}/feed.csv").status_code == 401
    assert client.get(f"{API}/feed.csv?key=cm_not_a_key").status_code == 401
    ok = client.get(f"{API}/feed.csv?include=published&key={tokens['viewer']}")
    assert ok.status_code == 200 and len(_csv_rows(ok.get_data(as_text=True))) == 12
    # anywhere else a key in the URL is not read
    assert client.get(f"{API}/accelerators?key={tokens['viewer']}").status_code == 401


def test_bounds_and_paging(app, tokens, saved_ids):
    client = app.test_client()
    viewer = auth(tokens["viewer"])
    r = client.get(f"{API}/feed.json?limit=1001", headers=viewer)
    assert r.status_code == 422 and r.get_json()["errors"][0]["path"] == "limit"
    # a page with rows after it (the module's two saved scenarios at least)
    r = client.get(f"{API}/feed.json?include=saved&limit=1&offset=0", headers=viewer)
    body = r.get_json()
    assert [row["id"] for row in body["rows"]] == [saved_ids[0]]
    assert body["truncated"] is True and r.headers["X-Total-Count"] == str(body["saved_total"])
    # the next page; truncated while rows follow it (another test of the module may have saved
    # a third scenario before this one: the answer does not depend on which ran first)
    r = client.get(f"{API}/feed.json?include=saved&limit=1&offset=1", headers=viewer)
    body = r.get_json()
    assert [row["id"] for row in body["rows"]] == [saved_ids[1]]
    assert body["saved_total"] >= 2
    assert body["truncated"] is (1 + 1 < body["saved_total"])
    assert r.headers["X-Total-Count"] == str(body["saved_total"])


def test_libreoffice_imports_the_csv_with_the_api_figures(app, tokens, saved_ids, tmp_path):
    """The downloaded CSV, imported by LibreOffice (as Calc opens a CSV: comma, UTF-8) and
    saved as a workbook: its numbers are numbers, equal to the API's answers."""
    require_libreoffice(module=False)
    from openpyxl import load_workbook

    from costmodel.render.workbook.recalc import soffice
    client = app.test_client()
    viewer = auth(tokens["viewer"])
    (tmp_path / "feed.csv").write_bytes(client.get(f"{API}/feed.csv", headers=viewer).data)
    profile = tmp_path / "profile"
    done = subprocess.run(
        [soffice(), f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
         "--infilter=CSV:44,34,76,1", "--convert-to", "xlsx", "--outdir", str(tmp_path),
         str(tmp_path / "feed.csv")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    sheet = load_workbook(tmp_path / "feed.xlsx").active
    table = list(sheet.iter_rows(values_only=True))
    assert list(table[0]) == CONTRACT
    rows = {str(r[1]): dict(zip(CONTRACT, r, strict=True)) for r in table[1:]}
    peak = tomllib.loads((PUBLISHED / "deepseek-r1_gb300_peak.toml").read_text())
    checks = [(rows["fixture:published/deepseek-r1_gb300_peak"], {"scenario": peak}),
              (rows[str(saved_ids[0])], {"scenario_id": saved_ids[0]})]
    for row, ask in checks:
        expected = client.post(f"{API}/price", json=ask, headers=viewer).get_json()
        for column, where in FIGURES:
            assert isinstance(row[column], float | int), column  # a number, not text
            # LibreOffice keeps 15 significant digits of what it reads
            assert row[column] == pytest.approx(_at(expected, where), rel=1e-14), column
    # the formula-looking name arrived as text, never evaluated
    assert rows[str(saved_ids[1])]["name"].endswith(INJECTION)
    shutil.rmtree(profile, ignore_errors=True)


def test_docs_name_the_two_clicks():
    text = Path(ROOT / "docs" / "feed.md").read_text()
    assert "IMPORTDATA(" in text and "From Web" in text
