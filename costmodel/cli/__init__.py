"""The ``costmodel`` command."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__, app
from ..model.errors import InputError
from ..model.power import DEFAULT_MAX_GAP, integrate, joules_per_token
from ..model.rates import NOT_A_QUOTE
from ..model.steps import MODEL, TOKEN_KINDS
from ..model.units import UnitInputError, parse_quantity
from ..render.display import label
from ..render.report import (
    comparison_table,
    curve_table,
    decision_table,
    energy_table,
    flexible_line,
    in_sentence,
    quotes_table,
    result_table,
    term_report,
    words,
    wrap,
)
from ..sources.catalog import KINDS, default_catalog
from ..sources.curve_files import curves_csv_text, read_curves, write_curves_csv
from ..sources.paths import shown_path
from ..sources.power_log import read_power_log
from .common import (
    CONTEXT,
    check_xlsx,
    emit_json,
    fail,
    fail_input,
    reading_for,
    specs_for,
    write_file,
    write_workbook,
)

SET_HELP = ('Override an input: dotted.key=VALUE, e.g. electricity.price="0.10 USD/kWh" or '
            "power.boundary=facility. Repeatable.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="costmodel")
def main() -> None:
    """Price LLM inference per million tokens, and say what it divided by."""


@main.command()
@click.argument("file")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--flexible-share", "flexible", type=click.FloatRange(*app.FLEXIBLE_SHARE),
              metavar="FRACTION",
              help="With a tariff: also price the load with this share of every hour moved "
                   "to the cheapest hours of its day (one line; 'what_if' in JSON).")
def price(file: str, overrides: tuple[str, ...], as_json: bool,
          flexible: float | None) -> None:
    """Price the scenario in FILE (TOML or JSON)."""
    try:
        priced = app.price(CONTEXT, specs_for([file], overrides)[0])
        shift = None if flexible is None else app.shift_flexible(priced, flexible)
    except InputError as exc:
        fail_input(exc)
    result = priced.result
    if as_json:
        emit_json(shift.answer() if shift is not None else result.to_json())
    else:
        click.echo(result_table(result))
        if shift is not None:
            click.echo(flexible_line(shift))


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help=SET_HELP + " Applies to every scenario.")
@click.option("--at-interactivity", "at_interactivity", metavar="QUANTITY",
              help='Read every curve at this interactivity, e.g. "169 token/s/user".')
@click.option("--matched", is_flag=True,
              help="Read every curve at the interactivity all systems reach: the slowest "
                   "system's best.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(files: tuple[str, ...], overrides: tuple[str, ...], at_interactivity: str | None,
            matched: bool, as_json: bool) -> None:
    """Price scenarios side by side; ratios are against the first FILE."""
    if len(files) < 2:
        fail("compare needs at least two scenario files")
    reading = reading_for(at_interactivity, matched)
    try:
        comparison = app.compare(CONTEXT, specs_for(files, overrides), reading).comparison
    except InputError as exc:
        fail_input(exc)
    if as_json:
        emit_json(comparison.to_json())
    else:
        click.echo(comparison_table(comparison))


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("-o", "--output", required=True, metavar="OUT.xlsx", help="Workbook to write.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help=SET_HELP + " Applies to every scenario.")
@click.option("--at-interactivity", "at_interactivity", metavar="QUANTITY",
              help="Read every curve at this interactivity.")
@click.option("--matched", is_flag=True, help="Read every curve at the interactivity all "
                                              "systems reach.")
@click.option("--title", help="Title on the Cover sheet.")
def workbook(files: tuple[str, ...], output: str, overrides: tuple[str, ...],
             at_interactivity: str | None, matched: bool, title: str | None) -> None:
    """Write an Excel workbook with live formulas for one scenario or a comparison."""
    check_xlsx(output, "-o/--output")
    reading = reading_for(at_interactivity, matched)
    try:
        book = app.workbook(CONTEXT, specs_for(files, overrides), reading, title=title)
    except InputError as exc:
        fail_input(exc)
    write_workbook(output, book)
    click.echo(f"workbook written to {output} ({len(files)} system"
               f"{'s' if len(files) > 1 else ''})")


@main.command()
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Print results and changes as JSON.")
def reprice(file: str, as_json: bool) -> None:
    """Read an edited workbook back: validate its inputs, price them, list what changed."""
    try:
        imported = app.reprice(Path(file), name=Path(file).name, ctx=CONTEXT)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    except InputError as exc:
        fail_input(exc)
    if as_json:
        emit_json(imported.to_json())
        return
    for r in imported.results:
        click.echo(result_table(r))
        click.echo()
    if imported.decision is not None:
        click.echo(decision_table(imported.decision.decision))
        click.echo()
    click.echo("inputs changed from the export:" if imported.changes else
               "no input changed from the export")
    for c in imported.changes:
        before, after = (words(v, c.unit, c.name) if isinstance(v, (int, float)) else str(v)
                         for v in (c.before, c.after))
        click.echo(f"  {c.system}: {in_sentence(label(c.name))} {before} -> {after}")
    for w in imported.warnings:
        click.echo(f"warning: {w}")


@main.command()
@click.argument("kind", required=False, type=click.Choice(sorted(KINDS)))
def catalog(kind: str | None) -> None:
    """List catalog entries (accelerators, published operating points, electricity prices,
    systems, reference rates, market prices)."""
    cat = default_catalog()
    for k in [kind] if kind else sorted(KINDS):
        click.echo(f"{k}:")
        for key in cat.keys(k):
            entry = cat.get(k, key, k)
            label = entry.data.get("name") or entry.data.get("label") or entry.data.get(
                "source") or ""
            if k == "rate":
                price, power = entry.data["hourly_price"], entry.data["all_in_power"]
                label = (f"{price['value']:g} {price['unit']}, all-in {power['value']:g} "
                         f"{power['unit']} ({NOT_A_QUOTE})")
            elif k == "market_price":
                label = f"{entry.data.get('model')} ({entry.data.get('provider')}): " + ", ".join(
                    f"{what} {q['value']:g} {q['unit']}" for what, q in (
                        (w, entry.data.get(f)) for w, f in (
                            ("blended", "price"), ("input", "price_input"),
                            ("cached input", "price_cached_input"), ("output", "price_output")))
                    if isinstance(q, dict))
            click.echo(f"  {key:32s} {label}")


@main.command()
def steps() -> None:
    """Print the declared calculation: every step with its unit and expression."""
    for s in MODEL.steps.values():
        along = f" by {' and '.join(s.axes)}" if s.axes else ""
        click.echo(f"{s.name} [{s.unit}]{along}\n    = {s.expression}\n    {s.description}")


def _seconds_option(raw: str | None, name: str) -> float | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw, "s", allow_zero=False, bare_number_ok=True)
    except UnitInputError as exc:
        fail(f"{name}: {exc}")


@main.command()
@click.argument("trace")
@click.option("--tokens", type=float, help="Total tokens (input + output) of the run.")
@click.option("--input-tokens", type=float, help="Input tokens of the run.")
@click.option("--output-tokens", type=float, help="Output tokens of the run.")
@click.option("--gpus", type=int, help="GPUs the log cycles through (logs without an index).")
@click.option("--sample-period", metavar="TIME", help='Time between samples of logs without '
              'timestamps, e.g. "1 s".')
@click.option("--start", type=float, help="Run window start on the trace's clock [s].")
@click.option("--end", type=float, help="Run window end on the trace's clock [s].")
@click.option("--max-gap", metavar="TIME", help=f"Longest acceptable gap between samples "
              f"(default {DEFAULT_MAX_GAP:g} s).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def energy(trace: str, tokens: float | None, input_tokens: float | None,
           output_tokens: float | None, gpus: int | None, sample_period: str | None,
           start: float | None, end: float | None, max_gap: str | None, as_json: bool) -> None:
    """Integrate a power log (nvidia-smi CSV, InferenceX gpu_metrics.csv) into energy and
    J/token. Exits 3 when the trace is not a valid measurement (gaps, too few samples)."""
    period = _seconds_option(sample_period, "--sample-period")
    gap = _seconds_option(max_gap, "--max-gap") or DEFAULT_MAX_GAP
    try:
        report = integrate(read_power_log(trace, gpus=gpus, sample_period=period),
                           start=start, end=end, max_gap=gap)
        per_token = (joules_per_token(report, total_tokens=tokens, input_tokens=input_tokens,
                                      output_tokens=output_tokens)
                     if (tokens, input_tokens, output_tokens) != (None, None, None) else None)
    except InputError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        data = report.as_dict()
        data["source"] = shown_path(trace, Path.cwd())  # never an absolute path in a result
        if per_token is not None:
            data["joules_per_token"] = {k: {"value": getattr(per_token, k), "unit": "J/token"}
                                        for k in ("total", "input", "output")
                                        if getattr(per_token, k) is not None}
        emit_json(data)
    else:
        click.echo(energy_table(report, per_token))
    if not report.valid:
        sys.exit(3)


@main.group()
def curves() -> None:
    """Benchmark curves: import InferenceX results, show frontiers."""


@curves.command("import")
@click.argument("files", nargs=-1, required=True)
@click.option("--out", metavar="FILE.csv", help="Write the curves here (default: stdout).")
@click.option("--gpus", type=int, help="GPUs of the run (raw benchmark_serving results only).")
@click.option("--hardware", help="Hardware of the run (raw benchmark_serving results only).")
@click.option("--comment", "comments", multiple=True, metavar="TEXT",
              help="A provenance line written at the top of the CSV. Repeatable.")
def curves_import(files: tuple[str, ...], out: str | None, gpus: int | None,
                  hardware: str | None, comments: tuple[str, ...]) -> None:
    """Read InferenceX rows, API exports or curve CSVs; write costmodel's curve CSV.

    Points of the same curve key from several files are merged into one curve.
    """
    found: dict = {}
    try:
        for f in files:
            for c in read_curves(f, gpus=gpus, hardware=hardware):
                found[c.key] = found[c.key].merged(c) if c.key in found else c
    except InputError as exc:
        fail(str(exc))
    merged = list(found.values())
    for c in merged:
        click.echo(f"{c.key.id}: {len(c)} points", err=True)
        for note in c.notes:
            click.echo(f"  note: {note}", err=True)
    lines = [*comments, f"imported by costmodel {__version__} from "
                        f"{', '.join(Path(f).name for f in files)}"]
    if out:
        write_curves_csv(merged, out, lines)
    else:
        click.echo(curves_csv_text(merged, lines), nl=False)


@curves.command("show")
@click.argument("curve")
@click.option("--curve-id", help="Which curve, when the file holds several.")
@click.option("--token-kind", "kind", type=click.Choice(TOKEN_KINDS),
              default="mixed", show_default=True)
@click.option("--at-interactivity", metavar="QUANTITY", help="Mark the point read here.")
@click.option("--plot", metavar="FILE.png|FILE.svg", help="Write a frontier plot.")
def curves_show(curve: str, curve_id: str | None, kind: str, at_interactivity: str | None,
                plot: str | None) -> None:
    """Show a curve (a file or a fixture curve id): its points, frontier and a reading."""
    try:
        target = (parse_quantity(at_interactivity, "token/s/user", allow_zero=False)
                  if at_interactivity else None)
    except UnitInputError as exc:
        fail(f"--at-interactivity: {exc}")
    try:
        view = app.show_curve(CONTEXT, curve, curve_id, kind, target)
    except InputError as exc:
        fail_input(exc, {"curve": "CURVE", "at_interactivity": "--at-interactivity"})
    click.echo(curve_table(view.curve, kind, view.origin, view.reading))
    if plot:
        from ..render.frontier_plot import plot_curves
        try:
            plot_curves([view.curve], plot, kind=kind, chosen=[view.reading])
        except ValueError as exc:
            fail(f"--plot: {exc}")
        click.echo(f"plot written to {plot}")


# ---- quotes -----------------------------------------------------------------------------------

@main.group()
def quotes() -> None:
    """Vendor quotes against our own cost at the quote's operating point."""


def _scenario_options(f):
    """The options of a command pricing quotes against our own scenarios."""
    f = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                     help=SET_HELP)(f)
    return click.option("--scenario", "scenarios", multiple=True, required=True,
                        metavar="FILE", help="Our own scenario (build) to price each quote "
                                             "against. Repeatable.")(f)


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
def quotes_compare(quotes_file: str, scenarios: tuple[str, ...], overrides: tuple[str, ...],
                   workbook: str | None, demand: str | None, peak: str | None,
                   at_interactivity: str | None, percentile: str | None,
                   improvement: str | None, pdf: str | None, as_json: bool) -> None:
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
                workbook, pdf, as_json)
        return
    try:
        ranking = app.quotes_compare(CONTEXT, read_quotes(quotes_file),
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
def quotes_decide(quotes_file: str, scenarios: tuple[str, ...], overrides: tuple[str, ...],
                  demand: str | None, peak: str | None, at_interactivity: str | None,
                  percentile: str | None, improvement: str | None, pdf: str | None,
                  workbook: str | None, as_json: bool) -> None:
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
            scenarios, overrides, improvement, workbook, pdf, as_json)


def _decide(quotes_file: str, table: dict, flags: dict, scenarios: tuple[str, ...],
            overrides: tuple[str, ...], improvement: str | None, workbook: str | None,
            pdf: str | None, as_json: bool) -> None:
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
        answer = app.quotes_decide(CONTEXT, request)
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
def quotes_term(quotes_file: str, quote_name: str, scenario: str, improvement: str | None,
                successor: str | None, successor_rate: str | None,
                successor_quote: str | None, available_in: str | None, tolerance: str,
                terms: str, overrides: tuple[str, ...], as_json: bool) -> None:
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
        analysis = app.quotes_term(CONTEXT, request)
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


# ---- the service ------------------------------------------------------------------------------

@main.group()
def db() -> None:
    """The database: migrations and fixtures (DATABASE_URL, default sqlite:///costmodel.db)."""


@db.command("upgrade")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def db_upgrade(url: str | None) -> None:
    """Apply the schema migrations (Alembic) up to the latest."""
    from ..store.db import database_url, upgrade
    upgrade(url)
    click.echo(f"database at {_redact(database_url(url))} is up to date")


@db.command("seed")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def db_seed(url: str | None) -> None:
    """Load fixtures/ (catalog and curves) into the database; existing entries stay."""
    from ..sources.catalog import fixtures_dir
    from ..store.db import make_engine, make_sessions
    from ..store.seed import seed
    engine = make_engine(url)
    with make_sessions(engine).begin() as session:
        added = seed(session, fixtures_dir())
    engine.dispose()
    click.echo("seeded: " + ", ".join(f"{n} {kind}" for kind, n in added.items()))


def _redact(url: str) -> str:
    """A database URL without its password, for messages."""
    from sqlalchemy.engine import make_url
    return make_url(url).render_as_string(hide_password=True)


@main.group()
def keys() -> None:
    """API keys (roles: viewer, editor, admin). Only hashes are stored."""


@keys.command("create")
@click.option("--name", required=True, help="Who or what the key is for.")
@click.option("--role", type=click.Choice(["viewer", "editor", "admin"]), required=True)
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_create(name: str, role: str, url: str | None) -> None:
    """Create a key and print its token (shown once)."""
    from ..store.db import make_engine, make_sessions
    from ..store.repo import key_create
    engine = make_engine(url)
    with make_sessions(engine).begin() as session:
        row, token = key_create(session, name, role)
        click.echo(f"key {row.id} ({name}, {role}): {token}")
    engine.dispose()


@keys.command("list")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_list(url: str | None) -> None:
    """List keys (never their secrets)."""
    from ..store.db import make_engine, make_sessions
    from ..store.repo import key_list
    engine = make_engine(url)
    with make_sessions(engine).begin() as session:
        for row in key_list(session):
            state = f"revoked {row.revoked_at:%Y-%m-%d}" if row.revoked_at else "active"
            click.echo(f"{row.id:4d}  {row.role:7s}  {state:18s}  {row.name}")
    engine.dispose()


@keys.command("revoke")
@click.argument("key_id", type=int)
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_revoke(key_id: int, url: str | None) -> None:
    """Revoke a key by its number."""
    from ..store.db import make_engine, make_sessions
    from ..store.repo import NotFound, key_revoke
    engine = make_engine(url)
    try:
        with make_sessions(engine).begin() as session:
            key_revoke(session, key_id)
    except NotFound as exc:
        fail(str(exc))
    finally:
        engine.dispose()
    click.echo(f"key {key_id} revoked")


def _is_loopback(host: str) -> bool:
    """Whether every address ``host`` resolves to is a loopback address (127.0.0.0/8, ::1).

    Decided on the resolved addresses, never on the name's spelling: ``localhost.invalid``
    or ``127.example.com`` may resolve anywhere, and ``::10`` is not ``::1``.
    """
    import ipaddress
    import socket
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        return False  # gunicorn will fail to bind it anyway
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
@click.option("--no-seed", is_flag=True, help="Do not load fixtures/ into the database.")
@click.option("--workers", default=1, show_default=True, type=int, help="gunicorn workers.")
@click.option("--threads", default=4, show_default=True, type=int, help="Threads a worker.")
def serve(host: str, port: int, url: str | None, no_seed: bool, workers: int,
          threads: int) -> None:
    """Run the pricing service for local use (gunicorn for production: see README).

    Migrates and seeds the database first. On a loopback address reads (price, compare,
    catalog) answer without a key; writes always need one.
    """
    from ..server import create_app, open_reads_from_env
    from ..sources.catalog import fixtures_dir
    from ..store.db import database_url
    from ..store.seed import prepare
    url = database_url(url)
    prepare(url, None if no_seed else fixtures_dir())
    loopback = _is_loopback(host)
    app = create_app({"DATABASE_URL": url,
                      "OPEN_READS": loopback or open_reads_from_env()})
    click.echo(f"costmodel {__version__} serving on http://{host}:{port} "
               f"(database {_redact(url)})")
    click.echo(f"  web pages: http://{host}:{port}/ (Price, Compare, Task, Plan, Quotes, "
               f"Saved, Sensitivity)")
    click.echo(f"  API docs: http://{host}:{port}/api/v1/docs")
    if app.config["OPEN_READS"]:
        click.echo("  reads (price, compare, catalog, scenarios) answer without a key"
                   + (" on this loopback address" if loopback else "")
                   + "; writes need a key: costmodel keys create --name me --role editor")
    else:
        click.echo("  every request needs a key: costmodel keys create --name me --role viewer")
    click.echo(f"  limits: {app.extensions['costmodel.limits'].describe()}")
    app.extensions["costmodel"].dispose()  # no connection crosses gunicorn's fork
    _gunicorn(app, host, port, workers=workers, threads=threads)


def _gunicorn(app, host: str, port: int, *, workers: int, threads: int) -> None:
    """Run ``app`` under gunicorn in this process (the production server, not Flask's)."""
    from gunicorn.app.base import BaseApplication

    class _Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            self.cfg.set("accesslog", "-")

        def load(self):
            return app

    _Server().run()


from .chargeback import chargeback_command  # noqa: E402  (its own module; registered here)
from .plan import plan  # noqa: E402  (its own module; registered here)
from .profit import profit  # noqa: E402  (its own module; registered here)
from .sensitivity import sensitivity  # noqa: E402  (its own module; registered here)
from .tariff import tariff  # noqa: E402  (its own module; registered here)
from .task import task  # noqa: E402  (its own module; registered here)

main.add_command(chargeback_command)
main.add_command(plan)
main.add_command(profit)
main.add_command(sensitivity)
main.add_command(task)
main.add_command(tariff)
