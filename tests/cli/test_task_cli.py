"""``costmodel task``: the task from a [task] table (its own file, or beside a scenario), the
figures as app.price_task gives them, and bad input as one readable line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel import app
from costmodel.cli import main
from costmodel.decisions.task import validate_task

ROOT = Path(__file__).resolve().parents[2]
CURVES = [ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml"
          for hw in ("h100", "b200")]
TASK = """[task]
name = "coding agent"
steps = 40
context = "8000 token"
growth = "1500 token"
output = "300 token"
cached_share = 0.8
tool_time = "1.2 s"
"""


def run(*args):
    return CliRunner().invoke(main, ["task", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def task_file(tmp_path) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(TASK + 'target = "120 s"\n')
    return path


def _engine(target: str | None = "120 s") -> dict:
    table = {"name": "coding agent", "steps": 40, "context": "8000 token",
             "growth": "1500 token", "output": "300 token", "cached_share": 0.8,
             "tool_time": "1.2 s", **({"target": target} if target else {})}
    specs = [app.ScenarioSpec(app.FileScenario(p), subject=str(p)) for p in CURVES]
    return app.price_task(app.LocalContext(),
                          app.TaskRequest(specs, validate_task(table))).to_json()


def test_the_json_is_the_engines(task_file):
    out = run(*CURVES, "--task", task_file, "--json")
    assert out.exit_code == 0, out.output
    got, want = json.loads(out.output), _engine()
    assert [s["cost_per_task"] for s in got["systems"]] == \
        [s["cost_per_task"] for s in want["systems"]]
    assert [s["latency"]["total"] for s in got["systems"]] == \
        [s["latency"]["total"] for s in want["systems"]]
    # the H100 curve's fastest point (180 token/s/user, TTFT 0.21 s): 40 x 0.21 + 12,000 /
    # 180 + 39 x 1.2 = 8.4 + 66.667 + 46.8 = 121.87 s, 1.87 s over the target
    h100 = got["systems"][0]
    assert h100["latency"]["total"]["value"] == pytest.approx(8.4 + 12_000 / 180 + 46.8)
    assert h100["meets_target"] is False
    assert h100["misses_by"]["value"] == pytest.approx(8.4 + 12_000 / 180 + 46.8 - 120)
    assert got["cheapest"] == "gpt-oss-120b b200 (illustrative curve)"


def test_the_text_shows_the_answer_first(task_file):
    out = run(*CURVES, "--task", task_file)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("coding agent: 40 steps, 1,490,000 input tokens (1,192,000 "
                               "cached), 12,000 output tokens")
    assert lines[1] == "Target: 120 s, at the median"
    meets = next(line for line in lines if line.startswith("=> Meets 120 s"))
    assert "no: 121.9 s" in meets and "yes" in meets
    assert "=> Cheapest per task that meets the target: gpt-oss-120b b200 (illustrative " \
           "curve)" in out.output
    assert "cannot meet 120 s: 121.9 s at its fastest point (180 token/s/user)" in out.output


def test_a_task_beside_the_scenario_and_a_target_on_the_command_line(tmp_path):
    scenario = tmp_path / "h100-agent.toml"
    scenario.write_text(CURVES[1].read_text() + "\n" + TASK)
    out = run(scenario, "--target", "150 s", "--json")
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["task"]["target"] == {"value": 150.0, "unit": "s"}
    assert got["systems"][0]["meets_target"] is True
    # the scenario's own [task] is not a scenario input: price still prices the file
    assert CliRunner().invoke(main, ["price", str(scenario)]).exit_code == 0


@pytest.mark.parametrize("extra,said", [
    (["--target", "5 W"], "--target"),
    (["--percentile", "p42"], "--percentile"),
    (["--target", "1 s"], "no system meets 1 s"),
])
def test_bad_input_is_one_line_and_a_non_zero_exit(task_file, extra, said):
    out = run(*CURVES, "--task", task_file, *extra)
    assert out.exit_code != 0
    assert said in out.output and len(out.output.strip().splitlines()) == 1, out.output


def test_no_task_table_says_where_to_give_one():
    out = run(*CURVES)
    assert out.exit_code != 0
    assert "no [task] table" in out.output and "--task TASKFILE" in out.output


def test_a_million_steps_is_refused_at_once(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text(TASK.replace("steps = 40", "steps = 1000000"))
    out = run(*CURVES, "--task", path)
    assert out.exit_code != 0 and "task.steps" in out.output
