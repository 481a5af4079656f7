"""Every answer that can take seconds holds a heavy slot (issue 38, item 2): a task's, a
plan's and a profit's workbook or PDF, and a task larger than MAX_TASK_CELLS steps x
systems, on the API and the pages alike; a task workbook over its bound is refused 413
before anything is priced; a large task's JSON carries the totals, each step's latency on
request (?series=steps). Counts and statuses are asserted, never times."""
from __future__ import annotations

import re
from html import unescape

import pytest
from conftest import auth

from costmodel import app as use_cases
from costmodel.api.openapi import build_spec
from costmodel.app.caps import MAX_TASK_CELLS
from costmodel.store.repo import key_create

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PDF = "application/pdf"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
B200 = {"accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
        "operating_point": {"curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"}}
CURVES = ("fixture:curve-gpt-oss-120b-b200", "fixture:curve-gpt-oss-120b-h100",
          "fixture:curve-gpt-oss-120b-mi355x")
MARKET = {"price_input": "0.5 USD/Mtok", "price_output": "2 USD/Mtok",
          "provider": "Example API", "model": "DeepSeek R1", "date": "2026-11",
          "source": "illustrative assumption"}


def _task(steps: int, systems: int) -> dict:
    return {"scenarios": [{"scenario": {**B200, "name": f"system {i}"}}
                          for i in range(systems)],
            "task": {"steps": steps, "context": "2400 token", "output": "300 token"}}


def _token(application) -> str:
    with application.extensions["costmodel"].sessions() as session:
        return key_create(session, "heavy-answers", "viewer")[1]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


# the largest task that is light, and the smallest that is heavy: 10,000 steps x 2 systems is
# MAX_TASK_CELLS (20,000); x 3 is 30,000
LIGHT, LARGE = (10_000, 2), (10_000, 3)
assert LIGHT[0] * LIGHT[1] == MAX_TASK_CELLS

HEAVY_ANSWERS = [  # (path, body, Accept): each holds a heavy slot
    ("/task", _task(40, 2), XLSX),
    ("/task", _task(*LARGE), "application/json"),
    ("/plan", {"scenario": GB300, "demand": "1e6 token/s"}, PDF),
    ("/profit", {"scenarios": [{"scenario": GB300}], "market": MARKET}, XLSX),
]
LIGHT_ANSWERS = [  # the same operations' JSON: no slot
    ("/task", _task(*LIGHT), "application/json"),
    ("/plan", {"scenario": GB300, "demand": "1e6 token/s"}, "application/json"),
    ("/profit", {"scenarios": [{"scenario": GB300}], "market": MARKET}, "application/json"),
]


@pytest.mark.parametrize("path,body,accept", HEAVY_ANSWERS)
def test_a_heavy_answer_finds_no_free_slot_and_says_so(make_app, path, body, accept):
    application = make_app(HEAVY_PER_WORKER=1)
    token, client = _token(application), application.test_client()
    headers = {**auth(token), "Accept": accept}
    with application.extensions["costmodel.limits"].heavy():  # another holds the only slot
        r = client.post(API + path, json=body, headers=headers)
    assert r.status_code == 429 and r.mimetype == "application/problem+json"
    assert r.headers["Retry-After"] == "2" and r.json["type"].endswith("/busy")
    r = client.post(API + path, json=body, headers=headers)  # the slot is free again
    assert r.status_code == 200 and r.mimetype == accept


@pytest.mark.parametrize("path,body,accept", LIGHT_ANSWERS)
def test_a_light_answer_takes_no_slot(make_app, path, body, accept):
    application = make_app(HEAVY_PER_WORKER=1)
    token = _token(application)
    with application.extensions["costmodel.limits"].heavy():
        r = application.test_client().post(API + path, json=body,
                                           headers={**auth(token), "Accept": accept})
    assert r.status_code == 200, r.get_data(as_text=True)[:500]


def test_a_heavy_answer_holds_its_slot_while_it_is_built(make_app, monkeypatch):
    application = make_app(HEAVY_PER_WORKER=1)
    limits = application.extensions["costmodel.limits"]
    seen = []
    built = use_cases.task_workbook

    def watched(*args, **kwargs):
        seen.append(limits._slots._value)  # the worker's free slots while it is built
        return built(*args, **kwargs)
    monkeypatch.setattr(use_cases, "task_workbook", watched)
    r = application.test_client().post(f"{API}/task", json=_task(40, 2),
                                       headers={**auth(_token(application)), "Accept": XLSX})
    assert r.status_code == 200 and seen == [0]
    assert limits._slots._value == 1  # given back


# ---- the task workbook's bound: 413, before anything is priced ---------------------------

def test_a_task_workbook_over_its_bound_is_refused_before_it_is_priced(make_app, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("a task over the workbook's bound was priced")
    monkeypatch.setattr(use_cases, "task_workbook", never)
    monkeypatch.setattr(use_cases, "price_task", never)
    application = make_app(HEAVY_PER_WORKER=1)
    r = application.test_client().post(f"{API}/task", json=_task(*LARGE),
                                       headers={**auth(_token(application)), "Accept": XLSX})
    assert r.status_code == 413 and r.mimetype == "application/problem+json"
    assert r.json["type"].endswith("/answer-too-large")
    assert r.json["errors"][0]["path"] == "task"
    assert ("a task workbook holds at most 20,000 steps x systems; 10,000 steps x 3 systems "
            "is 30,000") in r.json["detail"]


def test_a_task_workbook_at_its_bound_is_built(make_app):
    application = make_app()
    r = application.test_client().post(f"{API}/task", json=_task(*LIGHT),
                                       headers={**auth(_token(application)), "Accept": XLSX})
    assert r.status_code == 200 and r.mimetype == XLSX


# ---- a large task's JSON: the totals; each step on request --------------------------------

def test_a_large_tasks_json_carries_the_totals_and_each_step_on_request(make_app):
    application = make_app()
    client, headers = application.test_client(), auth(_token(application))
    default = client.post(f"{API}/task", json=_task(*LARGE), headers=headers).json
    steps = client.post(f"{API}/task?series=steps", json=_task(*LARGE), headers=headers).json
    assert [s["latency"]["per_step"] for s in default["systems"]] == [None] * 3
    per_step = [s["latency"]["per_step"]["values"] for s in steps["systems"]]
    assert [len(v) for v in per_step] == [10_000] * 3
    # the totals are the same answer's, and the sum of its steps' latencies with tool time
    for d, s, values in zip(default["systems"], steps["systems"], per_step, strict=True):
        assert d["latency"]["total"] == s["latency"]["total"]
        assert d["cost_per_task"] == s["cost_per_task"]
        assert s["latency"]["total"]["value"] == pytest.approx(sum(values))
    # a task at the bound keeps its series; ?series=totals drops it whatever the size
    light = client.post(f"{API}/task", json=_task(*LIGHT), headers=headers).json
    assert [len(s["latency"]["per_step"]["values"]) for s in light["systems"]] == [10_000] * 2
    small = client.post(f"{API}/task?series=totals", json=_task(40, 2), headers=headers).json
    assert [s["latency"]["per_step"] for s in small["systems"]] == [None, None]
    r = client.post(f"{API}/task?series=each", json=_task(40, 2), headers=headers)
    assert r.status_code == 422 and r.json["errors"][0]["path"] == "series"


def test_the_document_states_the_heavy_answers_and_the_bound():
    paths = build_spec()["paths"]
    task = paths[f"{API}/task"]["post"]
    assert "20,000 steps x systems" in task["description"] and "heavy slot" in \
        task["description"]
    assert {"413", "429"} <= set(task["responses"])
    assert "size bound" in task["responses"]["413"]["description"]
    assert any(p["name"] == "series" for p in task["parameters"])
    for path in ("/plan", "/profit"):
        assert "heavy answer" in paths[API + path]["post"]["description"]


# ---- the pages -----------------------------------------------------------------------------

def _task_query(steps: int, systems: int) -> str:
    return f"t_steps={steps}&t_target=&" + "&".join(f"sys={s}" for s in CURVES[:systems])


@pytest.mark.parametrize("path", ["/task.xlsx", f"/task?{_task_query(*LARGE)}",
                                  f"/task.json?{_task_query(*LARGE)}", "/plan.pdf",
                                  "/profit.xlsx?market=illustrative/reasoning-model-api"])
def test_a_heavy_page_holds_a_slot(make_app, path):
    application = make_app(HEAVY_PER_WORKER=1, OPEN_READS=True)
    client = application.test_client()
    with application.extensions["costmodel.limits"].heavy():
        r = client.get(path)
    assert r.status_code == 429 and r.mimetype == "text/html"
    assert r.headers["Retry-After"] == "2"
    assert "this worker runs 1 heavy analysis already" in _text(r.text)


@pytest.mark.parametrize("path", ["/task", f"/task.json?{_task_query(*LIGHT)}", "/plan",
                                  "/plan.json"])
def test_a_light_page_takes_no_slot(make_app, path):
    application = make_app(HEAVY_PER_WORKER=1, OPEN_READS=True)
    with application.extensions["costmodel.limits"].heavy():
        assert application.test_client().get(path).status_code == 200


def test_the_task_workbook_page_over_its_bound_is_a_413_page(make_app, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("a task over the workbook's bound was priced")
    monkeypatch.setattr(use_cases, "price_task", never)
    application = make_app(OPEN_READS=True)
    r = application.test_client().get(f"/task.xlsx?{_task_query(*LARGE)}")
    assert r.status_code == 413 and r.mimetype == "text/html"
    assert ("a task workbook holds at most 20,000 steps x systems; 10,000 steps x 3 systems "
            "is 30,000") in _text(r.text)
