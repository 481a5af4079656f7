"""What the service writes, it reads back (issue 38, item 8a): the largest workbook the
writers produce within their declared bounds, a task of MAX_TASK_STEPS steps on
MAX_SCENARIOS systems (its Task sheet inflates to about 28 MiB, past the 16 MiB a part read
may hold), reprices through the reader, the API and the CLI. The Task sheet is not read: it
is inflated in a stream and dropped, bounded by the package's total and ratio, which still
refuse a zip bomb (tests/render/test_hostile_workbook.py).
"""
from __future__ import annotations

import io
import zipfile

import pytest
from click.testing import CliRunner
from conftest import CURVE_SCENARIOS, auth

from costmodel import app
from costmodel.app.caps import MAX_SCENARIOS
from costmodel.app.task import TaskRequest, price_task, task_workbook
from costmodel.cli import main
from costmodel.decisions.task import MAX_TASK_STEPS, validate_task
from costmodel.render.workbook import reader
from costmodel.render.workbook.task_sheet import TASK_SHEET

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# the agent at the most steps a task takes (no target: none is met by so long a task)
AGENT = {"steps": MAX_TASK_STEPS, "context": 8000, "growth": 1500, "output": 300,
         "cached_share": 0.8, "tool_time": "1.2 s"}


@pytest.fixture(scope="module")
def largest() -> tuple[bytes, list]:
    """The largest task workbook the writer may produce, and its systems as price_task
    prices them."""
    files = [CURVE_SCENARIOS[i % len(CURVE_SCENARIOS)] for i in range(MAX_SCENARIOS)]
    specs = [app.ScenarioSpec(app.FileScenario(f)) for f in files]
    request = TaskRequest(specs, validate_task(AGENT))
    book = task_workbook(app.LocalContext(), request)
    return book.content, price_task(app.LocalContext(), request).systems


def _task_part(data: bytes) -> zipfile.ZipInfo:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        biggest = max(z.infolist(), key=lambda m: m.file_size)
        names = z.read("xl/workbook.xml").decode()
    assert f'name="{TASK_SHEET}"' in names
    return biggest


def test_the_largest_task_workbook_is_past_a_part_read_and_within_the_package(largest):
    data, _ = largest
    task = _task_part(data)
    # past what a part handed to openpyxl may hold, so the bound that let it through is the
    # package's: every member together, and the ratio
    assert task.file_size > reader.MAX_PART, task.file_size
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        total = sum(m.file_size for m in z.infolist())
    assert total < reader.MAX_UNCOMPRESSED
    assert task.file_size < reader.MAX_RATIO * task.compress_size
    assert len(data) < reader.MAX_BYTES


def test_the_largest_task_workbook_reprices(largest):
    data, systems = largest
    again = app.reprice(data)
    assert len(again.results) == MAX_SCENARIOS
    assert again.changes == [] and again.warnings == []
    # each system as priced at the point the task chose for it
    assert [r.values["cost_per_mtok_total"] for r in again.results] == pytest.approx(
        [s.priced.result.values["cost_per_mtok_total"] for s in systems], rel=1e-12)
    assert len({round(r.values["cost_per_mtok_total"], 12) for r in again.results}) == 3


def test_the_largest_task_workbook_reprices_through_the_api(largest, client, tokens):
    data, _ = largest
    resp = client.post("/api/v1/workbook/reprice", data=data, content_type=XLSX,
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    assert len(resp.get_json()["results"]) == MAX_SCENARIOS


def test_the_largest_task_workbook_reprices_through_the_cli(largest, tmp_path):
    data, _ = largest
    path = tmp_path / "task.xlsx"
    path.write_bytes(data)
    run = CliRunner().invoke(main, ["reprice", "--json", str(path)])
    assert run.exit_code == 0, run.output[-500:]
    assert '"results"' in run.stdout
