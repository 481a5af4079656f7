"""The Task page (Flask test client): an agent's task priced on each system, as
:func:`costmodel.app.price_task` answers it (``POST /api/v1/task``), rounded as displayed; the
example a first visit shows checked against the engine and by hand; bad fields marked in the
unit typed; the latency by step drawn (one line a system, a point a step) with its table; the
curl line's body is the page's request."""
from __future__ import annotations

import html
import json
import re
import time
from urllib.parse import urlencode

import pytest

from costmodel import app
from costmodel.decisions.task import validate_task
from costmodel.render import display
from costmodel.web.pages import fixture_scenarios
from costmodel.web.task_page import DEFAULT_SYSTEMS

# issue 24's example, as the API takes it
EXAMPLE_TASK = {"steps": 40, "context": "8000 token", "growth": "1500 token",
                "output": "300 token", "cached_share": "80 %", "tool_time": "1.2 s",
                "target": "120 s", "percentile": "median"}
H100, B200, MI300X = (fixture_scenarios()[k][0] for k in DEFAULT_SYSTEMS)


def _text(fragment: str) -> str:
    """The words of an HTML fragment, as read (inline tags join, others part)."""
    inline = re.sub(r"</?(?:span|strong|a)\b[^>]*>", "", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def cell(page: str, figure: str, system: str) -> str:
    """The text of the table's cell of ``figure`` for ``system``."""
    row = re.search(rf'<tr data-figure="{figure}"[^>]*>(.*?)</tr>', page, re.S)
    assert row, f"no row {figure}"
    m = re.search(rf'<td[^>]*data-system="{re.escape(html.escape(system))}"[^>]*>(.*?)</td>',
                  row.group(1), re.S)
    assert m, f"no cell {figure} of {system}"
    return _text(m.group(1))


def priced(task: dict, keys=DEFAULT_SYSTEMS) -> dict:
    """The engine's answer for the task on the example scenarios (the local context)."""
    specs = [app.ScenarioSpec(app.InlineScenario(fixture_scenarios()[k][1])) for k in keys]
    return app.price_task(app.LocalContext(), app.TaskRequest(
        specs, validate_task(task))).to_json()


@pytest.fixture(scope="module")
def example():
    return priced(EXAMPLE_TASK)


def _shown(q: dict | None, name: str | None = None) -> str:
    return "-" if q is None else display.format_quantity(q["value"], q["unit"], name)


FIGURES = [  # (row, where in a system's JSON, display name)
    ("latency_total", ("latency", "total"), None),
    ("latency_ttft", ("latency", "ttft"), None),
    ("latency_decode", ("latency", "decode"), None),
    ("latency_tool", ("latency", "tool"), None),
    ("interactivity", ("operating_point", "interactivity"), None),
    ("ttft", ("operating_point", "ttft"), None),
    ("cost_per_task", ("cost_per_task", "total"), "cost_per_task"),
    ("cost_per_task_energy", ("cost_per_task", "energy"), "cost_per_task_energy"),
    ("cost_per_task_capex", ("cost_per_task", "capex"), "cost_per_task_capex"),
    ("cost_per_task_opex", ("cost_per_task", "opex"), "cost_per_task_opex"),
    ("price_per_task", ("price_per_task",), "price_per_task"),
    ("cost_per_thousand_tasks", ("cost_per_thousand_tasks",), "cost_per_thousand_tasks"),
    ("price_per_thousand_tasks", ("price_per_thousand_tasks",), "price_per_thousand_tasks"),
    ("energy_per_task", ("energy_per_task",), None),
    ("tasks_per_hour", ("tasks_per_hour",), None),
    ("weighted_tokens", ("weighted_tokens",), None),
    ("cost_per_mtok", ("cost_per_mtok",), "cost_per_mtok_total"),
]


def _at(system: dict, path: tuple[str, ...]):
    for key in path:
        system = system[key]
    return system


def test_a_first_visit_prices_the_example_as_the_engine_does(web, example):
    r = web.get("/task")
    assert r.status_code == 200, r.text[:3000]
    page = r.text
    assert [s["scenario"] for s in example["systems"]] == [H100, B200, MI300X]
    for s in example["systems"]:
        for row, path, name in FIGURES:
            assert cell(page, row, s["scenario"]) == _shown(_at(s, path), name), (row, s)
        assert s["operating_point"]["how"] in cell(page, "how", s["scenario"])
        assert cell(page, "ttft_from", s["scenario"]) == s["operating_point"]["ttft_from"]
        notes = re.search(rf'<li data-system="{re.escape(html.escape(s["scenario"]))}">(.*?)'
                          rf'</ul></li>', page, re.S)
        assert notes and all(note in _text(notes.group(1)) for note in s["notes"])
    rules = _text(re.search(r'data-testid="rules">(.*?)</ul>', page, re.S).group(1))
    assert all(rule in rules for rule in example["rules"])
    assert _text(re.search(r'data-figure="cheapest">(.*?)</span>', page).group(1)) == \
        example["cheapest"] == B200


def test_the_example_by_hand(web, example):
    """The figures of issue 24's example agent, derived by hand from each curve's point."""
    page = web.get("/task").text
    h100, b200, mi300x = example["systems"]
    # the task: 40 steps of 8,000 + 1,500 k input tokens (k = 0..39), 80 % cached; 300 output
    # tokens a step; 1.2 s of tools before each step but the first
    t = example["task"]
    assert t["input_tokens"]["value"] == 40 * 8000 + 1500 * sum(range(40)) == 1_490_000
    assert t["cached_tokens"]["value"] == pytest.approx(0.8 * 1_490_000)
    assert t["output_tokens"]["value"] == 12_000 and t["tool_time"]["value"] == \
        pytest.approx(46.8)
    assert "40 steps: 1,490,000 input tokens (1,192,000 from the prefix cache), 12,000 " \
        "output tokens, 46.80 s of tools; a target of 120.0 s at the median." in _text(page)
    # priced as input tokens: new + cached (cached_weight 1) + 4 x output (the output weight)
    for s in example["systems"]:
        assert s["weighted_tokens"]["value"] == 1_490_000 + 4 * 12_000 == 1_538_000
    # H100 cannot meet 120 s: at its fastest measured point, 180 token/s/user with a 0.21 s
    # TTFT, the task takes 46.8 + 40 x 0.21 + 12,000 / 180 = 121.87 s
    assert h100["operating_point"]["interactivity"]["value"] == 180
    assert h100["operating_point"]["ttft"]["value"] == pytest.approx(0.21)
    assert h100["latency"]["total"]["value"] == pytest.approx(46.8 + 8.4 + 12_000 / 180)
    assert cell(page, "latency_total", H100) == "121.9 s"
    assert cell(page, "meets_target", H100) == "no: misses by 1.87 s"
    # MI300X: 150 token/s/user, 0.25 s: 46.8 + 10 + 80 = 136.8 s, 16.8 s too long
    assert mi300x["latency"]["total"]["value"] == pytest.approx(136.8)
    assert cell(page, "meets_target", MI300X) == "no: misses by 16.80 s"
    # B200 meets it, read where the task takes exactly 120 s: 46.8 + 40 TTFT(x) + 12,000 / x
    x = b200["operating_point"]["interactivity"]["value"]
    ttft = b200["operating_point"]["ttft"]["value"]
    assert 46.8 + 40 * ttft + 12_000 / x == pytest.approx(120, rel=1e-9)
    assert cell(page, "meets_target", B200) == "yes"
    assert cell(page, "interactivity", B200) == "195 token/s/user"
    assert cell(page, "latency_total", B200) == "120.0 s"
    # cost: the task in requests of the measured shape (8,192 in + 1,024 out; 12,288
    # input-token equivalents), each request 9,216 mixed tokens at the cost per million
    for s in example["systems"]:
        per_mtok = s["cost_per_mtok"]["value"]
        assert s["cost_per_task"]["total"]["value"] == pytest.approx(
            per_mtok * 9216 / 1e6 * 1_538_000 / 12_288, rel=1e-12)
        assert s["price_per_task"]["value"] == pytest.approx(
            s["cost_per_task"]["total"]["value"] / (1 - 0.5), rel=1e-12)
    assert [cell(page, "cost_per_task", n) for n in (H100, B200, MI300X)] == \
        ["3.74 USD", "0.2472 USD", "3.57 USD"]
    assert [cell(page, "cost_per_thousand_tasks", n) for n in (H100, B200, MI300X)] == \
        ["3,739.87 USD", "247.20 USD", "3,570.81 USD"]
    # the cheapest of those meeting the target is the only one that meets it
    text = _text(re.search(r'data-testid="cheapest">(.*?)</div>', page, re.S).group(1))
    assert text.startswith(f"Cheapest among the systems that meet 120.0 s: {B200}, "
                           f"0.2472 USD a task at cost (0.4944 USD priced)")


def test_the_page_answers_as_its_json(web, example):
    j = web.get("/task.json").get_json()
    for got, want in zip(j["systems"], example["systems"], strict=True):
        for _, path, _ in FIGURES:
            assert _at(got, path) == pytest.approx(_at(want, path)), path
        assert got["latency"]["per_step"] == want["latency"]["per_step"]
    assert j["cheapest"] == example["cheapest"]


def test_without_a_target_each_system_is_at_its_own_point(web):
    r = web.get("/task?t_target=")
    assert r.status_code == 200
    want = priced({k: v for k, v in EXAMPLE_TASK.items() if k != "target"})
    for s in want["systems"]:
        assert s["meets_target"] is None
        assert cell(r.text, "meets_target", s["scenario"]) == "no target"
        assert cell(r.text, "latency_total", s["scenario"]) == _shown(s["latency"]["total"])
    cheapest = min(want["systems"], key=lambda s: s["cost_per_task"]["total"]["value"])
    assert want["cheapest"] == cheapest["scenario"]
    assert "Cheapest: " in _text(r.text)


def test_a_tighter_target_nobody_meets_is_said_beside_it(web):
    """A target no system meets is the task's error (as on every face), at its field, with
    each system's best: H100 121.9 s at 180 token/s/user is its fastest, B200 89.1 s at 320."""
    r = web.get("/task?t_target=60")
    assert r.status_code == 422
    said = re.search(r'id="t_target-error" role="alert">(.*?)<', r.text, re.S)
    assert said, r.text[:2000]
    text = html.unescape(said.group(1))
    assert text.startswith("no system meets 60 s:")
    assert "takes 121.9 s at its fastest point (180 token/s/user)" in text


# ---- the latency by step ---------------------------------------------------------------------

def _series(page: str, chart: str) -> list[tuple[str, int, list[str]]]:
    """(system, data-points, each step's value on hover) of every line of a chart."""
    svg = re.search(rf'<svg class="chart {chart}".*?</svg>', page, re.S)
    assert svg, f"no chart {chart}"
    out = []
    for m in re.finditer(r'<g class="series" data-series="([^"]*)" data-points="(\d+)">(.*?)'
                         r'</g>', svg.group(0), re.S):
        titles = re.findall(r"<title>(.*?)</title>", m.group(3))
        out.append((html.unescape(m.group(1)), int(m.group(2)),
                    [html.unescape(t) for t in titles]))
    return out


def test_the_chart_draws_each_system_step_by_step(web, example):
    page = web.get("/task").text
    lines = _series(page, "steps")
    assert [name for name, _, _ in lines] == [H100, B200, MI300X]
    for (name, n, titles), s in zip(lines, example["systems"], strict=True):
        values = s["latency"]["per_step"]["values"]
        assert n == len(values) == 40 and len(titles) == 40
        assert titles == [f"{name}, step {k}: {display.format_quantity(v, 's')}"
                          for k, v in enumerate(values, 1)]
    # the first step waits for no tool: 1.2 s less than every other
    h100 = example["systems"][0]["latency"]["per_step"]["values"]
    assert h100[0] == pytest.approx(0.21 + 300 / 180)
    assert h100[1:] == pytest.approx([1.2 + 0.21 + 300 / 180] * 39)
    # the time waited so far, with the target: its last point is the task's latency
    waited = _series(page, "waited")
    assert [(name, n) for name, n, _ in waited] == [(H100, 40), (B200, 40), (MI300X, 40)]
    assert waited[0][2][-1] == f"{H100}, step 40: 121.9 s"
    assert "target 120.0 s" in page
    # the text alternative: step 1, then steps 2-40 alike
    table = re.search(r'<table class="figures step-table">(.*?)</table>', page, re.S).group(1)
    rows = re.findall(r'<tr data-steps="([\d-]+)">(.*?)</tr>', table, re.S)
    assert [r[0] for r in rows] == ["1-1", "2-40"]
    assert _text(rows[1][1]) == "2\u201340 3.08 s a step 3.03 s a step 3.45 s a step"


def test_ten_thousand_steps_stay_a_small_page(web):
    # (a target such a task meets: its tool time alone is 9,999 x 1.2 s)
    r = web.get("/task?t_steps=10000&t_target=1e6")
    assert r.status_code == 200, r.text[:2000]
    assert len(r.text) < 200_000  # each flat line a few vertices, the table two rows
    assert [n for _, n, _ in _series(r.text, "steps")] == [10_000] * 3


# ---- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("query, field, says", [
    ({"t_cached_share": "1.5"}, "t_cached_share", "must be at most 1, got 1.5"),
    ({"t_cached_share": "150 %"}, "t_cached_share", "must be at most 100 %, got 150 %"),
    ({"t_steps": "1000000"}, "t_steps", "at most 10,000 steps (got 1000000)"),
    ({"t_steps": "2.5"}, "t_steps", "must be a whole number, got 2.5"),
    ({"t_steps": "0"}, "t_steps", "must be at least 1, got 0"),
    ({"t_output": "0"}, "t_output", "must be greater than zero, got 0 token"),
    ({"t_context": "8 kg"}, "t_context", "token count expected (e.g. 'token'), got kilogram"),
    ({"t_tool_time": "-1"}, "t_tool_time", "must not be negative, got -1 second"),
    ({"t_target": "soon"}, "t_target", "cannot read 'soon' as a quantity: expected a number "
                                       "then a unit, e.g. \"700 W\""),
    ({"t_percentile": "p50"}, "t_percentile", "input should be 'median', 'mean', 'p90' or "
                                               "'p99', got 'p50'"),
    ({"t_cached_weight": "2"}, "t_cached_weight", "must be at most 1, got 2"),
])
def test_a_bad_field_is_marked_beside_it_in_the_unit_typed(web, query, field, says):
    start = time.monotonic()
    r = web.get("/task?" + urlencode(query))
    assert time.monotonic() - start < 5  # refused at once, nothing built
    assert r.status_code == 422
    assert re.search(rf'id="f-{field}"[^>]*aria-invalid="true"', r.text), field
    m = re.search(rf'id="{field}-error"[^>]*>(.*?)</p>', r.text, re.S)
    assert m and html.unescape(m.group(1)) == says
    assert 'data-figure="latency_total"' not in r.text  # nothing priced
    # the field keeps what was typed, and the summary links to it
    assert f'href="#f-{field}"' in r.text


@pytest.mark.parametrize("systems, slot, says", [
    ([], "systems", "pick 1 to 6 systems"),
    (["fixture:nope"], "sys0", "no scenario 'fixture:nope': pick one from the list"),
    ([DEFAULT_SYSTEMS[0], DEFAULT_SYSTEMS[0]], "sys1",
     "chosen twice: choose another system, or none"),
    (["saved:999999"], "sys0", "no scenario 'saved:999999': pick one from the list"),
])
def test_a_bad_system_is_marked_at_its_slot(web, systems, slot, says):
    r = web.get("/task?" + urlencode([("sys", s) for s in systems] or [("sys", "")]))
    assert r.status_code == 422
    m = re.search(rf'id="{slot}-error"[^>]*>(.*?)</p>', r.text, re.S)
    assert m and html.unescape(m.group(1)) == says


@pytest.mark.parametrize("query", [
    "t_steps=1e400", "t_steps=" + "9" * 80, "t_cached_share=nan", "t_target=inf%20s",
    "t_context=1e300&t_growth=1e300", "t_output=1e308&t_steps=10000",
    "t_tool_time=1e308&t_steps=10000", "t_percentile=%3Cscript%3Ealert(1)%3C/script%3E",
    "sys=form:accelerator%3D%3Cb%3E", "sys=saved:-1", "sys=saved:99999999999999999999",
    "t_target=1e-300", "sys=" + "x" * 5000, "t_steps=%00", "t_context=%C0%AF",
    "&".join(["sys=fixture:curve-gpt-oss-120b-h100"] * 50),
])
def test_hostile_input_is_answered_in_words(web, query):
    r = web.get(f"/task?{query}")
    assert r.status_code in (200, 422), r.text[:2000]
    assert "<script>alert" not in r.text and "<b>" not in r.text.split("<main", 1)[1]
    assert web.get(f"/task.json?{query}").status_code in (200, 422)


def test_a_system_from_the_price_page(web):
    query = urlencode({"accelerator": "h100", "point": "curve:h100/gpt-oss-120b/vllm/fp8/"
                                                       "8192x1024/none/agg"})
    # (a target an H100 meets: 121.9 s at its fastest point)
    r = web.get("/task?" + urlencode({"sys": f"form:{query}", "t_target": "200"}))
    assert r.status_code == 200, r.text[:2000]
    assert "The scenario from the Price page" in r.text


# ---- the API call ----------------------------------------------------------------------------

def _curl_body(page: str) -> dict:
    m = re.search(r"-d '(.*?)'</pre>", html.unescape(page), re.S)
    assert m, "no curl line"
    return json.loads(m.group(1))


def test_the_curl_line_is_the_pages_request(web):
    page = web.get("/task?t_target=2%20min&t_cached_weight=0.1").text
    assert "curl -X POST http://localhost/api/v1/task" in html.unescape(page)
    body = _curl_body(page)
    assert body == {
        "scenarios": [{"scenario": fixture_scenarios()[k][1]} for k in DEFAULT_SYSTEMS],
        "task": {**EXAMPLE_TASK, "target": "2 min", "cached_weight": 0.1}}
    # the body prices what the page shows
    want = priced(body["task"])
    assert cell(page, "latency_total", B200) == \
        _shown(want["systems"][1]["latency"]["total"])
    # a page with errors still shows the request, which the API refuses alike
    bad = web.get("/task?t_cached_share=150%20%25").text
    assert _curl_body(bad)["task"]["cached_share"] == "150 %"


def test_the_api_answers_the_curl_body_as_the_page(web, open_app):
    if not any(r.rule == "/api/v1/task" for r in open_app.url_map.iter_rules()):
        pytest.skip("POST /api/v1/task is not served yet")
    page = web.get("/task").text
    r = web.post("/api/v1/task", json=_curl_body(page))
    assert r.status_code == 200, r.get_json()
    for s in r.get_json()["systems"]:
        assert cell(page, "cost_per_task", s["scenario"]) == \
            _shown(s["cost_per_task"]["total"], "cost_per_task")
        assert cell(page, "latency_total", s["scenario"]) == _shown(s["latency"]["total"])


def test_the_nav_links_the_page(web):
    page = web.get("/compare").text
    nav = re.search(r"<nav[^>]*>(.*?)</nav>", page, re.S).group(1)
    links = re.findall(r'href="([^"]+)"', nav)
    assert links.index("/task") == links.index("/compare") + 1
    assert 'href="/task" aria-current="page"' in web.get("/task").text
