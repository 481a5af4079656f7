"""``costmodel sensitivity tornado|grid|montecarlo FILE ...``: what moves the cost, and by how
much, over the declared calculation (see :mod:`costmodel.decisions.sensitivity`)."""
from __future__ import annotations

import math
import sys
from functools import partial
from typing import Any

import click

from .. import app
from ..decisions.sensitivity import (
    CHUNK_SIZE,
    DEFAULT_OUTPUT,
    Grid,
    MonteCarlo,
    Tornado,
    parse_axis,
    parse_distribution,
    parse_range,
)
from ..model.errors import InputError
from ..model.units import UnitInputError, parse_quantity
from ..render.display import display_unit, format_number, format_percent, label, unit_words
from ..render.report import WIDTH, columns, money_text, words, wrap
from .common import CONTEXT, check_xlsx, emit_json, fail, fail_input, specs_for, write_workbook

__all__ = ["sensitivity"]

SET_HELP = ('Override an input of the base scenario: dotted.key=VALUE, e.g. '
            'electricity.price="0.10 USD/kWh". Repeatable.')
OUTPUT_HELP = "The step to analyse (see `costmodel steps`), e.g. cost_per_mtok_energy."
BAR_WIDTH = 24


def _run(file: str, overrides: tuple[str, ...], workbook: str | None, as_json: bool,
         analyse, text) -> None:
    """Load FILE, run the analysis, print it, and write the workbook when asked."""
    check_xlsx(workbook, "--workbook")
    spec, = specs_for([file], overrides)
    try:
        analysis = analyse(spec)
    except InputError as exc:
        fail_input(exc)
    if as_json:
        emit_json(analysis.to_json())
    else:
        click.echo(text(analysis.result, analysis.scenario_name))
        result = analysis.priced.result
        if result.currency != "USD":  # another currency: the rate it is shown at
            click.echo("\n" + "\n".join(wrap(
                f"Money: {money_text(result.money_disclosure())}", "", "  ")))
    if workbook is not None:
        write_workbook(workbook, app.analysis_workbook(analysis))
        click.echo(f"workbook written to {workbook}", err=True)


def _name(key: str) -> str:
    """An input's name in the display rules (``financing.cost_of_capital`` ->
    ``financing_cost_of_capital``: a fraction shown as a percentage)."""
    return key.replace(".", "_")


def _q(value: float, unit: str, key: str | None = None) -> str:
    """A value in words by the display rules of its input or output ``key``."""
    return words(value, unit, _name(key) if key else None)


def _unit(unit: str, key: str) -> str:
    """`` (unit in words)`` of an axis or a column: ``(USD per kWh)``, ``(%)``."""
    shown = unit_words(display_unit(_name(key), unit))
    return f" ({shown})" if shown else ""


def _cell(value: float, unit: str, key: str) -> str:
    """A value in a table whose header gives the unit; a percentage keeps its sign."""
    text = format_number(value, unit, _name(key))
    return text + "%" if display_unit(_name(key), unit).startswith("%") and text != "-" else text


def _bar(value: float, biggest: float, width: int = BAR_WIDTH) -> str:
    if not (math.isfinite(value) and math.isfinite(biggest)) or biggest <= 0:
        return ""
    return "#" * max(1 if value > 0 else 0, round(value / biggest * width))


def _common(f):
    f = click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")(f)
    f = click.option("--output", "output", default=DEFAULT_OUTPUT, show_default=True,
                     metavar="STEP", help=OUTPUT_HELP)(f)
    f = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)(f)
    f = click.option("--workbook", metavar="OUT.xlsx",
                     help="Also write the scenario's workbook with a Sensitivity sheet.")(f)
    return click.argument("file")(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def sensitivity() -> None:
    """Sensitivity and uncertainty of a scenario's cost: tornado, grid, Monte Carlo.

    Inputs are named by their dotted scenario key (electricity.price, utilisation,
    operating_point.throughput_per_kw, ...); values are quantities in any unit of the input's
    dimension.
    """


# ---- tornado ----------------------------------------------------------------------------------

@sensitivity.command("tornado")
@_common
@click.option("--swing", default="0.2", show_default=True, metavar="FRACTION",
              help='Default move of each input, as a fraction or a percentage ("20 %").')
@click.option("--range", "ranges", multiple=True, metavar="KEY=LOW..HIGH",
              help="Move this input across LOW..HIGH instead, e.g. "
                   "'electricity.price=0.05..0.15 USD/kWh'. Repeatable.")
@click.option("--input", "inputs", multiple=True, metavar="KEY",
              help="Vary only these inputs (default: every numeric input the output reads "
                   "that is set and nonzero; counts only when named). Repeatable.")
def tornado_command(file: str, workbook: str | None, overrides: tuple[str, ...], output: str,
                    as_json: bool,
                    swing: str, ranges: tuple[str, ...], inputs: tuple[str, ...]) -> None:
    """Move each input alone (default: base -/+ 20%) and rank them by the output's swing."""
    try:
        fraction = parse_quantity(swing, "dimensionless")
        given = dict(parse_range(r) for r in ranges)
    except UnitInputError as exc:
        fail(f"--swing: {exc}")
    except InputError as exc:
        fail_input(exc)
    _run(file, overrides, workbook, as_json,
         lambda spec: app.tornado(CONTEXT, spec, output=output, swing=fraction,
                                  inputs=list(inputs) or None, ranges=given),
         tornado_text)


def tornado_text(t: Tornado, name: str) -> str:
    u, out = t.unit, t.output
    lines = [*wrap(f"{name}: {label(out)} ({out}) {_q(t.base, u, out)} at the base", "", "  "),
             *wrap(f"each input alone to base -/+ {format_percent(t.swing)} (or across its "
                   f"--range), the others at the base; ranked by swing; outputs in "
                   f"{unit_words(u)}", "", "  "), ""]
    biggest = max((b.swing for b in t.bars if math.isfinite(b.swing)), default=0.0)
    rows = [["Input", "Low", "High", "Unit", "At low", "At high", "Swing"]]
    notes = []
    for b in t.bars:
        key = b.key
        if b.note:
            notes.append(f"  {b.key}: {b.note}")
            key += " *"
        rows.append([key, _cell(b.low, b.unit, b.key), _cell(b.high, b.unit, b.key),
                     _unit(b.unit, b.key)[2:-1].lstrip("% "), format_number(b.output_low, u, out),
                     format_number(b.output_high, u, out), format_number(b.swing, u, out)])
    table = columns(rows, {1, 2, 4, 5, 6})
    # the bars take what the table leaves of the line, never fewer than 8 characters
    width = max(8, WIDTH - 2 - max(map(len, table)))
    widest = max(map(len, table))
    lines += [table[0]] + [f"{line:<{widest}}  {_bar(b.swing, biggest, width)}"
                           for line, b in zip(table[1:], t.bars, strict=True)]
    if notes:
        lines += ["", "* notes:", *notes]
    return "\n".join(lines)


# ---- grid -------------------------------------------------------------------------------------

@sensitivity.command("grid")
@_common
@click.option("--x", "x", required=True, metavar="KEY=VALUES",
              help="Columns: 'key=V1,V2,...' (bare numbers take the last value's unit) or "
                   "'key=LOW..HIGH:N' (N evenly spaced values, default 5).")
@click.option("--y", "y", required=True, metavar="KEY=VALUES", help="Rows, as --x.")
def grid_command(file: str, workbook: str | None, overrides: tuple[str, ...], output: str,
                 as_json: bool, x: str,
                 y: str) -> None:
    """The output over every pair of values of two inputs (e.g. electricity price x
    utilisation)."""
    try:
        axes = parse_axis(x), parse_axis(y)
    except InputError as exc:
        fail_input(exc)
    _run(file, overrides, workbook, as_json,
         lambda spec: app.grid(CONTEXT, spec, *axes, output=output), grid_text)


def grid_text(g: Grid, name: str) -> str:
    out = g.output
    lines = [*wrap(f"{name}: {label(out)} ({out}) in {unit_words(g.unit)}; at the base "
                   f"{_q(g.base, g.unit, out)}", "", "  "),
             f"rows: {g.y.key}{_unit(g.y.unit, g.y.key)}; columns: "
             f"{g.x.key}{_unit(g.x.unit, g.x.key)}", ""]
    rows = [[f"{g.y.key} \\ {g.x.key}", *(_cell(v, g.x.unit, g.x.key) for v in g.x.values)]]
    for yv, row in zip(g.y.values, g.values, strict=True):
        rows.append([_cell(yv, g.y.unit, g.y.key),
                     *(format_number(v, g.unit, out) for v in row)])
    lines += columns(rows, set(range(1, len(rows[0]))))
    return "\n".join(lines)


# ---- Monte Carlo ------------------------------------------------------------------------------

def _whole(raw: str | None, option: str, minimum: int) -> int | None:
    if raw is None:
        return None
    try:
        number = float(raw.replace("_", ""))
    except ValueError:
        fail(f"{option}: must be a whole number, got {raw!r}")
    if not math.isfinite(number) or number != int(number) or number < minimum:
        fail(f"{option}: must be a whole number >= {minimum}, got {raw!r}")
    return int(number)


@sensitivity.command("montecarlo")
@_common
@click.option("--dist", "dists", multiple=True, required=True, metavar="KEY=DISTRIBUTION",
              help="An input's distribution: uniform(low, high), triangular(low, mode, high), "
                   "normal(mean, sd) or lognormal(median, gsd) (gsd: geometric standard "
                   "deviation, a number > 1), e.g. "
                   "'electricity.price=uniform(0.05 USD/kWh, 0.15 USD/kWh)'. Repeatable.")
@click.option("--draws", default="1000000", show_default=True, metavar="N",
              help="Number of draws (1e6 is accepted).")
@click.option("--seed", metavar="S", help="Random seed (default: chosen and reported).")
@click.option("--bins", default="50", show_default=True, metavar="N",
              help="Histogram bins.")
@click.option("--truncate", is_flag=True,
              help="Accept distributions that reach outside an input's valid range (a normal "
                   "price that can go negative): such draws are drawn again.")
def montecarlo_command(file: str, workbook: str | None, overrides: tuple[str, ...], output: str,
                       as_json: bool,
                       dists: tuple[str, ...], draws: str, seed: str | None, bins: str,
                       truncate: bool) -> None:
    """Draw inputs from distributions and report P10/P50/P90, the mean and a histogram of the
    output. The same --seed gives the same numbers."""
    n = _whole(draws, "--draws", 1)
    chosen_seed = _whole(seed, "--seed", 0)
    n_bins = _whole(bins, "--bins", 1)
    distributions: dict[str, Any] = {}
    try:
        for text in dists:
            key, dist = parse_distribution(text)
            if key in distributions:
                fail(f"{key}: given more than one --dist")
            distributions[key] = dist
    except InputError as exc:
        fail_input(exc)

    def analyse(spec):
        run = partial(app.monte_carlo, CONTEXT, spec, distributions, draws=n, seed=chosen_seed,
                      output=output, bins=n_bins, truncate=truncate)
        if not (n > CHUNK_SIZE or _stderr_is_terminal()):
            return run()
        with click.progressbar(length=n, label="drawing", show_percent=True,
                               file=sys.stderr) as bar:
            return run(progress=lambda done, total: bar.update(done - bar.pos))

    _run(file, overrides, workbook, as_json, analyse, montecarlo_text)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def montecarlo_text(m: MonteCarlo, name: str) -> str:
    u, out = m.unit, m.output
    lines = [*wrap(f"{name}: {label(out)} ({out}) in {unit_words(u)}", "", "  "),
             f"{m.draws:,} draws, seed {m.seed}"]
    rows = [[f"  {key}", d["text"], f"{m.redrawn.get(key, 0):,} redrawn"]
            for key, d in m.distributions.items()]
    lines += columns(rows, set())
    if m.truncate:
        lines.append("  (--truncate: draws outside an input's valid range were drawn again)")
    lines.append("")
    stats = [[what, format_number(v, u, out)] for what, v in [
        ("Base", m.base), ("P10", m.p10), ("P50 (median)", m.p50), ("P90", m.p90),
        ("Mean", m.mean), ("Standard deviation", m.std), ("Lowest", m.min),
        ("Highest", m.max)]]
    lines += [f"{line}  {unit_words(u)}" for line in columns(stats, {1})]
    if m.nonfinite:
        lines.append(f"{m.nonfinite:,} draws gave no finite value and are left out")
    lines += ["", f"histogram in {unit_words(u)}, {len(m.counts)} bins"]
    biggest = float(max(m.counts)) if len(m.counts) else 0.0
    rows = [[format_number(float(lo), u, out), "..", format_number(float(hi), u, out),
             f"{int(c):,}",
             _bar(float(c), biggest)]
            for lo, hi, c in zip(m.edges[:-1], m.edges[1:], m.counts, strict=True)]
    lines += [f"  {line}" for line in columns(rows, {0, 2, 3})]
    return "\n".join(lines)
