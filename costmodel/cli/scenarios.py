"""The commands on scenario files: ``price``, ``compare``, ``workbook`` and ``reprice`` (an
edited workbook read back)."""
from __future__ import annotations

from pathlib import Path

import click

from .. import app
from ..model.errors import InputError
from ..render.display import display_unit, format_number, format_percent, label, unit_words
from ..render.report import (
    ANSWER,
    columns,
    comparison_table,
    decision_table,
    flexible_line,
    in_sentence,
    result_table,
    words,
)
from .common import (
    CONTEXT,
    check_xlsx,
    emit_json,
    fail,
    fail_input,
    reading_for,
    specs_for,
    write_workbook,
)

__all__ = ["price", "compare", "workbook", "reprice", "SET_HELP"]

SET_HELP = ('Override an input: dotted.key=VALUE, e.g. electricity.price="0.10 USD/kWh" or '
            "power.boundary=facility. Repeatable.")


@click.command()
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


@click.command()
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


@click.command()
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


@click.command()
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Print results and changes as JSON.")
def reprice(file: str, as_json: bool) -> None:
    """Read an edited workbook back: validate its inputs, price them, list what changed and
    what it did to the headline figures."""
    try:
        imported = app.reprice(Path(file), name=Path(file).name, ctx=CONTEXT,
                               before=not as_json)
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
    if imported.changes:
        click.echo()
        click.echo("\n".join(edits_did(imported)))
    for w in imported.warnings:
        click.echo(f"warning: {w}")


# the headline figures of a scenario's workbook (its Summary: the answer and what the cost is
# made of), as exported and as edited
HEADLINE = [*ANSWER, "cost_per_mtok_energy", "cost_per_mtok_capex", "cost_per_mtok_opex"]


def _change(before: float | None, after: float | None) -> str:
    """The relative change, signed (``+4.7%``); empty when there is none to state."""
    if before is None or after is None or before == after:
        return "" if before == after else "-"
    if before == 0:
        return "-"
    return ("+" if after > before else "") + format_percent(after / before - 1)


def edits_did(imported: app.WorkbookImport) -> list[str]:
    """The headline figures before the edits (as exported) and after, with units: each
    system's cost and price per million tokens and the cost's parts; for a decision's
    workbook, the cheapest option and its cost a month and per million tokens."""
    out = ["What the edits did (as exported -> as edited)"]
    for was, now in zip(imported.before, imported.results, strict=True):
        figures = [(n, *was.shown(n), now.shown(n)[0]) for n in HEADLINE]
        if all(b == a for _, b, _, a in figures):
            out.append(f"  {now.name}: headline figures unchanged")
            continue
        rows = [[f"  {label(n)}", format_number(b, unit, n), "->", format_number(a, unit, n),
                 unit_words(display_unit(n, unit)), _change(b, a)]
                for n, b, unit, a in figures]
        out += [f"  {now.name}", *("  " + line for line in columns(rows, {1, 3, 5}))]
    if imported.decision is not None and imported.decision_before is not None:
        cur = imported.decision.money.currency
        decided = (imported.decision_before, imported.decision)
        picks = [d.decision.ranked[0] if d.decision.ranked else None for d in decided]
        names = [p.option.name if p is not None else "none ranked" for p in picks]
        # in the currency the decision shows its money in, at its rate [currency/USD]
        monthly = [None if p is None else p.charge.monthly * d.money.rate
                   for p, d in zip(picks, decided, strict=True)]
        per_mtok = [None if p is None else p.per_mtok * d.money.rate
                    for p, d in zip(picks, decided, strict=True)]
        out += ["  The decision",
                f"    Cheapest option: {names[0]}" + (" (unchanged)" if names[0] == names[1]
                                                      else f" -> {names[1]}")]
        rows = [["    Its cost a month", format_number(monthly[0], "USD/month"), "->",
                 format_number(monthly[1], "USD/month"), f"{cur} per month",
                 _change(*monthly)],
                ["    Its cost per million tokens", format_number(per_mtok[0], "USD/Mtok"),
                 "->", format_number(per_mtok[1], "USD/Mtok"), f"{cur} per million tokens",
                 _change(*per_mtok)]]
        out += columns(rows, {1, 3, 5})
    return out
