"""One scenario sold at one market, the same figures on every face: the command line (its
JSON and its workbook), the API (JSON, and the workbook by Accept), the web Price page's
Profit section, its JSON and its workbook, and each workbook recalculated by LibreOffice
(1e-9). An owned and a rented GB300 (a reference rate) at DeepSeek R1's published peak,
serving 60 % of the hours, sold at the illustrative catalog prices with a revenue share."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner
from conftest import auth, require_libreoffice
from openpyxl import load_workbook
from profit_support import toml_text

from costmodel.cli import main
from costmodel.render import display
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import save_with_libreoffice
from costmodel.web.scenario_form import scenario_form

MARKET = {"market": "illustrative/reasoning-model-api", "revenue_share": "20",
          "cached_share": "50"}
QUERIES = {  # the Price page's fields
    "owned": {"accelerator": "gb300", "point": "deepseek-r1/gb300/peak", "utilisation": "60",
              "name": "owned", **MARKET},
    "rented": {"accelerator": "gb300", "point": "deepseek-r1/gb300/peak", "utilisation": "60",
               "financing": "rent", "rate": "rental@2026-09", "boundary": "rack",
               "name": "rented", **MARKET},
}
SCENARIOS = {k: scenario_form(q).mapping for k, q in QUERIES.items()}
TABLE = {"catalog": "illustrative/reasoning-model-api", "revenue_share": "20 %",
         "cached_share": "50 %"}
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# what a reader compares (the JSON's keys), and the workbook's names of the same figures
FIGURES = {"revenue_per_hour": "revenue_per_hour",
           "revenue_share_per_hour": "revenue_share_per_hour",
           "net_revenue_per_hour": "net_revenue_per_hour", "profit_per_hour": "profit_per_hour",
           "profit_per_month": "profit_per_month", "profit_per_gw_year": "profit_per_gw_year",
           "tokens_per_usd": "tokens_per_usd"}


def figures(system: dict) -> dict[str, float]:
    out = {k: system[k]["value"] for k in FIGURES}
    out["profit_margin"] = system["profit_margin"]
    out["break_even_price"] = system["break_even"]["price_per_mtok"]["value"]
    out["cost_per_hour"] = system["cost_per_hour"]["value"]
    return out


def close(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=1e-9) for k in a)


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    files = []
    for name, scenario in SCENARIOS.items():
        path = folder / f"{name}.toml"
        path.write_text(toml_text(scenario, TABLE), encoding="utf-8")
        files.append(str(path))
    out = CliRunner().invoke(main, ["profit", *files, "--json", "--workbook",
                                    str(folder / "profit.xlsx")], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    return {s["scenario"]: s for s in answer["systems"]}, (folder / "profit.xlsx").read_bytes()


def api_body() -> dict:
    return {"scenarios": [{"scenario": s} for s in SCENARIOS.values()], "market": TABLE}


def test_the_api_and_the_page_answer_what_the_command_line_does(cli, client, tokens, web):
    by_cli, _ = cli
    assert by_cli["owned"]["utilisation"] == 0.6 < 1
    api = client.post("/api/v1/profit", json=api_body(), headers=auth(tokens["viewer"]))
    assert api.status_code == 200, api.get_data(as_text=True)
    for s in api.get_json()["systems"]:
        assert close(figures(s), figures(by_cli[s["scenario"]])), s["scenario"]
    for name, query in QUERIES.items():
        want = figures(by_cli[name])
        got = web.get(f"/profit.json?{urlencode(query)}")
        assert got.status_code == 200, got.get_data(as_text=True)[:1000]
        assert close(figures(got.get_json()["systems"][0]), want), name
        page = html.unescape(web.get(f"/?{urlencode(query)}").get_data(as_text=True))
        shown = re.search(r'data-profit="profit_per_hour"[^>]*>.*?<td class="num">([^<]*)<',
                          page, re.S).group(1)
        assert shown == display.format_quantity(want["profit_per_hour"], "USD/h",
                                                "profit_per_hour"), name


def recalculated(books: list[tuple[str, bytes, list[str]]], tmp_path: Path) -> list[Path]:
    """Each (label, content, names) workbook recalculated by LibreOffice, all in one run."""
    paths = []
    for label, content, _ in books:
        paths.append(tmp_path / f"{label}.xlsx")
        paths[-1].write_bytes(content)
    return save_with_libreoffice(paths, tmp_path / "recalc", recalc=True)


def book_figures(path: Path, names: list[str]) -> dict:
    """Each system's figures on the Profit sheet of a recalculated book."""
    wb = load_workbook(path, data_only=True)
    out = {}
    for i, name in enumerate(names):
        def value(key: str, i=i):
            (cell,) = named_cells(wb, key if len(names) == 1 else f"{key}_s{i + 1}")
            return cell.value
        got = {k: value(v) for k, v in FIGURES.items()}
        got.update(profit_margin=value("profit_margin"),
                   break_even_price=value("break_even_price"),
                   cost_per_hour=value("cost_per_hour"))
        out[name] = got
    return out


def test_every_workbook_recalculates_to_the_same_figures(cli, client, tokens, web, tmp_path):
    require_libreoffice(module=False)
    by_cli, cli_book = cli
    want = {name: figures(s) for name, s in by_cli.items()}
    api = client.post("/api/v1/profit", json=api_body(),
                      headers={**auth(tokens["viewer"]), "Accept": XLSX})
    assert api.status_code == 200 and api.mimetype == XLSX
    books = [("cli", cli_book, list(SCENARIOS)), ("api", api.get_data(), list(SCENARIOS))]
    for name, query in QUERIES.items():
        page = web.get(f"/profit.xlsx?{urlencode(query)}")
        assert page.status_code == 200 and page.mimetype == XLSX
        books.append((f"web-{name}", page.get_data(), [name]))
    for (label, _, names), path in zip(books, recalculated(books, tmp_path), strict=True):
        got = book_figures(path, names)
        for name in names:
            assert close(got[name], want[name]), (label, name)
