"""The ``costmodel`` command."""
from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import click

from . import __version__
from .chain import compare as compare_scenarios
from .chain import price as price_scenario
from .commands.common import emit_json as _emit_json
from .commands.common import fail as _fail
from .curves import Unreachable, matched_interactivity, select
from .inputs import InputError
from .model import MODEL
from .power import DEFAULT_MAX_GAP, integrate, joules_per_token
from .report import (
    comparison_table,
    curve_table,
    energy_table,
    format_number,
    quotes_table,
    result_table,
    term_report,
)
from .sources.catalog import KINDS, default_catalog
from .sources.curve_files import curves_csv_text, read_curves, write_curves_csv
from .sources.curve_point import find_curve
from .sources.power_log import read_power_log
from .sources.scenario_file import load_scenario_file, scenario_frontier
from .units import UnitInputError, parse_quantity

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
def price(file: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """Price the scenario in FILE (TOML or JSON)."""
    try:
        loaded = load_scenario_file(file, overrides)
    except InputError as exc:
        _fail(str(exc))
    result = price_scenario(loaded.scenario, loaded.provenance)
    if as_json:
        _emit_json(result.to_json())
    else:
        click.echo(result_table(result))


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
        _fail("compare needs at least two scenario files")
    loaded = _load_all(files, overrides, at_interactivity, matched)
    comparison = compare_scenarios([(x.scenario, x.provenance) for x in loaded])
    if as_json:
        _emit_json(comparison.to_json())
    else:
        click.echo(comparison_table(comparison))


def _load_all(files: tuple[str, ...], overrides: tuple[str, ...], at_interactivity: str | None,
              matched: bool) -> list:
    """Load scenario files, all read at one interactivity when asked; exits on bad input."""
    if matched and at_interactivity:
        _fail("give --matched or --at-interactivity, not both")
    extra: list[tuple[str, object]] = []
    try:
        if matched:
            target = matched_interactivity([scenario_frontier(f, overrides) for f in files])
            extra.append(("operating_point.at",
                          {"interactivity": {"value": target, "unit": "token/s/user"}}))
        elif at_interactivity:
            parse_quantity(at_interactivity, "token/s/user", allow_zero=False)
            extra.append(("operating_point.at", {"interactivity": at_interactivity}))
    except UnitInputError as exc:
        _fail(f"--at-interactivity: {exc}")
    except InputError as exc:
        _fail(str(exc))
    loaded = []
    for f in files:
        try:
            loaded.append(load_scenario_file(f, overrides, extra=extra))
        except InputError as exc:
            message = str(exc)
            _fail(message if message.startswith(f) or len(files) == 1 else f"{f}: {message}")
    return loaded


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
    from .workbook.export import WorkbookSystem, build_workbook, save_workbook
    if not output.lower().endswith(".xlsx"):
        _fail("-o/--output must end in .xlsx")
    loaded = _load_all(files, overrides, at_interactivity, matched)
    systems = [WorkbookSystem(price_scenario(x.scenario, x.provenance), x.curve) for x in loaded]
    try:
        save_workbook(build_workbook(systems, title=title), output)
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")
    click.echo(f"workbook written to {output} ({len(systems)} system"
               f"{'s' if len(systems) > 1 else ''})")


@main.command()
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Print results and changes as JSON.")
def reprice(file: str, as_json: bool) -> None:
    """Read an edited workbook back: validate its inputs, price them, list what changed."""
    from .workbook.reader import read_workbook
    try:
        imported = read_workbook(Path(file), name=Path(file).name)
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")
    except InputError as exc:
        _fail(str(exc))
    if as_json:
        _emit_json({"results": [r.to_json() for r in imported.results],
                    "changes": [vars(c) for c in imported.changes],
                    "warnings": imported.warnings})
        return
    for r in imported.results:
        click.echo(result_table(r))
        click.echo()
    click.echo("inputs changed from the export:" if imported.changes else
               "no input changed from the export")
    for c in imported.changes:
        def shown(v):
            return format_number(v) if isinstance(v, (int, float)) else str(v)
        click.echo(f"  {c.system}: {c.name} {shown(c.before)} -> {shown(c.after)} "
                   f"{c.unit}".rstrip())
    for w in imported.warnings:
        click.echo(f"warning: {w}")


@main.command()
@click.argument("kind", required=False, type=click.Choice(sorted(KINDS)))
def catalog(kind: str | None) -> None:
    """List catalog entries (accelerators, published operating points, electricity prices)."""
    cat = default_catalog()
    for k in [kind] if kind else sorted(KINDS):
        click.echo(f"{k}:")
        for key in cat.keys(k):
            entry = cat.get(k, key, k)
            label = entry.data.get("name") or entry.data.get("label") or entry.data.get(
                "source") or ""
            click.echo(f"  {key:32s} {label}")


@main.command()
def steps() -> None:
    """Print the declared calculation: every step with its unit and expression."""
    for s in MODEL.steps.values():
        click.echo(f"{s.name} [{s.unit}]\n    = {s.expression}\n    {s.description}")


def _seconds_option(raw: str | None, name: str) -> float | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw, "s", allow_zero=False, bare_number_ok=True)
    except UnitInputError as exc:
        _fail(f"{name}: {exc}")


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
        _fail(str(exc))
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        data = report.as_dict()
        if per_token is not None:
            data["joules_per_token"] = {k: {"value": getattr(per_token, k), "unit": "J/token"}
                                        for k in ("total", "input", "output")
                                        if getattr(per_token, k) is not None}
        _emit_json(data)
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
        _fail(str(exc))
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
@click.option("--token-kind", "kind", type=click.Choice(["mixed", "output", "input"]),
              default="mixed", show_default=True)
@click.option("--at-interactivity", metavar="QUANTITY", help="Mark the point read here.")
@click.option("--plot", metavar="FILE.png|FILE.svg", help="Write a frontier plot.")
def curves_show(curve: str, curve_id: str | None, kind: str, at_interactivity: str | None,
                plot: str | None) -> None:
    """Show a curve (a file or a fixture curve id): its points, frontier and a reading."""
    try:
        c, origin = find_curve(curve, curve_id, None, where="CURVE")
    except InputError as exc:
        _fail(str(exc))
    sel = None
    if at_interactivity:
        try:
            target = parse_quantity(at_interactivity, "token/s/user", allow_zero=False)
            sel = select(c, "interactivity", target, kind)
        except (UnitInputError, Unreachable, LookupError) as exc:
            _fail(f"--at-interactivity: {exc}")
    click.echo(curve_table(c, kind, origin, sel))
    if plot:
        from .frontier_plot import plot_curves
        try:
            plot_curves([c], plot, kind=kind, chosen=[sel])
        except ValueError as exc:
            _fail(f"--plot: {exc}")
        click.echo(f"plot written to {plot}")


# ---- quotes -----------------------------------------------------------------------------------

@main.group()
def quotes() -> None:
    """Vendor quotes against our own cost at the quote's operating point."""


def _priced_for(quote, files: tuple[str, ...], overrides: tuple[str, ...]) -> list:
    """Our scenarios priced for a quote: read at its interactivity where read off a curve."""
    from .quotes import compare_quote, quote_point
    at = quote_point(quote)
    out = []
    for f in files:
        loaded = _load_all((f,), overrides, None, False)[0]
        if loaded.curve is not None and at is not None:
            try:
                loaded = load_scenario_file(f, overrides, extra=[at])
            except InputError as exc:
                _fail(f"{f} at the operating point of quote {quote.name}: {exc}")
        out.append((loaded, compare_quote(quote, price_scenario(loaded.scenario,
                                                                loaded.provenance))))
    return out


@quotes.command("compare")
@click.argument("quotes_file")
@click.option("--scenario", "scenarios", multiple=True, required=True, metavar="FILE",
              help="Our own scenario to price each quote against. Repeatable.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--workbook", metavar="OUT.xlsx", help="Also write a workbook with a Quotes "
                                                     "sheet (live margins).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def quotes_compare(quotes_file: str, scenarios: tuple[str, ...], overrides: tuple[str, ...],
                   workbook: str | None, as_json: bool) -> None:
    """Rank the quotes in QUOTES_FILE by price per million tokens at their operating point,
    beside our own cost, implied margin, break-even utilisation and the term in money."""
    from .quotes import rank
    from .sources.quote_file import read_quotes
    try:
        quote_list = read_quotes(quotes_file)
    except InputError as exc:
        _fail(str(exc))
    pairs = {q.name: _priced_for(q, scenarios, overrides) for q in quote_list}
    by_scenario = [rank([pairs[q.name][i][1] for q in quote_list])
                   for i in range(len(scenarios))]
    if as_json:
        _emit_json({"scenarios": [{"scenario": ranked[0].scenario,
                                   "ranked": [c.to_json() for c in ranked]}
                                  for ranked in by_scenario]})
    else:
        click.echo(quotes_table(by_scenario))
    if workbook:
        _quotes_workbook(workbook, quote_list, pairs, len(scenarios))


def _quotes_workbook(path: str, quote_list: list, pairs: dict, n: int) -> None:
    from .workbook.export import WorkbookSystem, build_workbook, save_workbook
    first = pairs[quote_list[0].name]  # scenarios as read for the first quote
    systems = [WorkbookSystem(price_scenario(x.scenario, x.provenance), x.curve)
               for x, _ in first]
    rows = [(q, [pairs[q.name][i][1] for i in range(n)]) for q in quote_list]
    try:
        save_workbook(build_workbook(systems, quotes=rows), path)
    except OSError as exc:
        _fail(f"cannot write {path}: {exc.strerror or exc}")
    click.echo(f"workbook written to {path}")


@quotes.command("term")
@click.argument("quotes_file")
@click.option("--quote", "quote_name", required=True, help="The quote (its name).")
@click.option("--scenario", required=True, metavar="FILE", help="Our own scenario.")
@click.option("--improvement", metavar="FRACTION", help='Expected yearly fall of the market '
              'price per token, e.g. "30 %".')
@click.option("--successor", metavar="FILE", help="A successor system's scenario: its cost "
                                                  "becomes the market price once available.")
@click.option("--available-in", metavar="TIME|DATE", help='When the successor is available: '
              'a time from the quote\'s date ("18 month") or a date ("2027-06").')
@click.option("--tolerance", default="10 %", show_default=True, metavar="FRACTION",
              help="Largest acceptable premium over staying flexible.")
@click.option("--terms", default="6,12,18,24,36,48", show_default=True,
              help="Term lengths to price, in months.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def quotes_term(quotes_file: str, quote_name: str, scenario: str, improvement: str | None,
                successor: str | None, available_in: str | None, tolerance: str, terms: str,
                overrides: tuple[str, ...], as_json: bool) -> None:
    """What each term length costs against waiting or switching, and the longest term within
    the tolerance."""
    from .quotes import months_until, term_json, term_table
    from .sources.quote_file import read_quotes
    try:
        quote = next((q for q in read_quotes(quotes_file) if q.name == quote_name), None)
        if quote is None:
            _fail(f"--quote: no quote named {quote_name!r} in {quotes_file}")
        g = parse_quantity(improvement, "dimensionless") if improvement else None
        tol = parse_quantity(tolerance, "dimensionless")
        months = [float(t) for t in terms.split(",")]
        if any(m <= 0 for m in months):
            raise ValueError
    except InputError as exc:
        _fail(str(exc))
    except UnitInputError as exc:
        _fail(f"--improvement/--tolerance: {exc}")
    except ValueError:
        _fail(f"--terms: expected positive month counts such as 6,12,24, got {terms!r}")
    if g is None and successor is None:
        _fail("give --improvement, or --successor with --available-in")
    (loaded, comparison), = _priced_for(quote, (scenario,), overrides)
    successor_price = successor_month = None
    if successor is not None:
        if available_in is None:
            _fail("--successor needs --available-in")
        try:
            successor_month = months_until(available_in, _quote_start(quote))
        except UnitInputError as exc:
            _fail(f"--available-in: {exc}")
        (_, succ), = _priced_for(quote, (successor,), overrides)
        successor_price = succ.own_cost_per_mtok
    rows, longest = term_table(comparison.price_per_mtok, comparison.volume,
                               loaded.scenario.financing.cost_of_capital, months,
                               yearly_improvement=g, successor_price=successor_price,
                               successor_month=successor_month, tolerance=tol)
    if as_json:
        _emit_json(term_json(quote, comparison, rows, longest, tol))
        return
    click.echo(term_report(quote, comparison, rows, longest, tol, g, successor_price,
                           successor_month))


def _quote_start(quote) -> date:
    """Where a term starts: the quote's date when it has one, else today."""
    try:
        return date.fromisoformat(quote.date) if quote.date else date.today()
    except ValueError:
        _fail(f"quote {quote.name}: date {quote.date!r} is not an ISO date (YYYY-MM-DD)")


# ---- the service ------------------------------------------------------------------------------

@main.group()
def db() -> None:
    """The database: migrations and fixtures (DATABASE_URL, default sqlite:///costmodel.db)."""


@db.command("upgrade")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def db_upgrade(url: str | None) -> None:
    """Apply the schema migrations (Alembic) up to the latest."""
    from .store.db import database_url, upgrade
    upgrade(url)
    click.echo(f"database at {_redact(database_url(url))} is up to date")


@db.command("seed")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def db_seed(url: str | None) -> None:
    """Load fixtures/ (catalog and curves) into the database; existing entries stay."""
    from .sources.catalog import fixtures_dir
    from .store.db import make_engine, make_sessions
    from .store.seed import seed
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
    from .store.db import make_engine, make_sessions
    from .store.repo import key_create
    engine = make_engine(url)
    with make_sessions(engine).begin() as session:
        row, token = key_create(session, name, role)
        click.echo(f"key {row.id} ({name}, {role}): {token}")
    engine.dispose()


@keys.command("list")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_list(url: str | None) -> None:
    """List keys (never their secrets)."""
    from .store.db import make_engine, make_sessions
    from .store.repo import key_list
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
    from .store.db import make_engine, make_sessions
    from .store.repo import NotFound, key_revoke
    engine = make_engine(url)
    try:
        with make_sessions(engine).begin() as session:
            key_revoke(session, key_id)
    except NotFound as exc:
        _fail(str(exc))
    finally:
        engine.dispose()
    click.echo(f"key {key_id} revoked")


_LOOPBACK = ("127.", "localhost", "::1")


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
    import os

    from .sources.catalog import fixtures_dir
    from .store.db import database_url, make_engine, make_sessions, upgrade
    from .store.seed import seed
    url = database_url(url)
    upgrade(url)
    if not no_seed:
        engine = make_engine(url)
        with make_sessions(engine).begin() as session:
            seed(session, fixtures_dir())
        engine.dispose()
    loopback = host.startswith(_LOOPBACK)
    os.environ["DATABASE_URL"] = url
    os.environ["COSTMODEL_OPEN_READS"] = "1" if loopback else os.environ.get(
        "COSTMODEL_OPEN_READS", "0")
    from .api import create_app
    app = create_app()
    click.echo(f"costmodel {__version__} serving on http://{host}:{port} "
               f"(database {_redact(url)})")
    click.echo(f"  API docs: http://{host}:{port}/api/v1/docs")
    if app.config["OPEN_READS"]:
        click.echo("  reads (price, compare, catalog, scenarios) answer without a key"
                   + (" on this loopback address" if loopback else "")
                   + "; writes need a key: costmodel keys create --name me --role editor")
    else:
        click.echo("  every request needs a key: costmodel keys create --name me --role viewer")
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


from .commands.sensitivity import sensitivity  # noqa: E402  (its own module; registered here)

main.add_command(sensitivity)

if __name__ == "__main__":  # pragma: no cover
    main()
