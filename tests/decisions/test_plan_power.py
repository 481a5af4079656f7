"""Power planning as planners count it (issue 29, part 2): a power budget holds whole
deployments (a node, or a rack) at the scenario's boundary, each planned with a headroom
above its power; the count of whole deployments and of their accelerators, and the same per
gigawatt, on every face.

Every expected number is hand arithmetic, written out in the comments.

ROUND, the round-number scenario of test_plan.py counted at the facility meter: 8
accelerators of 1,000 W rated to a node with a host of 2,000 W (PSU efficiency 1), so the node
draws 10,000 W AC (its chassis); 4 nodes to a rack with no switch or other power (delivery
efficiency 1), so the rack draws 40,000 W AC; PUE 1.5. Per accelerator at the facility meter:
40,000 / 32 x 1.5 = 1,875 W; a node's facility power 8 x 1,875 = 15,000 W, a rack's 60,000 W.

ISSUE, the issue's example: eight 786.045 W accelerators to a node at the facility boundary.
An accelerator of 604.65 W rated, no host power, PSU and delivery efficiency 1, 4 nodes to a
rack with no overheads, PUE 1.3: 604.65 x 1.3 = 786.045 W per accelerator; a node's facility
power 8 x 786.045 = 6,288.36 W (AC 8 x 604.65 = 4,837.2 W), a rack's 32 x 786.045 =
25,153.44 W.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from click.testing import CliRunner
from conftest import auth
from decisions.test_plan import SCENARIO

from costmodel import app
from costmodel.cli import main
from costmodel.decisions import plan as core

API = "/api/v1"
# test_plan's round-number scenario, planned at the facility meter
ROUND = {**SCENARIO, "power": {"boundary": "facility", "basis": "rated"}}
ISSUE = {
    "name": "issue 29 example",
    "accelerator": {"name": "X8", "rated_power": "604.65 W", "price": "20000 USD"},
    "operating_point": {"throughput": "1000 token/s"},
    "node": {"accelerators": 8, "host_power": "0 W", "psu_efficiency": 1, "price": "0 USD"},
    "rack": {"nodes": 4, "switch_power": "0 W", "other_power": "0 W",
             "power_delivery_efficiency": 1, "price": "0 USD"},
    "facility": {"pue": 1.3, "hosting": "0 USD/kW/month"},
    "electricity": {"price": "0.10 USD/kWh"},
    "power": {"boundary": "facility", "basis": "rated"},
}
GW = 1e9


def plan(scenario: dict, **kw) -> app.Plan:
    spec = app.ScenarioSpec(app.InlineScenario(scenario))
    return app.plan(app.LocalContext(), app.PlanRequest(spec, **kw))


def cli(*args: str):
    return CliRunner().invoke(main, ["plan", *map(str, args)])


@pytest.fixture
def issue_file(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps(ISSUE))
    return path


def counts(p: app.Plan) -> tuple:
    """(whole deployments, their accelerators, per GW: deployments, accelerators)."""
    pp = p.power_plan
    return pp.deployments, pp.accelerators, pp.deployments_per_gw, pp.accelerators_per_gw


# ---- the core's arithmetic ------------------------------------------------------------------

def test_planning_power_is_exact():
    # 1,250 W x 8 x (1 + 0.1) = 11,000 W exactly (in binary floating point 10,000 x 1.1 is
    # 11,000.000000000002, and 22,000 W / that is 1.9999999999999998)
    assert core.planning_power(1250, 8, 0.1) == Fraction(11000)
    assert core.deployments_for_budget(22000, core.planning_power(1250, 8, 0.1)) == 2
    assert core.deployments_for_budget(21999, core.planning_power(1250, 8, 0.1)) == 1
    # 786.045 W x 8 x 1.1 = 6,917.196 W, as the decimals it prints as
    assert core.planning_power(786.045, 8, 0.1) == Fraction("6917.196")


def test_whole_deployments_are_floored():
    # 1e9 / 6,288.36 = 159,023.97 -> 159,023; 1e9 / 6,917.196 = 144,567.25 -> 144,567
    assert core.deployments_for_budget(GW, core.planning_power(786.045, 8)) == 159023
    assert core.deployments_for_budget(GW, core.planning_power(786.045, 8, 0.1)) == 144567
    # 1e9 / 25,153.44 = 39,755.99 -> 39,755 racks
    assert core.deployments_for_budget(GW, core.planning_power(786.045, 32)) == 39755


def test_a_planner_rounding_the_facility_power_first_counts_one_node_fewer():
    # A published planner rounds a node's facility power to 0.1 W before adding headroom:
    # 6,288.36 -> 6,288.4 W. Then 1e9 / 6,288.4 = 159,022.96 -> 159,022 nodes (costmodel:
    # 159,023), and with 10%: 1e9 / 6,917.24 = 144,566.33 -> 144,566 (costmodel: 144,567)
    assert core.deployments_for_budget(GW, core.planning_power(6288.4, 1)) == 159022
    assert core.deployments_for_budget(GW, core.planning_power(6288.4, 1, 0.1)) == 144566


# ---- the issue's example ----------------------------------------------------------------------

def test_the_issue_example_no_longer_draws_more_than_the_budget():
    p = plan(ISSUE, power_budget=GW)
    assert p.sized.result.values["power_per_accelerator"] == pytest.approx(786.045, rel=1e-15)
    # before: floor(1e9 / 786.045) = 1,272,191 accelerators in ceil(/ 8) = 159,024 nodes,
    # which draw 159,024 x 6,288.36 = 1,000,000,160.64 W: more than the budget. Now: 159,023
    # whole nodes, 1,272,184 accelerators, drawing 159,023 x 6,288.36 = 999,993,872.28 W
    assert (p.accelerators, p.nodes, p.racks) == (1272184, 159023, 39756)  # 159,023 / 4 up
    assert counts(p) == (159023, 1272184, 159023, 1272184)
    assert p.power == pytest.approx(999993872.28, rel=1e-12)
    assert p.power <= GW
    watts = {k: v["value"] for k, v in p.to_json()["power_plan"]["power_per_deployment"].items()}
    assert watts == pytest.approx({"ac": 4837.2, "facility": 6288.36, "at_boundary": 6288.36,
                                   "planning": 6288.36}, rel=1e-12)


def test_the_issue_example_with_ten_percent_headroom():
    # 6,288.36 x 1.1 = 6,917.196 W a node: 144,567 nodes, 144,567 x 8 = 1,156,536 accelerators
    # (per GW the same: the budget is 1 GW), 144,567 / 4 = 36,141.75 -> 36,142 racks; they
    # draw 144,567 x 6,288.36 = 909,089,340.12 W, within 1 GW / 1.1 = 909,090,909.09 W
    p = plan(ISSUE, power_budget=GW, headroom=0.1)
    assert counts(p) == (144567, 1156536, 144567, 1156536)
    assert (p.accelerators, p.nodes, p.racks) == (1156536, 144567, 36142)
    assert p.power == pytest.approx(909089340.12, rel=1e-12)
    assert p.power <= GW / 1.1
    assert p.to_json()["power_plan"]["power_per_deployment"]["planning"]["value"] == \
        pytest.approx(6917.196, rel=1e-15)


def test_the_issue_example_in_whole_racks():
    # a rack: 32 x 786.045 = 25,153.44 W; with 10%: 27,668.784 W. 1 GW: 39,755 racks without
    # headroom (39,755.99), 36,141 with (36,141.81); 36,141 x 4 = 144,564 nodes, x 8 =
    # 1,156,512 accelerators
    p = plan(ISSUE, power_budget=GW, deployment="rack")
    assert counts(p) == (39755, 1272160, 39755, 1272160)
    p = plan(ISSUE, power_budget=GW, deployment="rack", headroom=0.1)
    assert counts(p) == (36141, 1156512, 36141, 1156512)
    assert (p.racks, p.nodes, p.accelerators) == (36141, 144564, 1156512)
    pp = p.to_json()["power_plan"]
    assert (pp["accelerators_per_deployment"], pp["nodes_per_deployment"]) == (32, 4)
    assert pp["power_per_deployment"]["ac"]["value"] == pytest.approx(19348.8, rel=1e-12)
    assert pp["power_per_deployment"]["planning"]["value"] == pytest.approx(27668.784,
                                                                             rel=1e-15)


# ---- per budget and per GW, with headroom ---------------------------------------------------

def test_whole_nodes_per_budget_and_per_gw_with_headroom():
    # a node planned at 15,000 W x 1.2 = 18,000 W. 100 kW: 100,000 / 18,000 = 5.56 -> 5 nodes,
    # 40 accelerators, 5 / 4 -> 2 racks; per GW: 1e9 / 18,000 = 55,555.56 -> 55,555 nodes,
    # 444,440 accelerators
    p = plan(ROUND, power_budget=100e3, headroom=0.2)
    assert counts(p) == (5, 40, 55555, 444440)
    assert (p.accelerators, p.nodes, p.racks) == (40, 5, 2)
    # 40 x 1,875 = 75,000 W at the facility meter, within 100,000 / 1.2 = 83,333 W
    assert p.power == pytest.approx(75000)
    # users: floor(40 x 1,000 output token/s / 150) = floor(266.67) = 266
    assert p.users == 266
    # at the scenario's 50%: 40 x (1.00 + 1,875 W x 0.5 x 0.10 USD/kWh / 1,000) =
    # 40 x 1.09375 = 43.75 USD/h
    assert p.cost_per_hour == pytest.approx(43.75)


def test_whole_racks_per_budget_and_per_gw_with_headroom():
    # a rack planned at 60,000 W x 1.2 = 72,000 W. 100 kW: 1.39 -> 1 rack, 4 nodes, 32
    # accelerators; per GW: 1e9 / 72,000 = 13,888.89 -> 13,888 racks, 444,416 accelerators
    p = plan(ROUND, power_budget=100e3, headroom=0.2, deployment="rack")
    assert counts(p) == (1, 32, 13888, 444416)
    assert (p.accelerators, p.nodes, p.racks) == (32, 4, 1)


def test_a_budget_of_exactly_ten_planned_nodes_holds_ten():
    # 180,000 W / (15,000 W x 1.2 = 18,000 W) = 10 exactly: 10 nodes, not 9
    assert counts(plan(ROUND, power_budget=180e3, headroom=0.2))[:2] == (10, 80)
    # "180 kW" typed with "20 %": the same
    r = cli_round("--power-budget", "180 kW", "--headroom", "20 %")
    assert r["power_plan"]["deployments"] == 10


def test_headroom_zero_is_the_facility_power():
    p = plan(ROUND, power_budget=100e3, headroom=0.0)
    # 100,000 / 15,000 = 6.67 -> 6 nodes; per GW 1e9 / 15,000 = 66,666.67 -> 66,666
    assert counts(p) == (6, 48, 66666, 533328)


def test_the_boundary_decides_the_power_counted():
    # at the node boundary a node counts its chassis AC, 10,000 W; x 1.1 = 11,000 W:
    # 100 kW / 11,000 = 9.09 -> 9 nodes; per GW 1e9 / 11,000 = 90,909.09 -> 90,909
    at_node = {**ROUND, "power": {"boundary": "node", "basis": "rated"}}
    p = plan(at_node, power_budget=100e3, headroom=0.1)
    assert counts(p) == (9, 72, 90909, 727272)
    pp = p.to_json()["power_plan"]
    assert pp["boundary"] == "node"
    assert pp["power_per_deployment"]["at_boundary"]["value"] == 10000.0
    assert pp["power_per_deployment"]["facility"]["value"] == 15000.0  # said, not divided
    assert "chassis AC" in pp["powers"]["at_boundary"]


def test_a_budget_smaller_than_one_deployment_holds_none_and_says_why():
    # 17,999 W < one node's 18,000 W planning power: no whole node (it would have fed 9
    # accelerators of 1,875 W)
    p = plan(ROUND, power_budget=17999.0, headroom=0.2)
    assert counts(p) == (0, 0, 55555, 444440)
    assert (p.accelerators, p.nodes, p.racks, p.users) == (0, 0, 0, 0)
    assert p.power_plan.note() == ("The power budget (17,999 W) is less than the planning "
                                   "power of one node (18,000 W): it holds no whole node.")
    # the same with whole racks (72,000 W)
    p = plan(ROUND, power_budget=50e3, headroom=0.2, deployment="rack")
    assert p.accelerators == 0
    assert "less than the planning power of one rack (72,000 W)" in p.power_plan.note()


def test_the_plan_says_which_power_each_count_divides():
    pp = plan(ISSUE, power_budget=GW, headroom=0.1).to_json()["power_plan"]
    assert pp["divides"].startswith(
        "whole nodes = floor(power budget / planning power per node); planning power = "
        "6,288.36 W at the facility boundary x (1 + 10.0% headroom) = 6,917.196 W: "
        "1,000,000,000 W / 6,917.196 W = 144,567.25, rounded down: 144,567; per GW: "
        "1,000,000,000 W / 6,917.196 W = 144,567.25, rounded down: 144,567; exact "
        "arithmetic, then the floor")
    assert pp["powers"]["ac"] == "the node's AC power at its power supplies (chassis AC)"
    assert pp["powers"]["facility"] == ("its share of the rack's AC power x PUE 1.3, at the "
                                        "facility meter")
    assert pp["powers"]["planning"].startswith("the power at the facility boundary x (1 + "
                                               "10.0% headroom)")
    d = plan(ISSUE, power_budget=GW, headroom=0.1).to_json()["disclosure"]["plan"]
    assert (d["deployment"], d["headroom"]) == ("node", 0.1)
    assert d["rounding"] == core.ROUNDING
    assert any("0.1 W" in rule for rule in d["rounding"])


def test_the_quotient_shown_is_never_rounded_past_its_floor():
    # at the node boundary a node is 10,000 W: 29,960 W / 10,000 W = 2.996, shown 2.9960 (not
    # 3.00), rounded down: 2
    at_node = {**ROUND, "power": {"boundary": "node", "basis": "rated"}}
    said = plan(at_node, power_budget=29960.0).power_plan.divides()
    assert "29,960 W / 10,000 W = 2.9960, rounded down: 2;" in said


def test_a_demand_is_unchanged_and_has_no_power_plan():
    p = plan(ROUND, demand=61500.0)
    # 61,500 / (10,000 x 0.5) = 12.3 -> 13 accelerators, 2 nodes, 1 rack (rounded up)
    assert (p.accelerators, p.nodes, p.racks, p.power_plan) == (13, 2, 1, None)
    out = p.to_json()
    assert out["power_plan"] is None
    assert out["disclosure"]["plan"]["headroom"] is None


# ---- bad input --------------------------------------------------------------------------------

def cli_round(*args: str) -> dict:
    from pathlib import Path
    from tempfile import TemporaryDirectory
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "round.json"
        path.write_text(json.dumps(ROUND))
        r = cli(path, *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("args,said", [
    (["--power-budget", "1 MW", "--headroom", "1"],
     "--headroom: must be at least 0 and less than 1, got 1"),
    (["--power-budget", "1 MW", "--headroom", "100 %"],
     "--headroom: must be at least 0 and less than 1, got 1"),
    (["--power-budget", "1 MW", "--headroom", "-0.1"],
     "--headroom: must be at least 0 and less than 1, got -0.1"),
    (["--power-budget", "1 MW", "--headroom", "10 W"], "--headroom: "),
    (["--power-budget", "1 MW", "--deployment", "chassis"],
     "--deployment: must be node or rack, got 'chassis'"),
    (["--demand", "1 token/s", "--headroom", "0.1"],
     "--headroom: applies to a power budget only"),
    (["--demand", "1 token/s", "--deployment", "rack"],
     "--deployment: applies to a power budget only"),
    # 1e300 W / 6,288.36 W is beyond 2^53 whole nodes
    (["--power-budget", "1e300 W"], "--power-budget: power budget / planning power per "
                                    "deployment would be more than"),
])
def test_cli_refuses_bad_headroom_and_deployment(issue_file, args, said):
    r = cli(issue_file, *args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("costmodel: error: ")
    assert said in lines[0]


def _post(client, tokens, body, **headers):
    return client.post(f"{API}/plan", json=body,
                       headers={**auth(tokens["viewer"]), **headers})


@pytest.mark.parametrize("extra,path,said", [
    ({"power_budget": "1 MW", "headroom": 1}, "headroom", None),
    ({"power_budget": "1 MW", "headroom": -0.1}, "headroom", None),
    ({"power_budget": "1 MW", "headroom": "100 %"}, "headroom", "must be below 1, got 1"),
    ({"power_budget": "1 MW", "headroom": True}, "headroom", None),
    ({"power_budget": "1 MW", "deployment": "chassis"}, "deployment", None),
    ({"demand": "1 token/s", "headroom": 0.1}, "headroom", "applies to a power budget only"),
    ({"demand": "1 token/s", "deployment": "node"}, "deployment",
     "applies to a power budget only"),
])
def test_api_refuses_bad_headroom_and_deployment(client, tokens, extra, path, said):
    r = _post(client, tokens, {"scenario": ISSUE, **extra})
    assert r.status_code == 422, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    error = r.get_json()["errors"][0]
    assert error["path"] == path
    if said is not None:
        assert said in error["message"]


def test_api_answers_a_budget_too_small_with_none_and_why(client, tokens):
    r = _post(client, tokens, {"scenario": ISSUE, "power_budget": "6 kW"})
    assert r.status_code == 200
    pp = r.get_json()["power_plan"]
    # 6,000 W < 6,288.36 W: no whole node
    assert (pp["deployments"], pp["accelerators"]) == (0, 0)
    assert pp["note"] == ("The power budget (6,000 W) is less than the planning power of one "
                          "node (6,288.36 W): it holds no whole node.")


# ---- every face, the same figures -----------------------------------------------------------

BODY = {"power_budget": "1 GW", "headroom": 0.1, "deployment": "rack"}
ARGS = ("--power-budget", "1 GW", "--headroom", "10 %", "--deployment", "rack")


def test_cli_and_api_give_the_same_plan(client, tokens, issue_file):
    api = _post(client, tokens, {"scenario": ISSUE, **BODY})
    assert api.status_code == 200, api.get_data(as_text=True)
    run = cli(issue_file, *ARGS, "--json")
    assert run.exit_code == 0, run.output
    local = json.loads(run.stdout)
    local["disclosure"]["sources"] = {k: v.replace("issue.json", "request")
                                      for k, v in local["disclosure"]["sources"].items()}
    assert api.get_json() == local
    assert (local["power_plan"]["deployments"], local["power_plan"]["per_gw"]) == \
        (36141, {"deployments": 36141, "accelerators": 1156512})


def test_the_cli_text_gives_the_counts(issue_file):
    r = cli(issue_file, "--power-budget", "1 GW", "--headroom", "0.1")
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.split())
    assert "=> Accelerators 1,156,536 in 144,567 whole nodes of 8" in text
    assert "Power planning: whole nodes, 10.0% headroom" in text
    assert "Node AC power 4,837 watts" in text  # 4,837.2 W shown whole
    assert "Facility power 6,288 watts" in text
    assert "Planning power 6,917 watts" in text
    assert "=> Whole nodes per GW 144,567 1,156,536 accelerators" in text
    assert "6,917.196 W = 144,567.25, rounded down: 144,567" in text


def test_the_cli_text_says_why_none(issue_file):
    r = cli(issue_file, "--power-budget", "6 kW")
    assert r.exit_code == 0, r.output
    assert ("The power budget (6,000 W) is less than the planning power of one node "
            "(6,288.36 W): it holds no whole node.") in " ".join(r.stdout.split())


def _pdf_text(content: bytes) -> tuple[int, str]:
    from io import BytesIO

    from pypdf import PdfReader
    reader = PdfReader(BytesIO(content))
    return len(reader.pages), " ".join(" ".join(p.extract_text().split())
                                       for p in reader.pages)


def test_the_one_page_summary_gives_the_counts(client, tokens, issue_file, tmp_path):
    out = tmp_path / "plan.pdf"
    r = cli(issue_file, *ARGS, "--pdf", out)
    assert r.exit_code == 0, r.output
    api = _post(client, tokens, {"scenario": ISSUE, **BODY}, Accept="application/pdf")
    assert api.status_code == 200 and api.mimetype == "application/pdf"
    for content in (out.read_bytes(), api.data):
        pages, text = _pdf_text(content)
        assert pages == 1
        assert "in whole racks with 10.0% planning headroom" in text
        assert "Whole racks in the budget 36,141 32 accelerators a rack" in text
        assert "Whole racks per GW 36,141 1,156,512 accelerators" in text
        assert "Accelerators 1,156,512" in text
        assert "Rack AC power 19,349 W" in text  # 19,348.8 W
        assert "Facility power 25,153 W" in text  # 25,153.44 W
        assert "Planning power 27,669 W" in text  # 27,668.784 W
        assert "= 27,668.784 W: 1,000,000,000 W / 27,668.784 W = 36,141.81, rounded down: " \
               "36,141" in text


def test_the_one_page_summary_says_why_none(issue_file, tmp_path):
    out = tmp_path / "plan.pdf"
    r = cli(issue_file, "--power-budget", "6 kW", "--pdf", out)
    assert r.exit_code == 0, r.output
    _, text = _pdf_text(out.read_bytes())
    assert "it holds no whole node." in text


def test_the_workbook_cover_names_the_whole_deployments():
    from io import BytesIO

    import openpyxl
    p = plan(ISSUE, power_budget=GW, headroom=0.1)
    book = openpyxl.load_workbook(BytesIO(app.plan_workbook(p).content))
    cover = " ".join(str(c) for row in book["Cover"].iter_rows(values_only=True) for c in row
                     if c)
    assert ("Plan: 1,156,536 accelerators for a power budget of 1,000,000,000 W: 144,567 "
            "whole nodes planned at 6,917.196 W each (10.0% headroom; 1,156,536 accelerators "
            "per GW)") in cover
    assert math.isclose(p.accelerators * p.priced.result.values["power_per_accelerator"],
                        p.power, rel_tol=1e-12)


@pytest.mark.parametrize("percent,fraction", [
    ({"power_budget": "1 MW", "headroom": "10 %"}, {"power_budget": "1 MW", "headroom": 0.1}),
    ({"demand": "1e6 token/s", "availability": "99 %"},
     {"demand": "1e6 token/s", "availability": 0.99}),
    ({"demand": "1e6 token/s", "availability": "99 percent"},
     {"demand": "1e6 token/s", "availability": 0.99}),
])
def test_api_reads_a_fraction_typed_in_percent_as_the_web_form_does(client, tokens, percent,
                                                                   fraction):
    # docs/planning.md writes "10 %": the API reads it with the web form's parser (issue 38)
    typed = _post(client, tokens, {"scenario": ISSUE, **percent})
    assert typed.status_code == 200, typed.get_data(as_text=True)
    same = _post(client, tokens, {"scenario": ISSUE, **fraction}).get_json()
    assert typed.get_json()["accelerators"] == same["accelerators"]
    assert typed.get_json()["disclosure"] == same["disclosure"]
