"""A buyer's demand in tasks a day (``[demand]`` with ``tasks_per_day`` and ``[demand.task]``):
the requests the tasks make, the interactivity a task target needs, and quotes ranked at it.
Figures derived by hand in the comments."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel import app
from costmodel.cli import main
from costmodel.decisions.demand import DAYS_PER_MONTH, Shape, load_of, validate_demand
from costmodel.model.errors import InputError
from costmodel.sources.quote_file import read_quotes

ROOT = Path(__file__).resolve().parents[2]
AGENT = {"steps": 40, "context": 8000, "growth": 1500, "output": 300, "cached_share": 0.8,
         "tool_time": "1.2 s", "target": "150 s"}
DEMAND = {"tasks_per_day": "20000 task/day", "ttft_max": "0.5 s", "task": AGENT}
# 40 steps: 1,490,000 input tokens (1,192,000 cached), 12,000 output, 46.8 s of tool time
NEED = 12_000 / (150 - 46.8 - 40 * 0.5)  # 144.23 token/s/user


def test_tasks_are_counted_as_the_requests_they_make():
    demand, counted = validate_demand(DEMAND).as_requests()
    # 20,000 tasks x 40 steps; the steps' mean shape: 1,490,000 / 40 = 37,250 in, 300 out
    assert demand.requests_per_day == 800_000
    assert (demand.isl, demand.osl) == (37_250, 300)
    assert demand.cached_input_share == pytest.approx(0.8)
    # 12,000 output tokens in 150 - 46.8 - 40 x 0.5 = 83.2 s: 144.23 token/s/user a step
    assert demand.interactivity == pytest.approx(NEED, rel=1e-12)
    assert demand.percentile == "median"
    assert counted[0].startswith("20,000 tasks a day of 40 steps: 800,000 requests a day of "
                                 "37,250 input and 300 output tokens")
    assert "144.2 token/s/user" in counted[1] and "83.2 s" in counted[1]
    # a month: 800,000 x 37,550 tokens x 30.4167 days (the task's shape, not the scenario's)
    load = load_of(demand, Shape(8192, 1024))
    assert load.volume == pytest.approx(800_000 * 37_550 * DAYS_PER_MONTH / 1e6, rel=1e-12)


def test_without_a_ttft_ceiling_the_need_counts_decoding_and_says_so():
    demand, counted = validate_demand({**DEMAND, "ttft_max": None}).as_requests()
    assert demand.interactivity == pytest.approx(12_000 / (150 - 46.8), rel=1e-12)
    assert "give ttft_max" in counted[1]


@pytest.mark.parametrize("data,path", [
    ({"tasks_per_day": "10 task/day"}, "demand"),
    ({**DEMAND, "volume": "5 Mtok/month"}, "demand"),
    ({**DEMAND, "tasks_per_day": "10 request/day"}, "demand.tasks_per_day"),
    ({**DEMAND, "task": {**AGENT, "cached_share": 2}}, "demand.task.cached_share"),
])
def test_bad_task_demands_name_the_field(data, path):
    with pytest.raises(InputError) as caught:
        validate_demand(data)
    assert caught.value.errors[0][0] == path, caught.value.errors


@pytest.mark.parametrize("data,path", [
    ({**DEMAND, "task": {**AGENT, "target": "60 s"}}, "demand.task.target"),
    ({**DEMAND, "isl": 1000}, "demand.isl"),
    ({**DEMAND, "interactivity": "100 token/s/user"}, "demand.interactivity"),
])
def test_a_task_demand_that_cannot_be_counted_names_the_field(data, path):
    with pytest.raises(InputError) as caught:
        validate_demand(data).as_requests()
    assert caught.value.errors[0][0] == path


QUOTES = ROOT / "fixtures" / "quotes" / "negotiation.toml"
B200 = ROOT / "fixtures" / "scenarios" / "curve-gpt-oss-120b-b200.toml"


def test_quotes_are_ranked_at_the_task_target():
    """The per-Mtok offer guarantees 100 token/s/user: below the 144 the task needs, so it
    is not ranked; our B200 build is read at 144.2 token/s/user and sized for the tasks."""
    request = app.DecisionRequest(read_quotes(QUOTES), [app.ScenarioSpec(app.FileScenario(
        B200))], validate_demand(DEMAND))
    answer = app.quotes_decide(app.LocalContext(), request).to_json()
    assert answer["assumptions"][0].startswith("20,000 tasks a day of 40 steps")
    unranked = {u["offer"]: u["why"] for u in answer["unranked"]}
    assert "100 token/s/user, below the demand's service level (144.2)" in \
        unranked["api-tokens"]
    assert answer["demand"]["volume"]["value"] == pytest.approx(
        800_000 * 37_550 * DAYS_PER_MONTH / 1e6, rel=1e-12)
    own = answer["own_builds"][0]["disclosure"]
    assert own["operating_point"]["interactivity"]["value"] == pytest.approx(NEED, rel=1e-9)


def test_quotes_decide_reads_a_task_demand_from_the_file(tmp_path):
    quotes = tmp_path / "agent-quotes.toml"
    text = QUOTES.read_text()
    quotes.write_text("""[demand]
tasks_per_day = "20000 task/day"
ttft_max = "0.5 s"

[demand.task]
steps = 40
context = 8000
growth = 1500
output = 300
cached_share = 0.8
tool_time = "1.2 s"
target = "150 s"

""" + text[text.index("[[quote]]"):])
    out = CliRunner().invoke(main, ["quotes", "decide", str(quotes), "--scenario", str(B200),
                                    "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["assumptions"][0].startswith("20,000 tasks a day of 40 steps")
    # --demand in tasks replaces the volume: twice the tasks, twice the requests
    out = CliRunner().invoke(main, ["quotes", "decide", str(quotes), "--scenario", str(B200),
                                    "--demand", "40000 task/day", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["demand"]["volume"]["value"] == pytest.approx(
        2 * got["demand"]["volume"]["value"], rel=1e-12)
