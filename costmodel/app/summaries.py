"""One-page summaries (PDF) of a decision for a demand and of a capacity plan: what a
negotiator or a finance reader passes on, drawn offline (:mod:`costmodel.render.onepage`)."""
from __future__ import annotations

from ..render.display import NO_VALUE, format_number, format_percent
from ..render.onepage import Heading, Paragraph, Table, render_page
from ..render.report import disclosure_items
from .decide import QuotesDecision
from .money import ShownMoney
from .planning import Plan

__all__ = ["decision_pdf", "plan_pdf"]

_DISCLOSED = ("Power counted", "Power", "Operating point", "Electricity", "Financing", "Money")


def _disclosure(result) -> str:
    said = dict(disclosure_items(result))
    return "; ".join(f"{k.lower()} {said[k]}" for k in _DISCLOSED if k in said) + "."


def decision_pdf(answer: QuotesDecision) -> bytes:
    """The one-page summary of a decision (PDF): the demand, the recommendation, the offers
    ranked, what cannot be ranked, break-evens, the assumptions and the disclosure."""
    d = answer.decision
    load = d.load
    blocks: list = [Paragraph(
        f"Demand: {load.volume:,.0f} million mixed tokens a month (average "
        f"{load.average:,.0f} token/s, peak {load.peak:,.0f} token/s), {load.shape.words()}"
        + (f"; {load.batch_share:.0%} as batch" if load.batch_share else "")
        + (f"; {load.cached_input_share:.0%} of input tokens cached"
           if load.cached_input_share else "") + ".")]
    blocks += [Heading("Recommendation"),
               Paragraph(d.recommendation["text"] if d.recommendation else
                         "No offer can be ranked for this demand.", bold=True, size=9.5)]
    m, cur = answer.money.value, answer.money.currency  # money in the answer's currency
    rows = [[str(i), p.option.name, p.option.vendor, f"{m(p.charge.monthly):,.0f}",
             format_number(m(p.per_mtok), "USD/Mtok"),
             NO_VALUE if p.charge.accelerators is None else f"{p.charge.accelerators:,}",
             format_percent(p.charge.utilisation), f"{p.term:g}", f"{m(p.term_pv):,.0f}"]
            for i, p in enumerate(d.ranked, 1)]
    blocks += [Heading("Offers ranked for this demand"),
               Table(["#", "Offer", "Vendor", f"{cur}/month", f"{cur}/Mtok", "Accelerators",
                      "Utilisation", "Term (months)",
                      f"PV at {format_percent(d.discount_rate)} ({cur})"], rows,
                     right={0, 3, 4, 5, 6, 7, 8}, mark_first=True)]
    notes = [f"{p.option.name}: {n}" for p in d.ranked for n in (*p.charge.lines,
                                                                  *p.option.flags)]
    notes += [f"{o.name}: not ranked: {o.why}" for o in d.unranked]
    if notes:
        blocks += [Heading("Flags and how each was charged")] + [Paragraph(n) for n in notes]
    crossings = [b for b in d.break_even if b["volume"] is not None]
    if crossings:
        blocks += [Heading("Break-even volumes"), Paragraph("; ".join(
            f"{b['offers'][0]} / {b['offers'][1]}: {b['volume']['value']:,.0f} Mtok a month "
            f"({b['cheaper_below']} cheaper below)" for b in crossings) + ".")]
    blocks += [Heading("Assumptions and disclosure"),
               Paragraph("; ".join(d.assumptions) + ".")]
    if answer.money.says:
        blocks.append(Paragraph(f"Money: {answer.money.quotes_words()}."))
    for p in answer.systems:
        blocks.append(Paragraph(f"Own build {p.result.name}: {_disclosure(p.result)}"))
    return render_page("Which offer for this demand", blocks,
                       "Every offer and our own builds priced for the same demand, at the "
                       "same service level")


def plan_pdf(planned: Plan) -> bytes:
    """The one-page summary of a capacity plan (PDF): the fleet (for a power budget, its
    whole deployments, the same per GW and the power of one deployment at each level), its
    cost, how it was sized and the disclosure."""
    j = planned.to_json()
    a, pp = j["disclosure"]["plan"], j["power_plan"]
    r = planned.priced.result
    if a["sized_for"] == "demand":
        what = (f"Sized for an average demand of {a['demand']['value']:,.0f} token/s "
                f"({a['demand_per_month']['value']:,.0f} Mtok a month), availability "
                f"{a['availability']:.2%}")
    else:
        what = (f"Sized for a power budget of {a['power_budget']['value']:,.0f} W at the "
                f"{pp['boundary']} boundary, in whole {pp['deployment']}s with "
                f"{format_percent(pp['headroom'])} planning headroom")
    money = lambda x: "-" if x != x else f"{x:,.0f}"  # noqa: E731  (NaN: no price)
    rows = [["Accelerators", f"{j['accelerators']:,}", ""],
            ["Nodes", f"{j['nodes']:,}", ""], ["Racks", f"{j['racks']:,}", ""],
            *_power_plan_rows(pp),
            ["Concurrent users", "-" if j["users"] is None else f"{j['users']:,}",
             "at the operating point's interactivity"],
            ["Power at the " + str(r.scenario.power.boundary) + " boundary",
             f"{j['power']['value'] / 1e3:,.1f}", "kW"],
            ["Throughput", f"{j['throughput']['value']:,.0f}", "token/s"],
            ["Capital cost", money(j["capex"]["value"]), j["capex"]["unit"]],
            ["Cost per hour", f"{j['cost_per_hour']['value']:,.2f}", j["cost_per_hour"]["unit"]],
            ["Cost per month", f"{j['cost_per_month']['value']:,.0f}",
             f"{j['cost_per_month']['unit']} (730 h)"],
            ["Cost per million tokens",
             format_number(j["cost_per_mtok"]["total"]["value"], "USD/Mtok"),
             j["cost_per_mtok"]["total"]["unit"]],
            *_rate_rows(planned.money),
            ["Utilisation", format_percent(a["resulting_utilisation"]),
             "the demand over the fleet's capacity" if a["sized_for"] == "demand"
             else "the scenario's"]]
    blocks = [Paragraph(what + "; " + a["accelerators"] + "."),
              Heading("The fleet"), Table(["Figure", "Value", "Unit"], rows, right={1}),
              *([Paragraph(pp["note"], bold=True)] if pp and pp["note"] else []),
              Heading("How it was sized"),
              Paragraph("; ".join([*([pp["divides"]] if pp else []), f"nodes = {a['nodes']}",
                                   f"racks = {a['racks']}", f"users = {a['users']}",
                                   a["utilisation_note"], a["output_throughput_note"],
                                   *a["rounding"]]) + "."),
              Heading("Disclosure"), Paragraph(f"{r.name}: {_disclosure(r)}")]
    return render_page(f"Capacity plan: {r.name}", blocks,
                       "The fleet the demand needs (or the whole deployments a power budget "
                       "holds), priced by the engine")


def _rate_rows(money: ShownMoney) -> list[list[str]]:
    """Beside money in another currency: the rate it was converted at, its date and source
    (none in USD)."""
    if money.usd:
        return []
    rate = money.disclosure["rate"]
    return [[f"Exchange rate ({money.currency} per USD)", f"{rate['value']:g}",
             f"{rate['unit']} ({rate['date'] or 'undated'}; "
             f"{rate['source'] or 'no source given'})"]]


def _power_plan_rows(pp: dict | None) -> list[list[str]]:
    """A power budget's whole deployments, per GW, and one deployment's power at each level
    (the plan's JSON ``power_plan``); none for a demand."""
    if pp is None:
        return []
    kind, watts = pp["deployment"], pp["power_per_deployment"]
    rows = [[f"Whole {kind}s in the budget", f"{pp['deployments']:,}",
             f"{pp['accelerators_per_deployment']:,} accelerators a {kind}"],
            [f"Whole {kind}s per GW", f"{pp['per_gw']['deployments']:,}",
             f"{pp['per_gw']['accelerators']:,} accelerators"],
            [f"{kind.capitalize()} AC power", format_number(watts["ac"]["value"], "W"),
             "W, " + pp["powers"]["ac"]],
            ["Facility power", format_number(watts["facility"]["value"], "W"),
             "W, " + pp["powers"]["facility"]]]
    if pp["boundary"] != "facility":
        rows.append([f"Power at the {pp['boundary']} boundary",
                     format_number(watts["at_boundary"]["value"], "W"),
                     "W, " + pp["powers"]["at_boundary"]])
    rows.append(["Planning power", format_number(watts["planning"]["value"], "W"),
                 "W, " + pp["powers"]["planning"]])
    return rows
