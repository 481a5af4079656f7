"""Quotes against our own cost: prices per million tokens, implied margin, break-even
utilisation, totals and present values over the term, and what a term costs against waiting.
Expected numbers are hand arithmetic on the quotes' and scenarios' own inputs."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import PUBLISHED, ROOT, price_data, price_file

from costmodel.cli import main
from costmodel.decisions.quotes import (
    NO_POINT,
    compare_quote,
    present_value,
    rank,
    term_table,
    validate_quote,
)
from costmodel.model.inputs import InputError
from costmodel.render.display import format_number, format_percent
from costmodel.sources.quote_file import read_quotes

QUOTES = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
GB300 = PUBLISHED / "deepseek-r1_gb300_matched.toml"
JALAPENO = PUBLISHED / "deepseek-r1_jalapeno_matched.toml"

TOKENS_QUOTE = {"name": "t", "vendor": "V", "form": "per_mtok",
                "price_input": "0.55 USD/Mtok", "price_output": "2.19 USD/Mtok",
                "term": "12 month", "volume": "20000 Mtok/month",
                "operating_point": {"interactivity": "169 token/s/user", "isl": 8192,
                                    "osl": 1024, "model": "DeepSeek R1"}}


def monthly_rate(annual: float) -> float:
    return (1 + annual) ** (1 / 12) - 1


def pv_by_sum(monthly: float, months: int, annual: float) -> float:
    """Present value by adding the discounted payments one by one."""
    i = monthly_rate(annual)
    return sum(monthly / (1 + i) ** (t + 1) for t in range(months))


def test_per_mtok_quote_blends_input_and_output_over_the_request():
    own = price_file(GB300)
    c = compare_quote(validate_quote(TOKENS_QUOTE), own)
    # a request is 8,192 input + 1,024 output tokens; mixed tokens count all 9,216
    price = (8192 * 0.55 + 1024 * 2.19) / 9216
    assert c.price_per_mtok == pytest.approx(price, rel=1e-12)
    assert round(price, 4) == 0.7322
    assert c.implied_margin == pytest.approx(1 - own.values["cost_per_mtok_total"] / price)
    assert c.quote_total == pytest.approx(price * 20000 * 12, rel=1e-12)
    assert c.own_total == pytest.approx(own.values["cost_per_mtok_total"] * 20000 * 12)
    # the scenario's cost of capital is the default 10 %/year
    assert c.quote_pv == pytest.approx(pv_by_sum(price * 20000, 12, 0.10), rel=1e-12)
    assert c.flags == []  # 169 token/s/user in writing, as the scenario runs


def test_output_priced_tokens_count_only_the_output():
    own = price_data({"accelerator": "gb300", "operating_point": {
        "throughput": "1000 token/s", "token_kind": "output", "interactivity": "50 token/s/user"}})
    q = validate_quote({**TOKENS_QUOTE, "operating_point": {"interactivity": "50 token/s/user",
                                                            "isl": 1000, "osl": 500}})
    # per output token the request's whole price: (1,000 x 0.55 + 500 x 2.19) / 500
    assert compare_quote(q, own).price_per_mtok == pytest.approx((550 + 1095) / 500)


def test_capacity_quotes_use_our_throughput_at_the_operating_point():
    own = price_file(GB300)
    quotes = {q.name: q for q in read_quotes(QUOTES)}
    b = compare_quote(quotes["vendor-b-reserved"], own)
    # 14,000 USD a month for 8 accelerators of 730 h: 2.3973 USD per accelerator-hour;
    # GB300 at 169 token/s/user: 118 token/s/kW x 1.4 kW = 165.2 token/s, every hour
    hourly = 14000 / 8 / 730
    tokens_per_hour = 118 * 1.4 * 3600
    assert b.price_per_mtok == pytest.approx(hourly / tokens_per_hour * 1e6, rel=1e-12)
    assert round(b.price_per_mtok, 3) == 4.031
    assert b.volume == pytest.approx(tokens_per_hour * 730 * 8 / 1e6, rel=1e-12)
    assert b.quote_total == pytest.approx(14000 * 24)
    assert b.quote_pv == pytest.approx(pv_by_sum(14000, 24, 0.10), rel=1e-12)
    assert b.break_even_utilisation is None  # paid by the hour: no break-even utilisation
    c = compare_quote(quotes["vendor-c-no-point"], own)
    assert c.price_per_mtok == pytest.approx(2.40 / tokens_per_hour * 1e6, rel=1e-12)
    assert c.quote_total == pytest.approx(2.40 * 730 * 8 * 36)
    assert NO_POINT in c.flags


def test_break_even_utilisation_prices_our_cost_at_the_quote():
    own = price_file(JALAPENO)
    c = compare_quote(validate_quote(TOKENS_QUOTE), own)
    u = c.break_even_utilisation
    assert 0 < u < 1
    # independently: the engine run at that utilisation costs exactly the quoted price
    at_u = price_file(JALAPENO, [f"utilisation={u!r}"])
    assert at_u.values["cost_per_mtok_total"] == pytest.approx(c.price_per_mtok, rel=1e-9)
    # above it owning is cheaper, below it the quote is
    assert price_file(JALAPENO, [f"utilisation={u * 1.1!r}"]).values[
        "cost_per_mtok_total"] < c.price_per_mtok


def test_no_break_even_when_our_cost_never_reaches_the_quote():
    c = compare_quote(validate_quote(TOKENS_QUOTE), price_file(GB300))
    assert c.break_even_utilisation is None  # GB300 at 169 token/s/user: 4.10 > 0.73 USD/Mtok


def test_commitment_is_take_or_pay():
    q = validate_quote({**TOKENS_QUOTE, "volume": "1000 Mtok/month",
                        "commitment": "100000 USD"})
    c = compare_quote(q, price_file(GB300))
    assert c.quote_total == 100000  # usage would be 0.7322 x 1,000 x 12 = 8,787 USD
    assert c.quote_pv == pytest.approx(pv_by_sum(100000 / 12, 12, 0.10), rel=1e-12)
    assert any("take-or-pay" in f for f in c.flags)


def test_flags_for_operating_points_and_models():
    own = price_file(GB300)
    other = validate_quote({**TOKENS_QUOTE, "operating_point": {
        "interactivity": "100 token/s/user", "model": "Kimi K2.5"}})
    flags = compare_quote(other, own).flags
    assert any("operating points differ" in f and "100" in f and "169" in f for f in flags)
    assert any("models differ" in f for f in flags)
    bare = validate_quote({k: v for k, v in TOKENS_QUOTE.items() if k != "operating_point"})
    assert NO_POINT in compare_quote(bare, own).flags


def test_rank_is_cheapest_first_and_flags_break_ties():
    own = price_file(GB300)
    a = compare_quote(validate_quote(TOKENS_QUOTE), own)
    same = {k: v for k, v in TOKENS_QUOTE.items() if k != "operating_point"}
    b = compare_quote(validate_quote({**same, "name": "b"}), own)
    dear = compare_quote(validate_quote({**TOKENS_QUOTE, "name": "c",
                                         "price_output": "3 USD/Mtok"}), own)
    assert [c.quote.name for c in rank([dear, b, a])] == ["t", "b", "c"]


def test_present_value_closed_form():
    assert present_value(1000, 24, 0.10) == pytest.approx(pv_by_sum(1000, 24, 0.10), rel=1e-12)
    assert present_value(1000, 24, 0.0) == 24000


def test_term_table_with_a_yearly_improvement():
    rows, longest = term_table(1.0, 100.0, 0.0, [6, 12, 24], yearly_improvement=0.30,
                               tolerance=0.10)
    q = 0.7 ** (1 / 12)  # the market price falls by this factor every month
    for row, n in zip(rows, (6, 12, 24), strict=True):
        flexible = 100 * (1 - q ** n) / (1 - q)  # geometric sum
        assert row.locked_pv == pytest.approx(100 * n)
        assert row.flexible_pv == pytest.approx(flexible, rel=1e-12)
        assert row.premium_share == pytest.approx(100 * n / flexible - 1, rel=1e-12)
    # 6 months: 600 / 557.7 - 1 = 7.6 %; 12: 1,200 / 1,024.6 - 1 = 17.1 %;
    # 24: 2,400 / 1,741.8 - 1 = 37.8 %
    assert [round(r.premium_share, 3) for r in rows] == [0.076, 0.171, 0.378]
    assert [r.within_tolerance for r in rows] == [True, False, False]
    assert longest == 6


def test_term_table_with_a_successor():
    # the market price halves when the successor arrives at month 12
    rows, longest = term_table(1.0, 100.0, 0.0, [6, 12, 18, 24], successor_price=0.5,
                               successor_month=12, tolerance=0.10)
    locked = [600, 1200, 1800, 2400]
    flexible = [600, 1200, 1200 + 300, 1200 + 600]
    assert [r.locked_pv for r in rows] == pytest.approx(locked)
    assert [r.flexible_pv for r in rows] == pytest.approx(flexible)
    assert rows[3].premium == pytest.approx(600) and rows[3].premium_share == pytest.approx(1 / 3)
    assert longest == 12


def test_term_table_needs_a_market():
    with pytest.raises(ValueError, match="yearly improvement or a successor"):
        term_table(1.0, 1.0, 0.0, [12])


@pytest.mark.parametrize("change,path,fragment", [
    ({"form": "per_minute"}, "quote.form", "input should be"),
    ({"price_output": None}, "quote.price_output", "required for form per_mtok"),
    ({"price_input": "0.55 USD/kWh"}, "quote.price_input", "expected units like 'USD/Mtok'"),
    ({"term": "0 month"}, "quote.term", "greater than zero"),
    ({"volume": "-5 Mtok/month"}, "quote.volume", "negative"),
    ({"discount": 0.1}, "quote.discount", "unknown key"),
])
def test_bad_quotes_name_the_field(change, path, fragment):
    data = {k: v for k, v in {**TOKENS_QUOTE, **change}.items() if v is not None}
    with pytest.raises(InputError) as info:
        validate_quote(data)
    assert info.value.errors[0][0] == path and fragment in info.value.errors[0][1]


def test_cli_compare_ranks_quotes_and_writes_a_workbook(tmp_path):
    out = tmp_path / "quotes.xlsx"
    r = CliRunner().invoke(main, ["quotes", "compare", str(QUOTES), "--scenario", str(GB300),
                                  "--scenario", str(JALAPENO), "--json", "--workbook", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout.split("\nworkbook written")[0])
    gb300, jalapeno = d["scenarios"]
    assert gb300["ranked"][0]["quote"] == "vendor-a-tokens"  # 0.73 < 4.03
    # against Jalapeño the capacity quotes are cheapest per token: Jalapeño's throughput
    assert [c["quote"] for c in jalapeno["ranked"]][-1] == "vendor-a-tokens"
    assert gb300["ranked"][0]["price_per_mtok"] == {
        "value": pytest.approx((8192 * 0.55 + 1024 * 2.19) / 9216), "unit": "USD/Mtok"}
    assert out.exists()
    from openpyxl import load_workbook
    wb = load_workbook(out)
    assert "Quotes" in wb.sheetnames
    # each quote's margin is live: 1 - our cost / the quoted price, in system 1's column
    # (text where the price is 0: a free offer has no margin)
    margins = [row[3].value for row in wb["Quotes"].iter_rows()
               if row[0].value == "Implied margin on our cost"]
    assert len(margins) == 3 and all(re.fullmatch(r'=IF\(D(\d+)=0,"[^"]+",1-D\d+/D\1\)', m)
                                     for m in margins)


def test_cli_compare_text_reads_as_money_and_percentages():
    args = ["quotes", "compare", str(QUOTES), "--scenario", str(GB300), "--scenario",
            str(JALAPENO)]
    text = CliRunner().invoke(main, args).stdout
    d = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert max(len(x) for x in text.splitlines()) <= 120
    # the cheapest quote against GB300 (first, not marked: no demand, no recommendation):
    # price and own cost by the display rules, the implied margin 1 - 4.10 / 0.73 as a
    # percentage, present values in whole dollars
    c = d["scenarios"][0]["ranked"][0]
    row = next(x for x in text.splitlines() if x.lstrip().startswith("1 "))
    assert row.split() == [
        "1", "vendor-a-tokens", "per", "token",
        format_number(c["price_per_mtok"]["value"], "USD/Mtok"),
        format_number(c["own_cost_per_mtok"]["value"], "USD/Mtok"),
        format_percent(c["implied_margin"]), "none", "up", "to", "100%", "12",
        f"{c['quote_total']['value']:,.0f}", f"{c['quote_pv']['value']:,.0f}",
        f"{c['saving_pv']['value']:,.0f}"]
    assert format_percent(c["implied_margin"]) == "-459.9%"
    assert "20,000 million tokens per month (as quoted)" in text


def test_cli_term_text():
    args = ["quotes", "term", str(QUOTES), "--quote", "vendor-b-reserved", "--scenario",
            str(GB300), "--improvement", "30 %", "--terms", "6,12,24"]
    text = CliRunner().invoke(main, args).stdout
    d = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert "flexible buyer: market price falls 30.0% a year" in text
    rows = [x.split() for x in text.splitlines() if x.split()[:1] in (["6"], ["12"], ["24"])]
    for row, t in zip(rows, d["terms"], strict=True):
        assert row == [f"{t['term']['value']:.0f}", f"{t['locked_pv']['value']:,.0f}",
                       f"{t['flexible_pv']['value']:,.0f}", f"{t['premium']['value']:,.0f}",
                       format_percent(t["premium_share"]),
                       "yes" if t["within_tolerance"] else "no"]
    longest = d["longest_term_within_tolerance"]["value"]
    assert f"=> longest term within 10.0% of staying flexible: {longest:.0f} months" in text


def test_cli_term(tmp_path):
    r = CliRunner().invoke(main, ["quotes", "term", str(QUOTES), "--quote", "vendor-b-reserved",
                                  "--scenario", str(GB300), "--improvement", "30 %",
                                  "--terms", "6,12,24", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [t["term"]["value"] for t in d["terms"]] == [6, 12, 24]
    assert d["terms"][0]["locked_pv"]["value"] < d["terms"][2]["locked_pv"]["value"]
    r = CliRunner().invoke(main, ["quotes", "term", str(QUOTES), "--quote", "nope",
                                  "--scenario", str(GB300), "--improvement", "30 %"])
    assert r.exit_code == 2 and "no quote named 'nope'" in r.stderr
    r = CliRunner().invoke(main, ["quotes", "term", str(QUOTES), "--quote", "vendor-b-reserved",
                                  "--scenario", str(GB300)])
    assert r.exit_code == 2 and "--improvement" in r.stderr


def test_months_until_a_date_or_a_duration():
    from datetime import date

    from costmodel.decisions.quotes import months_until
    from costmodel.model.units import UnitInputError
    assert months_until("18 month", date(2026, 11, 20)) == 18
    assert months_until("1.5 year", date(2026, 11, 20)) == pytest.approx(18)
    # 365 days later is 12 months (a month is 365/12 days)
    assert months_until("2027-11-20", date(2026, 11, 20)) == pytest.approx(12)
    with pytest.raises(UnitInputError, match="before"):
        months_until("2026-01", date(2026, 11, 20))
    with pytest.raises(UnitInputError, match="not a date"):
        months_until("2026-13", date(2026, 11, 20))


def test_an_empty_tier_list_is_refused_at_its_path():
    # [] is neither tiers (none to price with) nor their absence: the schema and the reader
    # agree (schemathesis found the gap: the document took it, the reader asked for prices)
    bare = {k: v for k, v in TOKENS_QUOTE.items() if k not in ("price_input", "price_output")}
    with pytest.raises(InputError) as exc:
        validate_quote({**bare, "tiers": []})
    assert [p for p, _ in exc.value.errors] == ["quote.tiers"]
    assert "at least 1" in exc.value.errors[0][1]


# ---- a free offer (a trial, a credit): priced at 0, its margin not defined -------------------

FREE = [{"name": "free-tokens", "vendor": "Trial", "form": "per_mtok",
         "price_input": "0 USD/Mtok", "price_output": "0 USD/Mtok", "term": "12 month",
         "volume": "20000 Mtok/month"},
        {"name": "free-reserved", "vendor": "Credit", "form": "reserved_monthly",
         "monthly_price": "0 USD/month", "accelerators": 8, "term": "24 month"},
        {"name": "free-hours", "vendor": "Credit", "form": "per_accelerator_hour",
         "hourly_price": "0 USD/h", "accelerators": 8, "term": "36 month"}]


@pytest.mark.parametrize("data", FREE, ids=[q["name"] for q in FREE])
def test_a_free_offer_is_priced_with_its_margin_not_defined(data):
    from costmodel.decisions.quotes import FREE_OFFER
    own = price_file(GB300)
    c = compare_quote(validate_quote(data), own)
    cost = own.values["cost_per_mtok_total"]
    assert c.price_per_mtok == 0
    assert c.implied_margin is None and c.margin_note == FREE_OFFER
    assert c.own_cost_per_mtok == cost
    assert c.break_even_utilisation is None  # our cost never falls to 0
    # nothing is paid for the quote; owning costs our cost per Mtok x the volume
    volume = 20000 if data["form"] == "per_mtok" else 118 * 1.4 * 3600 * 730 * 8 / 1e6
    months = float(data["term"].split()[0])
    assert c.volume == pytest.approx(volume, rel=1e-12)
    assert c.quote_total == 0 and c.quote_pv == 0
    assert c.own_total == pytest.approx(cost * volume * months, rel=1e-12)
    assert c.saving_pv == pytest.approx(pv_by_sum(cost * volume, int(months), 0.10), rel=1e-12)
    j = c.to_json()
    assert j["implied_margin"] is None and j["implied_margin_note"] == FREE_OFFER
    assert compare_quote(validate_quote(TOKENS_QUOTE), own).to_json()[
        "implied_margin_note"] is None


def test_a_free_offer_ranks_first():
    own = price_file(GB300)
    paid = [compare_quote(q, own) for q in read_quotes(QUOTES)]
    free = compare_quote(validate_quote(FREE[1]), own)
    assert rank([*paid, free])[0].quote.name == "free-reserved"


@pytest.mark.parametrize("field", ["price_input", "monthly_price", "hourly_price"])
def test_a_negative_price_is_still_refused(field):
    data = next(q for q in FREE if field in q)
    with pytest.raises(InputError) as info:
        validate_quote({**data, field: "-1 " + data[field].split()[1]})
    assert info.value.errors[0][0] == f"quote.{field}"


def test_locking_in_a_free_price_costs_nothing_more_than_staying_flexible():
    # locked at 0 USD/Mtok, the flexible buyer pays 0 x (1 - g)^(t/12) = 0 too: no premium,
    # a share of 0 (not 0 / 0), every term within the tolerance
    rows, longest = term_table(0.0, 100.0, 0.10, [6, 12, 24], yearly_improvement=0.3)
    assert [(r.locked_pv, r.flexible_pv, r.premium, r.premium_share, r.within_tolerance)
            for r in rows] == [(0, 0, 0, 0.0, True)] * 3
    assert longest == 24
    # a paid price against a free successor from month 0: a premium over a flexible 0 has
    # no share (not infinity) and is not within the tolerance
    rows, longest = term_table(1.0, 100.0, 0.0, [6], successor_price=0.0, successor_month=0)
    assert rows[0].premium == pytest.approx(600) and rows[0].flexible_pv == 0
    assert rows[0].premium_share is None and not rows[0].within_tolerance
    assert longest is None


def test_cli_prices_a_free_offer(tmp_path):
    f = tmp_path / "free.toml"
    f.write_text("\n".join("[[quote]]\n" + "".join(f"{k} = {json.dumps(v)}\n"
                                                  for k, v in q.items()) for q in FREE))
    args = ["quotes", "compare", str(f), "--scenario", str(GB300)]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    ranked = json.loads(r.stdout)["scenarios"][0]["ranked"]
    assert [c["quote"] for c in ranked[:3]] == ["free-tokens", "free-reserved", "free-hours"]
    assert all(c["implied_margin"] is None for c in ranked)
    text = CliRunner().invoke(main, args).stdout
    row = next(x for x in text.splitlines() if x.lstrip().startswith("1 "))
    cost = format_number(ranked[0]["own_cost_per_mtok"]["value"], "USD/Mtok")
    assert row.split()[:9] == ["1", "free-tokens", "per", "token", "0", cost, "not",
                               "defined", "(free"]
    assert "note: implied margin not defined (free offer)" in text
    r = CliRunner().invoke(main, ["quotes", "term", str(f), "--quote", "free-reserved",
                                  "--scenario", str(GB300), "--improvement", "30 %",
                                  "--terms", "6,12", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [t["premium_share"] for t in d["terms"]] == [0.0, 0.0]
    assert d["longest_term_within_tolerance"]["value"] == 12


def test_the_quotes_workbook_margin_of_a_free_offer_is_text_not_a_division(tmp_path):
    from conftest import workbook_systems
    from openpyxl import load_workbook

    from costmodel.render.workbook.export import build_workbook, save_workbook
    from costmodel.render.workbook.quotes_sheet import FREE_OFFER
    systems, _ = workbook_systems([GB300])
    rows = [(q, [compare_quote(q, s.result) for s in systems])
            for q in map(validate_quote, FREE)]
    path = save_workbook(build_workbook(systems, quotes=rows), tmp_path / "free.xlsx")
    formulas = load_workbook(path)["Quotes"]
    cached = load_workbook(path, data_only=True)["Quotes"]
    margins = [(r[3].value, cached.cell(r[3].row, 4).value) for r in formulas.iter_rows()
               if r[0].value == "Implied margin on our cost"]
    assert len(margins) == 3
    for formula, value in margins:
        assert re.fullmatch(rf'=IF\(D(\d+)=0,"{re.escape(FREE_OFFER)}",1-D\d+/D\1\)', formula)
        assert value == FREE_OFFER
