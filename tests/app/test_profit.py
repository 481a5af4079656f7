"""Profit at market prices (costmodel.app.profit): the figures of an owned and a rented
accelerator at a utilisation below 1, derived by hand in tests/profit_support.py; a blended
price in another currency, an output-token operating point, catalog versions, and bad markets
refused with the field named."""
from __future__ import annotations

import pytest
from profit_support import (
    ACCELERATORS_PER_GW,
    BREAK_EVEN,
    BREAK_EVEN_OUTPUT,
    COST,
    KEPT,
    MARGIN,
    MARKET,
    OWNED,
    PROFIT,
    PROFIT_GW_YEAR,
    PROFIT_MONTH,
    RENTED,
    REVENUE,
    SHARE,
    TOKENS_PER_USD,
)

from costmodel import app
from costmodel.model.errors import InputError, UnknownReference

CTX = app.LocalContext()


def sold(scenarios, market=MARKET, markets=None):
    specs = [app.ScenarioSpec(app.InlineScenario(s)) for s in scenarios]
    markets = markets or [app.MarketSpec(market) for _ in scenarios]
    return app.profit(CTX, app.ProfitRequest(specs, markets))


def approx(x):
    return pytest.approx(x, rel=1e-12)


@pytest.fixture(scope="module")
def both():
    return {s.name: s for s in sold([OWNED, RENTED]).systems}


@pytest.mark.parametrize("name", ["owned", "rented"])
def test_revenue_share_and_profit_per_accelerator_hour(both, name):
    s = both[name]
    assert s.priced.result.scenario.utilisation == 0.5
    assert s.value("market_revenue_per_request") == approx(0.0008)
    assert s.value("requests_per_hour") == approx(14_400)
    assert s.value("revenue_per_hour") == approx(REVENUE)
    assert s.value("revenue_share_per_hour") == approx(SHARE)
    assert s.value("net_revenue_per_hour") == approx(KEPT)
    assert s.priced.result.value("cost_per_hour") == approx(COST[name])
    assert s.value("profit_per_hour") == approx(PROFIT[name])
    assert s.value("profit_margin") == approx(MARGIN[name])


@pytest.mark.parametrize("name", ["owned", "rented"])
def test_per_month_per_gw_year_break_even_and_tokens_per_dollar(both, name):
    s = both[name]
    assert s.value("profit_per_month") == approx(PROFIT_MONTH[name])
    assert s.value("revenue_per_month") == approx(11.52 * 730)
    assert s.value("accelerators_per_gw") == approx(ACCELERATORS_PER_GW)
    assert s.value("profit_per_gw_year") == approx(PROFIT_GW_YEAR[name])
    assert s.value("market_price_per_mtok") == approx(0.64)
    assert s.value("break_even_factor") == approx(COST[name] / KEPT)
    assert s.value("break_even_price") == approx(BREAK_EVEN[name])
    assert s.value("break_even_price_output") == approx(BREAK_EVEN_OUTPUT[name])
    assert s.value("break_even_price_input") == approx(0.5 * COST[name] / KEPT)
    assert s.value("tokens_per_usd") == approx(TOKENS_PER_USD[name])


def test_at_the_break_even_price_the_profit_is_zero(both):
    """The break-even prices, sold at: no profit (the definition, checked by the engine)."""
    s = both["rented"]
    at = {"price_input": f"{s.value('break_even_price_input')!r} USD/Mtok",
          "price_cached_input": f"{s.value('break_even_price_cached_input')!r} USD/Mtok",
          "price_output": f"{s.value('break_even_price_output')!r} USD/Mtok",
          "cached_share": 0.5, "revenue_share": 0.2}
    again = sold([RENTED], at).systems[0]
    assert again.value("profit_per_hour") == pytest.approx(0, abs=1e-12)
    # with no revenue share, a mixed point breaks even at its cost per million tokens
    plain = sold([RENTED], {"price": "1 USD/Mtok"}).systems[0]
    assert plain.value("break_even_price") == approx(
        plain.priced.result.value("cost_per_mtok_total"))


def test_the_answer_and_its_disclosure(both):
    answer = sold([OWNED, RENTED]).to_json()
    assert answer["most_profitable"] == "owned"
    owned = answer["systems"][0]
    assert owned["profit_per_hour"] == {"value": approx(8.151), "unit": "USD/h"}
    assert owned["profit_per_gw_year"]["unit"] == "USD/GW/year"
    assert owned["break_even"]["output"]["value"] == approx(BREAK_EVEN_OUTPUT["owned"])
    market = owned["disclosure"]["market"]
    assert market["revenue_share"] == 0.2 and owned["disclosure"]["utilisation"] == 0.5
    assert market["prices"]["output"] == {"value": 2.0, "unit": "USD/Mtok",
                                          "source": "illustrative assumption"}
    assert market["basis"] == "split" and market["entry"] is None


def test_a_blended_price_in_euros_at_the_scenarios_rate():
    """0.552 EUR/Mtok at 0.92 EUR/USD is 0.60 USD/Mtok for every token: a request 1,250 x
    0.60 / 10^6 = 0.00075 USD, 14,400 an hour: 10.8 USD/h; no share: profit 10.8 - 1.065 =
    9.735 USD/h, shown as 9.735 x 0.92 = 8.9562 EUR/h; break-even (mixed, no share) the cost
    per million tokens, 1.065 / 18 = 0.0591667 USD/Mtok = 0.0544333 EUR/Mtok."""
    euros = {**OWNED, "money": {"currency": "EUR", "fx": {"EUR": {
        "rate": "0.92 EUR/USD", "date": "2026-11-30", "source": "illustrative assumption"}}}}
    s = sold([euros], {"price": "0.552 EUR/Mtok", "date": "2026-11"}).systems[0]
    assert s.market.basis == "blended" and s.market.converted == ("EUR",)
    assert s.market.price_output == approx(0.6)
    assert s.value("revenue_per_hour") == approx(10.8)
    assert s.value("profit_per_hour") == approx(9.735)
    assert s.shown("profit_per_hour") == (approx(9.735 * 0.92), "EUR/h")
    assert s.shown("break_even_price") == (approx(1.065 / 18 * 0.92), "EUR/Mtok")
    assert s.shown("tokens_per_usd") == (approx(18e6 / 1.065 / 0.92), "token/EUR")
    out = s.to_json()
    assert out["cost_per_hour"] == {"value": approx(1.065 * 0.92), "unit": "EUR/h"}
    assert out["disclosure"]["market"]["currencies_converted"] == ["EUR"]


def test_an_output_token_point_sells_whole_requests():
    """10,000 output token/s: requests of 250 output tokens, 0.5 x 10,000 x 3,600 / 250 =
    72,000 an hour at 0.0008 USD: 57.6 USD/h; tokens per dollar count output tokens."""
    out = {**OWNED, "operating_point": {"throughput": "10000 token/s", "token_kind": "output"}}
    s = sold([out]).systems[0]
    assert s.value("requests_per_hour") == approx(72_000)
    assert s.value("revenue_per_hour") == approx(57.6)
    assert s.value("profit_per_hour") == approx(57.6 * 0.8 - 1.065)
    assert s.value("tokens_per_usd") == approx(18e6 / 1.065)


def test_a_catalog_entry_its_latest_version_or_the_one_before_a_date():
    latest = sold([OWNED], {"catalog": "illustrative/reasoning-model-api"}).systems[0]
    assert latest.market.key == "illustrative/reasoning-model-api@2026-11"
    assert (latest.market.price_input, latest.market.price_output) == (0.5, 2.0)
    assert latest.market.sources["output"] == "illustrative assumption: not a published price"
    older = sold([OWNED], {"catalog": "illustrative/reasoning-model-api@2026-08-15"}).systems[0]
    assert older.market.key == "illustrative/reasoning-model-api@2026-06"
    assert older.market.price_output == 2.4
    # a typed price replaces the entry's of its kind; the rest keep the entry's sources
    typed = sold([OWNED], {"catalog": "illustrative/reasoning-model-api",
                           "price_output": {"value": 1.5, "unit": "USD/Mtok",
                                            "source": "a quote"}}).systems[0]
    assert typed.market.price_output == 1.5 and typed.market.sources["output"] == "a quote"
    assert typed.market.sources["input"] == "illustrative assumption: not a published price"


def test_the_published_deepseek_price_needs_an_input_price_beside_it():
    """DeepSeek's off-peak output price, $0.66 per million (The Weighted Average, Aug 2026):
    the source gives no input price, so one is asked for; given, the cached price is it."""
    with pytest.raises(InputError) as err:
        sold([OWNED], {"catalog": "deepseek/deepseek-r1-off-peak"})
    assert [p for p, _ in err.value.errors] == ["market.price_input"]
    s = sold([OWNED], {"catalog": "deepseek/deepseek-r1-off-peak",
                       "price_input": "0.1 USD/Mtok"}).systems[0]
    assert s.market.price_output == 0.66 and s.market.price_cached_input == 0.1
    assert "The Weighted Average, Aug 2026" in s.market.sources["output"]
    assert s.market.date == "2026-08"
    # a request: (1,000 x 0.1 + 250 x 0.66) / 10^6 = 0.000265 USD
    assert s.value("market_revenue_per_request") == approx(0.000265)


@pytest.mark.parametrize("market,path,says", [
    ({**MARKET, "price_output": "-1 USD/Mtok"}, "market.price_output", "must not be negative"),
    ({**MARKET, "revenue_share": 1}, "market.revenue_share", "must be below 1, got 1"),
    ({**MARKET, "revenue_share": "120 %"}, "market.revenue_share", "must be below 1"),
    ({**MARKET, "cached_share": 1.5}, "market.cached_share", "must be at most 1"),
    ({**MARKET, "price": "1 USD/Mtok"}, "market", "not both"),
    ({"price_output": "2 USD/Mtok"}, "market.price_input", "required"),
    ({"price": "0 USD/Mtok"}, "market", "must be greater than zero, got 0 USD"),
    ({"price": "0.6 EUR/Mtok"}, "market.price", "states no exchange rate"),
    ({"price": "0.6 USD/kWh"}, "market.price", "USD/Mtok"),
    ({"catalog": "nobody/nothing"}, "market.catalog", "unknown catalog entry"),
    ({"catalog": "illustrative/reasoning-model-api@2026-01"}, "market.catalog",
     "no market price on or before 2026-01"),
    ({"catalog": "not a reference"}, "market.catalog", "<provider>/<offer>"),
    ({"catalog": "illustrative/open-model-blended", "price_output": "1 USD/Mtok"},
     "market.price_output", "gives a blended price"),
    ({**MARKET, "colour": "red"}, "market.colour", "unknown key"),
])
def test_a_bad_market_is_refused_with_the_field_named(market, path, says):
    with pytest.raises(InputError) as err:
        sold([OWNED], market)
    paths = [p for p, _ in err.value.errors]
    assert path in paths, err.value.errors
    assert says in dict(err.value.errors)[path]


def test_an_unknown_entry_is_an_unknown_reference():
    with pytest.raises(UnknownReference) as err:
        sold([OWNED], {"catalog": "nobody/nothing"})
    assert err.value.kind == "market_price"


def test_errors_name_the_markets_place_in_a_request():
    with pytest.raises(InputError) as err:
        sold([OWNED], markets=[app.MarketSpec({**MARKET, "revenue_share": 1},
                                              where="scenarios[0].market")])
    assert err.value.errors[0][0] == "scenarios[0].market.revenue_share"


def test_a_loss_is_a_negative_profit_and_a_break_even_above_the_price():
    """Rented, sold at a blended 0.10 USD/Mtok: 18 Mtok an hour is 1.8 USD/h of revenue
    against 2.065 of cost, a loss of 0.265 USD/h (margin -0.265 / 1.8); profit is zero at
    2.065 / 1.8 = 1.147 times the price, 2.065 / 18 = 0.11472 USD/Mtok."""
    s = sold([RENTED], {"price": "0.1 USD/Mtok"}).systems[0]
    assert s.value("revenue_per_hour") == approx(1.8)
    assert s.value("profit_per_hour") == approx(-0.265)
    assert s.value("profit_margin") == approx(-0.265 / 1.8)
    assert s.value("break_even_factor") == approx(2.065 / 1.8)
    assert s.value("break_even_price") == approx(2.065 / 18)
    assert s.value("profit_per_gw_year") == approx(-0.265 * 8760 * 500_000)
