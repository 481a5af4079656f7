"""POST /api/v1/quotes/compare on each backend."""
from __future__ import annotations

import tomllib

import pytest
from conftest import ROOT, auth

API = "/api/v1"
QUOTES = tomllib.loads((ROOT / "fixtures" / "quotes" / "example-quotes.toml").read_text())["quote"]
GB300 = {"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched"}}


def test_quotes_ranked_against_a_published_point(client, tokens):
    r = client.post(f"{API}/quotes/compare", json={"quotes": QUOTES, "scenarios": [GB300]},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    ranked = r.json["scenarios"][0]["ranked"]
    assert [c["quote"] for c in ranked] == ["vendor-a-tokens", "vendor-b-reserved",
                                            "vendor-c-no-point"]
    # blended over an 8k/1k request: (8,192 x 0.55 + 1,024 x 2.19) / 9,216 USD/Mtok
    assert ranked[0]["price_per_mtok"]["value"] == pytest.approx((8192 * 0.55 + 1024 * 2.19)
                                                                 / 9216)
    # 14,000 USD / 8 accelerators / 730 h over 118 x 1.4 x 3,600 tokens an hour
    assert ranked[1]["price_per_mtok"]["value"] == pytest.approx(
        14000 / 8 / 730 / (118 * 1.4 * 3600) * 1e6)
    assert any("no operating point in writing" in f for f in ranked[2]["flags"])


def test_a_curve_scenario_is_read_at_each_quotes_interactivity(client, tokens):
    curve = {"scenario": {"accelerator": "b200", "operating_point": {
        "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", "at": "peak"}}}
    quote = {"name": "q", "vendor": "V", "form": "per_accelerator_hour",
             "hourly_price": "3 USD/h", "operating_point": {"interactivity": "120 token/s/user"}}
    r = client.post(f"{API}/quotes/compare", json={"quotes": [quote], "scenarios": [curve]},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    c = r.json["scenarios"][0]["ranked"][0]
    # at 120 token/s/user the illustrative B200 curve has a measured point of 6,500 token/s
    assert c["price_per_mtok"]["value"] == pytest.approx(3 / (6500 * 3600) * 1e6)
    assert c["flags"] == []


@pytest.mark.parametrize("body,path", [
    ({"quotes": [{"name": "x"}], "scenarios": [GB300]}, "quotes[0].vendor"),
    ({"quotes": [{**QUOTES[0], "price_input": "1 W"}], "scenarios": [GB300]},
     "quotes[0].price_input"),
    ({"quotes": QUOTES, "scenarios": [{"scenario": {"accelerator": "gb301",
                                                    "operating_point": "x"}}]},
     "scenarios[0].scenario.accelerator"),
])
def test_bad_quotes_are_problems_with_paths(client, tokens, body, path):
    r = client.post(f"{API}/quotes/compare", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["errors"][0]["path"] == path


def test_term_against_a_successor(client, tokens):
    # a capacity quote locked at its price; the successor (Jalapeño at 169 token/s/user) is
    # available 12 months after the quote's date
    quote = {**QUOTES[1], "date": "2026-11-20"}
    body = {"quote": quote, "scenario": GB300, "terms": [6, 12, 18],
            "successor": {"scenario": {"accelerator": "jalapeno",
                                       "operating_point": "deepseek-r1/jalapeno/matched"}},
            "available": "2027-11-20", "tolerance": 0.1,
            "successor_rate": "jalapeno/rental@2026-09"}
    r = client.post(f"{API}/quotes/term", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    d = r.json
    # the flexible buyer pays the successor's market price: its reference rate, 1.79 USD an
    # accelerator-hour, over the Mtok a Jalapeño serves an hour at the scenario's point; its
    # own cost is shown beside it as a floor, never in its place
    jal = client.post(f"{API}/price", json=body["successor"], headers=auth(tokens["viewer"])).json
    per_hour = jal["steps"]["tokens_per_hour"]["value"]
    assert d["successor"]["market_price"]["value"] == pytest.approx(1.79 / per_hour * 1e6)
    assert d["successor"]["own_cost_floor"]["value"] == pytest.approx(
        jal["cost_per_mtok"]["total"]["value"])
    assert "jalapeno/rental@2026-09" in d["successor"]["market_source"]
    assert [t["term"]["value"] for t in d["terms"]] == [6, 12, 18]
    # up to month 12 the market pays the quoted price: no premium for 6 and 12 months
    assert d["terms"][0]["premium"]["value"] == pytest.approx(0, abs=1e-6)
    assert d["terms"][1]["premium"]["value"] == pytest.approx(0, abs=1e-6)
    assert d["terms"][2]["premium"]["value"] > 0
    assert d["longest_term_within_tolerance"] == {"value": 12, "unit": "month"}


def test_a_successor_without_a_market_price_is_refused(client, tokens):
    body = {"quote": {**QUOTES[1], "date": "2026-11-20"}, "scenario": GB300,
            "successor": GB300, "available": "12 month"}
    r = client.post(f"{API}/quotes/term", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["errors"][0]["path"] == "successor_rate"
    assert "only a floor" in r.json["errors"][0]["message"]


def test_term_needs_a_market(client, tokens):
    r = client.post(f"{API}/quotes/term", json={"quote": QUOTES[0], "scenario": GB300},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["errors"][0]["path"] == "improvement"
    r = client.post(f"{API}/quotes/term", json={"quote": QUOTES[0], "scenario": GB300,
                                                 "successor": GB300, "available": "2020-01",
                                                 "successor_rate": "gb300/rental"},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["errors"][0]["path"] == "available"


FREE = [{"name": "free-tokens", "vendor": "Trial", "form": "per_mtok",
         "price_input": "0 USD/Mtok", "price_output": "0 USD/Mtok"},
        {"name": "free-reserved", "vendor": "Credit", "form": "reserved_monthly",
         "monthly_price": "0 USD/month", "accelerators": 8},
        {"name": "free-hours", "vendor": "Credit", "form": "per_accelerator_hour",
         "hourly_price": "0 USD/h"}]


@pytest.mark.parametrize("free", FREE, ids=[q["name"] for q in FREE])
def test_a_free_offer_is_priced_first_with_no_margin(client, tokens, free):
    r = client.post(f"{API}/quotes/compare", json={"quotes": [*QUOTES, free],
                                                   "scenarios": [GB300]},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    ranked = r.json["scenarios"][0]["ranked"]
    c = ranked[0]
    assert c["quote"] == free["name"]
    assert c["price_per_mtok"]["value"] == 0
    assert c["implied_margin"] is None
    assert "free offer" in c["implied_margin_note"]
    assert c["quote_pv"]["value"] == 0
    # its cost figures are our own: the same as beside every other quote
    assert c["own_cost_per_mtok"] == ranked[1]["own_cost_per_mtok"]
    assert c["saving_pv"]["value"] == pytest.approx(c["own_pv"]["value"])
    assert all(x["implied_margin"] is not None for x in ranked[1:])
    r = client.post(f"{API}/quotes/term", json={"quote": free, "scenario": GB300,
                                                "terms": [6, 12], "improvement": 0.3},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    assert [(t["locked_pv"]["value"], t["premium"]["value"], t["premium_share"])
            for t in r.json["terms"]] == [(0, 0, 0), (0, 0, 0)]
    assert r.json["longest_term_within_tolerance"] == {"value": 12, "unit": "month"}


def test_a_negative_price_is_refused_with_its_path(client, tokens):
    bad = {**FREE[1], "monthly_price": "-1 USD/month"}
    r = client.post(f"{API}/quotes/compare", json={"quotes": [bad], "scenarios": [GB300]},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422
    assert r.json["errors"][0]["path"] == "quotes[0].monthly_price"


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def test_a_decision_by_accept_is_its_workbook_or_a_problem_past_its_columns(client, tokens):
    """Accept naming a spreadsheet: the decision's workbook, its bills the JSON's; more ranked
    offers than the workbook lays out (12): a 422 problem at ``quotes``, the JSON unchanged."""
    import io

    import openpyxl
    flat = [{"name": f"api-{i}", "vendor": "V", "form": "per_mtok",
             "price_input": f"{0.5 + i / 100} USD/Mtok", "price_output": "2 USD/Mtok"}
            for i in range(12)]
    body = {"quotes": flat[:3], "scenarios": [GB300],
            "demand": {"volume": "20000 Mtok/month"}}
    viewer = auth(tokens["viewer"])
    answer = client.post(f"{API}/quotes/decide", json=body, headers=viewer).json
    book = client.post(f"{API}/quotes/decide", json=body, headers={**viewer, "Accept": XLSX})
    assert book.status_code == 200 and book.mimetype == XLSX
    wb = openpyxl.load_workbook(io.BytesIO(book.data), data_only=True)
    (sheet, ref), = wb.defined_names["option_bill"].destinations
    assert [c.value for row in wb[sheet][ref.replace("$", "")] for c in row] == \
        pytest.approx([p["monthly_cost"]["value"] for p in answer["ranked"]], rel=1e-12)
    body["quotes"] = flat  # 12 quotes and the own build: 13 ranked
    refused = client.post(f"{API}/quotes/decide", json=body, headers={**viewer, "Accept": XLSX})
    assert refused.status_code == 422
    assert refused.mimetype == "application/problem+json"
    assert "at most 12 ranked options" in str(refused.json)
    assert client.post(f"{API}/quotes/decide", json=body, headers=viewer).status_code == 200


def test_a_decision_workbook_past_its_tiers_is_a_problem_at_the_quote(client, tokens):
    """An offer of more tiers than the workbook lays out (20): 422 at its ``tiers``, the
    bound said (here and in the document); the JSON unchanged."""
    from costmodel.render.workbook.bounds import MAX_TIERS
    tiers = [{"up_to": f"{1000 * (k + 1)} Mtok/month", "price_input": "0.5 USD/Mtok",
              "price_output": f"{2 - k / 100} USD/Mtok"} for k in range(MAX_TIERS)]
    tiers.append({"price_input": "0.4 USD/Mtok", "price_output": "1.5 USD/Mtok"})
    body = {"quotes": [{"name": "many", "vendor": "V", "form": "per_mtok", "tiers": tiers}],
            "scenarios": [GB300], "demand": {"volume": "20000 Mtok/month"}}
    viewer = auth(tokens["viewer"])
    refused = client.post(f"{API}/quotes/decide", json=body, headers={**viewer, "Accept": XLSX})
    assert refused.status_code == 422, refused.json
    assert refused.json["errors"][0]["path"] == "quotes[0].tiers"
    assert f"at most {MAX_TIERS} tiers an offer" in refused.json["errors"][0]["message"]
    assert client.post(f"{API}/quotes/decide", json=body, headers=viewer).status_code == 200
    op = client.get(f"{API}/openapi.json").json["paths"][f"{API}/quotes/decide"]["post"]
    assert f"each of at most {MAX_TIERS} tiers" in op["description"]


def test_an_edited_decision_workbook_is_decided_again_by_the_api(client, tokens):
    """POST /workbook/reprice with a decision's workbook: ``decision`` is the decision at the
    figures as edited (a volume halved: the JSON decide's at that volume)."""
    import io

    import openpyxl
    quotes = tomllib.loads((ROOT / "fixtures" / "quotes" / "negotiation.toml").read_text())
    body = {"quotes": quotes["quote"], "scenarios": [GB300],
            "demand": {"volume": "20000 Mtok/month"}}
    viewer = auth(tokens["viewer"])
    book = client.post(f"{API}/quotes/decide", json=body, headers={**viewer, "Accept": XLSX})
    wb = openpyxl.load_workbook(io.BytesIO(book.data))
    (sheet, ref), = wb.defined_names["decision_volume"].destinations
    wb[sheet][ref.replace("$", "")].value = 10000
    edited = io.BytesIO()
    wb.save(edited)
    r = client.post(f"{API}/workbook/reprice", data=edited.getvalue(),
                    headers={**viewer, "Content-Type": XLSX})
    assert r.status_code == 200, r.json
    assert r.json["changes"] == [{"system": "demand", "name": "decision_volume",
                                  "before": 20000.0, "after": 10000, "unit": "Mtok/month"}]
    body["demand"]["volume"] = "10000 Mtok/month"
    want = client.post(f"{API}/quotes/decide", json=body, headers=viewer).json
    got = r.json["decision"]
    assert [p["offer"] for p in got["ranked"]] == [p["offer"] for p in want["ranked"]]
    assert [p["monthly_cost"]["value"] for p in got["ranked"]] == pytest.approx(
        [p["monthly_cost"]["value"] for p in want["ranked"]], rel=1e-12)
