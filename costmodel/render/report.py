"""Plain-text renderings of results and comparisons for the terminal, written for the finance
reader: the answer first and marked, labels and units in words, rounding that fits the
magnitude, fractions as percentages (the rules of :mod:`costmodel.render.display`, shared with the
web pages), and no line wider than :data:`WIDTH` columns where the text can be wrapped."""
from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model.profile import MONTHS, hour_runs, month_runs
from ..model.results import HEADLINE, Comparison, Result
from ..model.steps import MODEL
from .display import (
    CAPACITY_BREAK_EVEN,
    FREE_MARGIN,
    NO_BREAK_EVEN,
    NO_VALUE,
    NOMINAL_TERM,
    NOT_STATED,
    display_unit,
    figure_label,
    format_number,
    format_percent,
    format_quantity,
    format_ratio,
    label,
    not_stated,
    present_value_words,
    unit_words,
)

if TYPE_CHECKING:  # a curve's or an energy table's types: imported where they are used
    from ..model.curves import Curve, Selection
    from ..model.power import EnergyReport, TokenEnergy

__all__ = ["WIDTH", "SECTIONS", "columns", "words", "wrap", "in_sentence", "result_table",
           "comparison_table", "disclosure_items", "curve_table", "energy_table",
           "quotes_table", "term_report", "assumed_defaults", "assumed_line", "DECIDE"]

WIDTH = 120  # [characters] the widest line a rendering writes (a laptop terminal, halved)
MARK = "=> "  # marks the lines that are the answer
PAD = "   "  # the same width, for the other lines

# The headline figures by what a reader looks for: the answer, what it is made of, how
# efficient the system is, and what it costs to own and run. Every HEADLINE figure once.
ANSWER = ["cost_per_mtok_total", "price_per_mtok_total", "price_per_mtok_input",
          "price_per_mtok_output"]
SECTIONS: list[tuple[str, list[str]]] = [
    ("The answer", ANSWER),
    ("Cost breakdown", ["cost_per_mtok_energy", "cost_per_mtok_capex", "cost_per_mtok_opex"]),
    ("Efficiency", ["power_per_accelerator", "throughput", "throughput_per_kw",
                    "tokens_per_kwh", "joules_per_token", "bandwidth_per_watt"]),
    ("Capital and running cost", ["capex_per_accelerator", "cost_per_hour"]),
    ("Emissions", ["emissions_per_mtok", "emissions_market_per_mtok", "embodied_per_mtok",
                   "emissions_total_per_mtok", "emissions_market_total_per_mtok"]),
]

_BOUNDARY = {"chip": "the accelerator package alone",
             "node": "the accelerator and its share of the node",
             "rack": "the accelerator and its share of node and rack",
             "facility": "the accelerator and its share of node and rack, times the "
                         "facility's PUE"}
_FORMS = {"per_mtok": "per token", "per_accelerator_hour": "hourly",
          "reserved_monthly": "reserved"}  # how a quote is priced, in a table's narrow column


# -- small pieces ----------------------------------------------------------------------------
def words(value: float | None, unit: str, name: str | None = None) -> str:
    """A figure with its unit in words: ``0.0680 USD per million tokens``, ``10.0% a year``,
    ``8``; ``-`` when missing."""
    number = format_number(value, unit, name)
    shown = unit_words(display_unit(name, unit))
    if number == "-" or not shown:
        return number
    return f"{number}{shown}" if shown.startswith("%") else f"{number} {shown}"


def _q(d: dict | None, name: str | None = None) -> str:
    """A disclosure quantity ``{"value", "unit"}`` in words."""
    if d is None or d.get("value") is None:
        return "-"
    return words(d["value"], d["unit"], name)


def _unit(name: str) -> str:
    """A step's unit as shown (``%`` for fractions), in words."""
    return unit_words(display_unit(name, MODEL.steps[name].unit))


def in_sentence(text: str) -> str:
    """A label inside a sentence: ``Cost of capital`` -> ``cost of capital``, ``PUE`` stays."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def columns(pairs: list[list[str]], right: set[int]) -> list[str]:
    """Rows of cells as aligned text columns; ``right`` holds the right-aligned ones."""
    widths = [max(len(r[i]) for r in pairs) for i in range(len(pairs[0]))]
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in pairs]


def wrap(text: str, indent: str, hanging: str) -> list[str]:
    """``text`` wrapped at :data:`WIDTH`, the first line after ``indent``, the rest after
    ``hanging``; words are never broken (a long path stays whole)."""
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=hanging,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def _items(pairs: Sequence[tuple[str, str]], indent: str = "  ") -> list[str]:
    """``Label   text`` lines, labels aligned, long texts wrapped under their text."""
    width = max((len(k) for k, _ in pairs), default=0) + 2
    out: list[str] = []
    for key, text in pairs:
        out += wrap(text, f"{indent}{key:<{width}}", " " * (len(indent) + width))
    return out


# -- the disclosure, in words ------------------------------------------------------------------
def disclosure_items(r: Result) -> list[tuple[str, str]]:
    """What a result rests on, as (what, in words) pairs in reading order; one fact a pair,
    so that a comparison can say once what every system shares."""
    d = r.disclosure()
    op, w, e, f, p = (d["operating_point"], d["workload"], d["electricity"], d["financing"],
                      d["pricing"])
    basis = "rated (TDP)" if d["power_basis"] == "rated" else d["power_basis"]
    items = [("Power counted", f"at the {d['boundary']} boundary "
                               f"({_BOUNDARY.get(d['boundary'], d['boundary'])}), from {basis} "
                               f"power"),
             ("Power", f"{_q(d['power_per_accelerator'])} per accelerator"),
             ("Operating point", op["chosen"])]
    if op["throughput_per_kw_as_given"]:
        items.append(("As published", f"{_q(op['throughput_per_kw_as_given'])}, normalised by "
                                      f"{_q(op['normalised_by'])}"))
    if op["interactivity"]:
        items.append(("Interactivity", f"{_q(op['interactivity'])} (time between tokens "
                                       f"{_q(op['tbt'])})"))
    items.append(("Tokens counted", f"{d['token_kind']} tokens (the operating point's "
                                    f"throughput)"))
    if w["model"]:
        items.append(("Model", w["model"]))
    items.append(("Tokens per request",
                  f"{format_number(w['isl']['value'], 'token')} input, "
                  f"{format_number(w['osl']['value'], 'token')} output"))
    serving = [w["precision"], w["framework"],
               f"speculative decoding {w['speculative_decoding']}"
               if w["speculative_decoding"] else None]
    if any(serving):
        items.append(("Serving", ", ".join(x for x in serving if x)))
    if f["cost_basis"] == "rent":
        money = f"rented at {_q(f['hourly_price'])} per accelerator"
    else:
        money = (f"owned: economic life {_q(f['life'])}, cost of capital "
                 f"{_q(f['cost_of_capital'], 'financing_cost_of_capital')}, salvage "
                 f"{format_percent(f['salvage'])} of capex, maintenance "
                 f"{format_number(f['maintenance']['value'], '1/year', 'financing_maintenance')}"
                 f"% of capex a year")
    items += [
        ("Electricity", f"{electricity_text(e)} ({e['source'] or 'no source given'}; "
                        f"{e['date'] or 'undated'})"),
        ("Financing", money),
        ("Utilisation", f"{format_percent(d['utilisation'])} of hours serving"
                        f"{load_text(d['load'])}; idle power "
                        f"{format_percent(d['idle_power'])} of operating power"),
        ("Pricing", f"price = cost / (1 - gross margin {format_percent(p['gross_margin'])}); "
                    f"a request's price is split between its input and output tokens so that "
                    f"an output token costs "
                    f"{format_number(p['output_weight'], '', 'pricing_output_weight')} input "
                    f"tokens"),
        ("Emissions", emissions_text(d["emissions"])),
    ]
    money = money_line(d["money"])
    if money is not None:
        items.append(("Money", money))
    rate = d["reference_rate"]
    if rate is not None:
        items.append(("Reference rate",
                      f"{rate['key']} (version {rate['version']}; {_q(rate['hourly_price'])}, "
                      f"all-in power {_q(rate['all_in_power'])}); {rate['status']}. "
                      f"{rate['all_in']}. Origin: {rate['origin'] or 'no source given'}"
                      + "".join(f"; departs from the rate: {x}" for x in rate["departures"])))
    if d["defaults_used"]:
        items.append((DEFAULTS, _defaults(d["defaults_used"])))
    return items


DEFAULTS = "Defaults used"


def flexible_line(shift: Any) -> str:
    """One line: the cost if the flexible share of the load moved to the cheapest hours."""
    total, energy = "cost_per_mtok_total", "cost_per_mtok_energy"
    (b_total, _), (a_total, _) = shift.before.shown(total), shift.after.shown(total)
    (b_energy, _), (a_energy, _) = shift.before.shown(energy), shift.after.shown(energy)
    change = (a_total - b_total) / b_total
    return (f"What if {format_percent(shift.share)} of the load moved to the cheapest hours: "
            f"cost {format_number(b_total, 'USD/Mtok', total)} -> "
            f"{format_number(a_total, 'USD/Mtok', total)} {shift.after.currency} per million "
            f"tokens ({change:+.1%}), electricity {format_number(b_energy, 'USD/Mtok', energy)}"
            f" -> {format_number(a_energy, 'USD/Mtok', energy)}")


def emissions_text(m: dict, q: Any = None) -> str:
    """What the emission figures rest on, in words: each factor with its basis, year and
    source, the embodied emissions and how they are spread; "no factor given" where none
    is. ``q`` writes a quantity (the face's own rule; words by default)."""
    show = q or _q

    def factor(f: dict | None, what: str) -> str:
        if f is None:
            return f"{what}: no factor given"
        how = (f"{show(f['factor'])}" if f["basis"] == "flat" else
               f"hourly factors (annual {show(f['factor'])}), {show(f['per_kwh_drawn'])} "
               f"on average at this load")
        kind = f" ({f['instrument'].replace('_', ' ')})" if f.get("instrument") else ""
        cited = "; ".join(x for x in (f["source"], f["year"] and f"year {f['year']}") if x)
        return f"{what}{kind} {how}" + (f" ({cited})" if cited else "")
    e = m["embodied"]
    embodied = f"embodied: {NOT_STATED} (the totals are operational only)" if e is None else (
        f"embodied {show(e['per_accelerator'])} per accelerator over {show(e['life'])}, "
        f"{e['method']}")
    return (f"{factor(m['location'], 'location-based')}; {factor(m['market'], 'market-based')}"
            f"; {embodied}; energy at the {m['boundary']} boundary")


def electricity_text(e: dict, q: Any = None) -> str:
    """The electricity priced, in words: the flat price, or the tariff with the energy price
    per kWh drawn that resulted and the bill per kWh with its demand and fixed charges.
    ``q`` writes a quantity (the face's own rule; words by default)."""
    show = q or _q
    t = e.get("tariff")
    if t is None:
        return show(e["price"])
    who = ", ".join(x for x in (t["utility"], f"effective {t['effective']}"
                                if t["effective"] else None) if x)
    periods = t.get("demand_periods") or []
    charges = [f"demand charge {show(t['demand_charge'])}"
               + (" on the month's busiest hour" if periods else "")
               if t["demand_charge"]["value"] else "",
               *(demand_period_text(p, i, show) for i, p in enumerate(periods)),
               f"fixed {show(t['fixed_charge'])} per site of "
                        f"{round(t['site_accelerators'])} accelerators"
               if t["fixed_charge"]["value"] else ""]
    return (f"tariff {t['name']}" + (f" ({who})" if who else "") + ": energy at "
            f"{show(e['effective_price'])} on average at this load"
            + "".join(f", {c}" for c in charges if c)
            + f"; the whole bill {show(e['price_all_in'])} counted at the power boundary")


def demand_period_text(period: dict, i: int, q: Any = None) -> str:
    """A demand period of a tariff's disclosure, in words: ``on-peak demand charge 18.11 USD
    per kW per month on the busiest hour of weekdays 12:00-18:00 in Jun-Sep``. ``i``: its
    index (a period without a name is numbered from 1)."""
    show = q or _q
    name = period.get("name") or f"period {i + 1}"
    hours, weekend = period["hours"], period["weekend_hours"]
    if weekend is None:
        when = f"every day {hour_runs(hours, ' and ')}"
    elif not weekend:
        when = f"weekdays {hour_runs(hours, ' and ')}"
    else:
        when = (f"weekdays {hour_runs(hours, ' and ')} and of weekend days "
                f"{hour_runs(weekend, ' and ')}")
    months = period["months"]
    return (f"{name} demand charge {show(period['demand_charge'])} on the busiest hour of "
            f"{when}" + ("" if len(months) == MONTHS else f" in {month_runs(months, ' and ')}"))


def money_line(money: dict) -> str | None:
    """The disclosure's ``money`` in words (:func:`money_text`), or None for figures in USD
    from amounts all given in USD (nothing to say)."""
    if money["currency"] == "USD" and not money.get("inputs_converted"):
        return None
    return money_text(money)


def money_text(money: dict) -> str:
    """The currency shown and the stated exchange rates, in words."""
    def fx(r: dict) -> str:
        return f"{r['value']:g} {r['unit']} ({r['date']}; {r['source']})"
    parts = [f"calculated in USD, shown in {money['currency']}"
             + (f" at {fx(money['rate'])}" if "rate" in money else "")]
    converted = money.get("inputs_converted") or {}
    if converted:
        parts.append("amounts given in " + ", ".join(
            f"{code} converted at {fx(r)}" if money.get("rate") != r else code
            for code, r in converted.items()) + (" at that rate" if all(
                money.get("rate") == r for r in converted.values()) else ""))
    return "; ".join(parts)


def load_text(load: dict | None) -> str:
    """The load shape, in words (nothing for a utilisation spread over every hour)."""
    if load is None:
        return ""
    days = "weekdays and weekend days" if load["weekend"] is not None else "every day alike"
    return (f", by a load shape by hour ({days}; the busiest hour at "
            f"{format_percent(load['peak_load_factor'])} of operating power)")


def _defaults(keys: Sequence[str]) -> str:
    """Inputs left at their defaults, by their names in words."""
    return ", ".join(in_sentence(label(k)) for k in keys)


# the inputs that move a price most, said next to the figure whenever the scenario left them
# to the engine's defaults (a pricing tool and a finance team then see why two figures differ)
_ASSUMED = ("utilisation", "power.boundary", "power.basis", "electricity.price",
            "facility.pue", "financing.life", "financing.cost_of_capital", "financing.salvage",
            "pricing.gross_margin", "node.accelerators")


def assumed_defaults(r: Result) -> list[str]:
    """The inputs that move a price most which the scenario left at the engine's defaults,
    each in words with its value (``utilisation 100%``); empty when it gave them all."""
    used = set(r.defaults_used)
    s = r.scenario
    out = []
    if "utilisation" in used and s.load is None:
        out.append(f"utilisation {format_percent(s.utilisation)}")
    if "power.boundary" in used or "power.basis" in used:
        out.append(f"power at the {s.power.boundary} boundary, {s.power.basis} basis")
    if "electricity.price" in used and s.electricity.tariff is None \
            and s.electricity.price is not None:
        out.append(f"electricity {format_quantity(s.electricity.price, 'USD/kWh')}")
    if "facility.pue" in used and s.power.boundary == "facility":
        out.append(f"PUE {s.facility.pue:g}")
    if "financing.life" in used and s.reference_rate is None:
        out.append(f"a {s.financing.life:g}-year life")
    if "financing.cost_of_capital" in used and s.reference_rate is None:
        out.append(f"cost of capital {format_percent(s.financing.cost_of_capital)}")
    if "financing.salvage" in used and s.reference_rate is None:
        out.append(f"salvage {format_percent(s.financing.salvage)}")
    if "pricing.gross_margin" in used:
        out.append(f"gross margin {format_percent(s.pricing.gross_margin)}")
    if "node.accelerators" in used and s.system is None:
        out.append(f"{s.node.accelerators} accelerators a server")
    return out


def assumed_line(r: Result) -> str | None:
    """``At the engine's defaults: ...`` (or None): said next to the headline figure."""
    phrases = assumed_defaults(r)
    return "At the engine's defaults: " + "; ".join(phrases) + \
        ". Give them for your own site." if phrases else None


# -- one result --------------------------------------------------------------------------------
def result_table(r: Result) -> str:
    """The answer first (marked), then the breakdown with each part's share, the efficiency
    and capital figures, and the disclosure in words."""
    kind = r.scenario.operating_point.token_kind
    total = r.value("cost_per_mtok_total")
    rows, headings = [], {}
    for title, names in SECTIONS:
        headings[len(rows)] = title
        for n in names:
            v = r.value(n)
            share = ""
            if title == "Cost breakdown":
                share = f"{format_percent(v / total if v is not None and total else None)} " \
                        f"of cost"
            shown_v, unit = r.shown(n)  # a money figure in the result currency
            rows.append([(MARK if n in ANSWER else PAD) + figure_label(n, r.embodied_stated),
                         NOT_STATED if not_stated(n, r.embodied_stated) else
                         format_number(shown_v, MODEL.steps[n].unit, n),
                         _unit(n).replace("USD", r.currency) if unit != MODEL.steps[n].unit
                         else _unit(n), share])
    money = r.disclosure()["money"]
    rate = money.get("rate")
    out = [r.name, *wrap(f"{r.scenario.accelerator.name}; figures per accelerator, costs per "
                          f"million {kind} tokens"
                          + (f"; money in {r.currency} at {rate['value']:g} {rate['unit']} "
                             f"({rate['date']}, {rate['source']})" if rate else ""),
                          "", "  ")]
    assumed = assumed_line(r)
    for i, line in enumerate(columns(rows, {1, 3})):
        if i in headings:
            if i and assumed is not None:  # beside the answer, before the breakdown
                out += wrap(assumed, PAD, PAD)
                assumed = None
            out += ["", headings[i]]
        out.append(line)
    if any(r.value(n) is None and not not_stated(n, r.embodied_stated) for n in HEADLINE):
        out.append("-: not computed (an input it needs was not given)")
    out += ["", "What the figures rest on", *_items(disclosure_items(r))]
    return "\n".join(out)


# -- several results ---------------------------------------------------------------------------
def _legend(c: Comparison) -> list[str]:
    lines = [f"{len(c.results)} systems; ratios are each system's figure over [1]'s"]
    for i, r in enumerate(c.results, 1):
        lines += wrap(f"{r.name} ({r.scenario.accelerator.name})", f"  [{i}] ", "      ")
    return lines


def _by_columns(c: Comparison, unit_of) -> list[str]:
    """Systems as columns, then a ratio column for each system after the first."""
    n = len(c.results)
    header = ["", "", *(f"[{i}]" for i in range(1, n + 1)),
              *(f"[{i}]/[1]" for i in range(2, n + 1))]
    rows, headings = [header], {}
    # (a row's label is shared; a system without a footprint says so in its disclosure)
    stated = any(r.embodied_stated for r in c.results)
    for title, names in SECTIONS:
        money = all(MODEL.steps[x].unit == "USD/Mtok" for x in names)
        headings[len(rows)] = f"{title}, in {unit_words('USD/Mtok')}" if money else title
        for name in names:
            unit = MODEL.steps[name].unit
            rows.append([(MARK if name in ANSWER else PAD) + figure_label(name, stated),
                         "" if money else unit_of(name),
                         *(format_number(r.value(name), unit, name) for r in c.results),
                         *(format_ratio(x) for x in c.ratios(name)[1:])])
    lines = columns(rows, set(range(2, len(header))))
    out = []
    for i, line in enumerate(lines):
        if i in headings:
            out += ["", headings[i]] if i > 1 else [headings[i]]
        out.append(line)
    return out


def _by_rows(c: Comparison) -> list[str]:
    """Systems as rows: each section a table of its figures (value, and ratio to [1]),
    split into as many tables as it takes to stay within :data:`WIDTH`."""
    out: list[str] = []
    tags = [f"[{i}]" for i in range(1, len(c.results) + 1)]
    stated = any(r.embodied_stated for r in c.results)
    for title, names in SECTIONS:
        money = all(MODEL.steps[x].unit == "USD/Mtok" for x in names)
        cells = {}
        for name in names:
            unit = MODEL.steps[name].unit
            values = [format_number(r.value(name), unit, name) for r in c.results]
            shown = [v if i == 0 or x is None else f"{v} ({format_ratio(x)})"
                     for i, (v, x) in enumerate(zip(values, c.ratios(name), strict=True))]
            head = textwrap.wrap(figure_label(name, stated), max(14, *map(len, shown)))
            cells[name] = (head, "" if money else _unit(name), shown)
        chunks: list[list[str]] = [[]]
        used = 4
        for name in names:
            head, unit, shown = cells[name]
            w = max(len(unit), *map(len, head), *map(len, shown)) + 2
            if chunks[-1] and used + w > WIDTH:
                chunks.append([])
                used = 4
            chunks[-1].append(name)
            used += w
        for k, chunk in enumerate(chunks):
            depth = max(len(cells[x][0]) for x in chunk)
            heads = [["", *(([""] * depth + cells[x][0])[-depth:][j] for x in chunk)]
                     for j in range(depth)]
            units = [] if money else [["", *(cells[x][1] for x in chunk)]]
            rows = [*heads, *units,
                    *([tag, *(cells[x][2][i] for x in chunk)] for i, tag in enumerate(tags))]
            heading = f"{title}, in {unit_words('USD/Mtok')}" if money else title
            out += [heading + (" (continued)" if k else ""),
                    *columns(rows, set(range(1, len(chunk) + 1))), ""]
    return out[:-1]


def _shared_and_own(c: Comparison) -> list[str]:
    """The disclosure: what every system shares said once ("All systems"), then what differs
    per system; defaults every system uses are listed once, the others under their system."""
    used = [r.defaults_used for r in c.results]
    common = [k for k in used[0] if all(k in u for u in used[1:])]
    items = [{k: v for k, v in disclosure_items(r) if k != DEFAULTS} for r in c.results]
    keys = list(dict.fromkeys(k for it in items for k in it))
    shared = [(k, items[0][k]) for k in keys
              if all(k in it and it[k] == items[0][k] for it in items)]
    if common:
        shared.append((DEFAULTS, _defaults(common)))
    out = ["What the figures rest on"]
    if shared:
        out += ["All systems", *_items(shared)]
    for i, (r, it) in enumerate(zip(c.results, items, strict=True), 1):
        own = [(k, v) for k, v in it.items() if (k, v) not in shared]
        rest = [k for k in r.defaults_used if k not in common]
        if rest:
            own.append(("Also defaults" if common else DEFAULTS, _defaults(rest)))
        if own:
            out += ["", f"[{i}] {r.name}", *_items(own)]
    return out


def comparison_table(c: Comparison) -> str:
    """Systems side by side within :data:`WIDTH` columns: as columns (units in words, else
    as symbols) when they fit, else as rows; ratios to the first; the shared disclosure once."""
    table = _by_columns(c, _unit)
    if max(map(len, table)) > WIDTH:
        table = _by_columns(c, lambda n: display_unit(n, MODEL.steps[n].unit))
    if max(map(len, table)) > WIDTH:
        table = _by_rows(c)
    return "\n".join([*_legend(c), "", *table, "", *_shared_and_own(c)])


# -- curves, power traces, quotes ------------------------------------------------------------
def curve_table(c: Curve, kind: str, origin: str, sel: Selection | None = None) -> str:
    """The points of a curve, frontier points starred, and a reading if one was made."""
    try:
        on_frontier = set(c.frontier(kind).indices.tolist())
    except ValueError:  # no interactivity: no frontier
        on_frontier = set()
    header = ["", "Concurrency", "Interactivity", f"Throughput ({kind} tokens)",
              "Time to first token", "End-to-end latency", "Power"]
    units = ["", "users", unit_words("token/s/user"), unit_words("token/s"),
             unit_words("s"), unit_words("s"), unit_words("W")]
    rows = [header, units]

    def order(i: int) -> tuple[float, float]:  # by interactivity, else by concurrency
        x = c.interactivity[i]
        return (np.inf if np.isnan(x) else x, c.concurrency[i])

    for i in sorted(range(len(c)), key=order):
        rows.append(["*" if i in on_frontier else "",
                     format_number(c.concurrency[i], "", "concurrency"),
                     format_number(c.interactivity[i], "token/s/user"),
                     format_number(c.throughput_of(kind)[i], "token/s"),
                     format_number(c.ttft[i], "s"), format_number(c.e2e_latency[i], "s"),
                     format_number(c.power[i], "W")])
    out = [f"curve {c.key.id}", *wrap(f"from {origin}; {c.source}", "  ", "  "),
           f"  {len(c)} points, {len(on_frontier)} on the Pareto frontier (*)", "",
           *columns(rows, set(range(1, len(header))))]
    for n in c.notes:
        out += wrap(n, "note: ", "      ")
    if sel is not None:
        out += ["", *wrap(f"reading: {sel.description}", "", "  "),
                f"{MARK}throughput {words(sel.throughput, 'token/s')} per accelerator"]
    return "\n".join(out)


def _clock(t: float) -> str:
    """A trace time: POSIX seconds as UTC date-time, a relative clock as seconds."""
    if t > 1e8:  # after 1973: a wall-clock timestamp, not seconds since the run started
        return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")
    return words(t, "s")


def energy_table(report: EnergyReport, tokens: TokenEnergy | None) -> str:
    """Per-GPU energy of a trace, totals, J/token and the verdict with its reasons."""
    rows = [["GPU", "Energy", "Average power", "Peak power", "Samples", "Missing", "Verdict"],
            ["", unit_words("J"), unit_words("W"), unit_words("W"), "", "", ""]]
    for g in report.gpus:
        rows.append([g.gpu, format_number(g.energy, "J"), format_number(g.average_power, "W"),
                     format_number(g.peak_power, "W"), f"{g.samples:,}", f"{g.missing:,}",
                     g.verdict])
    totals = [["Total energy", format_number(report.total_energy, "J"), unit_words("J")],
              ["Mean power per GPU", format_number(report.mean_average_power, "W"),
               unit_words("W")],
              ["Peak power", format_number(report.peak_power, "W"), unit_words("W")]]
    if tokens is not None:
        for kind, v in (("total", tokens.total), ("input", tokens.input),
                        ("output", tokens.output)):
            if v is not None:
                totals.append([f"Energy per {kind} token", format_number(v, "J/token"),
                               unit_words("J/token")])
    out = [f"power trace {report.source}",
           f"  window {_clock(report.start)} to {_clock(report.end)} "
           f"({words(report.duration, 's')}), gap limit {words(report.max_gap, 's')}",
           "", *columns(rows, {1, 2, 3, 4, 5}), "", *columns(totals, {1}),
           f"verdict: {report.verdict.upper()}"]
    for r in report.reasons:
        out += wrap(r, "  reason: ", "    ")
    for w in report.warnings:
        out += wrap(w, "  warning: ", "    ")
    return "\n".join(out)


def _money(v: float) -> str:
    return format_number(v, "USD")


def _months(m: float | None) -> str:
    """A count of months: whole when it is whole (``12``), else to a tenth."""
    if m is not None and float(m).is_integer():
        return format_number(m, "", "concurrency")
    return format_number(m, "month")


DECIDE = "costmodel quotes decide QUOTES_FILE --scenario FILE --demand VOLUME"


def _shown(currency: str, rate: float):
    """A money figure [USD] in ``currency`` at ``rate`` [currency/USD] (untouched in USD)."""
    return (lambda x: x) if currency == "USD" else (lambda x: x * rate)


def quotes_table(by_scenario: list, decide: str = DECIDE, currency: str = "USD",
                 rate: float = 1.0) -> str:
    """Quotes ranked per scenario: price per million tokens at the operating point beside our
    own cost, the margin it implies, and the term in money. Each offer is at its own volume
    and term: the heading says so and that none is recommended, pointing to ``decide`` (the
    decision at a demand, where a recommendation is marked); no line is marked. Money in
    ``currency`` at ``rate`` [currency/USD]."""
    m, cur = _shown(currency, rate), currency
    out: list[str] = []
    for ranked in by_scenario:
        first = ranked[0]
        out += wrap(f"Against {first.scenario}: ranked by unit price at each offer's own volume "
                     f"and term; prices and our cost in {cur} per million {first.token_kind} "
                     f"tokens; totals in {cur}, {NOMINAL_TERM} (Nominal) and "
                     f"{present_value_words(first.discount_rate)} a year, the scenario's cost "
                     f"of capital (PV)", "", "  ")
        out += wrap("Not a recommendation: the decision at a demand prices every offer for "
                    "the same volume and recommends one:", "  ", "  ")
        out.append(f"    {decide}")
        rows = [["", "Quote", "Form", "Price", "Our cost", "Implied", "Break-even", "Term",
                 "Quote", "Quote", "Saving"],
                ["", "", "", "", "", "margin", "utilisation", "months", "Nominal", "PV", "PV"]]
        for i, c in enumerate(ranked, 1):
            rows.append([f"{PAD}{i}", c.quote.name, _FORMS.get(c.quote.form, c.quote.form),
                         format_number(m(c.price_per_mtok), "USD/Mtok"),
                         format_number(m(c.own_cost_per_mtok), "USD/Mtok"),
                         FREE_MARGIN if c.implied_margin is None
                         else format_percent(c.implied_margin),
                         _break_even(c), _months(c.quote.term), _money(m(c.quote_total)),
                         _money(m(c.quote_pv)), _money(m(c.saving_pv))])
        out += ["  " + r for r in columns(rows, set(range(3, 11)))]
        for c in ranked:
            out += wrap(f"{c.quote.name}: volume {words(c.volume, 'Mtok/month')} "
                         f"({c.volume_basis})", "  ", "    ")
            if c.margin_note:
                out += wrap(f"implied margin {c.margin_note}", "    note: ", "      ")
            for f in c.flags:
                out += wrap(f, "    flag: ", "      ")
        differ = _differ([c.volume for c in ranked], "Mtok/month", "volumes") + \
            _differ([c.quote.term for c in ranked], "month", "terms")
        if differ:
            out += wrap(f"the offers' {' and '.join(differ)} differ: their present values "
                         f"are not of the same service", "  ", "    ")
        out.append("")
    return "\n".join(out).rstrip()


def _break_even(c) -> str:
    """A quote's break-even utilisation, or the words every face says for none."""
    if c.break_even_utilisation is not None:
        return format_percent(c.break_even_utilisation)
    return NO_BREAK_EVEN if c.quote.form == "per_mtok" else CAPACITY_BREAK_EVEN


def _differ(values: list, unit: str, what: str) -> list[str]:
    """``["volumes (3,473 to 20,000 million tokens per month)"]`` when ``values`` differ."""
    if len(set(values)) < 2:
        return []
    low, high = min(values), max(values)
    if unit == "month":
        return [f"{what} ({_months(low)} to {_months(high)} months)"]
    return [f"{what} ({format_number(low, unit)} to {words(high, unit)})"]


def term_report(analysis, currency: str = "USD", rate: float = 1.0) -> str:
    """Each term length's premium over staying flexible (an app ``TermAnalysis``); money in
    ``currency`` at ``rate`` [currency/USD]."""
    a = analysis
    m, cur = _shown(currency, rate), currency
    quote, comparison, rows, longest = a.quote, a.comparison, a.rows, a.longest
    tolerance, improvement = a.tolerance, a.improvement
    how = []
    if improvement is not None:
        how.append(f"market price falls {format_percent(improvement)} a year")
    if a.successor_price is not None:
        how.append(f"a successor at its market price "
                   f"{words(m(a.successor_price), f'{cur}/Mtok')} ({a.successor_source}) from "
                   f"month {_months(a.successor_month)}; its own cost, "
                   f"{words(m(a.successor_floor), f'{cur}/Mtok')}, is a floor, not a price")
    table = [["Term", "Locked-in PV", "Flexible PV", "Premium", "Premium", "Within"],
             ["months", cur, cur, cur, "share", format_percent(tolerance)]]
    for r in rows:
        table.append([_months(r.months), _money(m(r.locked_pv)),
                      _money(m(r.flexible_pv)), _money(m(r.premium)),
                      format_percent(r.premium_share), "yes" if r.within_tolerance else "no"])
    out = [*wrap(f"{quote.name}: {words(m(comparison.price_per_mtok), f'{cur}/Mtok')} locked in, "
                  f"{words(comparison.volume, 'Mtok/month')} ({comparison.volume_basis})",
                  "", "  "),
           *wrap(f"flexible buyer: {'; '.join(how)}", "", "  "), "",
           *columns(table, set(range(0, 6))), ""]
    out.append(f"{MARK}longest term within {format_percent(tolerance)} of staying flexible: "
               + (f"{_months(longest)} months" if longest is not None
                  else "none of those priced"))
    return "\n".join(out)


def decision_table(decision, currency: str = "USD", rate: float = 1.0) -> str:
    """Offers and own builds ranked for one demand: the recommendation first, then each
    option's monthly bill, its term in money, where pairs break even and what was assumed;
    money in ``currency`` at ``rate`` [currency/USD] (the sentences keep their USD)."""
    m, cur = _shown(currency, rate), currency
    d = decision.load
    out = [f"For {words(d.volume, 'Mtok/month')} (mixed tokens; average "
           f"{words(d.average, 'token/s')}, peak {words(d.peak, 'token/s')})", ""]
    rec = decision.recommendation
    if rec is None:
        out += ["No offer can be ranked for this demand."]
    else:
        out += wrap(rec["text"], f"{MARK}", "   ")
    out += ["", *wrap(f"Ranked for this demand (cheapest first), money in {cur}; over each "
                      f"term: {NOMINAL_TERM} (Nominal) and its "
                      f"{present_value_words(decision.discount_rate)} a year (PV)", "", "  ")]
    rows = [["", "Offer", "Kind", "Cost", "Cost", "Accel-", "Utili-", "Term", "Term",
             "Term"],
            ["", "", "", "a month", "per Mtok", "erators", "sation", "months", "Nominal",
             "PV"]]
    for i, p in enumerate(decision.ranked, 1):
        c = p.charge
        rows.append([f"{MARK if i == 1 else PAD}{i}", p.option.name,
                     _KINDS.get(p.option.kind, p.option.kind), _money(m(c.monthly)),
                     format_number(m(p.per_mtok), "USD/Mtok"),
                     NO_VALUE if c.accelerators is None else f"{c.accelerators:,}",
                     format_percent(c.utilisation), _months(p.term), _money(m(p.term_total)),
                     _money(m(p.term_pv))])
    out += ["  " + r for r in columns(rows, set(range(3, 10)))]
    for p in decision.ranked:
        notes = [*p.charge.lines, *p.option.flags]
        src = p.option.details.get("throughput_from")
        if src:
            thr = p.option.details["throughput_per_accelerator"]["value"]
            notes.insert(0, f"throughput {words(thr, 'token/s')} an accelerator: {src}")
        ref = p.option.details.get("reference_rate")
        if ref:
            notes.append(f"public reference {ref['key']}: "
                         f"{ref['hourly_price']['value']:.2f} USD/h; this offer "
                         f"{ref['offer_hourly_price']['value']:.2f} USD/h "
                         f"({format_percent(ref['offer_over_reference'])} over it)")
        for n in notes:
            out += wrap(f"{p.option.name}: {n}", "  ", "    ")
    if decision.unranked:
        out += ["", "Not ranked"]
        for o in decision.unranked:
            out += wrap(f"{o.name}: {o.why}", "  ", "    ")
    if decision.break_even:
        out += ["", "Break-even volumes (where two options cost the same a month)"]
        for b in decision.break_even:
            a, c = b["offers"]
            out += wrap(f"{a} / {c}: " + ("no crossing within 1% to 100x the demand"
                                          if b["volume"] is None else
                                          f"{words(b['volume']['value'], 'Mtok/month')}; "
                                          f"below it {b['cheaper_below']} is cheaper"),
                        "  ", "    ")
    out += ["", "Assumptions"] + [x for a in decision.assumptions for x in wrap(a, "  ", "    ")]
    return "\n".join(out).rstrip()


_KINDS = {"own": "own build", "per_mtok": "per Mtok", "capacity": "capacity"}
