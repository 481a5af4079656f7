"""POST /api/v1/task: the task on each system as the engine prices it, inline and saved
scenarios, and bad input as problems naming the field."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import auth

from costmodel import app
from costmodel.api.schemas import EXAMPLE_TASK, TASK_CURVES
from costmodel.decisions.task import validate_task

API = "/api/v1"


def _engine(body: dict) -> dict:
    specs = [app.ScenarioSpec(app.InlineScenario(s["scenario"])) for s in body["scenarios"]]
    return app.price_task(app.LocalContext(), app.TaskRequest(
        specs, validate_task(body["task"]))).to_json()


def test_the_documents_example_is_the_engines(client, tokens):
    body = {"scenarios": TASK_CURVES, "task": EXAMPLE_TASK}
    r = client.post(f"{API}/task", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    got, want = r.get_json(), _engine(body)
    for g, w in zip(got["systems"], want["systems"], strict=True):
        for key in ("operating_point", "latency", "meets_target", "cost_per_task",
                    "price_per_task", "energy_per_task", "tasks_per_hour"):
            assert g[key] == w[key], key
    b200, h100 = got["systems"]
    # B200 meets 120 s between two of its points; H100 at best (180 token/s/user, 0.21 s)
    # takes 40 x 0.21 + 12,000 / 180 + 39 x 1.2 = 121.87 s
    assert b200["meets_target"] and b200["latency"]["total"]["value"] == pytest.approx(120)
    assert h100["latency"]["total"]["value"] == pytest.approx(8.4 + 12_000 / 180 + 46.8)
    assert got["cheapest"] == "b200"
    assert len(b200["latency"]["per_step"]["values"]) == 40
    assert got["task"]["input_tokens"] == {"value": 1_490_000.0, "unit": "token"}


def test_a_saved_scenario_with_overrides(client, tokens):
    saved = client.post(f"{API}/scenarios", json={"name": "task b200",
                                                  "scenario": TASK_CURVES[0]["scenario"]},
                        headers=auth(tokens["editor"]))
    assert saved.status_code == 201
    sid = saved.get_json()["scenario_id"]
    body = {"scenarios": [{"scenario_id": sid,
                           "overrides": {"electricity.price": "0.05 USD/kWh"}}],
            "task": EXAMPLE_TASK}
    r = client.post(f"{API}/task", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    want = _engine({"scenarios": [{"scenario": {**TASK_CURVES[0]["scenario"],
                                                "electricity": {"price": "0.05 USD/kWh"}}}],
                    "task": EXAMPLE_TASK})
    assert r.get_json()["systems"][0]["cost_per_task"] == want["systems"][0]["cost_per_task"]


@pytest.mark.parametrize("task,path", [
    ({**EXAMPLE_TASK, "output": "-5 token"}, "task.output"),
    ({**EXAMPLE_TASK, "cached_share": 1.5}, "task.cached_share"),
    ({**EXAMPLE_TASK, "steps": 1_000_000}, "task.steps"),
    ({**EXAMPLE_TASK, "target": "1 s"}, "task.target"),
    ({**EXAMPLE_TASK, "target": "1 W"}, "task.target"),
    ({"step": [{"input": 10, "output": 5}] * 10_001}, "task.step"),
])
def test_bad_tasks_are_problems_naming_the_field(client, tokens, task, path):
    r = client.post(f"{API}/task", json={"scenarios": TASK_CURVES, "task": task},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    assert r.get_json()["errors"][0]["path"] == path


def test_the_docs_curl_example_answers_what_the_docs_say(client, tokens):
    """docs/tasks.md's curl body, sent: B200 meets 120 s at 195 token/s/user for 0.154 USD a
    task; H100's fastest point takes 121.9 s, 1.87 s too slow."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "tasks.md").read_text()
    body = json.loads(re.search(r"api/v1/task .*?-d '(.*?)'\n```", text, re.S).group(1))
    r = client.post(f"{API}/task", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    b200, h100 = r.get_json()["systems"]
    assert round(b200["operating_point"]["interactivity"]["value"]) == 195
    assert round(b200["cost_per_task"]["total"]["value"], 3) == 0.154
    assert round(h100["latency"]["total"]["value"], 1) == 121.9
    assert round(h100["misses_by"]["value"], 2) == 1.87
