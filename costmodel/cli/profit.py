"""``costmodel profit FILE... [--market-price REF|PRICE] [--revenue-share F]``: each scenario
sold at a market's prices per million tokens, its revenue, cost and profit per
accelerator-hour (the use case is :func:`costmodel.app.profit`)."""
from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from .. import app
from ..app.profit import RULES
from ..decisions.market import MARKET_REF_PATTERN, PRICE_KINDS
from ..decisions.profit import PROFIT
from ..model.errors import InputError
from ..render.display import format_number, format_percent
from ..render.report import MARK, PAD, columns, wrap
from ..sources.key_lines import file_key_lines
from ..sources.market_file import market_table
from .common import (
    CONTEXT,
    check_xlsx,
    emit_json,
    fail,
    fail_input,
    service_database,
    specs_for,
    write_workbook,
)

__all__ = ["profit", "profit_text"]

SET_HELP = ('Override an input of every scenario: dotted.key=VALUE, e.g. '
            'utilisation=0.6. Repeatable.')
# the market's keys each option sets
_PRICES = {"price_input": "--price-input", "price_cached_input": "--price-cached-input",
           "price_output": "--price-output"}
_SHARES = {"revenue_share": "--revenue-share", "cached_share": "--cached-share"}
# what a market price option replaces of a file's market (its prices and their citation)
_REPLACED = ("catalog", "price", *_PRICES, "provider", "model", "date", "source", "note")


@click.command("profit")
@click.argument("files", nargs=-1, required=True)
@click.option("--market-price", metavar="REF|PRICE",
              help='The market price, replacing each FILE\'s [market] prices: a catalog entry '
                   '(<provider>/<offer>[@YYYY-MM], e.g. illustrative/reasoning-model-api; '
                   '`costmodel catalog market_price` lists them) or a blended price per '
                   'million tokens, e.g. "0.6 USD/Mtok".')
@click.option("--price-input", metavar="PRICE",
              help='Price per million input tokens, e.g. "0.5 USD/Mtok".')
@click.option("--price-cached-input", metavar="PRICE",
              help="Price per million input tokens served from the prefix cache (default: "
                   "the input price).")
@click.option("--price-output", metavar="PRICE",
              help='Price per million output tokens, e.g. "2 USD/Mtok".')
@click.option("--revenue-share", metavar="FRACTION",
              help='Share of revenue paid out of it (a model licence, a platform fee), from '
                   '0 to below 1, e.g. 0.2 or "20 %" (default 0).')
@click.option("--cached-share", metavar="FRACTION",
              help="Share of input tokens served from the prefix cache (default 0).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--workbook", metavar="OUT.xlsx",
              help="Also write a workbook of live formulas with a Profit sheet (each market "
                   "price an input cell).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@click.option("--url", metavar="DATABASE_URL",
              help="Price with the catalog of the service's database at this URL (where "
                   "`costmodel market import` puts market prices) instead of the fixtures'.")
def profit(files: tuple[str, ...], market_price: str | None, price_input: str | None,
           price_cached_input: str | None, price_output: str | None,
           revenue_share: str | None, cached_share: str | None, overrides: tuple[str, ...],
           workbook: str | None, as_json: bool, url: str | None) -> None:
    """Sell each scenario in FILES at a market price: revenue, the revenue share, cost and
    profit per accelerator-hour at the operating point and utilisation, per month and per
    GW-year of facility power, the margin, the break-even market price and tokens per dollar
    of cost. The market is each FILE's [market] table, the options over it."""
    check_xlsx(workbook, "--workbook")
    options = {"price_input": price_input, "price_cached_input": price_cached_input,
               "price_output": price_output, "revenue_share": revenue_share,
               "cached_share": cached_share}
    given = {k: v for k, v in options.items() if v is not None}
    markets, named = [], len(files) > 1
    for f in files:
        try:
            table = dict(market_table(f) or {})
        except InputError as exc:
            fail_input(exc)
        if market_price is not None:
            table = {k: v for k, v in table.items() if k not in _REPLACED}
            table["catalog" if re.fullmatch(MARKET_REF_PATTERN, market_price) else "price"] = \
                market_price
        table.update(given)
        if not any(k in table for k in ("catalog", "price", *_PRICES)):
            fail(f"{f}: no market price: give a [market] table in the file, or --market-price "
                 f"(a catalog entry or a price per million tokens)")
        sources = {k: v for k, v in _PRICES.items() if k in given}
        if market_price is not None and "price" in table:
            sources["price"] = "--market-price"
        markets.append(app.MarketSpec(table, subject=f if named else None,
                                      given_by=f"given in {Path(f).name} [market]",
                                      sources=sources))
    request = app.ProfitRequest(specs_for(files, overrides), markets)
    with ExitStack() as stack:
        ctx = CONTEXT
        if url is not None:  # the service's catalog (imported market prices among it)
            from ..app.market_import import StoredCatalogContext
            ctx = StoredCatalogContext(stack.enter_context(service_database(url)))
        try:
            answer = app.profit(ctx, request)
            book = app.profit_workbook(ctx, request) if workbook else None
        except InputError as exc:
            _fail_market(exc, files, given, market_price)
    if as_json:
        emit_json(answer.to_json())
    else:
        click.echo(profit_text(answer))
    if book is not None:
        write_workbook(workbook, book)
        if not as_json:
            click.echo(f"workbook written to {workbook}")


def _fail_market(exc: InputError, files: tuple[str, ...], given: dict[str, Any],
                 market_price: str | None):
    """An error as one line: a market key set by an option named by the option, one written
    in a file at its line."""
    options = {f"market.{k}": o for k, o in {**_PRICES, **_SHARES}.items() if k in given}
    if market_price is not None:  # the file's prices were replaced: the options say them
        options.update({"market.catalog": "--market-price", "market.price": "--market-price",
                        **{f"market.{k}": o for k, o in _PRICES.items()}})
    about = exc.subject or (files[0] if len(files) == 1 else None)
    market = [p for p, _ in exc.errors if p == "market" or p.startswith("market.")]
    if market and about is not None and not exc.places:
        lines = file_key_lines(about)
        exc.placed({p: lines[p] for p in market if p not in options and p in lines}, about)
    fail_input(exc, options)


# ---- the text ---------------------------------------------------------------------------------

def _shown(s: app.SystemProfit, name: str) -> str:
    """A figure of the profit's as the answer shows it, rounded by its name and USD unit
    (the display rules: money an hour, a month, per million tokens...)."""
    value, _ = s.shown(name)
    return format_number(value, _UNIT[name], name)


_UNIT = {**{n: st.unit for n, st in PROFIT.steps.items()},
         **{n: i.unit for n, i in PROFIT.inputs.items()}}


def _millions(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.1f}"


def profit_text(answer: app.ProfitAnswer) -> str:
    """One column a system: the market prices, revenue, revenue share, cost and profit an
    accelerator-hour, the margin, a month, a GW-year, the break-even price and tokens per
    dollar; then each market's prices, date and source, and the rules."""
    systems = answer.systems
    currency = {s.currency for s in systems}
    money = currency.pop() if len(currency) == 1 else "(each system's currency)"
    rows: list[list[str]] = [["", *(s.name for s in systems), ""]]

    def row(label: str, cells: list[str], unit: str, mark: bool = False) -> None:
        rows.append([(MARK if mark else PAD) + label, *cells, unit])

    def figure(name: str) -> list[str]:
        return [_shown(s, name) for s in systems]

    for k, words in zip(PRICE_KINDS, ("input", "cached input", "output"), strict=True):
        row(f"Market price, {words}", figure(f"market_price_{k}"),
            f"{money} per million {words} tokens")
    row("Market price, either kind", figure("market_price_per_mtok"),
        f"{money} per million tokens (the workload's mix)")
    row("Revenue share", [format_percent(s.market.revenue_share) for s in systems],
        "of revenue")
    row("Utilisation", [format_percent(s.priced.result.scenario.utilisation)
                        for s in systems], "of hours serving")
    rows.append([""] * (len(systems) + 2))
    row("Revenue", figure("revenue_per_hour"), f"{money} per accelerator-hour")
    row("  revenue share paid", figure("revenue_share_per_hour"), "")
    row("Revenue kept", figure("net_revenue_per_hour"), "")
    row("Cost, every hour", [format_number(s.priced.result.shown("cost_per_hour")[0], "USD/h",
                                           "cost_per_hour") for s in systems],
        "served or idle")
    row("Profit", figure("profit_per_hour"), f"{money} per accelerator-hour", True)
    row("Margin on revenue", [format_percent(s.value("profit_margin")) for s in systems], "")
    row("Profit per month", figure("profit_per_month"), f"{money} per accelerator (730 h)")
    row("Profit per GW-year", [_millions(s.shown("profit_per_gw_year")[0]) for s in systems],
        f"million {money} per GW of facility power")
    row("Break-even market price", figure("break_even_price"),
        f"{money} per million tokens (either kind)", True)
    row("  at", [format_percent(s.value("break_even_factor")) for s in systems],
        "of every market price")
    kinds = sorted({s.priced.result.scenario.operating_point.token_kind for s in systems})
    row("Tokens per dollar of cost", figure("tokens_per_usd"),
        f"{', '.join(kinds)} tokens per {money} of cost")
    out = ["Profit at market prices, per accelerator", "",
           *columns(rows, set(range(1, len(systems) + 1)))]
    out += ["", f"{MARK}Most profitable per accelerator-hour: {answer.most_profitable}"]
    for s in systems:
        m = s.market
        out += ["", s.name]
        out += wrap(f"market: {m.label}" + (f" (catalog entry {m.key})" if m.key else ""),
                    "  ", "    ")
        if m.basis == "blended":
            prices = f"a blended price ({m.sources.get('input')})"
        else:
            prices = "; ".join(f"{k.replace('_', ' ')}: {m.sources.get(k)}" for k in PRICE_KINDS)
        out += wrap(f"prices: {prices}", "  ", "    ")
        if m.source:
            out += wrap(f"source: {m.source}", "  ", "    ")
        if m.note:
            out += wrap(f"note: {m.note}", "  ", "    ")
        out += wrap(f"revenue share {format_percent(m.revenue_share)}, cached share "
                    f"{format_percent(m.cached_share)}, utilisation "
                    f"{format_percent(s.priced.result.scenario.utilisation)}", "  ", "    ")
        if m.converted:
            out += wrap(f"converted from {', '.join(m.converted)} at the scenario's stated "
                        f"rates", "  ", "    ")
        for rule in m.ruled:
            out += wrap(f"rule: {rule}", "  ", "    ")
    out += ["", "Rules"]
    for rule in RULES:
        out += wrap(rule, "  - ", "    ")
    return "\n".join(out)
