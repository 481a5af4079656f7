"""Plain-text renderings of results and comparisons for the terminal."""
from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np

from .curves import Curve, Selection
from .model import MODEL
from .power import EnergyReport, TokenEnergy
from .results import HEADLINE, Comparison, Result

__all__ = ["columns", "format_number", "result_table", "comparison_table", "curve_table",
           "energy_table", "quotes_table", "term_report"]


def format_number(v: float | None) -> str:
    """Six significant digits, thousands separated; ``-`` for a missing value."""
    if v is None or not math.isfinite(v):
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 1e5:
        return f"{v:,.0f}"
    digits = max(0, 5 - math.floor(math.log10(abs(v))))
    text = f"{v:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _label(name: str) -> str:
    return name.replace("_", " ")


def columns(pairs: list[list[str]], right: set[int]) -> list[str]:
    """Rows of cells as aligned text columns; ``right`` holds the right-aligned ones."""
    widths = [max(len(r[i]) for r in pairs) for i in range(len(pairs[0]))]
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in pairs]


def _q(d) -> str:
    if d is None or d.get("value") is None:
        return "-"
    return f"{format_number(d['value'])} {d['unit']}"


def disclosure_lines(r: Result) -> list[str]:
    d = r.disclosure()
    op, w, e, f = d["operating_point"], d["workload"], d["electricity"], d["financing"]
    point = op["chosen"]
    if op["throughput_per_kw_as_given"]:
        point += (f"; {_q(op['throughput_per_kw_as_given'])} as given, normalised by "
                  f"{_q(op['normalised_by'])}")
    if op["interactivity"]:
        point += f"; interactivity {_q(op['interactivity'])} (TBT {_q(op['tbt'])})"
    workload = ", ".join(x for x in [
        w["model"], f"ISL/OSL {format_number(w['isl']['value'])}/"
                    f"{format_number(w['osl']['value'])}",
        w["precision"], w["framework"],
        f"speculative decoding {w['speculative_decoding']}" if w["speculative_decoding"]
        else None] if x)
    money = (f"rent at {_q(f['hourly_price'])}" if f["cost_basis"] == "rent" else
             f"own: life {_q(f['life'])}, cost of capital {_q(f['cost_of_capital'])}, "
             f"salvage {format_number(f['salvage'])}, maintenance {_q(f['maintenance'])}")
    lines = [
        f"boundary: {d['boundary']}   power basis: {d['power_basis']}   "
        f"power per accelerator: {_q(d['power_per_accelerator'])}",
        f"operating point: {point}",
        f"token kind: {d['token_kind']}   workload: {workload}",
        f"electricity: {_q(e['price'])} ({e['source'] or 'no source given'}; "
        f"{e['date'] or 'undated'})",
        f"financing: {money}",
        f"utilisation: {format_number(d['utilisation'])}   idle power: "
        f"{format_number(d['idle_power'])}   gross margin: "
        f"{format_number(d['pricing']['gross_margin'])}",
        f"allocation: {d['pricing']['allocation']}",
    ]
    rate = d["reference_rate"]
    if rate is not None:
        lines.append(f"reference rate: {rate['key']} (version {rate['version']}; "
                     f"{_q(rate['hourly_price'])}, all-in power {_q(rate['all_in_power'])}); "
                     f"{rate['status']}")
        lines.append(f"  {rate['all_in']}")
        lines.append(f"  origin: {rate['origin'] or 'no source given'}")
        lines += [f"  departs from the rate: {x}" for x in rate["departures"]]
    if d["defaults_used"]:
        lines.append("defaults used: " + ", ".join(d["defaults_used"]))
    return lines


def result_table(r: Result) -> str:
    rows = [[_label(n), format_number(r.value(n)), MODEL.steps[n].unit] for n in HEADLINE]
    out = [f"{r.name} ({r.scenario.accelerator.name})", *("  " + x for x in columns(rows, {1})),
           "", "disclosure", *("  " + x for x in disclosure_lines(r))]
    return "\n".join(out)


def comparison_table(c: Comparison) -> str:
    names = [r.name for r in c.results]
    header = ["figure", "unit", *(f"[{i}] {n}" for i, n in enumerate(names, 1)),
              *(f"[{i}]/[1]" for i in range(2, len(names) + 1))]
    rows = [header]
    for n in HEADLINE:
        ratios = c.ratios(n)[1:]
        rows.append([_label(n), MODEL.steps[n].unit,
                     *(format_number(r.value(n)) for r in c.results),
                     *(f"{format_number(x)}x" if x is not None else "-" for x in ratios)])
    out = columns(rows, set(range(2, len(header))))
    for i, r in enumerate(c.results, 1):
        out += ["", f"[{i}] {r.name}:", *("  " + x for x in disclosure_lines(r))]
    return "\n".join(out)


def curve_table(c: Curve, kind: str, origin: str, sel: Selection | None = None) -> str:
    """The points of a curve, frontier points starred, and a reading if one was made."""
    try:
        on_frontier = set(c.frontier(kind).indices.tolist())
    except ValueError:  # no interactivity: no frontier
        on_frontier = set()
    header = ["", "concurrency", "interactivity", f"{kind} throughput", "TTFT", "E2E",
              "power"]
    units = ["", "", "token/s/user", "token/s", "s", "s", "W"]
    rows = [header, units]
    def order(i: int) -> tuple[float, float]:  # by interactivity, else by concurrency
        x = c.interactivity[i]
        return (np.inf if np.isnan(x) else x, c.concurrency[i])

    for i in sorted(range(len(c)), key=order):
        rows.append(["*" if i in on_frontier else "", format_number(c.concurrency[i]),
                     format_number(c.interactivity[i]),
                     format_number(c.throughput_of(kind)[i]), format_number(c.ttft[i]),
                     format_number(c.e2e_latency[i]), format_number(c.power[i])])
    out = [f"curve {c.key.id}", f"  from {origin}; {c.source}",
           f"  {len(c)} points, {len(on_frontier)} on the Pareto frontier (*)", "",
           *columns(rows, set(range(1, len(header))))]
    out += [f"note: {n}" for n in c.notes]
    if sel is not None:
        out += ["", f"reading: {sel.description}",
                f"  throughput {format_number(sel.throughput)} token/s per accelerator"]
    return "\n".join(out)


def _clock(t: float) -> str:
    """A trace time: POSIX seconds as UTC date-time, a relative clock as seconds."""
    if t > 1e8:  # after 1973: a wall-clock timestamp, not seconds since the run started
        return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")
    return f"{format_number(t)} s"


def energy_table(report: EnergyReport, tokens: TokenEnergy | None) -> str:
    """Per-GPU energy of a trace, totals, J/token and the verdict with its reasons."""
    rows = [["GPU", "energy", "average power", "peak power", "samples", "missing", "verdict"],
            ["", "J", "W", "W", "", "", ""]]
    for g in report.gpus:
        rows.append([g.gpu, format_number(g.energy), format_number(g.average_power),
                     format_number(g.peak_power), str(g.samples), str(g.missing), g.verdict])
    out = [f"power trace {report.source}",
           f"  window {_clock(report.start)} to {_clock(report.end)} "
           f"({format_number(report.duration)} s), gap limit {format_number(report.max_gap)} s",
           "", *columns(rows, {1, 2, 3, 4, 5}), "",
           f"total energy          {format_number(report.total_energy)} J",
           f"mean power per GPU    {format_number(report.mean_average_power)} W",
           f"peak power            {format_number(report.peak_power)} W"]
    if tokens is not None:
        for label, v in (("total", tokens.total), ("input", tokens.input),
                         ("output", tokens.output)):
            if v is not None:
                out.append(f"J per {label + ' token':13s}  {format_number(v)} J/token")
    out.append(f"verdict: {report.verdict.upper()}")
    out += [f"  reason: {r}" for r in report.reasons]
    out += [f"  warning: {w}" for w in report.warnings]
    return "\n".join(out)


def _money(v: float) -> str:
    return f"{v:,.0f}"


def quotes_table(by_scenario: list) -> str:
    """Quotes ranked per scenario: price per Mtok at the operating point beside our cost."""
    out: list[str] = []
    for ranked in by_scenario:
        first = ranked[0]
        out.append(f"against {first.scenario} (per million {first.token_kind} tokens; "
                   f"cheapest first)")
        rows = [["#", "quote", "form", "price", "own cost", "implied margin",
                 "break-even util.", "term", "quote PV", "own PV", "saving PV"],
                ["", "", "", "USD/Mtok", "USD/Mtok", "", "", "month", "USD", "USD", "USD"]]
        for i, c in enumerate(ranked, 1):
            be = c.break_even_utilisation
            rows.append([str(i), c.quote.name, c.quote.form, format_number(c.price_per_mtok),
                         format_number(c.own_cost_per_mtok), f"{c.implied_margin:.1%}",
                         "-" if be is None else f"{be:.1%}", format_number(c.quote.term),
                         _money(c.quote_pv), _money(c.own_pv), _money(c.saving_pv)])
        out += ["  " + r for r in columns(rows, set(range(3, 11)))]
        for c in ranked:
            out.append(f"  {c.quote.name}: volume {format_number(c.volume)} Mtok/month "
                       f"({c.volume_basis})")
            out += [f"    flag: {f}" for f in c.flags]
        out.append("")
    return "\n".join(out).rstrip()


def term_report(quote, comparison, rows, longest, tolerance, improvement, successor_price,
                successor_month) -> str:
    """Each term length's premium over staying flexible."""
    how = []
    if improvement is not None:
        how.append(f"market price falls {improvement:.0%} a year")
    if successor_price is not None:
        how.append(f"a successor at {format_number(successor_price)} USD/Mtok from month "
                   f"{format_number(successor_month)}")
    table = [["term", "locked PV", "flexible PV", "premium", "premium share", "within"],
             ["month", "USD", "USD", "USD", "", f"{tolerance:.0%}"]]
    for r in rows:
        table.append([format_number(r.months), _money(r.locked_pv), _money(r.flexible_pv),
                      _money(r.premium), f"{r.premium_share:.1%}",
                      "yes" if r.within_tolerance else "no"])
    out = [f"{quote.name}: {format_number(comparison.price_per_mtok)} USD/Mtok locked, "
           f"{format_number(comparison.volume)} Mtok/month ({comparison.volume_basis})",
           f"flexible buyer: {'; '.join(how)}", "", *columns(table, set(range(1, 6))), ""]
    out.append(f"longest term within {tolerance:.0%}: "
               + (f"{format_number(longest)} months" if longest is not None else
                  "none of those priced"))
    return "\n".join(out)
