"""``costmodel plan FILE --demand Q | --power-budget Q [--headroom F] [--deployment node|rack]``:
the fleet a demand needs, or the whole deployments a power budget holds, and what it costs (the
use case is :func:`costmodel.app.plan`)."""
from __future__ import annotations

import math

import click

from .. import app
from ..model.errors import InputError
from ..model.units import UnitInputError, parse_quantity
from ..render.display import display_unit, format_number, format_percent, unit_words
from ..render.report import MARK, PAD, columns, disclosure_items, words, wrap
from .common import CONTEXT, emit_json, fail, fail_input, reading_for, specs_for, write_file

__all__ = ["plan", "plan_text"]

# the request's fields by the options that give them
OPTIONS = {"demand": "--demand", "power_budget": "--power-budget",
           "availability": "--availability", "at_interactivity": "--at-interactivity",
           "headroom": "--headroom", "deployment": "--deployment"}
SET_HELP = ('Override an input: dotted.key=VALUE, e.g. utilisation=0.6 or '
            'power.boundary=facility. Repeatable.')


def _quantity(raw: str | None, option: str, unit: str, **kw) -> float | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw, unit, **kw)
    except UnitInputError as exc:
        fail(f"{option}: {exc}")


@click.command("plan")
@click.argument("file")
@click.option("--demand", metavar="QUANTITY",
              help='The average demand, in tokens of the scenario\'s token kind: "2.5e6 '
                   'token/s", "216000 Mtok/day" or "6570000 Mtok/month".')
@click.option("--power-budget", "power_budget", metavar="QUANTITY",
              help='A power budget at the scenario\'s boundary, e.g. "10 MW".')
@click.option("--availability", metavar="FRACTION",
              help='With --demand: the fraction of hours an accelerator is available, e.g. '
                   '0.99 or "99 %" (default 1).')
@click.option("--headroom", metavar="FRACTION",
              help='With --power-budget: the planning headroom above the power counted, at '
                   'least 0 and less than 1, e.g. 0.1 or "10 %" (default 0).')
@click.option("--deployment", metavar="node|rack",
              help="With --power-budget: what the budget holds whole, a node (the default) "
                   "or a rack.")
@click.option("--at-interactivity", "at_interactivity", metavar="QUANTITY",
              help='Read the scenario\'s curve at this interactivity, e.g. '
                   '"100 token/s/user".')
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--pdf", metavar="OUT.pdf", help="Also write the plan's one-page summary (PDF).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan(file: str, demand: str | None, power_budget: str | None, availability: str | None,
         headroom: str | None, deployment: str | None, at_interactivity: str | None,
         overrides: tuple[str, ...], pdf: str | None, as_json: bool) -> None:
    """Size a fleet for the scenario in FILE: accelerators, nodes and racks for an average
    demand (rounded up), or the whole nodes (or racks) a power budget holds with a planning
    headroom, and per gigawatt (rounded down); then its power, capital cost, cost per hour,
    month and million tokens, and the concurrent users at the operating point's
    interactivity."""
    if (demand is None) == (power_budget is None):
        fail("give exactly one of --demand or --power-budget")
    if pdf is not None and not pdf.lower().endswith(".pdf"):
        fail(f"--pdf: expected a file name ending in .pdf, got {pdf!r}")
    request = app.PlanRequest(
        specs_for([file], overrides)[0],
        _quantity(demand, "--demand", "token/s", allow_zero=False),
        _quantity(power_budget, "--power-budget", "W", allow_zero=False),
        reading_for(at_interactivity, False),
        _quantity(availability, "--availability", "dimensionless", allow_zero=False),
        _quantity(headroom, "--headroom", "dimensionless", allow_negative=True), deployment)
    try:
        planned = app.plan(CONTEXT, request)
    except InputError as exc:
        fail_input(exc, OPTIONS)
    if as_json:
        emit_json(planned.to_json())
    else:
        click.echo(plan_text(planned))
    if pdf is not None:
        write_file(pdf, app.plan_pdf(planned))
        if not as_json:
            click.echo(f"one-page summary written to {pdf}")


# ---- the text ---------------------------------------------------------------------------------

def _figure(value: float | None, unit: str, name: str | None = None) -> tuple[str, str]:
    """(the number, its unit in words) by the display rules."""
    return format_number(value, unit, name), unit_words(display_unit(name, unit))


def _pairs(pairs: list[tuple[str, str]], indent: str = "  ") -> list[str]:
    """``Label   text`` lines, labels aligned, long texts wrapped under their text."""
    width = max(len(k) for k, _ in pairs) + 2
    out: list[str] = []
    for key, text in pairs:
        out += wrap(text, f"{indent}{key:<{width}}", " " * (len(indent) + width))
    return out


def plan_text(p: app.Plan) -> str:
    """The fleet first (marked), then its totals, how it was sized, and what the figures
    rest on, in words."""
    req, r, s = p.request, p.priced.result, p.priced.result.scenario
    kind, boundary = s.operating_point.token_kind, s.power.boundary
    values = p.sized.result.values
    if req.demand is not None:
        title = f"{r.name}: a fleet for {words(req.demand, 'token/s')} of {kind} tokens"
    else:
        title = (f"{r.name}: the fleet a power budget of {words(req.power_budget, 'W')} at the "
                 f"{boundary} boundary buys")
    per_node, per_rack = s.node.accelerators, s.rack.nodes
    users = ("-" if p.users is None else f"{p.users:,}",
             "" if p.interactivity is None else
             f"at {words(p.interactivity, 'token/s/user')}"
             if p.users is not None else "")
    pp = p.power_plan
    money = p.money

    def m(value: float | None, unit: str, name: str | None = None) -> tuple[str, str]:
        return _figure(money.value(value, unit), money.unit(unit), name)
    fleet = [
        [MARK + "Accelerators", f"{p.accelerators:,}", "",
         "" if pp is None else f"in {_many(pp.deployments, 'whole ' + pp.deployment)} of "
                               f"{pp.per_deployment:,}"],
        [MARK + "Nodes", f"{p.nodes:,}", "", f"{per_node:,} accelerators per node"],
        [MARK + "Racks", f"{p.racks:,}", "", f"{per_rack:,} nodes per rack"],
        [MARK + "Concurrent users", users[0], "", users[1]],
    ]
    totals = [
        [PAD + "Power", *_figure(p.power, "W"), f"at the {boundary} boundary, at the "
                                                 f"operating point"],
        [PAD + "Throughput", *_figure(p.throughput, "token/s"),
         f"the fleet's capacity, {kind} tokens"],
        [PAD + "Capital cost", *m(p.capex, "USD"),
         "to buy them; rented, the cost per hour carries the rent"
         if s.accelerator.cost_basis == "rent" else ""],
        [PAD + "Cost per hour", *m(p.cost_per_hour, "USD/h"), ""],
        [PAD + "Cost per month", *m(p.cost_per_month, "USD/month"), "730 hours"],
        [PAD + "Cost per million tokens", *m(r.value("cost_per_mtok_total"), "USD/Mtok",
                                             "cost_per_mtok_total"),
         f"at {format_percent(p.resulting_utilisation)} utilisation"],
        *([PAD + "Emissions a year", *_figure(t, "tCO2e/year"), words]
          for t, words in _emission_rows(p) if not math.isnan(t)),
    ]
    planning = [] if pp is None else _planning_rows(pp)
    lines = columns(fleet + planning + totals, {1})  # one alignment for every section
    out = [*wrap(title, "", "  "),
           *wrap(f"{s.accelerator.name}; fleet totals, costs per million {kind} tokens", "",
                 "  "),
           "", "The fleet", *lines[:len(fleet)]]
    if p.users is None:
        out.append("-: not computed (the operating point has no interactivity)")
    if pp is not None:
        out += ["", f"Power planning: whole {pp.deployment}s, "
                    f"{format_percent(pp.headroom)} headroom",
                *lines[len(fleet):len(fleet) + len(planning)]]
        if pp.note() is not None:
            out += wrap(pp.note(), "", "")
    out += ["", "Fleet totals", *lines[len(fleet) + len(planning):],
            "", "How it was sized", *_pairs(_sizing(p, values)),
            "", "What the figures rest on", *_pairs(disclosure_items(r))]
    return "\n".join(out)


def _many(n: int, thing: str) -> str:
    return f"{n:,} {thing}{'' if n == 1 else 's'}"


def _emission_rows(p) -> list[tuple[float, str]]:
    """The fleet's tonnes a year by basis, with what each counts."""
    return [(tonnes, words) for _, tonnes, words in p.emission_rows()]


def _planning_rows(pp: app.PowerPlan) -> list[list[str]]:
    """The power of one deployment at each level, then the whole deployments a gigawatt
    holds (marked: an answer)."""
    kind = pp.deployment.capitalize()
    rows = [[PAD + f"{kind} AC power", *_figure(pp.ac, "W"),
             "at its power supplies (chassis AC)" if pp.deployment == "node" else
             "at the rack's feed"],
            [PAD + "Facility power", *_figure(pp.facility, "W"),
             f"the rack's AC power x PUE {pp.pue:g}" if pp.deployment == "rack" else
             f"its share of the rack's AC power x PUE {pp.pue:g}"]]
    if pp.boundary != "facility":
        rows.append([PAD + f"Power at the {pp.boundary} boundary", *_figure(pp.at_boundary, "W"),
                     "what the budget counts"])
    rows += [[PAD + "Planning power", *_figure(pp.planning, "W"),
              f"x (1 + {format_percent(pp.headroom)} headroom): each count divides it"],
             [MARK + f"Whole {pp.deployment}s per GW", f"{pp.deployments_per_gw:,}", "",
              f"{pp.accelerators_per_gw:,} accelerators"]]
    return rows


def _sizing(p: app.Plan, values: dict[str, float]) -> list[tuple[str, str]]:
    """How the plan sized the fleet, in words: the formula with its figures."""
    req, s = p.request, p.sized.result.scenario
    t, power = values["throughput"], values["power_per_accelerator"]
    per_node, per_rack = s.node.accelerators, s.rack.nodes
    pairs = []
    if req.demand is not None:
        monthly = p.assumptions()["demand_per_month"]["value"]
        pairs.append(("Demand", f"{words(req.demand, 'token/s')} on average "
                                f"({words(monthly, 'Mtok/month')}), "
                                f"{s.operating_point.token_kind} tokens"))
        share = req.demand / (t * s.utilisation * p.availability)
        pairs.append(("Accelerators",
                      f"demand / (throughput per accelerator {words(t, 'token/s')} x "
                      f"utilisation {format_percent(s.utilisation)} x availability "
                      f"{format_percent(p.availability)}) = {share:,.2f}, rounded up: "
                      f"{p.accelerators:,}"))
    else:
        pp = p.power_plan
        pairs.append((f"Whole {pp.deployment}s", pp.divides()))
        pairs.append(("Powers", "; ".join(f"{name} power per {pp.deployment}: {said}"
                                          for name, said in (("AC", pp.powers()["ac"]),
                                          ("facility", pp.powers()["facility"]),
                                          ("planning", pp.powers()["planning"])))))
        pairs.append(("Accelerators", f"{_many(pp.deployments, pp.deployment)} x "
                                      f"{pp.per_deployment:,} accelerators: "
                                      f"{p.accelerators:,}, drawing "
                                      f"{words(p.power, 'W')} at the {s.power.boundary} "
                                      f"boundary (power per accelerator "
                                      f"{words(power, 'W')}), within the budget"))
    if req.demand is not None:
        pairs.append(("Nodes and racks",
                      f"{p.accelerators:,} / {per_node:,} accelerators per node, rounded up: "
                      f"{_many(p.nodes, 'node')}; / {per_rack:,} nodes per rack, rounded up: "
                      f"{_many(p.racks, 'rack')}"))
    elif p.power_plan.deployment == "node":
        pairs.append(("Nodes and racks",
                      f"{_many(p.nodes, 'whole node')}; / {per_rack:,} nodes per rack, "
                      f"rounded up: {_many(p.racks, 'rack')}"))
    else:
        pairs.append(("Nodes and racks",
                      f"{_many(p.racks, 'whole rack')} x {per_rack:,} nodes per rack: "
                      f"{_many(p.nodes, 'node')}"))
    if req.demand is not None:
        pairs.append(("Utilisation",
                      f"sized at the scenario's {format_percent(s.utilisation)}; the fleet is "
                      f"rounded up, so it serves the demand at "
                      f"{format_percent(p.resulting_utilisation)} (demand / (accelerators x "
                      f"throughput per accelerator)), at which it is priced; hours not "
                      f"serving, unavailable ones included, draw idle power"))
    else:
        pairs.append(("Utilisation", f"priced at the scenario's "
                                     f"{format_percent(s.utilisation)}"))
    out_words = f"{words(p.output_per_accelerator, 'token/s')} per accelerator"
    if p.users is not None:
        pairs.append(("Users", f"accelerators x output throughput ({out_words}) / "
                               f"interactivity {words(p.interactivity, 'token/s/user')}, "
                               f"rounded down: {p.users:,}"))
    pairs.append(("Output throughput", f"{out_words}, {p.output_basis}: {p.output_note}"))
    pairs.append(("Fleet totals", "accelerators x the figures per accelerator (node and rack "
                                  "overheads shared equally); a month is 730 hours"))
    return pairs
