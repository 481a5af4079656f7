"""A scenario's ``[money]`` answers the Task, Plan, Quotes (comparison, term, decision) and
Sensitivity use cases in its currency, with its rate disclosed, on the use case, the API and
the command line; scenarios answered together in different currencies are refused at the
second's ``money.currency``.

The rate is 0.92 EUR per USD (2026-11-30, an illustrative assumption), so every money figure
is 0.92 x its USD figure. The plan's and the sensitivity's figures are hand arithmetic on
tests/decisions/test_plan.py's round-number scenario (its docstring works them out in USD):
per accelerator, capex 43,800 USD and capex per hour 1.00 USD/h; energy 0.125 x u USD/h;
10,000 token/s at utilisation 0.5.
"""
from __future__ import annotations

import json
import tomllib

import pytest
from click.testing import CliRunner
from conftest import ROOT, auth

from costmodel import app
from costmodel.cli import main
from costmodel.decisions.demand import validate_demand
from costmodel.decisions.quotes import validate_quote
from costmodel.decisions.task import validate_task
from costmodel.model.errors import InputError
from tests.decisions.test_plan import SCENARIO as PLAN_SCENARIO

API = "/api/v1"
RATE = 0.92  # EUR per USD
MONEY = {"currency": "EUR", "fx": {"EUR": {"rate": "0.92 EUR/USD", "date": "2026-11-30",
                                           "source": "illustrative assumption for the test"}}}
DISCLOSED = {"value": 0.92, "unit": "EUR/USD", "date": "2026-11-30",
             "source": "illustrative assumption for the test"}
ROUND = {**PLAN_SCENARIO, "name": "round"}  # the planner's hand-worked scenario
ROUND_EUR = {**ROUND, "name": "round in EUR", "money": MONEY}
TASK = {"steps": 10, "context": "2000 token", "growth": "500 token", "output": "200 token",
        "cached_share": 0.5, "tool_time": "1 s"}
QUOTES = tomllib.loads((ROOT / "fixtures" / "quotes" / "example-quotes.toml").read_text()
                       )["quote"]
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched"}
GB300_EUR = {**GB300, "money": MONEY}
# vendor-a-tokens blended over an 8k/1k request: (8,192 x 0.55 + 1,024 x 2.19) / 9,216 =
# 6,748.16 / 9,216 = 0.73222 USD/Mtok, so 0.67364 EUR/Mtok
VENDOR_A_USD = (8192 * 0.55 + 1024 * 2.19) / 9216


def spec(data: dict, subject: str | None = None) -> app.ScenarioSpec:
    return app.ScenarioSpec(app.InlineScenario(data), subject=subject)


def ctx() -> app.Context:
    return app.LocalContext()


def eur(usd: float) -> float:
    return pytest.approx(usd * RATE, rel=1e-12)


def cli(*args) -> str:
    """The command's output, its lines joined (a sentence may wrap)."""
    out = CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, data in (("usd", ROUND), ("eur", ROUND_EUR)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(data))
    paths["task"] = tmp_path / "task.toml"
    paths["task"].write_text("[task]\n" + "\n".join(
        f"{k} = {json.dumps(v)}" for k, v in TASK.items()) + "\n")
    return paths


# ---- Task ---------------------------------------------------------------------------------------

def _task(*scenarios: dict) -> app.TaskAnswer:
    return app.price_task(ctx(), app.TaskRequest([spec(s, f"s{i}.") for i, s in
                                                  enumerate(scenarios)], validate_task(TASK)))


def test_the_task_answers_in_the_scenarios_currency():
    usd = _task(ROUND).to_json()["systems"][0]
    out = _task(ROUND_EUR).to_json()
    s = out["systems"][0]
    for part in ("energy", "capex", "opex", "total"):
        assert s["cost_per_task"][part] == {"value": eur(usd["cost_per_task"][part]["value"]),
                                            "unit": "EUR"}
    assert s["price_per_task"] == {"value": eur(usd["price_per_task"]["value"]), "unit": "EUR"}
    assert s["cost_per_thousand_tasks"]["value"] == eur(usd["cost_per_thousand_tasks"]["value"])
    # cost per Mtok by hand: (1.00 + 0.125 x 0.5) USD/h / (10,000 x 3,600 x 0.5 / 1e6 = 18
    # Mtok/h) = 0.0590277... USD/Mtok, so 0.0543055... EUR/Mtok
    assert s["cost_per_mtok"] == {"value": pytest.approx(1.0625 / 18 * RATE, rel=1e-12),
                                  "unit": "EUR/Mtok"}
    # what is not money is as it was
    assert s["energy_per_task"] == usd["energy_per_task"]
    assert s["latency"] == usd["latency"]
    assert out["disclosure"][0]["money"]["rate"] == DISCLOSED


def test_a_task_without_money_is_in_usd_with_no_new_keys():
    out = _task(ROUND).to_json()
    assert out["systems"][0]["cost_per_task"]["total"]["unit"] == "USD"
    assert out["systems"][0]["cost_per_mtok"]["unit"] == "USD/Mtok"
    assert "money" not in out


def test_systems_in_different_currencies_are_refused_at_the_seconds_currency():
    with pytest.raises(InputError) as caught:
        _task(ROUND_EUR, ROUND)
    (path, message), = caught.value.errors
    assert path == "money.currency" and caught.value.subject == "s1."
    assert message.startswith("round is shown in USD, the first scenario (round in EUR) in "
                              "EUR at 0.92 EUR/USD: an answer is shown in one currency")


def test_the_task_on_the_api_and_the_command_line(client, tokens, files):
    usd = _task(ROUND).to_json()["systems"][0]
    body = {"scenarios": [{"scenario": ROUND_EUR}], "task": TASK}
    r = client.post(f"{API}/task", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["systems"][0]["price_per_task"] == {
        "value": eur(usd["price_per_task"]["value"]), "unit": "EUR"}
    mixed = client.post(f"{API}/task", json={**body, "scenarios": [
        {"scenario": ROUND_EUR}, {"scenario": ROUND}]}, headers=auth(tokens["viewer"]))
    assert mixed.status_code == 422
    assert mixed.json["errors"][0]["path"] == "scenarios[1].scenario.money.currency"
    cli_json = json.loads(cli("task", files["eur"], "--task", files["task"], "--json"))
    assert cli_json["systems"][0]["cost_per_task"]["total"]["value"] == eur(
        usd["cost_per_task"]["total"]["value"])
    text = cli("task", files["eur"], "--task", files["task"])
    assert "Cost per task" in text and " EUR" in text
    assert "Money: calculated in USD, shown in EUR at 0.92 EUR/USD (2026-11-30; " \
           "illustrative assumption for the test)" in text


# ---- Plan ---------------------------------------------------------------------------------------

def _plan(data: dict) -> app.Plan:
    return app.plan(ctx(), app.PlanRequest(spec(data), demand=61500.0))


def test_the_plan_answers_in_the_scenarios_currency_by_hand():
    out = _plan(ROUND_EUR).to_json()
    # 13 accelerators (test_plan): capex 13 x 43,800 = 569,400 USD x 0.92 = 523,848 EUR
    assert out["capex"] == {"value": pytest.approx(523848.0, rel=1e-12), "unit": "EUR"}
    # 13.76875 USD/h at the fleet's utilisation x 0.92 = 12.66725 EUR/h; x 730 h a month
    assert out["cost_per_hour"] == {"value": pytest.approx(12.66725, rel=1e-12),
                                    "unit": "EUR/h"}
    assert out["cost_per_month"] == {"value": pytest.approx(12.66725 * 730, rel=1e-12),
                                     "unit": "EUR/month"}  # 9,247.0925
    # 12.66725 EUR/h over 221.4 Mtok/h
    assert out["cost_per_mtok"]["total"] == {"value": pytest.approx(12.66725 / 221.4,
                                                                    rel=1e-12),
                                             "unit": "EUR/Mtok"}
    assert out["accelerators"] == 13 and out["power"]["unit"] == "W"
    assert out["disclosure"]["money"]["rate"] == DISCLOSED
    assert _plan(ROUND).to_json()["capex"]["unit"] == "USD"


def test_the_plan_on_the_api_and_the_command_line(client, tokens, files):
    r = client.post(f"{API}/plan", json={"scenario": ROUND_EUR, "demand": "61500 token/s"},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["cost_per_hour"] == {"value": pytest.approx(12.66725, rel=1e-12),
                                       "unit": "EUR/h"}
    out = json.loads(cli("plan", files["eur"], "--demand", "61500 token/s", "--json"))
    assert out["cost_per_month"]["unit"] == "EUR/month"
    text = cli("plan", files["eur"], "--demand", "61500 token/s")
    assert "523,848" in text and "EUR per hour" in text
    assert "shown in EUR at 0.92 EUR/USD (2026-11-30;" in text


# ---- Sensitivity --------------------------------------------------------------------------------

def test_a_tornado_of_cost_per_mtok_is_in_the_scenarios_currency():
    t = app.tornado(ctx(), spec(ROUND_EUR))
    out = t.to_json()
    # base by hand: 1.0625 USD/h / 18 Mtok/h x 0.92 = 0.0543055... EUR/Mtok
    assert out["output"] == "cost_per_mtok_total" and out["unit"] == "EUR/Mtok"
    assert out["base"] == {"value": pytest.approx(1.0625 / 18 * RATE, rel=1e-12),
                           "unit": "EUR/Mtok"}
    usd = app.tornado(ctx(), spec(ROUND)).to_json()
    bars = {b["key"]: b for b in usd["bars"]}
    for bar in out["bars"]:
        assert bar["output_low"]["value"] == eur(bars[bar["key"]]["output_low"]["value"])
        assert bar["swing"]["unit"] == "EUR/Mtok"
        assert bar["low"] == bars[bar["key"]]["low"]  # the inputs moved keep their units
    assert out["money"]["rate"] == DISCLOSED
    assert "money" not in usd and usd["unit"] == "USD/Mtok"


def test_sensitivity_on_the_api_and_the_command_line(client, tokens, files):
    r = client.post(f"{API}/sensitivity/tornado", json={"scenario": {"scenario": ROUND_EUR}},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["base"] == {"value": pytest.approx(1.0625 / 18 * RATE, rel=1e-12),
                              "unit": "EUR/Mtok"}
    text = cli("sensitivity", "tornado", files["eur"])
    assert "0.0543 EUR per million tokens at the base" in text
    assert "Money: calculated in USD, shown in EUR at 0.92 EUR/USD" in text


# ---- Quotes -------------------------------------------------------------------------------------

def _compare(*scenarios: dict) -> app.QuotesRanking:
    return app.quotes_compare(ctx(), [validate_quote(q, f"quote[{i}]")
                                      for i, q in enumerate(QUOTES)],
                              [spec(s, f"s{i}.") for i, s in enumerate(scenarios)])


def test_quotes_compared_in_the_scenarios_currency():
    out = _compare(GB300_EUR).to_json()
    a = next(c for c in out["scenarios"][0]["ranked"] if c["quote"] == "vendor-a-tokens")
    # the quote's USD price at the scenario's rate: 0.73222 USD/Mtok x 0.92 = 0.67364
    assert a["price_per_mtok"] == {"value": eur(VENDOR_A_USD), "unit": "EUR/Mtok"}
    usd = next(c for c in _compare(GB300).to_json()["scenarios"][0]["ranked"]
               if c["quote"] == "vendor-a-tokens")
    for key in ("own_cost_per_mtok", "quote_total", "own_total", "quote_pv", "saving_pv"):
        assert a[key] == {"value": eur(usd[key]["value"]),
                          "unit": usd[key]["unit"].replace("USD", "EUR")}
    assert a["volume"] == usd["volume"] and a["implied_margin"] == usd["implied_margin"]
    assert out["money"]["rate"] == DISCLOSED
    assert out["money"]["quotes"].startswith("quote prices are stated in USD, and shown in "
                                             "EUR at the first scenario's stated rate (0.92")
    assert "money" not in _compare(GB300).to_json()
    with pytest.raises(InputError) as caught:
        _compare(GB300_EUR, GB300)
    assert caught.value.errors[0][0] == "money.currency"


def test_a_term_in_the_scenarios_currency():
    def term(scenario: dict) -> dict:
        return app.quotes_term(ctx(), app.TermRequest(
            validate_quote(QUOTES[0]), spec(scenario), terms=(6, 12),
            improvement=0.3)).to_json()
    usd, out = term(GB300), term(GB300_EUR)
    assert out["price_per_mtok"] == {"value": eur(VENDOR_A_USD), "unit": "EUR/Mtok"}
    for a, b in zip(out["terms"], usd["terms"], strict=True):
        assert a["premium"] == {"value": eur(b["premium"]["value"]), "unit": "EUR"}
        assert a["premium_share"] == b["premium_share"]
    assert out["money"]["rate"] == DISCLOSED


def _decide(scenario: dict) -> dict:
    return app.quotes_decide(ctx(), app.DecisionRequest(
        [validate_quote(q, f"quote[{i}]") for i, q in enumerate(QUOTES)], [spec(scenario)],
        validate_demand({"volume": "20000 Mtok/month"}))).to_json()


def test_a_decision_in_the_scenarios_currency():
    usd, out = _decide(GB300), _decide(GB300_EUR)
    assert [p["offer"] for p in out["ranked"]] == [p["offer"] for p in usd["ranked"]]
    for a, b in zip(out["ranked"], usd["ranked"], strict=True):
        assert a["monthly_cost"] == {"value": eur(b["monthly_cost"]["value"]),
                                     "unit": "EUR/month"}
        assert a["cost_per_mtok"]["value"] == eur(b["cost_per_mtok"]["value"])
    rec, was = out["recommendation"], usd["recommendation"]
    assert rec["monthly_cost"]["value"] == eur(was["monthly_cost"]["value"])
    # the recommendation's words say the same figures in EUR
    assert rec["text"].startswith(f"Take {rec['offer']}")
    assert f"{rec['monthly_cost']['value']:,.0f} EUR a month for 20,000 Mtok a month" in \
        rec["text"]
    assert f"{rec['margin']['value']:,.0f} EUR a month" in rec["text"]
    assert " USD a month" in was["text"] and " EUR" not in was["text"]
    assert out["own_builds"][0]["disclosure"]["money"]["rate"] == DISCLOSED
    assert out["money"]["rate"] == DISCLOSED


def test_quotes_on_the_api_and_the_command_line(client, tokens, tmp_path):
    r = client.post(f"{API}/quotes/compare", json={"quotes": QUOTES,
                                                   "scenarios": [{"scenario": GB300_EUR}]},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["scenarios"][0]["ranked"][0]["price_per_mtok"] == {
        "value": eur(VENDOR_A_USD), "unit": "EUR/Mtok"}
    scenario = tmp_path / "gb300.json"
    scenario.write_text(json.dumps(GB300_EUR))
    quotes = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
    out = json.loads(cli("quotes", "compare", quotes, "--scenario", scenario, "--json"))
    assert out["scenarios"][0]["ranked"][0]["price_per_mtok"]["unit"] == "EUR/Mtok"
    text = cli("quotes", "compare", quotes, "--scenario", scenario)
    assert "prices and our cost in EUR per million" in text
    assert "0.6736" in text  # 0.67364 EUR/Mtok
    assert "quote prices are stated in USD, and shown in EUR" in text
    decided = cli("quotes", "decide", quotes, "--scenario", scenario, "--demand",
                  "20000 Mtok/month")
    assert "money in EUR" in decided and "shown in EUR at 0.92 EUR/USD" in decided


# ---- a quote's amounts in another currency -------------------------------------------------------

# vendor-a-tokens priced in EUR at the same rate: 0.55 x 0.92 = 0.506 and 2.19 x 0.92 = 2.0148
# EUR/Mtok, read at the scenario's 0.92 EUR/USD back to 0.55 and 2.19 USD/Mtok
EUR_QUOTE = {**QUOTES[0], "price_input": "0.506 EUR/Mtok", "price_output": "2.0148 EUR/Mtok"}
USD_WITH_EUR_RATE = {**GB300, "money": {"fx": MONEY["fx"]}}  # shown in USD, EUR rate stated


def test_a_quote_in_euros_is_read_at_the_first_scenarios_rate():
    q = validate_quote(EUR_QUOTE, "quote[0]")
    assert not q.read and q.currencies == {"EUR"}  # read once a scenario states its rate
    assert validate_quote({**QUOTES[0], "vendor": "EUR Cloud GmbH"}).read  # a name: no amount
    for scenario, unit, value in ((GB300_EUR, "EUR/Mtok", VENDOR_A_USD * RATE),
                                  (USD_WITH_EUR_RATE, "USD/Mtok", VENDOR_A_USD)):
        out = app.quotes_compare(ctx(), [q], [spec(scenario)]).to_json()
        c = out["scenarios"][0]["ranked"][0]
        assert c["price_per_mtok"] == {"value": pytest.approx(value, rel=1e-12), "unit": unit}
        assert out["money"]["quote_amounts_converted"] == {"EUR": DISCLOSED}
    # a scenario stating no rate for it: refused at the quote's field
    with pytest.raises(InputError) as caught:
        app.quotes_compare(ctx(), [q], [spec(GB300)])
    path, message = caught.value.errors[0]
    assert path == "quote[0].price_input"
    assert message.startswith("an amount in EUR, but the scenario states no exchange rate")


def test_a_quote_in_euros_decided_and_termed():
    q = validate_quote(EUR_QUOTE, "quote[0]")
    usd = _decide(GB300_EUR)
    out = app.quotes_decide(ctx(), app.DecisionRequest(
        [q, *(validate_quote(x, f"quote[{i}]") for i, x in enumerate(QUOTES[1:], 1))],
        [spec(GB300_EUR)], validate_demand({"volume": "20000 Mtok/month"}))).to_json()
    a = next(p for p in out["ranked"] if p["offer"] == "vendor-a-tokens")
    b = next(p for p in usd["ranked"] if p["offer"] == "vendor-a-tokens")
    assert a["monthly_cost"]["value"] == pytest.approx(b["monthly_cost"]["value"], rel=1e-12)
    term = app.quotes_term(ctx(), app.TermRequest(q, spec(GB300_EUR), terms=(6,),
                                                  improvement=0.3)).to_json()
    assert term["price_per_mtok"]["value"] == pytest.approx(VENDOR_A_USD * RATE, rel=1e-12)
    assert term["money"]["quote_amounts_converted"] == {"EUR": DISCLOSED}


def test_a_quote_in_euros_on_the_api_and_the_command_line(client, tokens, tmp_path):
    body = {"quotes": [EUR_QUOTE], "scenarios": [{"scenario": GB300_EUR}]}
    r = client.post(f"{API}/quotes/compare", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["scenarios"][0]["ranked"][0]["price_per_mtok"]["value"] == eur(VENDOR_A_USD)
    refused = client.post(f"{API}/quotes/compare", headers=auth(tokens["viewer"]), json={
        **body, "scenarios": [{"scenario": GB300}]})
    assert refused.status_code == 422
    assert refused.json["errors"][0]["path"] == "quotes[0].price_input"
    quotes = tmp_path / "quotes.json"
    quotes.write_text(json.dumps({"quote": [EUR_QUOTE]}))
    scenario = tmp_path / "gb300.json"
    scenario.write_text(json.dumps(USD_WITH_EUR_RATE))
    text = cli("quotes", "compare", quotes, "--scenario", scenario)
    assert f"{VENDOR_A_USD:.4f}" in text  # 0.7322 USD/Mtok
    assert "Money: quote amounts given in EUR read at the first scenario's stated rate: " \
           "0.92 EUR/USD (2026-11-30; illustrative assumption for the test)" in text
