"""One agent's task, the same figures on every face: the command line (text's source JSON and
its workbook), the API (JSON, and the workbook by Accept), the web Task page's JSON download
and its workbook, and each workbook recalculated by LibreOffice (1e-9)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner
from conftest import auth, require_libreoffice
from openpyxl import load_workbook

from costmodel.cli import main
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.recalc import save_with_libreoffice

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("h100", "b200")
FILES = [ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml" for hw in SYSTEMS]
TASK_FILE = ROOT / "fixtures" / "tasks" / "coding-agent.toml"
TASK = {"steps": 40, "context": "8000 token", "growth": "1500 token", "output": "300 token",
        "cached_share": 0.8, "tool_time": "1.2 s", "target": "120 s",
        "name": "coding agent (illustrative)"}
SCENARIOS = [{"scenario": tomllib.loads(f.read_text())} for f in FILES]
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def figures(answer: dict) -> list[tuple]:
    """What a buyer compares, a system at a time."""
    return [(s["scenario"], s["operating_point"]["interactivity"]["value"],
             s["latency"]["total"]["value"], s["meets_target"],
             s["cost_per_task"]["total"]["value"], s["price_per_task"]["value"],
             s["energy_per_task"]["value"], s["tasks_per_hour"]["value"])
            for s in answer["systems"]]


def books_figures(books: dict[str, bytes], tmp_path: Path) -> dict[str, list[tuple]]:
    """Each workbook's Task sheet figures after LibreOffice recalculates it (all in one run)."""
    paths = []
    for name, content in books.items():
        paths.append(tmp_path / f"{name}.xlsx")
        paths[-1].write_bytes(content)
    recalculated = save_with_libreoffice(paths, tmp_path / "recalc", recalc=True)
    return {name: book_figures(path) for name, path in zip(books, recalculated, strict=True)}


def book_figures(path: Path) -> list[tuple]:
    wb = load_workbook(path, data_only=True)

    def value(key: str, i: int):
        (cell,) = named_cells(wb, f"{key}_s{i + 1}")
        return cell.value
    return [(value("task_interactivity", i), value("task_latency", i), value("task_cost_total", i),
             value("task_price", i), value("task_energy_kwh", i), value("tasks_per_hour", i))
            for i in range(len(SYSTEMS))]


def close(a: list[tuple], b: list[tuple]) -> bool:
    return all(x == pytest.approx(y, rel=1e-9) if isinstance(x, float) else x == y
               for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    out = CliRunner().invoke(main, ["task", *map(str, FILES), "--task", str(TASK_FILE),
                                    "--json", "--workbook", str(folder / "task.xlsx")],
                             catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return json.loads(out.output), (folder / "task.xlsx").read_bytes()


def test_the_api_and_the_page_answer_what_the_command_line_does(cli, client, tokens, web):
    answer, _ = cli
    body = {"scenarios": SCENARIOS, "task": TASK}  # the files' own tables
    api = client.post("/api/v1/task", json=body, headers=auth(tokens["viewer"]))
    assert api.status_code == 200, api.get_data(as_text=True)
    assert close(figures(api.get_json()), figures(answer))
    # the web page's JSON download, the systems picked as on the page
    query = urlencode([("sys", f"fixture:curve-gpt-oss-120b-{hw}") for hw in SYSTEMS])
    page = web.get(f"/task.json?{query}")
    assert page.status_code == 200, page.get_data(as_text=True)[:1000]
    assert close(figures(page.get_json()), figures(answer))


def test_every_workbook_recalculates_to_the_same_figures(cli, client, tokens, web, tmp_path):
    require_libreoffice(module=False)
    answer, cli_book = cli
    want = [(s[1], s[2], s[4], s[5], s[6], s[7]) for s in figures(answer)]
    body = {"scenarios": SCENARIOS, "task": TASK}
    api = client.post("/api/v1/task", json=body,
                      headers={**auth(tokens["viewer"]), "Accept": XLSX})
    assert api.status_code == 200 and api.mimetype == XLSX
    query = urlencode([("sys", f"fixture:curve-gpt-oss-120b-{hw}") for hw in SYSTEMS])
    page = web.get(f"/task.xlsx?{query}")
    assert page.status_code == 200 and page.mimetype == XLSX
    got = books_figures({"cli": cli_book, "api": api.get_data(), "web": page.get_data()},
                        tmp_path)
    assert list(got) == ["cli", "api", "web"]
    for name, figures_ in got.items():
        assert close(figures_, want), name
