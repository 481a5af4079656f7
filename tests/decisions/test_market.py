"""Market prices (costmodel.decisions.market): which version a reference names, what an entry
must give, and the prices a market means (a blended price is every kind's; a cached-input
price not given is the input price); the profit's declaration (costmodel.decisions.profit)
reads the model's names and redeclares none."""
from __future__ import annotations

import pytest

from costmodel.decisions import profit
from costmodel.decisions.market import (
    MarketEntry,
    MarketNotFound,
    MarketRefError,
    resolve_market,
    resolve_market_ref,
)
from costmodel.model.errors import InputError
from costmodel.model.steps import MODEL
from costmodel.sources.catalog import Catalog

KEYS = ["x/offer@2026-06", "x/offer@2026-11", "x/offer@2026-11-20", "x/other@2026-01",
        "y/offer@2026-08"]


@pytest.mark.parametrize("ref,key", [
    ("x/offer", "x/offer@2026-11-20"),  # the latest: a day after its month
    ("x/offer@2026-11", "x/offer@2026-11"),  # exactly that version
    ("x/offer@2026-10", "x/offer@2026-06"),  # the latest on or before
    ("x/offer@2026-06-30", "x/offer@2026-06"),  # a month holds its days
    ("x/offer@2026-12-01", "x/offer@2026-11-20"),
    ("y/offer", "y/offer@2026-08"),
])
def test_a_reference_names_a_version(ref, key):
    assert resolve_market_ref(ref, KEYS) == key


@pytest.mark.parametrize("ref,error", [
    ("x/offer@2026-05", MarketNotFound), ("z/offer", MarketNotFound),
    ("x/offer@2026-13", MarketRefError), ("offer", MarketRefError),
    ("x/offer@soon", MarketRefError), (7, MarketRefError)])
def test_a_reference_that_names_none(ref, error):
    with pytest.raises(error):
        resolve_market_ref(ref, KEYS)


def test_every_catalog_entry_is_a_cited_dated_market_price():
    catalog = Catalog.load()
    keys = catalog.keys("market_price")
    assert "deepseek/deepseek-r1-off-peak@2026-08" in keys
    for key in keys:
        entry = catalog.get("market_price", key, "")
        e = MarketEntry.model_validate(entry.data)
        assert key.rpartition("@")[2] == e.date, key
        prices = [f for f in ("price_input", "price_cached_input", "price_output", "price")
                  if f in entry.data]
        assert prices and all(entry.provenance.get(f) for f in prices), key  # each cited
        assert e.source, key
        if not key.startswith("deepseek/"):  # only the published one is not illustrative
            assert all("illustrative assumption" in entry.provenance[f] for f in prices), key


@pytest.mark.parametrize("data,says", [
    ({"provider": "p", "model": "m", "date": "2026-11"}, "give a price"),
    ({"provider": "p", "model": "m", "date": "2026-11", "price": "1 USD/Mtok",
      "price_output": "2 USD/Mtok"}, "not both"),
    ({"provider": "p", "model": "m", "date": "2026-13", "price": "1 USD/Mtok"}, "not a date"),
])
def test_an_entry_must_give_a_price_on_one_basis(data, says):
    with pytest.raises(ValueError, match=says):
        MarketEntry.model_validate(data)


def test_prices_by_rule():
    split = resolve_market({"price_input": "0.4 USD/Mtok", "price_output": "1.6 USD/Mtok"},
                           None, {})
    assert (split.price_input, split.price_cached_input, split.price_output) == (0.4, 0.4, 1.6)
    assert split.basis == "split" and "no discount" in split.ruled[0]
    blended = resolve_market({"price": "90 cent/Mtok", "revenue_share": "25 %"}, None, {})
    assert (blended.price_input, blended.price_cached_input, blended.price_output) == \
        (0.9, 0.9, 0.9)
    assert blended.basis == "blended" and blended.blended == 0.9
    assert blended.revenue_share == 0.25


def test_a_blended_price_with_cached_tokens_free_still_sells():
    with pytest.raises(InputError, match="greater than zero"):
        resolve_market({"price_input": "0 USD/Mtok", "price_output": "0 USD/Mtok"}, None, {})
    # input free and every input token cached at a price: revenue from the cached ones
    ok = resolve_market({"price_input": "0 USD/Mtok", "price_cached_input": "0.1 USD/Mtok",
                         "price_output": "0 USD/Mtok", "cached_share": 1}, None, {})
    assert ok.price_cached_input == 0.1


def test_the_profit_declaration_reads_the_models_names_and_redeclares_none():
    own = set(profit.PROFIT.steps) | {i.name for i in profit.MARKET_INPUTS}
    assert not own & (set(MODEL.inputs) | set(MODEL.steps) | set(MODEL.constants))
    read = {i for i in profit.PROFIT.inputs if not i.startswith("market_")}
    assert read == set(profit.MODEL_NAMES)
    for name in read:
        unit = MODEL.inputs[name].unit if name in MODEL.inputs else MODEL.steps[name].unit
        assert profit.PROFIT.inputs[name].unit == unit, name
    assert profit.PROFIT.steps["profit_per_gw_year"].unit == "USD/GW/year"
    assert profit.PROFIT.steps["profit_per_hour"].expression == \
        "net_revenue_per_hour - cost_per_hour"
