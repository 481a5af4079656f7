"""``costmodel task FILE... [--task TASKFILE] [--target T]``: an agent's task on each system,
its latency and cost (the use case is :func:`costmodel.app.price_task`)."""
from __future__ import annotations

import math

import click

from .. import app
from ..app.task import RULES
from ..decisions.task import validate_task
from ..model.errors import InputError
from ..render.report import MARK, PAD, columns, money_text, wrap
from ..sources.task_file import task_table
from .common import (
    CONTEXT,
    check_xlsx,
    emit_json,
    fail,
    fail_input,
    specs_for,
    write_workbook,
)

__all__ = ["task", "task_text"]

OPTIONS = {"task": "--task", "task.target": "--target", "task.percentile": "--percentile"}
SET_HELP = ('Override an input of every scenario: dotted.key=VALUE, e.g. '
            'electricity.price="0.05 USD/kWh". Repeatable.')


@click.command("task")
@click.argument("files", nargs=-1, required=True)
@click.option("--task", "task_file", metavar="TASKFILE",
              help="A TOML or JSON file whose [task] table is the task (default: the first "
                   "FILE that holds a [task] table).")
@click.option("--target", metavar="QUANTITY",
              help='The task latency needed, e.g. "60 s" (replaces the task\'s target).')
@click.option("--percentile", metavar="NAME",
              help="The statistic of interactivity and TTFT read: median, mean, p90 or p99.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--workbook", metavar="OUT.xlsx",
              help="Also write the task as a workbook of live formulas (a Task sheet: its "
                   "steps, each system's latency and cost).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def task(files: tuple[str, ...], task_file: str | None, target: str | None,
         percentile: str | None, overrides: tuple[str, ...], workbook: str | None,
         as_json: bool) -> None:
    """Price an agent's task on each system in FILES: how long it takes at each system's
    operating point (each step's TTFT, its output tokens over the interactivity, and the tool
    time before it) and what it costs, by token kind. With a target, each system read off a
    curve is priced at the cheapest point of its frontier that meets it."""
    check_xlsx(workbook, "--workbook")
    try:
        table = None
        for path in ([task_file] if task_file else files):
            table = task_table(path)
            if table is not None:
                break
        if table is None:
            fail(f"no [task] table in {task_file or ', '.join(files)}: give one in a file, "
                 f"with --task TASKFILE")
        table = dict(table)
        if target is not None:
            table["target"] = target
        if percentile is not None:
            table["percentile"] = percentile
        request = app.TaskRequest(specs_for(files, overrides), validate_task(table))
        answer = app.price_task(CONTEXT, request)
        book = app.task_workbook(CONTEXT, request) if workbook else None
    except InputError as exc:
        fail_input(exc, OPTIONS)
    if as_json:
        emit_json(answer.to_json())
    else:
        click.echo(task_text(answer))
    if book is not None:
        write_workbook(workbook, book)
        if not as_json:
            click.echo(f"workbook written to {workbook}")


# ---- the text ---------------------------------------------------------------------------------

def _n(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:,.{digits}g}" if abs(value) < 1e4 \
        else f"{value:,.0f}"


def _money(value: float) -> str:
    return f"{value:,.6f}" if value < 0.01 else f"{value:,.4f}"


def task_text(answer: app.TaskAnswer) -> str:
    """The task in one line, then one column a system: whether it meets the target, the
    task's latency and cost, then how each was read and what differs from its measurement."""
    t, s, systems = answer.task, answer.steps, answer.systems
    head = (f"{t.name or 'Task'}: {len(s):,} steps, {s.input.sum():,.0f} input tokens "
            f"({s.cached.sum():,.0f} cached), {s.output.sum():,.0f} output tokens, "
            f"{s.tool_time.sum():,.4g} s of tool time")
    goal = [] if t.target is None else [f"Target: {t.target:g} s, at the {t.percentile}"]
    rows: list[list[str]] = [["", *(x.name for x in systems), ""]]

    def row(label: str, cells: list[str], unit: str, mark: bool = False) -> None:
        rows.append([(MARK if mark else PAD) + label, *cells, unit])

    if t.target is not None:
        row(f"Meets {t.target:g} s", [
            "yes" if x.meets else f"no: {_n(x.latency.total)} s"
            if x.latency is not None else "-" for x in systems], "", True)
    row("Task latency", [_n(x.latency.total if x.latency else None) for x in systems], "s",
        True)
    row("  TTFT, all steps", [_n(x.latency.ttft * len(s) if x.latency else None)
                              for x in systems], "s")
    row("  decoding", [_n(x.latency.decode if x.latency else None) for x in systems], "s")
    row("  tool time", [_n(x.latency.tool if x.latency else None) for x in systems], "s")
    money, cur = answer.money, answer.money.currency

    def m(value: float) -> float:
        return money.value(value)
    row("Cost per task", [_money(m(x.cost.cost)) for x in systems], cur, True)
    row("  energy", [_money(m(x.cost.energy_cost)) for x in systems], cur)
    row("  capital", [_money(m(x.cost.capex_cost)) for x in systems], cur)
    row("  operating", [_money(m(x.cost.opex_cost)) for x in systems], cur)
    row("Price per task", [_money(m(x.cost.price)) for x in systems], cur)
    row("Cost per 1,000 tasks", [f"{m(1000 * x.cost.cost):,.2f}" for x in systems], cur)
    row("Energy per task", [_n(x.cost.energy / 3.6e6) for x in systems], "kWh")
    stated = any(x.priced.result.embodied_stated for x in systems)  # (a row is shared)
    total = "with embodied" if stated else "operational only"
    for key, words in (("location", "location-based"), ("market", "market-based"),
                       ("location_total", f"{total}, location"),
                       ("market_total", f"{total}, market")):
        grams = [x.cost.emissions.get(key, math.nan) for x in systems]
        if any(math.isfinite(g) for g in grams):  # (no factor given: no row)
            row(f"CO2e per task, {words}",
                [_n(g if math.isfinite(g) else None) for g in grams], "g")
    row("Tasks per hour", [_n(x.cost.tasks_per_hour) for x in systems],
        "per accelerator")
    row("Interactivity", [_n(x.interactivity) for x in systems], "token/s/user")
    row("TTFT a step", [_n(x.ttft) for x in systems], "s")
    row("Cost per Mtok", [_money(m(x.priced.result.value("cost_per_mtok_total")))
                          for x in systems], f"{cur} per million tokens")
    out = [*wrap(head, "", "  "), *goal, "", *columns(rows, set(range(1, len(systems) + 1)))]
    out += ["", f"{MARK}Cheapest per task" + (" that meets the target" if t.target else "")
            + f": {answer.cheapest}"]
    for x in systems:
        out += ["", x.name]
        out += wrap(f"read: {x.how}", "  ", "    ")
        out += wrap(f"TTFT: {x.ttft_from}", "  ", "    ")
        if x.needed is not None and x.needed.interactivity is None and t.target is not None:
            out += wrap(f"cannot meet {t.target:g} s: {x.needed.best:.4g} s at its fastest "
                        f"point ({x.needed.fastest:.4g} token/s/user), "
                        f"{x.needed.miss(t.target):.4g} s too slow", "  ", "    ")
        for note in x.notes:
            out += wrap(f"note: {note}", "  ", "    ")
    if not money.usd:
        out += ["", *wrap(f"Money: {money_text(money.disclosure)}", "", "  ")]
    out += ["", "Rules"]
    for rule in RULES:
        out += wrap(rule, "  - ", "    ")
    return "\n".join(out)
