"""The Quotes sheet: each quote's terms (inputs) and, per system, live formulas for what the
engine computes in :func:`costmodel.decisions.quotes.compare_quote`: the price per million tokens
at the
operating point, the margin it implies on our cost, the break-even utilisation, the volume,
the totals over the term, their present values and the saving.

Conventions as the engine's: a month is hours_per_year / months_per_year hours; payments fall
at the end of each month, discounted at the monthly rate equivalent to the annual cost of
capital, (1 + r)^(1/12) - 1; a commitment (take-or-pay) sets the total when it exceeds the
use priced. Every formula's value is cached (the engine's), and the Sheet recomputes it when a
quote term or an input changes.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...decisions.quotes import HOURS_PER_MONTH
from ...model.units import MONTHS_PER_YEAR
from ..display import FREE_MARGIN, NO_BREAK_EVEN, display_unit, excel_format
from .layout import FIRST_COL, WorkbookSystem, system_header, system_ref, system_width
from .sheet import Sheet, cell_ref, col_name

__all__ = ["write_quotes", "LABELS"]

LABELS = {
    "price_input": "Price per million input tokens",
    "price_output": "Price per million output tokens",
    "hourly": "Price per accelerator-hour",
    "monthly_price": "Price per month",
    "accelerators": "Accelerators",
    "term": "Term",
    "commitment": "Minimum spend over the term (take-or-pay)",
    "isl": "Input tokens per request (ISL)",
    "osl": "Output tokens per request (OSL)",
    "volume": "Volume",
    "counted": "Tokens counted per request",
    "price": "Quoted price per million tokens",
    "cost": "Our cost per million tokens",
    "margin": "Implied margin on our cost",
    "headroom": "Quoted revenue per hour at full load, less its variable energy",
    "break_even": "Break-even utilisation",
    "monthly": "Quoted payment per month",
    "quote_total": "Quote, nominal over the term",
    "own_total": "Our cost, nominal over the term",
    "rate": "Monthly discount rate",
    "quote_pv": "Quote, present value at the discount rate",
    "own_pv": "Our cost, present value at the discount rate",
    "saving_pv": "Saving of buying the quote, present value at the discount rate",
    "flags": "Flags",
}
UNITS = {"price_input": "USD/Mtok", "price_output": "USD/Mtok", "hourly": "USD/h",
         "monthly_price": "USD/month", "accelerators": "dimensionless", "term": "month",
         "commitment": "USD", "isl": "token", "osl": "token", "volume": "Mtok/month",
         "counted": "token", "price": "USD/Mtok", "cost": "USD/Mtok",
         "margin": "dimensionless", "headroom": "USD/h", "break_even": "dimensionless",
         "monthly": "USD/month", "quote_total": "USD", "own_total": "USD",
         "rate": "dimensionless", "quote_pv": "USD", "own_pv": "USD", "saving_pv": "USD"}
_NAMES = {"margin": "implied_margin", "break_even": "break_even_utilisation",
          "rate": "monthly_discount_rate", "accelerators": "node_accelerators"}  # a count
NOT_REACHED = NO_BREAK_EVEN  # the words every face says (costmodel.render.display)
FREE_OFFER = FREE_MARGIN  # the margin of a quote priced at 0
_HOURS_PER_MONTH = "(hours_per_year/months_per_year)"


def _fmt(key: str) -> str:
    return excel_format(_NAMES.get(key, key), UNITS[key])


def _unit(key: str) -> str:
    return display_unit(_NAMES.get(key, key), UNITS[key])


def write_quotes(ws: Sheet, systems: Sequence[WorkbookSystem],
                 quotes: Sequence[tuple[Any, Sequence[Any]]]) -> None:
    n = len(systems)
    ws.text(1, 1, "Quotes: each quote against our own cost at its operating point, over its "
                  "term", "title")
    # a free offer's margin is text: its column holds it whole when printed
    free = any(c.implied_margin is None for _, comparisons in quotes for c in comparisons)
    least = len(FREE_OFFER) + 3 if free else 18
    ws.set_widths({1: 44, 2: 14, 3: 12, **{FIRST_COL + i: system_width(systems, least=least)
                                          for i in range(n)}})
    last_col = FIRST_COL + n - 1
    ws.paragraph(2, "Blue cells are the quote's terms; every figure is a live formula over them "
                    "and the Inputs. Implied margin = 1 - our cost / the quote's price "
                    "(not defined for a free offer, priced at 0).",
                 last_col)
    ws.paragraph(3, "Present values at each system's cost of capital, payments at the end of "
                    "each month; a minimum spend sets the total when it exceeds the use.",
                 last_col)
    row = 5
    for quote, comparisons in quotes:
        last = _block(ws, row, systems, quote, comparisons)
        ws.keep_together(row, last)  # a quote on one printed page
        row = last + 2
    ws.ws.freeze_panes(4, FIRST_COL - 1)  # the name and unit columns


def _block(ws: Sheet, row: int, systems: Sequence[WorkbookSystem], quote: Any,
           comparisons: Sequence[Any]) -> int:
    """One quote's rows from ``row``; returns its last row."""
    n = len(systems)
    form = {"per_mtok": "per million tokens", "per_accelerator_hour": "per accelerator-hour",
            "reserved_monthly": "reserved by the month"}[quote.form]
    ws.text(row, 1, f"{quote.name}: {quote.vendor}, {form}", "section")
    ws.paragraph(row + 1, "; ".join(x for x in [quote.date and f"dated {quote.date}",
                                                quote.source, comparisons[0].volume_basis
                                                and f"volume: {comparisons[0].volume_basis}"]
                                    if x), FIRST_COL + n - 1)
    ws.header(row + 2, system_header(systems, ["quote " + quote.name, "as quoted", "unit"]))
    rows: dict[str, int] = {}
    r = row + 2

    def line(key: str, quoted: Any = None, *, quoted_input: bool = True) -> int:
        nonlocal r
        r += 1
        rows[key] = r
        ws.text(r, 1, LABELS[key])
        ws.text(r, 3, _unit(key))
        if quoted_input:
            ws.number(r, 2, quoted, "input", _fmt(key))
        return r

    def b(key: str) -> str:  # the quoted term's cell
        return cell_ref(rows[key], 2, absolute=True)

    def at(key: str, i: int) -> str:  # system i's cell of a row
        return f"{col_name(FIRST_COL + i)}{rows[key]}"

    def per_system(key: str, formula: Callable[[int], str], value: Callable[[int], Any],
                   style: str = "calc") -> None:
        for i in range(n):
            ws.formula(rows[key], FIRST_COL + i, formula(i), value(i), style, _fmt(key))

    ref = lambda name, i: system_ref(name, i, n)  # noqa: E731
    accelerators = quote.accelerators or 1
    # the quote's terms
    if quote.form == "per_mtok":
        line("price_input", quote.base_prices[0])
        line("price_output", quote.base_prices[1])
    elif quote.form == "per_accelerator_hour":
        line("hourly", quote.hourly_price)
    else:
        line("monthly_price", quote.monthly_price)
    if quote.form != "per_mtok" or quote.volume is None:
        line("accelerators", accelerators)
    line("term", quote.term)
    line("commitment", quote.commitment)
    line("volume", quote.volume)
    # the request shape the quote states, else each scenario's
    op = quote.operating_point
    shapes = {}
    for key, attr in (("isl", "isl"), ("osl", "osl")):
        stated = getattr(op, attr) if op is not None else None
        line(key, stated)
        shapes[key] = [stated if stated is not None else
                       getattr(s.result.scenario.workload, attr) for s in systems]
        per_system(key, (lambda i, k=key, st=stated: f"={b(k)}" if st is not None else
                         f"={ref('workload_' + k, i)}"),
                   lambda i, k=key: shapes[k][i])
    # per system
    if quote.form == "per_mtok":
        line("counted", quoted_input=False)
        kinds = [c.token_kind for c in comparisons]

        def counted(i: int) -> float:
            isl, osl = shapes["isl"][i], shapes["osl"][i]
            return {"mixed": isl + osl, "output": osl, "input": isl}[kinds[i]]

        kind = lambda i: ref("operating_point_token_kind", i)  # noqa: E731
        per_system("counted", lambda i: (
            f'=IF({kind(i)}="mixed",{at("isl", i)}+{at("osl", i)},'
            f'IF({kind(i)}="output",{at("osl", i)},{at("isl", i)}))'), counted)
        line("price", quoted_input=False)
        per_system("price", lambda i: (f"=({b('price_input')}*{at('isl', i)}+"
                                       f"{b('price_output')}*{at('osl', i)})/"
                                       f"{at('counted', i)}"),
                   lambda i: comparisons[i].price_per_mtok, "result")
    else:
        hourly = (f"{b('hourly')}" if quote.form == "per_accelerator_hour" else
                  f"{b('monthly_price')}/{b('accelerators')}/{_HOURS_PER_MONTH}")
        line("price", quoted_input=False)
        per_system("price", lambda i: (f"={hourly}/{ref('tokens_per_hour', i)}"
                                       f"*tokens_per_mtok"),
                   lambda i: comparisons[i].price_per_mtok, "result")
    line("cost", quoted_input=False)
    per_system("cost", lambda i: f"={ref('cost_per_mtok_total', i)}",
               lambda i: comparisons[i].own_cost_per_mtok)
    line("margin", quoted_input=False)
    per_system("margin", lambda i: (f'=IF({at("price", i)}=0,"{FREE_OFFER}",'
                                    f'1-{at("cost", i)}/{at("price", i)})'),
               lambda i: (FREE_OFFER if comparisons[i].implied_margin is None
                          else comparisons[i].implied_margin), "result")
    if quote.form == "per_mtok":
        _break_even(ws, line, per_system, at, ref, systems, comparisons)
    volume_row = rows["volume"]
    for i, c in enumerate(comparisons):  # each system's volume beside the quoted one
        formula = (f"={b('volume')}" if quote.volume is not None else
                   f"={ref('tokens_per_hour', i)}*{_HOURS_PER_MONTH}/tokens_per_mtok*"
                   f"{b('accelerators')}")
        ws.formula(volume_row, FIRST_COL + i, formula, c.volume, "calc", _fmt("volume"))
    line("monthly", quoted_input=False)
    if quote.form == "per_mtok":
        monthly = lambda i: f"={at('price', i)}*{at('volume', i)}"  # noqa: E731
        paid = [c.price_per_mtok * c.volume for c in comparisons]
    elif quote.form == "per_accelerator_hour":
        monthly = lambda i: f"={b('hourly')}*{_HOURS_PER_MONTH}*{b('accelerators')}"  # noqa
        paid = [quote.hourly_price * HOURS_PER_MONTH * accelerators] * n
    else:
        monthly = lambda i: f"={b('monthly_price')}"  # noqa: E731
        paid = [quote.monthly_price] * n
    per_system("monthly", monthly, lambda i: paid[i])
    line("quote_total", quoted_input=False)
    per_system("quote_total", lambda i: f"=MAX({at('monthly', i)}*{b('term')},"
                                        f"{b('commitment')})",
               lambda i: comparisons[i].quote_total, "result")
    line("own_total", quoted_input=False)
    per_system("own_total", lambda i: f"={at('cost', i)}*{at('volume', i)}*{b('term')}",
               lambda i: comparisons[i].own_total, "result")
    line("rate", quoted_input=False)
    rates = [(1.0 + s.result.scenario.financing.cost_of_capital) ** (1.0 / MONTHS_PER_YEAR)
             - 1.0 for s in systems]
    per_system("rate", lambda i: (f"=(1+{ref('financing_cost_of_capital', i)})"
                                  f"^(1/months_per_year)-1"), lambda i: rates[i])
    annuity = lambda i: (f"(1-1/(1+{at('rate', i)})^{b('term')})/"  # noqa: E731
                         f"{at('rate', i)}")
    line("quote_pv", quoted_input=False)
    per_system("quote_pv", lambda i: (f"=IF({at('rate', i)}=0,{at('quote_total', i)},"
                                      f"{at('quote_total', i)}/{b('term')}*{annuity(i)})"),
               lambda i: comparisons[i].quote_pv, "result")
    line("own_pv", quoted_input=False)
    per_system("own_pv", lambda i: (f"=IF({at('rate', i)}=0,{at('own_total', i)},"
                                    f"{at('cost', i)}*{at('volume', i)}*{annuity(i)})"),
               lambda i: comparisons[i].own_pv, "result")
    line("saving_pv", quoted_input=False)
    per_system("saving_pv", lambda i: f"={at('own_pv', i)}-{at('quote_pv', i)}",
               lambda i: comparisons[i].saving_pv, "result")
    r += 1
    ws.text(r, 1, LABELS["flags"])
    for i, c in enumerate(comparisons):
        ws.text(r, FIRST_COL + i, "; ".join(c.flags) or "none", "wrap")
    return r


def _break_even(ws: Sheet, line: Callable[..., int], per_system: Callable[..., None],
                at: Callable[[str, int], str], ref: Callable[[str, int], str],
                systems: Sequence[WorkbookSystem], comparisons: Sequence[Any]) -> None:
    """Utilisation u at which our cost per Mtok equals the quoted price (engine:
    :func:`costmodel.decisions.quotes.break_even_utilisation`): with E the energy cost per hour at
    full
    load, F the other hourly costs and T the Mtok an hour at full load,
    u = (E idle + F) / (P T - E (1 - idle)), reached only for 0 < u <= 1."""
    def energy(i: int) -> str:
        return f"{ref('energy_cost_per_hour', i)}/{ref('load_factor', i)}"

    def headroom(i: int) -> float:
        v, s = systems[i].result.values, systems[i].result.scenario
        energy_full = v["energy_cost_per_hour"] / v["load_factor"]
        mtok_full = v["throughput"] * 3600.0 / 1e6
        return comparisons[i].price_per_mtok * mtok_full - energy_full * (1.0 - s.idle_power)

    line("headroom", quoted_input=False)
    per_system("headroom", lambda i: (
        f"={at('price', i)}*{ref('throughput', i)}*seconds_per_hour/tokens_per_mtok-"
        f"{energy(i)}*(1-{ref('idle_power', i)})"), headroom)
    line("break_even", quoted_input=False)

    def formula(i: int) -> str:
        u = (f"({energy(i)}*{ref('idle_power', i)}+({ref('capex_per_hour', i)}+"
             f"{ref('opex_per_hour', i)}))/{at('headroom', i)}")
        return (f'=IF({at("headroom", i)}<=0,"{NOT_REACHED}",IF(AND({u}>0,{u}<=1),{u},'
                f'"{NOT_REACHED}"))')

    per_system("break_even", formula,
               lambda i: (NOT_REACHED if comparisons[i].break_even_utilisation is None
                          else comparisons[i].break_even_utilisation), "result")
