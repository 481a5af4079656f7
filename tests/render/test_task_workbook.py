"""The Task sheet (costmodel.app.task.task_workbook): an agent's task priced on each system as
live formulas. LibreOffice recalculates it to price_task's figures, before and after a step's
tokens or a scenario input are edited in the file; it prints; and a task of the most steps
the engine takes is written in bounded time and size.

The LibreOffice tests are skipped where it is not installed, unless
COSTMODEL_REQUIRE_LIBREOFFICE is set (as .ci/run sets it).
"""
from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
from conftest import CURVE_SCENARIOS, PUBLISHED, SCENARIOS, require_libreoffice
from openpyxl import load_workbook

from costmodel import app
from costmodel.app.task import TaskRequest, price_task, task_workbook
from costmodel.decisions import task_calculation as calc
from costmodel.decisions.task import MAX_TASK_STEPS, validate_task
from costmodel.render.workbook.layout import suffixed
from costmodel.render.workbook.names import named_cells
from costmodel.render.workbook.task_sheet import STEP_COLUMNS, SYSTEM_ROWS, TASK_SHEET

TWO = CURVE_SCENARIOS[:2]  # the h100 and b200 curves
# the agent: 40 steps, context 8,000 growing by 1,500 a step, 300 output tokens, 80 %
# cached, 1.2 s of tools between steps; within 120 s the b200 finds a point between two
# measured ones and the h100 misses at its fastest
AGENT = {"steps": 40, "context": 8000, "growth": 1500, "output": 300, "cached_share": 0.8,
         "tool_time": "1.2 s", "target": "120 s"}
ERRORS = ("#N/A", "#VALUE!", "#REF!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!", "Err:")


def specs(files, overrides=(), each=None):
    """Scenario specs of ``files`` with ``overrides``, and ``each[i]`` for file i."""
    return [app.ScenarioSpec(app.FileScenario(Path(f)), app.overrides_from_text(
        [*overrides, *((each or {}).get(i, ()))])) for i, f in enumerate(files)]


def pinned(answer, files, overrides=()):
    """Specs that read each curve at the point ``answer`` chose for it (its interactivity at
    the task's percentile): the same points, whatever the task."""
    return specs(files, overrides, {
        i: [f'operating_point.at={{interactivity = "{s.interactivity!r} token/s/user", '
            f'percentile = "{answer.task.percentile}"}}']
        for i, s in enumerate(answer.systems)})


def ref(name: str, i: int, n: int) -> str:
    return name if n == 1 else suffixed(name, i + 1)


def value(wb, name: str):
    (cell,) = named_cells(wb, name)
    return cell.value


def approx(want):
    return pytest.approx(want, rel=1e-9, abs=1e-300)


def assert_sheet_is(wb, answer) -> int:
    """The recalculated Task sheet's figures are ``answer``'s (price_task's) to 1e-9;
    returns the figures compared."""
    n = len(answer.systems)
    steps = answer.steps
    assert value(wb, "task_input") == approx(steps.input.sum())
    assert value(wb, "task_cached") == approx(steps.cached.sum())
    assert value(wb, "task_output") == approx(steps.output.sum())
    assert value(wb, "task_tool_time") == approx(steps.tool_time.sum())
    compared = 4
    for i, s in enumerate(answer.systems):
        def at(name, i=i):
            return value(wb, ref(name, i, n))
        assert at("task_interactivity") == approx(s.interactivity)
        assert at("task_ttft") == approx(s.ttft)
        c = s.cost
        figures = {"task_latency": s.latency.total, "task_weighted": c.weighted_tokens,
                   "task_cost_energy": c.energy_cost, "task_cost_capex": c.capex_cost,
                   "task_cost_opex": c.opex_cost, "task_cost_total": c.cost,
                   "task_price": c.price, "task_cost_thousand": 1000 * c.cost,
                   "task_price_thousand": 1000 * c.price,
                   "task_energy_kwh": c.energy / 3.6e6, "tasks_per_hour": c.tasks_per_hour}
        for name, want in figures.items():
            assert at(name) == approx(want), (s.name, name)
            compared += 1
        if s.meets is None:
            assert at("task_meets") in (None, ""), s.name
        else:
            assert at("task_meets") == int(s.meets), s.name
        # and each step's latency
        per_step = [c.value for c in named_cells(wb, ref("step_latency", i, n))]
        assert per_step == [approx(v) for v in s.latency.per_step]
        compared += 1 + len(per_step)
    return compared


def error_cells(wb) -> list[tuple[str, object]]:
    return [(c.coordinate, c.value) for row in wb[TASK_SHEET].iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(ERRORS)]


def without_cache(path: Path, out: Path) -> Path:
    """The workbook with no cached results (openpyxl writes none): what LibreOffice shows
    next is its own computation."""
    load_workbook(path).save(out)
    return out


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """The agent's task on the h100 and b200 curves: (request, answer, workbook path)."""
    folder = tmp_path_factory.mktemp("task")
    request = TaskRequest(specs(TWO), validate_task(AGENT))
    answer = price_task(app.LocalContext(), request)
    book = task_workbook(app.LocalContext(), request)
    path = folder / "agent.xlsx"
    path.write_bytes(book.content)
    return request, answer, path


def test_the_points_are_price_tasks_and_the_target_binds_one(agent):
    _, answer, path = agent
    h100, b200 = answer.systems
    assert (h100.meets, b200.meets) == (False, True)
    assert b200.needed.interactivity is not None  # between two measured points
    wb = load_workbook(path, data_only=True)  # the cached values: the engine's
    assert wb.sheetnames[:2] == ["Summary", TASK_SHEET]
    assert assert_sheet_is(wb, answer) > 40
    assert value(wb, "task_target") == 120


def test_the_formulas_are_the_declared_calculation(agent):
    _, _, path = agent
    wb = load_workbook(path)
    first = named_cells(wb, "step_latency_s2")[0]
    row = first.row
    # a step's latency: its tool time + the point's TTFT + its decoding, inline
    assert first.value == (f"=E{row}+task_ttft_s2+(D{row}/(task_interactivity_s2*task_users))")
    assert named_cells(wb, "step_weighted_s1")[0].value == (
        f"=B{row}-C{row}+task_cached_weight*C{row}+pricing_output_weight_s1*D{row}")
    assert value(wb, "task_latency_s1") == "=SUM(step_latency_s1)"
    assert value(wb, "request_cost_energy_s1") == (
        "=cost_per_mtok_energy_s1*tokens_per_request_s1/tokens_per_mtok")
    assert value(wb, "task_meets_s2") == (
        '=IF(task_target="","",IF(task_latency_s2<=task_target*(1+latency_tolerance),1,0))')
    # each system's figures, and the task's totals, are defined names of the workbook
    for name in filter(None, SYSTEM_ROWS):
        assert [c.column for c in named_cells(wb, name)] == [4, 5], name
    for name in ("task_input", "task_cached", "task_output", "task_tool_time", "task_target",
                 "task_cached_weight", *STEP_COLUMNS):
        assert named_cells(wb, name), name


@pytest.mark.libreoffice
def test_libreoffice_recalculates_the_task_to_price_task(agent, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    _, answer, path = agent
    bare = without_cache(path, tmp_path / "bare.xlsx")
    wb = load_workbook(recalculate(bare, tmp_path / "out"), data_only=True)
    assert assert_sheet_is(wb, answer) > 40
    assert error_cells(wb) == []


@pytest.mark.libreoffice
def test_an_edited_step_recomputes_like_price_task_on_the_edited_task(agent, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    request, answer, path = agent
    wb = load_workbook(path)
    k = 4  # the fifth step writes 2,000 tokens instead of 300, after 5 s of tools
    named_cells(wb, "step_output")[k].value = 2000
    named_cells(wb, "step_tool_time")[k].value = 5
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                        data_only=True)
    # the engine on the edited task, as step tables, at the same points
    steps = answer.steps
    tables = [{"input": float(steps.input[j]), "cached": float(steps.cached[j]),
               "output": 2000.0 if j == k else float(steps.output[j]),
               "tool_time": {"value": 5.0 if j == k else float(steps.tool_time[j]),
                             "unit": "s"}}
              for j in range(len(steps))]
    edited = validate_task({"step": tables})  # (no target: the points are pinned)
    want = price_task(app.LocalContext(), TaskRequest(pinned(answer, TWO), edited))
    for got, before in zip(want.systems, answer.systems, strict=True):
        assert (got.interactivity, got.ttft) == (before.interactivity, before.ttft)
    # the edit matters: the task is longer and dearer
    assert want.systems[1].latency.total > answer.systems[1].latency.total + 5
    assert want.systems[1].cost.cost > answer.systems[1].cost.cost
    assert assert_sheet_is(out, _with_meets(want, request.task.target)) > 40
    # over the target now, on both systems
    assert [value(out, f"task_meets_s{i}") for i in (1, 2)] == [0, 0]


def _with_meets(answer, target):
    """``answer`` with each system's meets held to ``target`` (priced without one: pinned)."""
    from dataclasses import replace
    return replace(answer, systems=[replace(s, meets=calc.meets(s.latency.total, target))
                                    for s in answer.systems])


@pytest.mark.libreoffice
def test_an_edited_scenario_input_recomputes_the_task(agent, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    request, answer, path = agent
    wb = load_workbook(path)
    for cell in named_cells(wb, "utilisation"):
        cell.value = 0.42
    for cell in named_cells(wb, "electricity_price"):
        cell.value = 0.1234
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                        data_only=True)
    changes = ["utilisation=0.42", "electricity.price=0.1234 USD/kWh"]
    task = request.task.model_copy(update={"target": None})
    want = price_task(app.LocalContext(), TaskRequest(pinned(answer, TWO, changes), task))
    assert want.systems[0].cost.cost != pytest.approx(answer.systems[0].cost.cost, rel=1e-6)
    assert assert_sheet_is(out, _with_meets(want, request.task.target)) > 40


@pytest.mark.libreoffice
def test_no_target_and_no_interactivity_show_dashes_not_errors(tmp_path):
    # the sample states no interactivity (no latency); the published point states no TTFT
    # (counted as 0 s); with no target, no system meets or misses one
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    files = [SCENARIOS / "sample-tco.toml", PUBLISHED / "deepseek-r1_gb300_matched.toml"]
    task = validate_task({"steps": 12, "context": 2000, "growth": 500, "output": 400,
                          "cached_share": 0.5, "tool_time": "2 s", "cached_weight": 0.1})
    request = TaskRequest(specs(files), task)
    answer = price_task(app.LocalContext(), request)
    assert answer.systems[0].latency is None and answer.systems[1].ttft is None
    path = tmp_path / "plain.xlsx"
    path.write_bytes(task_workbook(app.LocalContext(), request).content)
    wb = load_workbook(recalculate(without_cache(path, tmp_path / "bare.xlsx"),
                                   tmp_path / "out"), data_only=True)
    assert error_cells(wb) == []
    assert value(wb, "task_target") is None
    assert value(wb, "task_latency_s1") in (None, "")
    assert value(wb, "task_latency_s2") == approx(answer.systems[1].latency.total)
    assert all(value(wb, f"task_meets_s{i}") in (None, "") for i in (1, 2))
    for i, s in enumerate(answer.systems):
        for name, want in (("task_cost_total", s.cost.cost), ("task_price", s.cost.price),
                           ("tasks_per_hour", s.cost.tasks_per_hour),
                           ("task_weighted", s.cost.weighted_tokens)):
            assert value(wb, suffixed(name, i + 1)) == approx(want), (s.name, name)


@pytest.mark.libreoffice
def test_the_task_workbook_prints(agent):
    require_libreoffice(module=False)
    pypdf = pytest.importorskip("pypdf", reason="pypdf (the test extra) reads the pages")
    from costmodel.render.workbook.recalc import to_pdf
    _, answer, path = agent
    reader = pypdf.PdfReader(io.BytesIO(to_pdf(path)))
    footer = re.compile(r"(\w+) Page (\d+) of (\d+)")
    pages = []
    for k, page in enumerate(reader.pages, 1):
        text = page.extract_text()
        found = footer.search(text)
        assert found and int(found[2]) == k and int(found[3]) == len(reader.pages), k
        pages.append((found[1], text))
    task = [text for title, text in pages if title == TASK_SHEET]
    # the task's figures on one page, its 40 steps on two more at most
    assert 2 <= len(task) <= 4, len(task)
    assert pages[1][0] == TASK_SHEET
    assert "Price per task" in task[0] and "Meets the target" in task[0]
    assert f"{answer.systems[1].cost.price:.4f}" in task[0]
    for text in task:
        assert not any(e in text for e in ERRORS)
    # the steps' header repeats on every page of the steps
    assert all("Latency of the step" in text for text in task[1:])
    assert len(pages) <= 30


def test_the_most_steps_are_written_in_bounded_time_and_size():
    """MAX_TASK_STEPS (10,000) steps, the most a task takes (more are refused by
    validate_task at task.steps), under two megabytes (no target: none is met by so long a
    task)."""
    task = validate_task({**{k: v for k, v in AGENT.items() if k != "target"},
                          "steps": MAX_TASK_STEPS})
    book = task_workbook(app.LocalContext(), TaskRequest(specs(TWO), task))
    assert len(book.content) < 2_000_000, len(book.content)
    with zipfile.ZipFile(io.BytesIO(book.content)) as z:
        names = z.read("xl/workbook.xml").decode()
    first = int(re.search(r"Task!\$B\$(\d+):\$B\$(\d+)", names)[1])
    assert f"Task!$B${first}:$B${first + MAX_TASK_STEPS - 1}" in names
