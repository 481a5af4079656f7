"""``costmodel chargeback USAGE... --fleet FILE [--period 2026-11] [--by team] [--idle
separate|usage|even] [--workbook out.xlsx] [--focus out.csv] [--json]``: who used the fleet
over a period and what each tenant owes (the use case is
:func:`costmodel.app.chargeback.chargeback`)."""
from __future__ import annotations

import click

from ..app.chargeback import (
    IDLE_RULES,
    RULES,
    ChargebackRequest,
    chargeback,
    chargeback_workbook,
    focus_csv,
    read_fleet,
)
from ..model.errors import InputError
from ..render.report import MARK, PAD, columns, wrap
from ..sources.usage import UsageError, read_usage
from .common import CONTEXT, check_xlsx, emit_json, fail, fail_input, write_file

__all__ = ["chargeback_command", "chargeback_text"]

_OPTIONS = {"period": "--period", "by": "--by", "idle": "--idle"}


@click.command("chargeback")
@click.argument("usage", nargs=-1, required=True)
@click.option("--fleet", "fleet_path", required=True, metavar="FILE",
              help="The fleet file (TOML or JSON): its pools, each a scenario and a size.")
@click.option("--period", metavar="PERIOD",
              help="A month (2026-11) or days (2026-11-01..2026-11-15), UTC; default: the "
                   "fleet file's period.")
@click.option("--by", default="tenant", show_default=True, metavar="KEY",
              help="The records' column that names a tenant (team, project_id, api_key_id, "
                   "user, tag:<name>...).")
@click.option("--idle", type=click.Choice(IDLE_RULES), default="separate", show_default=True,
              help="Idle cost: its own line, shared in proportion to usage, or evenly.")
@click.option("--workbook", metavar="OUT.xlsx",
              help="Also write the chargeback workbook (live formulas).")
@click.option("--focus", metavar="OUT.csv", help="Also write a FOCUS-style CSV of the charges.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def chargeback_command(usage: tuple[str, ...], fleet_path: str, period: str | None, by: str,
                       idle: str, workbook: str | None, focus: str | None,
                       as_json: bool) -> None:
    """Charge each tenant its share of the fleet's cost for a period, from USAGE records
    (CSV files): usage in input-token equivalents at each pool's cost at its measured
    utilisation, reserved shares, and the idle cost. The tenants' charges and the idle line
    add up to the fleet's cost to the cent."""
    check_xlsx(workbook, "--workbook")
    if focus is not None and not focus.lower().endswith(".csv"):
        fail("--focus must end in .csv")
    try:
        records = read_usage(usage)
    except UsageError as exc:
        fail(str(exc))
    try:
        data, base = read_fleet(fleet_path)
        ledger = chargeback(CONTEXT, ChargebackRequest(
            data, records, base=base, period=period, by=by, idle=idle, where=fleet_path))
    except InputError as exc:
        fail_input(exc, _OPTIONS)
    if workbook:
        write_file(workbook, chargeback_workbook(ledger).content)
    if focus:
        write_file(focus, focus_csv(ledger))
    if as_json:
        emit_json(ledger.to_json())
    else:
        click.echo("\n".join(chargeback_text(ledger.to_json())))


def _money(x: dict) -> str:
    return "-" if x.get("value") is None else f"{x['value']:,.2f}"


def chargeback_text(answer: dict) -> list[str]:
    """The ledger as terminal text: the tenants' table, the idle line and the check, the
    pools, the list-price comparison and the basis."""
    p = answer["period"]
    lines = [f"{PAD}Chargeback: {answer['fleet']}, {p['label']} ({p['start']} to {p['end']}, "
             f"{p['hours']:,.0f} h), {answer['currency']}", ""]
    rows = [["tenant", "charge", "share", "USD/Mtok", "tokens", "utilisation", "list price"]]
    for t in answer["tenants"]:
        rows.append([t["tenant"], _money(t["charge"]),
                     "-" if t["share"] is None else f"{t['share']:.1%}",
                     "-" if t["cost_per_mtok"]["value"] is None
                     else f"{t['cost_per_mtok']['value']:.4f}",
                     f"{t['tokens']['total']:,.0f}",
                     "-" if t["utilisation"] is None else f"{t['utilisation']:.1%}",
                     _money(t["list_price"])])
    rows.append(["(idle line)", _money(answer["idle_line"]), "", "", "", "", ""])
    rows.append(["fleet", _money(answer["total"]), "", "", "", "", _money(answer["list_price"])])
    table = columns(rows, right={1, 2, 3, 4, 5, 6})
    lines += [PAD + table[0]] + [PAD + r for r in table[1:-1]] + [MARK + table[-1]]
    check = answer["check"]
    lines += ["", f"{PAD}Check: tenants {_money(check['tenants'])} + idle line "
                  f"{_money(check['idle_line'])} = fleet {_money(check['fleet'])} "
                  f"({'conserved' if check['conserved'] else 'NOT CONSERVED'})"]
    if answer["saving"]["value"] is not None:
        s = answer["saving"]["value"]
        lines.append(f"{PAD}At list prices the same tokens cost {_money(answer['list_price'])}"
                     f": owning {'saved' if s >= 0 else 'lost'} {abs(s):,.2f} USD")
    for basis, e in answer.get("emissions", {}).items():
        if e["total"]["value"] is None:
            continue  # (no factor for this basis in some pool)
        shares = ", ".join(f"{t['tenant']} {t['emissions'][basis]['value']:,.1f}"
                           for t in answer["tenants"])
        lines += wrap(f"Emissions, {basis}-based (kgCO2e, charged as the cost is): {shares}; "
                      f"idle line {e['idle_line']['value']:,.1f}; fleet "
                      f"{e['total']['value']:,.1f}", PAD, PAD + "  ")
    lines.append("")
    for pool in answer["pools"]:
        u = pool["utilisation"]
        c = pool["cost_per_mtok"]
        lines += wrap(
            f"{pool['pool']}: {pool['accelerators']} accelerators of {pool['scenario']!r} "
            f"({pool['sized']}); cost {_money(pool['cost'])} USD; measured utilisation "
            f"{u['measured']:.1%} against the scenario's {u['assumed']:.1%}"
            + (" (usage beyond capacity)" if u["over_capacity"] else "")
            + f"; cost per Mtok ({c['token_kind']}) {_fmt(c['measured'])} at the measured, "
              f"{_fmt(c['assumed'])} at the assumed; idle {_money(pool['idle'])} USD",
            PAD, PAD + "  ")
    d = answer["disclosure"]
    records = d["records"]
    lines += ["", *wrap(
        f"Basis: tenants by {d['tenant_key']!r}, idle {d['idle_rule']}, cached weight "
        f"{d['weights']['cached_weight']:g}; {records['in_period']:,} records in the period "
        f"({records['outside_period']:,} outside); sources: {', '.join(d['sources'])}.",
        PAD, PAD)]
    lines += wrap("Rules: " + "; ".join(RULES) + ".", PAD, PAD)
    return lines


def _fmt(q: dict) -> str:
    return "-" if q["value"] is None else f"{q['value']:.4f}"
