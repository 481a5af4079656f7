"""A market price as a quote in the decision: a quote naming ``market = "<provider>/<offer>
[@date]"`` (a catalog ``market_price`` entry) is per million tokens at the entry's prices,
flagged first as a public list price; on the API (quotes/compare, quotes/decide), the command
line and the decision workbook alike.

Hand arithmetic. Our own build is tests/profit_support.py's owned system: 1.065 USD/h for
18,000,000 mixed tokens an hour (10,000 token/s at utilisation 0.5), ISL 1,000 and OSL 250
tokens a request, so our cost is 1.065 / 18 = 0.0591666... USD per million mixed tokens.

- illustrative/reasoning-model-api (fixtures/catalog/market_prices.toml), the 2026-11 version
  (the latest): 0.50 USD per million input tokens, 0.10 cached input, 2.00 output. Per
  million mixed tokens of a 1,000 + 250 request: (1,000 x 0.50 + 250 x 2.00) / 1,250 = 0.80
  USD/Mtok (the quotes' per_mtok rule: a request's price over its tokens); implied margin
  1 - 0.0591666... / 0.80 = 0.92604166...
- its 2026-06 version (named by @2026-07: the latest on or before): 0.60 / 0.15 / 2.40:
  (600 + 600) / 1,250 = 0.96 USD/Mtok.
- illustrative/open-model-blended: one blended 0.60 USD/Mtok, so 0.60 for any shape.
- deepseek/deepseek-r1-off-peak: an output price only (0.66): refused.
- decided for 1,000 Mtok a month of the same shape, half the input from the prefix cache:
  the cached-input price is 0.10 / 0.50 = 0.2 of the input price, so a mixed Mtok costs
  0.8 x 0.50 x (0.5 + 0.5 x 0.2) + 0.2 x 2.00 = 0.24 + 0.40 = 0.64 USD (the market's
  0.64 USD/Mtok of profit_support), 640 USD a month.
- OpenRouter's sample list (fixtures/market/openrouter-models.json), deepseek/deepseek-r1:
  0.0000004 USD a prompt token, 0.000002 a completion token, 0.0000001 a cached read, i.e.
  0.40 / 2.00 / 0.10 USD/Mtok: (400 + 500) / 1,250 = 0.72 USD/Mtok; decided as above,
  0.8 x 0.40 x (0.5 + 0.5 x 0.25) + 0.40 = 0.2 + 0.4 = 0.60 USD/Mtok, 600 USD a month.
"""
from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner
from profit_support import OWNED, toml_text

from costmodel import app
from costmodel.app.quotes import with_rates
from costmodel.cli import main
from costmodel.decisions.demand import validate_demand
from costmodel.decisions.quotes import MARKET_PRICES_GIVEN, validate_quote
from costmodel.model.errors import InputError, UnknownReference
from tests.conftest import ROOT, auth

API = "/api/v1"
OWN_COST = 1.065 / 18  # [USD/Mtok]
SPLIT = "illustrative/reasoning-model-api"
SPLIT_KEY = "illustrative/reasoning-model-api@2026-11"
SPLIT_SOURCE = ("illustrative assumption: a made-up price list to show the arithmetic, not a "
                "published price")
FLAG = (f"market price {SPLIT_KEY} (version 2026-11, {SPLIT_SOURCE}): a public list price, "
        f"not a negotiated quote")
DEMAND = {"volume": "1000 Mtok/month", "cached_input_share": 0.5}
SAMPLE = ROOT / "fixtures" / "market" / "openrouter-models.json"


def _spec():
    return app.ScenarioSpec(app.InlineScenario(OWNED))


def _compare(quote: dict):
    ranking = app.quotes_compare(app.LocalContext(), [validate_quote(quote, "quotes[0]")],
                                 [_spec()])
    return ranking.rows[0][0]


# ---- the quote, compared -------------------------------------------------------------------

def test_a_market_quote_is_per_mtok_at_the_entrys_prices():
    c = _compare({"market": SPLIT})
    assert c.price_per_mtok == pytest.approx(0.80, rel=1e-12)
    assert c.own_cost_per_mtok == pytest.approx(OWN_COST, rel=1e-12)
    assert c.implied_margin == pytest.approx(1 - OWN_COST / 0.80, rel=1e-12)
    q = c.quote
    # form, name and vendor by default: per_mtok, the reference, the entry's provider
    assert (q.form, q.name, q.vendor, q.term) == ("per_mtok", SPLIT, "Illustrative API", 12)
    assert q.cached_input_fraction == pytest.approx(0.2, rel=1e-12)
    assert q.source == f"{SPLIT_SOURCE} (version 2026-11)"
    assert c.flags[0] == FLAG
    d = c.to_json()
    assert d["reference_rate"] is None
    m = d["market_price"]
    assert (m["key"], m["provider"], m["date"], m["source"]) == (
        SPLIT_KEY, "Illustrative API", "2026-11", SPLIT_SOURCE)
    assert m["prices"] == {"input": {"value": 0.5, "unit": "USD/Mtok"},
                           "output": {"value": 2.0, "unit": "USD/Mtok"},
                           "cached_input": {"value": 0.1, "unit": "USD/Mtok"},
                           "blended": None}


def test_a_vendor_quote_has_no_market_price():
    c = _compare({"name": "v", "vendor": "V", "form": "per_mtok", "price_input": "0.5 USD/Mtok",
                  "price_output": "2 USD/Mtok"})
    assert c.price_per_mtok == pytest.approx(0.80, rel=1e-12)  # the same prices typed
    assert c.to_json()["market_price"] is None
    assert not any(f.startswith("market price") for f in c.flags)


@pytest.mark.parametrize("ref,key,price", [
    (f"{SPLIT}@2026-07", "illustrative/reasoning-model-api@2026-06", 0.96),  # on or before
    (f"{SPLIT}@2026-11-30", SPLIT_KEY, 0.80),
    ("illustrative/open-model-blended", "illustrative/open-model-blended@2026-11", 0.60),
])
def test_the_version_the_reference_names(ref, key, price):
    c = _compare({"market": ref, "name": "m", "vendor": "Someone"})
    assert c.price_per_mtok == pytest.approx(price, rel=1e-12)
    assert c.to_json()["market_price"]["key"] == key
    assert c.quote.vendor == "Someone"  # a vendor given stays


def test_a_blended_price_is_both_prices_whatever_the_shape():
    c = _compare({"market": "illustrative/open-model-blended",
                  "operating_point": {"isl": 100, "osl": 3000}})
    assert (c.quote.price_input, c.quote.price_output) == (0.6, 0.6)
    assert c.quote.cached_input_fraction is None
    assert c.price_per_mtok == pytest.approx(0.60, rel=1e-12)
    assert c.to_json()["market_price"]["prices"]["blended"] == {"value": 0.6,
                                                                "unit": "USD/Mtok"}


# ---- refusals --------------------------------------------------------------------------------

@pytest.mark.parametrize("quote,path,says", [
    ({"market": SPLIT, "price_input": "1 USD/Mtok"}, "quotes[0].price_input",
     MARKET_PRICES_GIVEN),
    ({"market": SPLIT, "price_output": "1 USD/Mtok"}, "quotes[0].price_output",
     MARKET_PRICES_GIVEN),
    ({"market": SPLIT, "tiers": [{"price_input": "1 USD/Mtok", "price_output": "2 USD/Mtok"}]},
     "quotes[0].tiers", MARKET_PRICES_GIVEN),
    ({"market": SPLIT, "cached_input_fraction": 0.5}, "quotes[0].cached_input_fraction",
     MARKET_PRICES_GIVEN),
    ({"market": SPLIT, "form": "per_accelerator_hour"}, "quotes[0].form", "per_mtok"),
    ({"market": SPLIT, "rate": "gb300/rental"}, "quotes[0].market", "one of rate or market"),
    ({"market": "reasoning-model-api"}, "quotes[0].market", "expected <provider>/<offer>"),
    ({"market": f"{SPLIT}@2026-13"}, "quotes[0].market", "not a date"),
    ({"market": "a/" + "b" * 300}, "quotes[0].market", "200"),
    ({"market": SPLIT, "hardware": "gb300"}, "quotes[0].hardware", "capacity"),
])
def test_a_market_quote_is_checked_when_read(quote, path, says):
    with pytest.raises(InputError) as exc:
        validate_quote(quote, "quotes[0]")
    assert exc.value.errors[0][0] == path and says in exc.value.errors[0][1]


def test_an_entry_without_an_input_price_is_refused_at_the_market():
    quote = validate_quote({"market": "deepseek/deepseek-r1-off-peak"}, "quotes[0]")
    with pytest.raises(InputError) as exc:
        with_rates(app.LocalContext(), [quote])
    (path, says), = exc.value.errors
    assert path == "quotes[0].market"
    assert says.startswith("the market price 'deepseek/deepseek-r1-off-peak@2026-08' gives no "
                           "input price (only output)")


@pytest.mark.parametrize("ref,says", [
    ("nobody/nothing", "unknown catalog entry 'nobody/nothing'"),
    (f"{SPLIT}@2026-01", "no market price on or before 2026-01 (versions: 2026-06, 2026-11)"),
])
def test_an_unknown_market_price_is_an_unknown_reference(ref, says):
    quote = validate_quote({"market": ref}, "quotes[2]")
    with pytest.raises(UnknownReference) as exc:
        with_rates(app.LocalContext(), [quote])
    assert exc.value.errors[0][0] == "quotes[2].market" and says in exc.value.errors[0][1]
    assert exc.value.kind == "market_price"


# ---- the decision ----------------------------------------------------------------------------

def _option(decision: dict, name: str) -> dict:
    return next(o for o in decision["ranked"] if o["offer"] == name)


def test_the_decision_takes_the_market_price_with_its_cached_discount():
    req = app.DecisionRequest([validate_quote({"market": SPLIT}, "quotes[0]")], [_spec()],
                              validate_demand(DEMAND))
    d = app.quotes_decide(app.LocalContext(), req).to_json()
    o = _option(d, SPLIT)
    assert o["kind"] == "per_mtok" and o["vendor"] == "Illustrative API"
    assert o["cost_per_mtok"]["value"] == pytest.approx(0.64, rel=1e-12)
    assert o["monthly_cost"]["value"] == pytest.approx(640.0, rel=1e-12)
    assert o["term"]["value"] == 12  # a market price has no term of its own
    assert o["flags"][0] == FLAG
    assert o["market_price"]["key"] == SPLIT_KEY
    assert "50% of input tokens from cache at 20% of the input price" in o["charged"]


# ---- the faces agree: API and command line ---------------------------------------------------

def _files(tmp_path, market: str = SPLIT):
    scenario = tmp_path / "owned.toml"
    scenario.write_text(toml_text(OWNED, market=None), encoding="utf-8")
    quotes = tmp_path / "quotes.toml"
    quotes.write_text(f'[[quote]]\nmarket = "{market}"\n\n[demand]\nvolume = "1000 Mtok/month"\n'
                      f'cached_input_share = 0.5\n', encoding="utf-8")
    return scenario, quotes


def _cli(*args, code: int = 0):
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == code, (r.stdout, r.stderr)
    return r


def test_api_and_cli_decide_figure_for_figure(client, tokens, tmp_path):
    scenario, quotes = _files(tmp_path)
    cli = json.loads(_cli("quotes", "decide", quotes, "--scenario", scenario, "--json").stdout)
    r = client.post(f"{API}/quotes/decide", json={
        "quotes": [{"market": SPLIT}], "scenarios": [{"scenario": OWNED}], "demand": DEMAND},
        headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    api = r.json
    for d in (cli, api):
        o = _option(d, SPLIT)
        assert o["monthly_cost"]["value"] == pytest.approx(640.0, rel=1e-12)
        assert o["flags"][0] == FLAG
    figures = ("monthly_cost", "cost_per_mtok", "term_total", "term_pv", "flags",
               "market_price", "vendor", "charged")
    assert {k: _option(cli, SPLIT)[k] for k in figures} == \
        {k: _option(api, SPLIT)[k] for k in figures}
    assert cli["recommendation"]["offer"] == api["recommendation"]["offer"]


def test_api_and_cli_compare_figure_for_figure(client, tokens, tmp_path):
    scenario, quotes = _files(tmp_path)
    text = " ".join(_cli("quotes", "compare", quotes, "--scenario", scenario,
                         "--demand", "1000 Mtok/month").stdout.split())
    assert "market price illustrative/reasoning-model-api@2026-11" in text
    quotes.write_text(f'[[quote]]\nmarket = "{SPLIT}"\n', encoding="utf-8")  # no demand
    cli = json.loads(_cli("quotes", "compare", quotes, "--scenario", scenario,
                          "--json").stdout)["scenarios"][0]["ranked"][0]
    r = client.post(f"{API}/quotes/compare", json={
        "quotes": [{"market": SPLIT}], "scenarios": [{"scenario": OWNED}]},
        headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    api = r.json["scenarios"][0]["ranked"][0]
    assert api["price_per_mtok"]["value"] == pytest.approx(0.80, rel=1e-12)
    assert api["flags"][0] == FLAG
    assert api["market_price"]["key"] == SPLIT_KEY and api["reference_rate"] is None
    for k in ("price_per_mtok", "own_cost_per_mtok", "implied_margin", "quote_total",
              "quote_pv", "flags", "market_price", "vendor", "quote"):
        assert cli[k] == api[k], k


@pytest.mark.parametrize("quote,status,path,says", [
    ({"market": "nobody/nothing"}, 422, "quotes[0].market", "unknown catalog entry"),
    ({"market": "deepseek/deepseek-r1-off-peak"}, 422, "quotes[0].market",
     "gives no input price"),
    ({"market": SPLIT, "price_input": "1 USD/Mtok"}, 422, "quotes[0].price_input",
     MARKET_PRICES_GIVEN),
    ({"market": "not-a-reference"}, 422, "quotes[0].market", "expected <provider>/<offer>"),
])
def test_api_refusals_name_the_field(client, tokens, quote, status, path, says):
    for op, extra in (("compare", {}), ("decide", {"demand": DEMAND})):
        r = client.post(f"{API}/quotes/{op}", json={
            "quotes": [quote], "scenarios": [{"scenario": OWNED}], **extra},
            headers=auth(tokens["viewer"]))
        assert r.status_code == status, (op, r.json)
        assert r.headers["Content-Type"] == "application/problem+json"
        assert r.json["errors"][0]["path"] == path and says in r.json["errors"][0]["message"]


def test_cli_refusal_is_one_line(tmp_path):
    scenario, quotes = _files(tmp_path, "deepseek/deepseek-r1-off-peak")
    r = _cli("quotes", "decide", quotes, "--scenario", scenario, code=2)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "quote[0].market" in lines[0] and "gives no input" in lines[0]


# ---- OpenRouter's list, imported, as a quote --------------------------------------------------

def test_an_imported_openrouter_price_in_the_decision(app, client, tokens):
    from costmodel.app.market_import import import_openrouter
    done = import_openrouter(app.extensions["costmodel"], SAMPLE, date="2026-12-01")
    key = "openrouter/deepseek.deepseek-r1@2026-12-01"
    assert key in done.added
    r = client.post(f"{API}/quotes/decide", json={
        "quotes": [{"market": "openrouter/deepseek.deepseek-r1@2026-12-01", "name": "r1"}],
        "scenarios": [{"scenario": OWNED}], "demand": DEMAND}, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    o = _option(r.json, "r1")
    assert o["vendor"] == "OpenRouter"
    assert o["cost_per_mtok"]["value"] == pytest.approx(0.60, rel=1e-12)
    assert o["monthly_cost"]["value"] == pytest.approx(600.0, rel=1e-12)
    assert o["flags"][0].startswith(f"market price {key} (version 2026-12-01, OpenRouter model "
                                    f"list (https://openrouter.ai/api/v1/models), fetched "
                                    f"2026-12-01): a public list price")
    r = client.post(f"{API}/quotes/compare", json={
        "quotes": [{"market": "openrouter/deepseek.deepseek-r1@2026-12-01"}],
        "scenarios": [{"scenario": OWNED}]}, headers=auth(tokens["viewer"]))
    assert r.json["scenarios"][0]["ranked"][0]["price_per_mtok"]["value"] == \
        pytest.approx(0.72, rel=1e-12)


# ---- the workbooks ---------------------------------------------------------------------------

def test_the_decision_workbook_carries_the_market_quote(tmp_path):
    from openpyxl import load_workbook

    from costmodel.render.workbook.names import named_cells
    ctx = app.LocalContext()
    req = app.DecisionRequest([validate_quote({"market": SPLIT}, "quotes[0]")], [_spec()],
                              validate_demand(DEMAND))
    book = app.decision_workbook(ctx, req).content
    wb = load_workbook(io.BytesIO(book))
    sheet = wb["Decision"]
    header = next(r for r in sheet.iter_rows(values_only=True) if SPLIT in r)
    col = header.index(SPLIT)
    inputs = {n: named_cells(wb, n)[col - 3].value
              for n in ("option_tier1_input", "option_tier1_output", "option_cached_fraction")}
    # the entry's prices, as the quote's terms
    assert inputs == pytest.approx({"option_tier1_input": 0.5, "option_tier1_output": 2.0,
                                    "option_cached_fraction": 0.2}, rel=1e-12)
    vendor = next(r for r in sheet.iter_rows(values_only=True) if r[0] == "Vendor")
    assert vendor[col] == "Illustrative API"
    # read back unedited: the same decision, the price resolved again from the catalog
    again = app.reprice(book, ctx=ctx)
    assert again.changes == []
    (o,) = [p for p in again.decision.decision.ranked if p.option.name == SPLIT]
    assert o.charge.monthly == pytest.approx(640.0, rel=1e-12)
    assert o.option.flags[0] == FLAG
    # the price is the catalog's: an edited price is refused at its cell
    named_cells(wb, "option_tier1_input")[col - 3].value = 0.4
    wb.save(tmp_path / "edited.xlsx")
    with pytest.raises(InputError) as exc:
        app.reprice(tmp_path / "edited.xlsx", ctx=ctx)
    assert "a market price's prices are the catalog's" in exc.value.errors[0][1]


def test_the_quotes_workbook_cites_the_market_price(tmp_path):
    from openpyxl import load_workbook
    ranking = app.quotes_compare(app.LocalContext(), [validate_quote({"market": SPLIT},
                                                                     "quotes[0]")], [_spec()])
    wb = load_workbook(io.BytesIO(app.quotes_workbook(ranking).content))
    text = [str(c) for row in wb["Quotes"].iter_rows(values_only=True) for c in row if c]
    assert f"{SPLIT}: Illustrative API, per million tokens" in text
    assert any(f"{SPLIT_SOURCE} (version 2026-11)" in t for t in text)
    assert any(t.startswith(FLAG) for t in text)


def test_an_imported_openrouter_price_on_the_command_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    _cli("market", "import", SAMPLE, "--date", "2026-12-01", "--url", url)
    scenario, quotes = _files(tmp_path, "openrouter/deepseek.deepseek-r1")
    d = json.loads(_cli("quotes", "decide", quotes, "--scenario", scenario, "--json",
                        "--url", url).stdout)
    o = _option(d, "openrouter/deepseek.deepseek-r1")
    assert o["monthly_cost"]["value"] == pytest.approx(600.0, rel=1e-12)
    assert o["market_price"]["key"] == "openrouter/deepseek.deepseek-r1@2026-12-01"
    # the fixtures' catalog holds no OpenRouter prices: without --url, one line at the field
    r = _cli("quotes", "decide", quotes, "--scenario", scenario, code=2)
    assert "quote[0].market" in r.stderr and "unknown catalog entry" in r.stderr


def test_the_lock_in_treats_a_market_quote_as_any_quote():
    # no term of its own: the quote default, 12 months, locked at 0.80 USD/Mtok; the volume is
    # one accelerator's at the scenario's utilisation, 18 Mtok/h x 730 h = 13,140 Mtok a
    # month, so the 12-month term locks 0.80 x 13,140 x 12 = 126,144 USD (no cost of capital)
    quote = validate_quote({"market": SPLIT}, "quote")
    term = app.quotes_term(app.LocalContext(), app.TermRequest(
        quote, _spec(), terms=(12.0,), improvement=0.3))
    assert term.comparison.price_per_mtok == pytest.approx(0.80, rel=1e-12)
    assert term.comparison.volume == pytest.approx(13_140.0, rel=1e-12)
    (row,) = term.rows
    assert row.locked_pv == pytest.approx(126_144.0, rel=1e-12)
    assert row.premium > 0  # the public price falls 30 % a year; the locked one does not
    assert term.quote.market_price.key == SPLIT_KEY
