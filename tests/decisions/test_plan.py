"""Capacity planning: ``costmodel plan`` and ``POST /api/v1/plan``.

Every expected number is hand arithmetic on the round-number scenario below, written out in
the comments; none is pasted from a run of the code.

The scenario: one accelerator of 1,000 W rated, 40,000 USD; 8 to a node (host 2,000 W, PSU
efficiency 1, 20,000 USD); 4 nodes to a rack (no switch or other power, delivery efficiency 1,
41,600 USD); power counted at the node boundary; 10,000 token/s per accelerator (mixed) at
150 token/s/user; requests of 900 input and 100 output tokens; utilisation 50%, no idle draw;
electricity 0.10 USD/kWh; owned 5 years at no cost of capital, no salvage, maintenance or
hosting. So, per accelerator:

- power at the node boundary = (8 x 1,000 + 2,000) / 1 / 8 = 1,250 W;
- capex = 40,000 + 20,000 / 8 + 41,600 / 32 = 40,000 + 2,500 + 1,300 = 43,800 USD, and
  capex per hour = 43,800 / (5 x 8,760 h) = 1.00 USD/h (straight line, r = 0);
- energy per hour at utilisation u = 1,250 W x u x 0.10 USD/kWh / 1,000 = 0.125 x u USD/h;
- output throughput = 10,000 x 100 / (900 + 100) = 1,000 token/s.
"""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from conftest import auth

from costmodel import app
from costmodel.cli import main
from costmodel.decisions import plan as core
from costmodel.model.errors import InputError

API = "/api/v1"
SCENARIO = {
    "name": "plan test",
    "accelerator": {"name": "X1", "rated_power": "1000 W", "price": "40000 USD"},
    "operating_point": {"throughput": "10000 token/s", "interactivity": "150 token/s/user"},
    "workload": {"isl": 900, "osl": 100},
    "node": {"accelerators": 8, "host_power": "2000 W", "psu_efficiency": 1,
             "price": "20000 USD"},
    "rack": {"nodes": 4, "switch_power": "0 W", "other_power": "0 W",
             "power_delivery_efficiency": 1, "price": "41600 USD"},
    "facility": {"pue": 1.5, "hosting": "0 USD/kW/month"},
    "financing": {"life": "5 year", "cost_of_capital": 0, "salvage": 0, "maintenance": 0},
    "electricity": {"price": "0.10 USD/kWh"},
    "utilisation": 0.5,
    "idle_power": 0,
    "power": {"boundary": "node", "basis": "rated"},
}
POWER_W = 1250.0  # per accelerator at the node boundary
CAPEX_USD = 43800.0  # per accelerator
THROUGHPUT = 10000.0  # token/s per accelerator

# A demand of 61,500 token/s: 61,500 / (10,000 x 0.5 x 1) = 12.3 -> 13 accelerators;
# 13 / 8 = 1.625 -> 2 nodes; 2 / 4 = 0.5 -> 1 rack.
DEMAND = 61500.0
# the same demand a month: 61,500 token/s x 3,600 s x 730 h / 1e6 = 161,622 Mtok/month; a day:
# 61,500 x 86,400 / 1e6 = 5,313.6 Mtok/day
DEMAND_PER_MONTH = "161622 Mtok/month"
DEMAND_PER_DAY = "5313.6 Mtok/day"


def plan(request: app.PlanRequest | None = None, **kw) -> app.Plan:
    spec = app.ScenarioSpec(app.InlineScenario(SCENARIO))
    return app.plan(app.LocalContext(), request or app.PlanRequest(spec, **kw))


def cli(*args: str):
    return CliRunner().invoke(main, ["plan", *map(str, args)])


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(SCENARIO))
    return path


# ---- the core's arithmetic ------------------------------------------------------------------

def test_counts_round_up_for_a_demand_and_down_for_a_budget():
    assert core.accelerators_for_demand(61500, 10000, 0.5) == 13  # 12.3 up
    assert core.nodes_for(13, 8) == 2  # 1.625 up
    assert core.racks_for(2, 4) == 1  # 0.5 up
    # 21,000 W / (1,250 W x 8 a node) = 2.1 -> 2 whole nodes
    assert core.deployments_for_budget(21000, core.planning_power(1250, 8)) == 2
    assert core.concurrent_users(13, 1000, 150) == 86  # 86.67 down
    assert core.concurrent_users(13, 1000, None) is None


def test_float_noise_buys_no_accelerator():
    # 0.1 x 3 is 0.30000000000000004 in float64: 0.3 / 0.1 is 3 accelerators, not 4
    assert core.whole_up((0.1 * 3) / 0.1) == 3
    assert core.whole_down(2.9999999999999996) == 3
    assert core.whole_up(3.01) == 4


@pytest.mark.parametrize("x", [math.inf, math.nan, 2.0 ** 60])
def test_a_count_beyond_the_range_is_an_overflow(x):
    with pytest.raises(core.PlanOverflow, match=r"overflow|not finite"):
        core.whole_up(x)


def test_output_share_by_token_kind():
    assert core.output_share("mixed", 900, 100) == pytest.approx(0.1)  # 100 / (900 + 100)
    assert core.output_share("input", 900, 100) == pytest.approx(1 / 9)  # 100 / 900
    assert core.output_share("output", 900, 100) == 1.0
    assert core.per_month(2.0) == 1460.0  # 2 USD/h x 730 h


# ---- sized for a demand -----------------------------------------------------------------------

def test_demand_sizing_by_hand():
    p = plan(demand=DEMAND)
    assert (p.accelerators, p.nodes, p.racks) == (13, 2, 1)
    # the fleet's capacity is 13 x 10,000 = 130,000 token/s, so it serves 61,500 token/s at
    # 61,500 / 130,000 = 47.31% of hours: at most the scenario's 50%
    assert p.resulting_utilisation == pytest.approx(61500 / 130000)
    assert p.resulting_utilisation <= p.utilisation == 0.5
    out = p.to_json()
    assert out["power"] == {"value": pytest.approx(13 * POWER_W), "unit": "W"}  # 16,250 W
    assert out["throughput"] == {"value": pytest.approx(130000), "unit": "token/s"}
    assert out["capex"] == {"value": pytest.approx(13 * CAPEX_USD), "unit": "USD"}  # 569,400
    # cost per hour at 47.31%: capex 13 x 1.00 = 13.00 USD/h; energy 13 x 0.125 x 61,500 /
    # 130,000 = 0.125 x 6.15 = 0.76875 USD/h (the served tokens' energy, whatever the fleet)
    assert out["cost_per_hour"] == {"value": pytest.approx(13.76875), "unit": "USD/h"}
    assert out["cost_per_month"] == {"value": pytest.approx(13.76875 * 730),  # 10,051.19
                                     "unit": "USD/month"}
    # per Mtok: 13.76875 USD/h / (61,500 token/s x 3,600 s / 1e6 = 221.4 Mtok/h) = 0.062189
    assert out["cost_per_mtok"]["total"] == {"value": pytest.approx(13.76875 / 221.4),
                                             "unit": "USD/Mtok"}
    assert out["cost_per_mtok"]["energy"]["value"] == pytest.approx(0.76875 / 221.4)
    # users: floor(13 x 1,000 output token/s / 150 token/s/user) = floor(86.67) = 86
    assert out["users"] == 86
    assert [out[k] for k in ("accelerators", "nodes", "racks")] == [13, 2, 1]


def test_demand_cost_per_mtok_is_the_fleet_cost_over_the_demand():
    # the priced step at the resulting utilisation, and the fleet's own division, agree
    out = plan(demand=DEMAND).to_json()
    tokens_per_hour = DEMAND * 3600 / 1e6
    assert out["cost_per_mtok"]["total"]["value"] == pytest.approx(
        out["cost_per_hour"]["value"] / tokens_per_hour, rel=1e-12)


def test_demand_needing_two_racks():
    # 162,000 / 5,000 = 32.4 -> 33 accelerators; 33 / 8 = 4.125 -> 5 nodes; 5 / 4 -> 2 racks
    p = plan(demand=162000.0)
    assert (p.accelerators, p.nodes, p.racks) == (33, 5, 2)


def test_availability_raises_the_count():
    # 61,500 / (10,000 x 0.5 x 0.9 = 4,500) = 13.67 -> 14 accelerators (13 without)
    p = plan(demand=DEMAND, availability=0.9)
    assert p.accelerators == 14
    # 61,500 / 140,000 = 43.93%, below utilisation x availability = 45%
    assert p.resulting_utilisation == pytest.approx(61500 / 140000)
    assert p.resulting_utilisation <= 0.5 * 0.9
    plan_disclosure = p.to_json()["disclosure"]["plan"]
    assert plan_disclosure["availability"] == 0.9
    assert plan_disclosure["utilisation"] == 0.5
    assert plan_disclosure["resulting_utilisation"] == pytest.approx(61500 / 140000)


def test_the_priced_scenario_is_at_the_resulting_utilisation():
    out = plan(demand=DEMAND).to_json()
    d = out["disclosure"]
    assert d["utilisation"] == pytest.approx(61500 / 130000)
    assert d["sources"]["utilisation"].startswith("plan: the demand over the fleet's capacity")
    assert d["plan"]["sized_for"] == "demand"
    assert d["plan"]["demand"] == {"value": DEMAND, "unit": "token/s"}
    assert d["plan"]["demand_per_month"]["value"] == pytest.approx(161622)
    assert d["plan"]["power_budget"] is None
    assert d["plan"]["rounding"] == core.ROUNDING
    assert d["plan"]["output_throughput_basis"] == "implied"
    assert d["plan"]["output_throughput_per_accelerator"]["value"] == pytest.approx(1000)
    assert "OSL / (ISL + OSL)" in d["plan"]["output_throughput_note"]


def test_cli_demand_per_month_per_day_and_per_second_size_alike(scenario_file):
    outs = []
    for demand in ("61500 token/s", DEMAND_PER_MONTH, DEMAND_PER_DAY, "0.0615 Mtok/s"):
        r = cli(scenario_file, "--demand", demand, "--json")
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.stdout))
    for out in outs:
        assert [out[k] for k in ("accelerators", "nodes", "racks", "users")] == [13, 2, 1, 86]
        assert out["cost_per_hour"]["value"] == pytest.approx(13.76875)


# ---- sized for a power budget ---------------------------------------------------------------

def test_power_budget_by_hand():
    # whole nodes: 21 kW / (8 x 1,250 W = 10,000 W) = 2.1 -> 2 nodes of 8: 16 accelerators;
    # 2 / 4 nodes per rack, rounded up: 1 rack
    out = plan(power_budget=21000.0).to_json()
    assert [out[k] for k in ("accelerators", "nodes", "racks")] == [16, 2, 1]
    pp = out["power_plan"]
    assert (pp["deployment"], pp["headroom"], pp["deployments"], pp["accelerators"]) == \
        ("node", 0.0, 2, 16)
    # per GW: 1e9 / 10,000 = 100,000 nodes, 800,000 accelerators
    assert pp["per_gw"] == {"deployments": 100000, "accelerators": 800000}
    # one node: AC (8 x 1,000 + 2,000) / 1 = 10,000 W, the node boundary's power; at the
    # facility meter (4 x 10,000 + 0) / 1 / 4 nodes x PUE 1.5 = 15,000 W
    watts = {k: v["value"] for k, v in pp["power_per_deployment"].items()}
    assert watts == {"ac": 10000.0, "facility": 15000.0, "at_boundary": 10000.0,
                     "planning": 10000.0}
    assert out["power"]["value"] == pytest.approx(16 * POWER_W)  # 20,000 W
    assert out["throughput"]["value"] == pytest.approx(160000)  # 16 x 10,000 token/s
    # users: floor(16 x 1,000 / 150) = floor(106.67) = 106
    assert out["users"] == 106
    # at the scenario's 50%: 16 x (1.00 + 0.125 x 0.5) = 16 x 1.0625 = 17.00 USD/h, x 730 h
    assert out["cost_per_hour"]["value"] == pytest.approx(17.0)
    assert out["cost_per_month"]["value"] == pytest.approx(12410.0)
    # per Mtok: 1.0625 / (0.5 x 10,000 x 3,600 / 1e6 = 18 Mtok/h) = 0.059028 USD/Mtok
    assert out["cost_per_mtok"]["total"]["value"] == pytest.approx(1.0625 / 18)
    d = out["disclosure"]
    assert d["plan"]["sized_for"] == "power_budget"
    assert d["plan"]["power_budget"] == {"value": 21000.0, "unit": "W"}
    assert d["plan"]["availability"] is None and d["plan"]["demand"] is None
    assert d["plan"]["resulting_utilisation"] == d["utilisation"] == 0.5


def test_a_budget_that_divides_exactly_is_not_rounded_down_a_whole():
    # 20 kW / 1,250 W = 16 exactly (given as "20 kW": converted to W first)
    assert plan(power_budget=20000.0).accelerators == 16


def test_a_budget_below_one_accelerator_buys_none():
    out = plan(power_budget=1000.0).to_json()  # 1,000 / 10,000 W a node = 0.1 -> 0
    assert [out[k] for k in ("accelerators", "users")] == [0, 0]
    assert out["cost_per_month"]["value"] == 0
    assert out["power_plan"]["note"] == ("The power budget (1,000 W) is less than the "
                                         "planning power of one node (10,000 W): it holds no "
                                         "whole node.")


def test_users_null_without_an_interactivity():
    op = {"throughput": "10000 token/s"}
    spec = app.ScenarioSpec(app.InlineScenario({**SCENARIO, "operating_point": op}))
    p = app.plan(app.LocalContext(), app.PlanRequest(spec, power_budget=21000.0))
    assert p.users is None and p.to_json()["users"] is None
    assert p.to_json()["disclosure"]["plan"]["interactivity"] is None


def test_output_tokens_counted_are_the_output_throughput():
    # a point counting output tokens: its throughput is the output throughput;
    # users floor(16 x 10,000 / 150) = floor(1,066.67) = 1,066
    op = {**SCENARIO["operating_point"], "token_kind": "output"}
    spec = app.ScenarioSpec(app.InlineScenario({**SCENARIO, "operating_point": op}))
    p = app.plan(app.LocalContext(), app.PlanRequest(spec, power_budget=21000.0))
    assert p.output_basis == "measured" and p.output_per_accelerator == 10000
    assert p.users == 1066


CURVE = """hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,concurrency,\
interactivity [token/s/user],throughput [token/s],output_throughput [token/s],\
input_throughput [token/s],source
x1,m,vllm,fp8,900,100,none,false,1,200,2000,150,1850,a test sweep
x1,m,vllm,fp8,900,100,none,false,8,100,8000,600,7400,a test sweep
"""


@pytest.fixture
def curve_file(tmp_path):
    (tmp_path / "sweep.csv").write_text(CURVE)
    data = {**{k: v for k, v in SCENARIO.items() if k != "workload"},
            "operating_point": {"curve": "sweep.csv", "curve_id":
                                "x1/m/vllm/fp8/900x100/none/agg"}}
    path = tmp_path / "curve.json"
    path.write_text(json.dumps(data))
    return path


def test_measured_output_throughput_of_a_curve_point(curve_file):
    # at peak the point is the one at 8,000 token/s, 100 token/s/user, with a measured output
    # throughput of 600 token/s (not 8,000 x 100 / 1,000 = 800); 21 kW buys 16 accelerators:
    # users floor(16 x 600 / 100) = 96
    r = cli(curve_file, "--power-budget", "21 kW", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["users"] == 96
    assert out["disclosure"]["plan"]["output_throughput_basis"] == "measured"
    assert out["disclosure"]["plan"]["output_throughput_per_accelerator"]["value"] == 600


def test_an_interpolated_read_implies_its_output_throughput(curve_file):
    # read at 150 token/s/user, between the two points: no measured output there, so the
    # read throughput x 100 / 1,000 (the curve's ISL/OSL); users at 150 token/s/user
    r = cli(curve_file, "--power-budget", "21 kW", "--at-interactivity", "150 token/s/user",
            "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    plan_disclosure = out["disclosure"]["plan"]
    assert plan_disclosure["output_throughput_basis"] == "implied"
    per = out["disclosure"]["operating_point"]["throughput"]["value"]
    assert plan_disclosure["output_throughput_per_accelerator"]["value"] == pytest.approx(
        per / 10)
    assert plan_disclosure["interactivity"]["value"] == pytest.approx(150)
    assert out["users"] == math.floor(16 * per / 10 / 150)


def test_at_interactivity_needs_a_curve(scenario_file):
    r = cli(scenario_file, "--demand", "61500 token/s", "--at-interactivity", "100 token/s/user")
    assert r.exit_code == 2
    assert "read from a curve" in r.stderr


# ---- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args,said", [
    (["--demand", "3 W"], "--demand: throughput expected"),
    (["--demand", "0 token/s"], "--demand: must be greater than zero"),
    (["--power-budget", "10 token/s"], "--power-budget: power expected"),
    (["--demand", "1 token/s", "--power-budget", "1 W"],
     "give exactly one of --demand or --power-budget"),
    ([], "give exactly one of --demand or --power-budget"),
    (["--demand", "1 token/s", "--availability", "1.5"],
     "--availability: must be greater than zero and at most 1"),
    (["--demand", "1 token/s", "--availability", "0"], "--availability: must be greater"),
    (["--power-budget", "1 MW", "--availability", "0.9"], "--availability: applies to a "
                                                          "demand only"),
    (["--demand", "1e300 token/s"], "--demand: "),
    (["--demand", "1 token/s", "--set", "utilisation=2"], "utilisation"),
])
def test_cli_errors_are_one_line_exit_2(scenario_file, args, said):
    r = cli(scenario_file, *args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("costmodel: error: ")
    assert said in lines[0]


def test_availability_as_a_percentage(scenario_file):
    r = cli(scenario_file, "--demand", "61500 token/s", "--availability", "90 %", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["accelerators"] == 14


# ---- the text ---------------------------------------------------------------------------------

def test_cli_text_answer_first_in_words(scenario_file):
    r = cli(scenario_file, "--demand", "61500 token/s")
    assert r.exit_code == 0, r.output
    text = r.stdout
    lines = text.splitlines()
    assert lines[0] == "plan test: a fleet for 61,500 tokens per second of mixed tokens"
    marked = [line for line in lines if line.startswith("=> ")]
    assert [line.split()[1] for line in marked] == ["Accelerators", "Nodes", "Racks",
                                                     "Concurrent"]
    assert marked[0].split()[-1] == "13"
    assert "16,250  watts" in text  # 13 x 1,250 W
    assert "569,400  USD" in text  # 13 x 43,800 USD
    assert "10,051  USD per month" in text  # 13.76875 x 730
    assert "at 47.3% utilisation" in text  # 61,500 / 130,000
    words = " ".join(text.split())
    assert "= 12.30, rounded up: 13" in words
    assert "What the figures rest on" in text
    assert max(map(len, lines)) <= 120


def test_cli_text_for_a_budget(scenario_file):
    r = cli(scenario_file, "--power-budget", "21 kW")
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.split())  # wrapped lines read as one
    assert "power budget of 21,000 watts at the node boundary" in text
    # whole nodes: 21,000 W / (8 x 1,250 W = 10,000 W, no headroom) = 2.1, down to 2
    assert "=> Accelerators 16 in 2 whole nodes of 8" in text
    assert ("planning power = 10,000 W at the node boundary x (1 + 0.0% headroom) = 10,000 W: "
            "21,000 W / 10,000 W = 2.10, rounded down: 2;") in text
    assert "2 whole nodes; / 4 nodes per rack, rounded up: 1 rack" in text
    users = next(line for line in r.stdout.splitlines() if line.startswith("=> Concurrent"))
    assert users.split()[3:] == ["106", "at", "150", "tokens", "per", "second", "per", "user"]


# ---- the API ----------------------------------------------------------------------------------

def _post(client, tokens, body):
    return client.post(f"{API}/plan", json=body, headers=auth(tokens["viewer"]))


def test_api_answers_as_the_cli(client, tokens, scenario_file):
    body = {"scenario": SCENARIO, "demand": {"value": 61500, "unit": "token/s"},
            "availability": 0.9}
    r = _post(client, tokens, body)
    assert r.status_code == 200, r.get_data(as_text=True)
    api = r.get_json()
    run = cli(scenario_file, "--demand", "61500 token/s", "--availability", "0.9", "--json")
    assert run.exit_code == 0, run.output
    local = json.loads(run.stdout)
    # the origin of the scenario's inputs is named as each face names it
    local["disclosure"]["sources"] = {k: v.replace("plan.json", "request")
                                      for k, v in local["disclosure"]["sources"].items()}
    assert api == local
    assert api["accelerators"] == 14


def test_api_power_budget_and_saved_scenario(client, tokens):
    editor = auth(tokens["editor"])
    saved = client.post(f"{API}/scenarios", json={"name": "plan", "scenario": SCENARIO},
                        headers=editor)
    assert saved.status_code == 201
    r = _post(client, tokens, {"scenario_id": saved.get_json()["scenario_id"],
                               "power_budget": "21 kW", "overrides": {"utilisation": 0.25}})
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    # 16 accelerators; at 25%: 16 x (1.00 + 0.125 x 0.25) = 16.5 USD/h
    assert out["accelerators"] == 16
    assert out["cost_per_hour"]["value"] == pytest.approx(16.5)


@pytest.mark.parametrize("body,path,said", [
    ({"scenario": SCENARIO, "demand": "3 W"}, "demand", "throughput expected"),
    ({"scenario": SCENARIO, "power_budget": {"value": 5, "unit": "token/s"}}, "power_budget",
     "power expected"),
    ({"scenario": SCENARIO, "demand": "1 token/s", "power_budget": "1 W"}, "demand",
     "exactly one"),
    ({"scenario": SCENARIO}, "demand", "exactly one"),
    ({"scenario": SCENARIO, "power_budget": "1 W", "availability": 0.5}, "availability",
     "applies to a demand only"),
    ({"scenario": SCENARIO, "demand": "1 token/s", "availability": 0}, "availability", None),
    ({"scenario": SCENARIO, "demand": "1 token/s", "availability": True}, "availability",
     None),
    ({"scenario": {**SCENARIO, "utilisation": 2}, "demand": "1 token/s"},
     "scenario.utilisation", None),
    ({"scenario": SCENARIO, "demand": "1 token/s", "overrides": {"utilization": 1}},
     "overrides.utilization", "did you mean utilisation"),
    ({"scenario": SCENARIO, "demand": "1 token/s", "at_interactivity": "100 token/s/user"},
     "scenario.operating_point", "read from a curve"),
    ({"scenario": SCENARIO, "demand": "1e300 token/s"}, "demand", "overflow"),
])
def test_api_errors_name_the_field(client, tokens, body, path, said):
    r = _post(client, tokens, body)
    assert r.status_code == 422, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    error = r.get_json()["errors"][0]
    assert error["path"] == path
    if said is not None:
        assert said in error["message"]


def test_api_plan_is_a_read(app, client):
    r = client.post(f"{API}/plan", json={"scenario": SCENARIO, "demand": "1 token/s"})
    assert r.status_code == 401


def test_a_rented_fleet_says_its_capex_is_not_spent():
    # the reference-rate scenario rents its accelerators: the cost per hour is the rent
    from pathlib import Path
    rented = Path(__file__).resolve().parents[2] / "fixtures/scenarios/rate-gb300-rental.toml"
    r = cli(rented, "--power-budget", "1 MW", "--json")
    assert r.exit_code == 0, r.output
    assert "rented" in json.loads(r.stdout)["disclosure"]["plan"]["capex"]


# ---- the one-page summary -------------------------------------------------------------------

def _pdf_text(content: bytes) -> tuple[int, str]:
    from io import BytesIO

    from pypdf import PdfReader
    reader = PdfReader(BytesIO(content))
    return len(reader.pages), " ".join(" ".join(p.extract_text().split())
                                       for p in reader.pages)


def test_the_plans_one_page_summary(scenario_file, tmp_path):
    out = tmp_path / "plan.pdf"
    r = cli(scenario_file, "--demand", f"{DEMAND} token/s", "--pdf", out)
    assert r.exit_code == 0, r.output
    pages, text = _pdf_text(out.read_bytes())
    planned = plan(demand=DEMAND)
    assert pages == 1
    assert f"Accelerators {planned.accelerators:,}" in text
    assert f"Cost per month {planned.cost_per_month:,.0f}" in text
    assert "Sized for an average demand of 61,500 token/s" in text
    bad = cli(scenario_file, "--demand", f"{DEMAND} token/s", "--pdf", tmp_path / "plan.txt")
    assert bad.exit_code == 2 and "--pdf" in bad.output


def test_the_api_answers_the_plan_as_a_pdf(client, tokens):
    r = client.post(f"{API}/plan", json={"scenario": SCENARIO, "power_budget": "10 MW"},
                    headers={**auth(tokens["viewer"]), "Accept": "application/pdf"})
    assert r.status_code == 200 and r.mimetype == "application/pdf"
    pages, text = _pdf_text(r.data)
    # floor(10 MW / 1,250 W) = 8,000 accelerators
    assert pages == 1 and "Accelerators 8,000" in text


# ---- a demand too small for one accelerator (issue 38, item 5) --------------------------------

def test_a_demand_above_zero_needs_at_least_one_accelerator():
    # 1e-6 / (10,000 x 0.5) = 2e-10: below the 1e-9 noise dropped, it rounded to none, and the
    # fleet's utilisation divided by zero
    assert core.accelerators_for_demand(1e-6, 10000, 0.5) == 1
    assert core.accelerators_for_demand(5000, 10000, 0.5) == 1  # exactly one


# the least demand one accelerator is priced at: 10,000 token/s x 1e-6 of its hours = 0.01
SMALLEST = 0.01


def test_the_smallest_demand_is_one_accelerator_at_the_least_utilisation():
    p = plan(demand=SMALLEST)
    assert (p.accelerators, p.nodes, p.racks) == (1, 1, 1)
    assert p.resulting_utilisation == pytest.approx(1e-6)  # 0.01 / (1 x 10,000)


@pytest.mark.parametrize("demand", [1e-6, 0.0099])
def test_a_demand_too_small_to_price_is_refused_on_every_face(demand, client, tokens,
                                                              scenario_file):
    said = f"must be at least 0.01, got {demand:g} (token/s)"
    with pytest.raises(InputError) as exc:
        plan(demand=demand)
    assert exc.value.errors[0][0] == "demand" and said in exc.value.errors[0][1]
    r = cli(scenario_file, "--demand", f"{demand} token/s")
    assert r.exit_code != 0 and said in r.output and "Traceback" not in r.output
    for accept in ("application/json", "application/pdf"):
        r = client.post(f"{API}/plan", json={"scenario": SCENARIO, "demand": f"{demand} token/s"},
                        headers={**auth(tokens["viewer"]), "Accept": accept})
        assert r.status_code == 422 and r.mimetype == "application/problem+json"
        assert r.get_json()["errors"][0]["path"] == "demand"
        assert said in r.get_json()["errors"][0]["message"]
    r = client.post(f"{API}/plan", json={"scenario": SCENARIO, "demand": f"{SMALLEST} token/s"},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200 and r.get_json()["accelerators"] == 1
