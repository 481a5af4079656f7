"""POST /api/v1/profit: the hand figures (tests/profit_support.py) as the engine answers
them, one market for every scenario or each its own, the document's examples, the workbook
by Accept, bad markets as problems naming the field; and the market prices in the catalog
(GET and POST /api/v1/market-prices)."""
from __future__ import annotations

import io

import pytest
from conftest import auth
from openpyxl import load_workbook
from profit_support import BREAK_EVEN, MARKET, OWNED, PROFIT, PROFIT_GW_YEAR, RENTED

from costmodel import app
from costmodel.api.schemas import ProfitRequest
from costmodel.render.workbook.names import named_cells

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def post(client, tokens, body, **headers):
    return client.post(f"{API}/profit", json=body,
                       headers={**auth(tokens["viewer"]), **headers})


def engine(scenarios, markets):
    return app.profit(app.LocalContext(), app.ProfitRequest(
        [app.ScenarioSpec(app.InlineScenario(s)) for s in scenarios],
        [app.MarketSpec(m, given_by="given in the request") for m in markets])).to_json()


def test_the_hand_figures_for_an_owned_and_a_rented_accelerator(client, tokens):
    r = post(client, tokens, {"scenarios": [{"scenario": OWNED}, {"scenario": RENTED}],
                              "market": MARKET})
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    assert out == engine([OWNED, RENTED], [MARKET, MARKET])
    for s in out["systems"]:
        name = s["scenario"]
        assert s["profit_per_hour"]["value"] == pytest.approx(PROFIT[name], rel=1e-12)
        assert s["profit_per_gw_year"]["value"] == pytest.approx(PROFIT_GW_YEAR[name],
                                                                 rel=1e-12)
        assert s["break_even"]["price_per_mtok"]["value"] == pytest.approx(BREAK_EVEN[name],
                                                                           rel=1e-12)
        assert s["revenue_share_per_hour"] == {"value": pytest.approx(2.304), "unit": "USD/h"}
    assert out["most_profitable"] == "owned"


def test_each_scenario_its_own_market_else_the_requests(client, tokens):
    cheap = {"price": "0.3 USD/Mtok"}
    body = {"scenarios": [{"scenario": OWNED, "market": cheap}, {"scenario": OWNED}],
            "market": MARKET}
    out = post(client, tokens, body).get_json()
    assert out == engine([OWNED, OWNED], [cheap, MARKET])
    # 1,250 tokens x 0.3 / 10^6 x 14,400 an hour = 5.4 USD/h
    assert out["systems"][0]["revenue_per_hour"]["value"] == pytest.approx(5.4, rel=1e-12)


def test_a_saved_scenario_with_overrides(client, tokens):
    saved = client.post(f"{API}/scenarios", json={"name": "profit owned", "scenario": OWNED},
                        headers=auth(tokens["editor"]))
    assert saved.status_code == 201
    sid = saved.get_json()["scenario_id"]
    out = post(client, tokens, {"scenarios": [{"scenario_id": sid,
                                               "overrides": {"utilisation": 1}}],
                                "market": MARKET}).get_json()
    # every hour serving: twice the requests, 23.04 USD/h of revenue, 18.432 kept; energy
    # 0.1 USD/h: profit 18.432 - 1.1
    assert out["systems"][0]["profit_per_hour"]["value"] == pytest.approx(18.432 - 1.1,
                                                                          rel=1e-12)


def test_every_example_in_the_document_answers(client, tokens):
    examples = ProfitRequest.model_config["json_schema_extra"]["examples"]
    assert len(examples) >= 3
    for body in examples:
        r = post(client, tokens, body)
        assert r.status_code == 200, (body, r.get_data(as_text=True))
        assert all(s["profit_per_hour"]["value"] is not None for s in r.get_json()["systems"])


def test_the_workbook_by_accept(client, tokens):
    r = post(client, tokens, {"scenarios": [{"scenario": OWNED}, {"scenario": RENTED}],
                              "market": MARKET}, Accept=XLSX)
    assert r.status_code == 200 and r.mimetype == XLSX
    wb = load_workbook(io.BytesIO(r.get_data()), data_only=True)
    assert wb.sheetnames[:2] == ["Summary", "Profit"]
    assert [c.value for c in named_cells(wb, "profit_per_hour")] == \
        [pytest.approx(8.151, rel=1e-12), pytest.approx(7.151, rel=1e-12)]


@pytest.mark.parametrize("body,path,says", [
    ({"scenarios": [{"scenario": OWNED}]}, "scenarios[0].market", "required"),
    ({"scenarios": [{"scenario": OWNED}], "market": {**MARKET, "price_output": "-1 USD/Mtok"}},
     "market.price_output", "must not be negative"),
    ({"scenarios": [{"scenario": OWNED}], "market": {**MARKET, "revenue_share": 1}},
     "market.revenue_share", "must be below 1"),
    ({"scenarios": [{"scenario": OWNED, "market": {**MARKET, "revenue_share": "100 %"}}]},
     "scenarios[0].market.revenue_share", "must be below 1"),
    ({"scenarios": [{"scenario": OWNED}], "market": {"catalog": "nobody/nothing"}},
     "market.catalog", "unknown catalog entry"),
    ({"scenarios": [{"scenario": {**OWNED, "utilisation": 2}}], "market": MARKET},
     "scenarios[0].scenario.utilisation", "must be at most 1"),
])
def test_bad_input_is_a_problem_naming_the_field(client, tokens, body, path, says):
    r = post(client, tokens, body)
    assert r.status_code in (404, 422) and r.mimetype == "application/problem+json", r.data
    errors = {e["path"]: e["message"] for e in r.get_json()["errors"]}
    assert path in errors and says in errors[path], errors


def test_the_market_prices_in_the_catalog(client, tokens):
    viewer, editor = auth(tokens["viewer"]), auth(tokens["editor"])
    page = client.get(f"{API}/market-prices", headers=viewer).get_json()
    assert "deepseek/deepseek-r1-off-peak@2026-08" in [e["key"] for e in page["items"]]
    one = client.get(f"{API}/market-prices/deepseek/deepseek-r1-off-peak@2026-08",
                     headers=viewer).get_json()
    assert one["data"]["price_output"] == {"value": 0.66, "unit": "USD/Mtok"}
    assert "The Weighted Average, Aug 2026" in one["provenance"]["price_output"]
    data = {"provider": "Test", "model": "Test 70B", "date": "2026-12",
            "price": {"value": 0.5, "unit": "USD/Mtok", "source": "a test price"}}
    wrong = client.post(f"{API}/market-prices", json={"key": "test/t70@2026-11", "data": data},
                        headers=editor)
    assert wrong.status_code == 422 and wrong.get_json()["errors"][0]["path"] == "key"
    made = client.post(f"{API}/market-prices", json={"key": "test/t70@2026-12", "data": data},
                       headers=editor)
    assert made.status_code == 201, made.get_data(as_text=True)
    # a newer version is what an undated reference names now
    out = post(client, tokens, {"scenarios": [{"scenario": OWNED}],
                                "market": {"catalog": "test/t70"}}).get_json()
    assert out["systems"][0]["disclosure"]["market"]["entry"] == "test/t70@2026-12"
    assert out["systems"][0]["revenue_per_hour"]["value"] == pytest.approx(9.0, rel=1e-12)
    bad = client.post(f"{API}/market-prices", json={"key": "test/t70@2027-01", "data": {
        **data, "date": "2027-01", "price": "-1 USD/Mtok"}}, headers=editor)
    assert bad.status_code == 422 and bad.get_json()["errors"][0]["path"] == "data.price"
