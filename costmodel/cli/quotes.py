"""``costmodel quotes``: vendor quotes against our own cost, the decision at a demand and
the term of a commitment."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from .. import app
from ..model.errors import InputError
from ..model.units import UnitInputError, parse_quantity
from ..render.report import decision_table, quotes_table, term_report, wrap
from .common import (
    CONTEXT,
    check_xlsx,
    emit_json,
    fail,
    fail_input,
    service_database,
    specs_for,
    write_file,
    write_workbook,
)
from .scenarios import SET_HELP

__all__ = ["quotes"]


@click.group()
def quotes() -> None:
    """Vendor quotes against our own cost at the quote's operating point."""


def _scenario_options(f):
    """The options of a command pricing quotes against our own scenarios."""
    f = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                     help=SET_HELP)(f)
    return click.option("--scenario", "scenarios", multiple=True, required=True,
                        metavar="FILE", help="Our own scenario (build) to price each quote "
                                             "against. Repeatable.")(f)


def _url_option(f):
    """The catalog a command looks quotes' references up in: the service's (``--url``)."""
    return click.option("--url", metavar="DATABASE_URL", help=(
        "Look the quotes' market prices and reference rates (and every catalog key) up in "
        "the catalog of the service's database at this URL (where `costmodel market import` "
        "puts market prices) instead of the fixtures'."))(f)


@contextmanager
def _context(url: str | None) -> Iterator[app.Context]:
    """The fixtures' catalog, or the service's database at ``url``."""
    if url is None:
        yield CONTEXT
        return
    from ..app.market_import import StoredCatalogContext
    with service_database(url) as services:
        yield StoredCatalogContext(services)


def _demand_options(f):
    """The options of the decision at a demand (``quotes decide``, ``quotes compare``)."""
    for option in reversed([
        click.option("--demand", metavar="QUANTITY", help='The buyer\'s volume: "50000 '
                     'Mtok/month", "2e6 request/day" or "20000 task/day" (tasks of the '
                     '[demand.task] table; replaces the file\'s [demand] volume). With a '
                     'demand, every offer and each scenario (our own build) is priced and '
                     'sized for it, ranked, with break-evens and a recommendation.'),
        click.option("--peak", metavar="QUANTITY", help='The peak rate, e.g. "40000 token/s" '
                                                        '(default: the average).'),
        click.option("--at-interactivity", "at_interactivity", metavar="QUANTITY",
                     help='The service level, e.g. "100 token/s/user".'),
        click.option("--percentile", help="The statistic of interactivity the service level "
                                          "is read at (median, mean, p90, p99)."),
        click.option("--improvement", metavar="FRACTION", help='Yearly fall of the market '
                     'price per token, e.g. "30 %": prices the lock-in of the recommended '
                     'term.'),
        click.option("--pdf", metavar="OUT.pdf", help="With a demand: also write the "
                                                      "one-page summary (PDF)."),
    ]):
        f = option(f)
    return f


@quotes.command("compare")
@click.argument("quotes_file")
@_scenario_options
@click.option("--workbook", metavar="OUT.xlsx", help="Also write a workbook: a Quotes sheet "
              "(live margins), or with a demand the Decision sheet (live bills, ranking, "
              "break-evens).")
@_demand_options
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@_url_option
def quotes_compare(quotes_file: str, scenarios: tuple[str, ...], overrides: tuple[str, ...],
                   workbook: str | None, demand: str | None, peak: str | None,
                   at_interactivity: str | None, percentile: str | None,
                   improvement: str | None, pdf: str | None, as_json: bool,
                   url: str | None) -> None:
    """Rank the quotes in QUOTES_FILE by price per million tokens at their operating point,
    each at its own volume and term, beside our own cost, implied margin, break-even
    utilisation and the term in money: no recommendation. With a demand (--demand, or a
    [demand] table in the file) it is the decision at that demand, as `quotes decide`."""
    from ..sources.quote_file import demand_table, read_quotes
    check_xlsx(workbook, "--workbook")
    try:
        table = demand_table(quotes_file)
    except InputError as exc:
        fail_input(exc)
    flags = {"volume": demand, "peak": peak, "interactivity": at_interactivity,
             "percentile": percentile}
    if table is not None or pdf is not None or any(v is not None for v in flags.values()):
        _decide(quotes_file, table or {}, flags, scenarios, overrides, improvement,
                workbook, pdf, as_json, url)
        return
    try:
        with _context(url) as ctx:
            ranking = app.quotes_compare(ctx, read_quotes(quotes_file),
                                         specs_for(scenarios, overrides))
    except InputError as exc:
        fail_input(exc)
    if as_json:
        emit_json(ranking.to_json())
    else:
        money = ranking.money
        click.echo(quotes_table(ranking.ranked, currency=money.currency, rate=money.rate))
        _money_note(money)
    if workbook:
        write_workbook(workbook, app.quotes_workbook(ranking))
        click.echo(f"workbook written to {workbook}")


@quotes.command("decide")
@click.argument("quotes_file")
@_scenario_options
@_demand_options
@click.option("--workbook", metavar="OUT.xlsx", help="Also write the decision as a workbook "
              "(live bills, ranking, recommendation, range and break-evens).")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
@_url_option
def quotes_decide(quotes_file: str, scenarios: tuple[str, ...], overrides: tuple[str, ...],
                  demand: str | None, peak: str | None, at_interactivity: str | None,
                  percentile: str | None, improvement: str | None, pdf: str | None,
                  workbook: str | None, as_json: bool, url: str | None) -> None:
    """The decision at a demand (--demand, or a [demand] table in QUOTES_FILE): every offer
    in QUOTES_FILE and each scenario (our own build) priced and sized for the same volume,
    ranked by what the month costs, with break-evens and a recommendation."""
    from ..sources.quote_file import demand_table
    check_xlsx(workbook, "--workbook")
    try:
        table = demand_table(quotes_file)
    except InputError as exc:
        fail_input(exc)
    if table is None and demand is None:
        fail(f'--demand: a decision needs the demand it is for, e.g. --demand "50000 '
             f'Mtok/month" (or a [demand] table in {quotes_file})')
    _decide(quotes_file, table or {}, {"volume": demand, "peak": peak,
                                       "interactivity": at_interactivity,
                                       "percentile": percentile},
            scenarios, overrides, improvement, workbook, pdf, as_json, url)


def _decide(quotes_file: str, table: dict, flags: dict, scenarios: tuple[str, ...],
            overrides: tuple[str, ...], improvement: str | None, workbook: str | None,
            pdf: str | None, as_json: bool, url: str | None = None) -> None:
    """``quotes decide`` (and ``quotes compare`` for a demand): the file's [demand] with the
    flags over it."""
    from ..decisions.demand import typed_over, validate_demand
    from ..sources.quote_file import read_quotes
    if pdf is not None and not pdf.lower().endswith(".pdf"):
        fail(f"--pdf: expected a file name ending in .pdf, got {pdf!r}")
    data = typed_over(table, **flags)
    try:
        g = parse_quantity(improvement, "dimensionless") if improvement else None
    except UnitInputError as exc:
        fail(f"--improvement: {exc}")
    try:
        request = app.DecisionRequest(read_quotes(quotes_file), specs_for(scenarios, overrides),
                                      validate_demand(data), g)
        with _context(url) as ctx:
            answer = app.quotes_decide(ctx, request)
        book = app.render_decision_workbook(answer) if workbook else None
    except InputError as exc:
        fail_input(exc)
    if as_json:
        emit_json(answer.to_json())
    else:
        click.echo(decision_table(answer.decision, answer.money.currency, answer.money.rate))
        _money_note(answer.money)
    if book is not None:
        write_workbook(workbook, book)
        if not as_json:
            click.echo(f"workbook written to {workbook} (the Decision sheet: live formulas "
                       f"over the demand and every offer's terms)")
    if pdf is not None:
        write_file(pdf, app.decision_pdf(answer))
        if not as_json:
            click.echo(f"one-page summary written to {pdf}")


@quotes.command("term")
@click.argument("quotes_file")
@click.option("--quote", "quote_name", required=True, help="The quote (its name).")
@click.option("--scenario", required=True, metavar="FILE", help="Our own scenario.")
@click.option("--improvement", metavar="FRACTION", help='Expected yearly fall of the market '
              'price per token, e.g. "30 %".')
@click.option("--successor", metavar="FILE", help="A successor system's scenario: once it "
              "is available the flexible buyer pays its market price (--successor-rate or "
              "--successor-quote) at its throughput; its own cost is shown as a floor.")
@click.option("--successor-rate", metavar="RATE", help='A reference rate of the successor, '
              'e.g. "jalapeno/rental@2027-06".')
@click.option("--successor-quote", metavar="NAME", help="A quote for the successor (its name "
                                                        "in QUOTES_FILE).")
@click.option("--available-in", metavar="TIME|DATE", help='When the successor is available: '
              'a time from the quote\'s date ("18 month") or a date ("2027-06").')
@click.option("--tolerance", default="10 %", show_default=True, metavar="FRACTION",
              help="Largest acceptable premium over staying flexible.")
@click.option("--terms", default="6,12,18,24,36,48", show_default=True,
              help="Term lengths to price, in months.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@_url_option
def quotes_term(quotes_file: str, quote_name: str, scenario: str, improvement: str | None,
                successor: str | None, successor_rate: str | None,
                successor_quote: str | None, available_in: str | None, tolerance: str,
                terms: str, overrides: tuple[str, ...], as_json: bool,
                url: str | None) -> None:
    """What each term length costs against waiting or switching, and the longest term within
    the tolerance."""
    from ..sources.quote_file import read_quotes
    try:
        all_quotes = read_quotes(quotes_file)
    except InputError as exc:
        fail_input(exc)
    quote = next((q for q in all_quotes if q.name == quote_name), None)
    if quote is None:
        fail(f"--quote: no quote named {quote_name!r} in {quotes_file}")
    market = None
    if successor_quote is not None:
        market = next((q for q in all_quotes if q.name == successor_quote), None)
        if market is None:
            fail(f"--successor-quote: no quote named {successor_quote!r} in {quotes_file}")
    try:
        g = parse_quantity(improvement, "dimensionless") if improvement else None
        tol = parse_quantity(tolerance, "dimensionless")
    except UnitInputError as exc:
        fail(f"--improvement/--tolerance: {exc}")
    try:
        months = tuple(float(t) for t in terms.split(","))
        if any(m <= 0 for m in months):
            raise ValueError
    except ValueError:
        fail(f"--terms: expected positive month counts such as 6,12,24, got {terms!r}")
    if g is None and successor is None:
        fail("give --improvement, or --successor with --available-in")
    if successor is not None and available_in is None:
        fail("--successor needs --available-in")
    own, = specs_for([scenario], overrides)
    succ = specs_for([successor], overrides)[0] if successor is not None else None
    request = app.TermRequest(quote, own, months, tol, g, succ, available_in, successor_rate,
                              market)
    try:
        with _context(url) as ctx:
            analysis = app.quotes_term(ctx, request)
    except InputError as exc:
        fail_input(exc, _TERM_OPTIONS)
    if as_json:
        emit_json(analysis.to_json())
        return
    click.echo(term_report(analysis, analysis.money.currency, analysis.money.rate))
    _money_note(analysis.money)


def _money_note(money: app.ShownMoney) -> None:
    """In another currency: its rate, date and source, and how quote prices are shown; the
    rates quote amounts in other currencies were read at."""
    if money.says:
        click.echo("\n" + "\n".join(wrap(f"Money: {money.quotes_words()}", "", "  ")))


# the term request's fields by the options that give them
_TERM_OPTIONS = {"improvement": "--improvement", "available": "--available-in",
                 "successor": "--successor", "tolerance": "--tolerance", "terms": "--terms",
                 "successor_rate": "--successor-rate"}
