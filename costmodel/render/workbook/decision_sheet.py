"""The Decision and Scan sheets: a decision for a demand (:mod:`costmodel.decisions.decision`)
as live formulas, so a finance team can change the demand or an offer's price and see the
ranking, the winner, its range and the break-evens move.

- **Decision**: the demand (volume, average over peak, the shares a per-Mtok price reads, the
  cost of capital) as inputs; one column per ranked option with its terms as inputs (tier
  prices, capacity prices, throughput, availability, our own build's hourly cost idle and per
  unit of utilisation) and, as formulas, its accelerators, bill a month, cost per Mtok, rank,
  term total and present value; then the recommendation (INDEX/MATCH on the ranks), its
  margin over the next, the range where it holds and each option's break-even with it.
- **Scan**: the engine's search written out (:mod:`.decision_scan`).

Every bill is the declared one (:mod:`costmodel.decisions.decision_calculation`) rendered by
:mod:`.decision_formulas`, so each formula's cached value is the engine's figure.

Our own build's cost of an accelerator-hour is affine in its utilisation (energy and demand
charges follow the load; capital, maintenance and hosting do not), so the sheet carries it as
its value idle and its slope, read from the model at utilisation 0 and at the build's
utilisation; the export checks the line through them against the model at a third point.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...decisions import decision_calculation as calc
from ...decisions.decision import Decision, Priced
from ...model.errors import InputError
from .bounds import MAX_OPTIONS, MAX_TIERS
from .decision_formulas import Formula, Formulas
from .decision_scan import DECISION_SHEET, SCAN_SHEET, Scan
from .layout import Names
from .sheet import Sheet, cell_ref

__all__ = ["DECISION_SHEET", "SCAN_SHEET", "MAX_OPTIONS", "MAX_TIERS", "DecisionBook",
           "write_decision", "DEMAND_INPUTS", "OPTION_INPUTS", "tier_rows"]

FIRST = 4  # column D: the first option
_AFFINE_TOLERANCE = 1e-9  # the model's hourly cost against the line through two of its points

# the demand's inputs: defined name -> (words, unit)
DEMAND_INPUTS = {
    "decision_volume": ("Volume (mixed tokens: input + output)", "Mtok/month"),
    "decision_load_factor": ("Average over peak (1: a flat demand)", "dimensionless"),
    "decision_input_share": ("Input tokens' share of a request", "dimensionless"),
    "decision_cached_share": ("Share of input tokens served from a prefix cache",
                              "dimensionless"),
    "decision_batch_share": ("Share of the volume sent as batch", "dimensionless"),
}
# each option's terms: row name -> (words, unit); a row is written when an option uses it
OPTION_INPUTS = {
    "option_throughput": ("Throughput an accelerator serves at the service level",
                          "token/s"),
    "option_availability": ("Availability (share of hours served)", "dimensionless"),
    "option_hour_idle": ("Own build: cost of an accelerator-hour, idle", "USD/h"),
    "option_hour_slope": ("Own build: cost added per unit of utilisation", "USD/h"),
    "option_offered": ("Accelerators offered (a block paid whole)", "dimensionless"),
    "option_unit": ("Price of an accelerator-month", "USD/month"),
    "option_block": ("Price of the block a month", "USD/month"),
    "option_cached_fraction": ("Price of a cached input token (share of the input price)",
                               "dimensionless"),
    "option_batch_discount": ("Batch discount", "dimensionless"),
    "option_committed": ("Committed volume (take-or-pay)", "Mtok/month"),
    "option_overage_input": ("Overage: price per million input tokens", "USD/Mtok"),
    "option_overage_output": ("Overage: price per million output tokens", "USD/Mtok"),
    "option_floor": ("Minimum spend a month", "USD/month"),
}


def tier_rows(k: int) -> dict[str, tuple[str, str]]:
    return {f"option_tier{k}_input": (f"Tier {k}: price per million input tokens",
                                      "USD/Mtok"),
            f"option_tier{k}_output": (f"Tier {k}: price per million output tokens",
                                       "USD/Mtok"),
            f"option_tier{k}_up_to": (f"Tier {k}: up to (empty: no limit)", "Mtok/month")}


@dataclass(frozen=True)
class DecisionBook:
    """A decision to write: the ``decision``, the yearly ``annual_rate`` it discounts term
    totals at [fraction], and notes on how the demand was counted."""
    decision: Decision
    annual_rate: float
    notes: tuple[str, ...] = ()
    rate_name: str = "financing_cost_of_capital"  # the model's cell the rate follows
    record: dict[str, Any] | None = None  # the request, for reading an edited book back


def _own_line(p: Priced, where: str) -> tuple[float, float]:
    """Our own build's cost of an accelerator-hour as (idle, slope) [USD/h], from the model
    at utilisation 0 and at the build's; the line is checked at half the build's."""
    terms, u = p.option.terms, p.charge.utilisation or 1.0
    idle = terms.hour(calc.FLOATS, 0.0)
    slope = (terms.hour(calc.FLOATS, u) - idle) / u
    half = terms.hour(calc.FLOATS, u / 2)
    if not math.isclose(idle + slope * u / 2, half, rel_tol=_AFFINE_TOLERANCE):
        raise InputError([(where, (
            f"our own build {p.option.name!r} costs {half:.6g} USD an accelerator-hour at "
            f"utilisation {u / 2:.4g}, off the line through its cost idle and at {u:.4g}: "
            f"the decision workbook carries the hourly cost as a line, so it cannot be "
            f"written for this scenario (the JSON and PDF answers price it exactly)"))])
    return idle, slope


class _Writer:
    def __init__(self, sheet: Sheet, scan: Sheet, book: DecisionBook, names: Names):
        self.sheet, self.scan, self.book, self.names = sheet, scan, book, names
        self.ranked = book.decision.ranked
        self.n = len(self.ranked)
        self.rows: dict[str, int] = {}
        self.own_lines: dict[int, tuple[float, float]] = {}  # an own build: (idle, slope)

    # -- cells -----------------------------------------------------------------------------
    def _label(self, row: int, words: str, name: str, unit: str) -> None:
        self.sheet.text(row, 1, words, "wrap")
        self.sheet.text(row, 2, name, "name")
        self.sheet.text(row, 3, unit, "name")

    def range_of(self, name: str, sheet: str | None = None) -> str:
        row = self.rows[name]
        ref = f"{cell_ref(row, FIRST, True)}:{cell_ref(row, FIRST + self.n - 1, True)}"
        return ref if sheet is None else f"'{sheet}'!{ref}"

    # -- the Decision sheet ------------------------------------------------------------------
    def write(self) -> tuple[int, int]:
        s, d = self.sheet, self.book.decision
        s.text(1, 1, "Decision: which offer serves the demand, and when that changes", "title")
        s.paragraph(2, "Blue cells are inputs: change the demand or an offer's price and the "
                       "bills, the ranking, the recommendation, the range where it holds "
                       "and the break-evens recompute (the Scan sheet holds the search). "
                       "Grey figures of our own builds come from their model (the Inputs "
                       "and Calculations sheets) as exported. "
                       "A month is 730 hours; tokens are counted mixed (input + output); "
                       "money is in USD, as the engine computes it. "
                       + " ".join(self.book.notes), FIRST + max(self.n, 2) - 1)
        row = 4
        s.text(row, 1, "Demand", "section")
        load = d.load
        values = {"decision_volume": load.volume,
                  "decision_load_factor": load.average / load.peak,
                  "decision_input_share": load.shape.input_share,
                  "decision_cached_share": load.cached_input_share,
                  "decision_batch_share": load.batch_share}
        self.exported: dict[str, Any] = {"isl": load.shape.isl, "osl": load.shape.osl}
        for name, (words, unit) in DEMAND_INPUTS.items():
            row += 1
            self._label(row, words, name, unit)
            s.figure(row, FIRST, values[name], name, unit, "input")
            self.names.add(name, s.title, cell_ref(row, FIRST, True))
            self.exported[name] = values[name]
        o = Formulas()
        consts = {"hours_per_month": ("Hours in a month (8,760 / 12)", "h",
                                      calc.CONSTANTS["hours_per_month"]),
                  "seconds_per_month": ("Seconds in a month", "s",
                                        calc.CONSTANTS["seconds_per_month"]),
                  "decision_just_below": ("Just below a break-even (the scale at which "
                                          "the cheaper option is named)", "dimensionless",
                                          calc.JUST_BELOW)}
        for name, (words, unit, value) in consts.items():
            row += 1
            self._label(row, words, name, unit)
            s.number(row, FIRST, value, "constant", "#,##0.##")
            self.names.add(name, s.title, cell_ref(row, FIRST, True))
        volume = Formula("decision_volume", load.volume)
        average = volume * o.const("tokens_per_mtok") / o.const("seconds_per_month")
        row = self._derived(row + 1, "decision_average", "Average rate", "token/s", average)
        factor = Formula("decision_load_factor", values["decision_load_factor"])
        peak = Formula("decision_average", average.value) / factor
        row = self._derived(row + 1, "decision_peak", "Peak rate (the busiest hour)",
                            "token/s", peak)
        r = self.book.annual_rate  # the engine's: (1 + r) ** (1 / 12) - 1
        row = self._derived(row + 1, "decision_cost_of_capital", "Cost of capital, a year "
                            "(the first own build's, on the Inputs sheet)", "dimensionless",
                            Formula(self.book.rate_name, r))
        row = self._derived(row + 1, "decision_monthly_rate",
                            "Monthly discount rate: (1 + cost of capital)^(1/12) - 1",
                            "dimensionless", Formula(
                                "(1+decision_cost_of_capital)^(1/months_per_year)-1",
                                (1.0 + r) ** (1.0 / 12.0) - 1.0, 1))
        self.demand = calc.Demand(
            volume, Formula("decision_average", average.value),
            Formula("decision_peak", peak.value),
            Formula("decision_input_share", values["decision_input_share"]),
            Formula("decision_cached_share", values["decision_cached_share"]),
            Formula("decision_batch_share", values["decision_batch_share"]))
        row = self._options(row + 2)
        return self._recommendation(row + 2)

    def _derived(self, row: int, name: str, words: str, unit: str, f: Formula) -> int:
        self._label(row, words, name, unit)
        self.sheet.figure(row, FIRST, f.value, name, unit, "calc", f.text)
        self.names.add(name, self.sheet.title, cell_ref(row, FIRST, True))
        return row

    def _options(self, row: int) -> int:
        s = self.sheet
        s.text(row, 1, "Options, ranked for the demand as exported", "section")
        row += 1
        self.header_row = row
        s.header(row, ["", "name", "unit", *(p.option.name for p in self.ranked)])
        self.rows["option_name"] = row
        given = self.book.decision.given
        info = [("option_kind", "Kind", "", [p.option.kind for p in self.ranked]),
                ("option_vendor", "Vendor", "", [p.option.vendor for p in self.ranked]),
                ("option_order", "Order given (breaks a tie)", "dimensionless",
                 [next(i for i, o in enumerate(given) if o is p.option) + 1
                  for p in self.ranked]),
                ("option_flags", "Flags (a tie goes to the fewer)", "dimensionless",
                 [len(p.option.flags) for p in self.ranked]),
                ("option_term", "Term", "month", [p.term for p in self.ranked])]
        for name, words, unit, vals in info:
            row += 1
            self.rows[name] = row
            self._label(row, words, name, unit)
            for j, v in enumerate(vals):
                if isinstance(v, str):
                    s.text(row, FIRST + j, v, "calc")
                else:
                    s.figure(row, FIRST + j, v, name, unit,
                             "input" if name == "option_term" else "constant")
            if name == "option_term":
                self.names.add(name, s.title, self.range_of(name))
                self.exported[name] = vals
        inputs = self._option_inputs()
        for name, (words, unit, vals) in inputs.items():
            row += 1
            self.rows[name] = row
            self._label(row, words, name, unit)
            for j, v in enumerate(vals):
                own = isinstance(self.ranked[j].option.terms, calc.OwnTerms)
                if v is None:
                    s.text(row, FIRST + j, "", "calc")
                else:  # an own build's figures are the model's (its sheets), not inputs here
                    s.figure(row, FIRST + j, v, name, unit, "constant" if own else "input")
            self.names.add(name, s.title, self.range_of(name))
            self.exported[name] = vals
        self.terms = [self._terms(j, p) for j, p in enumerate(self.ranked)]
        self.term_values = [self._terms(j, p, values=True) for j, p in enumerate(self.ranked)]
        tiers = max((len(t.tiers) for t in self.terms if isinstance(t, calc.PerMtokTerms)),
                    default=0)
        blended = [(f"option_tier{k}_blended", f"Tier {k}: price per million mixed tokens "
                    f"for this demand (cache and batch counted)", "USD/Mtok")
                   for k in range(1, tiers + 1)]
        if any(isinstance(t, calc.PerMtokTerms) and t.overage is not None
               for t in self.terms):
            blended.append(("option_overage_blended", "Overage: price per million mixed "
                            "tokens for this demand", "USD/Mtok"))
        for name, words, unit in (*blended,
                                  ("option_accelerators", "Accelerators", "dimensionless"),
                                  ("option_utilisation", "Utilisation of the own build",
                                   "dimensionless"),
                                  ("option_bill", "Bill a month", "USD/month"),
                                  ("option_per_mtok", "Per million tokens", "USD/Mtok"),
                                  ("option_rank", "Rank (1: the cheapest)", "dimensionless"),
                                  ("option_term_total", "Nominal over the term", "USD"),
                                  ("option_term_pv", "Present value at the discount rate",
                                   "USD")):
            row += 1
            self.rows[name] = row
            self._label(row, words, name, unit)
        self.prices: dict[int, dict[str, Formula]] = {}
        for j, p in enumerate(self.ranked):
            self._bill_column(j, p)
        for name in ("option_bill", "option_rank"):
            self.names.add(name, s.title, self.range_of(name))
        return row

    def _option_inputs(self) -> dict[str, tuple[str, str, list[Any]]]:
        """Each row of terms some option has: (words, unit, each option's value or None)."""
        tiers = max((len(p.option.terms.tiers) for p in self.ranked
                     if isinstance(p.option.terms, calc.PerMtokTerms)), default=0)
        table: dict[str, tuple[str, str]] = dict(OPTION_INPUTS)
        for k in range(1, tiers + 1):
            table |= tier_rows(k)
        values: dict[str, list[Any]] = {name: [None] * self.n for name in table}
        for j, p in enumerate(self.ranked):
            t = p.option.terms
            if isinstance(t, calc.PerMtokTerms):
                for k, tier in enumerate(t.tiers, 1):
                    values[f"option_tier{k}_input"][j] = tier.price_input
                    values[f"option_tier{k}_output"][j] = tier.price_output
                    values[f"option_tier{k}_up_to"][j] = tier.up_to
                values["option_cached_fraction"][j] = t.cached_fraction
                values["option_batch_discount"][j] = t.batch_discount
                values["option_committed"][j] = t.committed_volume
                if t.overage is not None:
                    values["option_overage_input"][j], values["option_overage_output"][j] = \
                        t.overage
                values["option_floor"][j] = t.floor
            elif isinstance(t, calc.CapacityTerms):
                values["option_throughput"][j] = t.throughput
                values["option_availability"][j] = t.available
                values["option_offered"][j] = t.offered
                values["option_unit"][j] = t.unit
                values["option_block"][j] = t.block
                values["option_floor"][j] = t.floor
            else:
                values["option_throughput"][j] = t.throughput
                values["option_availability"][j] = t.available
                self.own_lines[j] = _own_line(p, f"ranked.{j}")  # the model priced twice
                values["option_hour_idle"][j], values["option_hour_slope"][j] = \
                    self.own_lines[j]
        order = [*(k for k in table if k.startswith("option_tier")),
                 *(k for k in table if not k.startswith("option_tier"))]
        return {k: (*table[k], values[k]) for k in order if any(v is not None
                                                                  for v in values[k])}

    def _terms(self, j: int, p: Priced, values: bool = False) -> Any:
        """Option j's terms as formulas reading its cells (structure as the engine's);
        ``values``: the same terms as the floats those cells hold."""
        t = p.option.terms

        def cell(name: str, value: Any) -> Any:
            if value is None or values:
                return value
            return Formula(_decision_ref(self.rows[name], FIRST + j), value)
        if isinstance(t, calc.PerMtokTerms):
            return calc.PerMtokTerms(
                [calc.Tier(cell(f"option_tier{k}_up_to", tier.up_to),
                           cell(f"option_tier{k}_input", tier.price_input),
                           cell(f"option_tier{k}_output", tier.price_output))
                 for k, tier in enumerate(t.tiers, 1)],
                cell("option_cached_fraction", t.cached_fraction),
                cell("option_batch_discount", t.batch_discount),
                cell("option_committed", t.committed_volume),
                None if t.overage is None else (cell("option_overage_input", t.overage[0]),
                                                cell("option_overage_output", t.overage[1])),
                cell("option_floor", t.floor))
        if isinstance(t, calc.CapacityTerms):
            return calc.CapacityTerms(cell("option_throughput", t.throughput),
                                      cell("option_availability", t.available),
                                      cell("option_offered", t.offered),
                                      cell("option_unit", t.unit),
                                      cell("option_block", t.block), cell("option_floor", t.floor))
        idle, slope = self.own_lines[j]
        idle_f, slope_f = cell("option_hour_idle", idle), cell("option_hour_slope", slope)
        # the sheet's line: idle + slope x utilisation, the engine's order in both renderings
        return calc.OwnTerms(cell("option_throughput", t.throughput),
                             cell("option_availability", t.available),
                             lambda o, u: idle_f + slope_f * u)

    def _bill_column(self, j: int, p: Priced) -> None:
        s, col = self.sheet, FIRST + j
        t = self.terms[j]
        tiers = len(t.tiers) if isinstance(t, calc.PerMtokTerms) else 0
        placed = {"accelerators": ("option_accelerators", "dimensionless"),
                  "utilisation": ("option_utilisation", "dimensionless"),
                  "blended overage": ("option_overage_blended", "USD/Mtok"),
                  **{f"blended {k}": (f"option_tier{k}_blended", "USD/Mtok")
                     for k in range(1, tiers + 1)}}
        prices = self.prices[j] = {}  # a tier's price for the demand: read by the Scan too

        def place(label: str, f: Formula) -> Formula | None:
            if label not in placed:
                return None
            name, unit = placed[label]
            row = self.rows[name]
            s.figure(row, col, f.value, name, unit, "calc", f.text)
            if label.startswith("blended"):
                prices[label] = Formula(_decision_ref(row, col), f.value)
                return prices[label]
            return Formula(cell_ref(row, col, True), f.value)
        o = Formulas(place)
        if isinstance(t, calc.CapacityTerms):
            paid, bill = calc.capacity_bill(o, self.demand, t)
            row = self.rows["option_accelerators"]
            s.figure(row, col, paid.value, "option_accelerators", "dimensionless", "calc",
                     paid.text)
        else:
            bill = calc.bill(o, self.demand, t)
        for name in ("option_accelerators", "option_utilisation"):
            if not (isinstance(t, calc.OwnTerms) or (name == "option_accelerators"
                                                     and isinstance(t, calc.CapacityTerms))):
                s.text(self.rows[name], col, "", "calc")
        for label, (name, _) in placed.items():
            if label.startswith("blended") and name in self.rows and label not in prices:
                s.text(self.rows[name], col, "", "calc")
        r = self.rows
        bill_ref = cell_ref(r["option_bill"], col)
        s.figure(r["option_bill"], col, bill.value, "option_bill", "USD/month", "result",
                 bill.text)
        s.figure(r["option_per_mtok"], col, bill.value / self.book.decision.load.volume,
                 "option_per_mtok", "USD/Mtok", "calc", f"{bill_ref}/decision_volume")
        bills, flags, order = (self.range_of(k) for k in ("option_bill", "option_flags",
                                                        "option_order"))
        mine = {k: cell_ref(r[k], col) for k in ("option_flags", "option_order")}
        s.figure(r["option_rank"], col, j + 1, "option_rank", "dimensionless", "calc",
                 f"1+SUMPRODUCT(({bills}<{bill_ref})+({bills}={bill_ref})*({flags}<"
                 f"{mine['option_flags']})+({bills}={bill_ref})*({flags}="
                 f"{mine['option_flags']})*({order}<{mine['option_order']}))")
        term = cell_ref(r["option_term"], col)
        s.figure(r["option_term_total"], col, p.term_total, "option_term_total", "USD", "calc",
                 f"{bill_ref}*{term}")
        s.figure(r["option_term_pv"], col, p.term_pv, "option_term_pv", "USD", "calc",
                 f"IF(decision_monthly_rate=0,{bill_ref}*{term},{bill_ref}*(1-(1+"
                 f"decision_monthly_rate)^(-{term}))/decision_monthly_rate)")

    # -- the recommendation ------------------------------------------------------------------
    def _recommendation(self, row: int) -> tuple[int, int]:
        s, d = self.sheet, self.book.decision
        rec = d.recommendation or {}
        scan = Scan(self)
        found = scan.write()
        s.text(row, 1, "Recommendation", "section")
        names, ranks, bills = (self.range_of(k) for k in ("option_name", "option_rank",
                                                        "option_bill"))
        lines = [("decision_best", "Column of the recommended option", "dimensionless", 1,
                  f"MATCH(1,{ranks},0)"),
                 ("decision_offer", "Recommended", "", rec.get("offer"),
                  f"INDEX({names},decision_best)"),
                 ("decision_bill", "Its bill a month", "USD/month",
                  self.ranked[0].charge.monthly, f"INDEX({bills},decision_best)")]
        if self.n > 1:
            margin = rec["margin"]["value"]
            lines += [("decision_next", "The next", "", rec.get("next"),
                       f"INDEX({names},MATCH(2,{ranks},0))"),
                      ("decision_margin", "Saved a month against the next", "USD/month",
                       margin, f"INDEX({bills},MATCH(2,{ranks},0))-decision_bill"),
                      ("decision_margin_share", "Saved, as a share of the next's bill",
                       "dimensionless", rec.get("margin_share"),
                       f'IF(INDEX({bills},MATCH(2,{ranks},0))=0,"",decision_margin/'
                       f'INDEX({bills},MATCH(2,{ranks},0)))')]
        low, high = d.holds
        lines += [("decision_holds_from", "It holds from (below: another option is cheaper; "
                   "empty: beyond the scan, 1/100 of the demand)", "Mtok/month", low,
                   found["holds_from"][1]),
                  ("decision_holds_to", "It holds up to (empty: beyond the scan, 100 times "
                   "the demand)", "Mtok/month", high, found["holds_to"][1])]
        for name, words, unit, value, formula in lines:
            row += 1
            self._label(row, words, name, unit)
            if unit:
                s.figure(row, FIRST, math.nan if value is None else value, name, unit,
                         "result", formula, empty=value is None or name.endswith("share")
                         or "holds" in name)
            else:
                s.formula(row, FIRST, formula, value or "", "result")
            self.names.add(name, s.title, cell_ref(row, FIRST, True))
        row += 2
        s.text(row, 1, "Break-even with the recommended option, option by option", "section")
        row += 1
        s.header(row, ["", "name", "unit", *(p.option.name for p in self.ranked)])
        for name, words, unit in (("option_break_even", "Volume where its bill meets the "
                                   "recommended one's (nearest the demand; empty: none in "
                                   "the scan)", "Mtok/month"),
                                  ("option_cheaper_below", "Cheaper just below that volume",
                                   "")):
            row += 1
            self._label(row, words, name, unit)
            for j in range(self.n):
                value, formula = found[name][j]
                if unit:
                    s.figure(row, FIRST + j, math.nan if value is None else value, name, unit,
                             "calc", formula, empty=True)
                else:  # a name wraps in its column
                    s.formula(row, FIRST + j, formula, value or "", "wrap")
        return self.header_row, self.header_row


def _decision_ref(row: int, col: int) -> str:
    """A Decision cell as any sheet reads it."""
    return f"{DECISION_SHEET}!{cell_ref(row, col, True)}"


def write_decision(sheet: Sheet, scan: Sheet, book: DecisionBook, names: Names
                   ) -> tuple[tuple[int, int], dict[str, Any]]:
    """Write the Decision and Scan sheets: the Decision sheet's header rows (first, last),
    and each input's value as written (by name: a demand's, or a list by option), which the
    reader compares an edited workbook's with."""
    n = len(book.decision.ranked)
    if not n:
        raise InputError([("decision", "no option can be ranked for this demand: there is "
                                       "nothing to lay out in a workbook")])
    if n > MAX_OPTIONS:
        raise InputError([("quotes", f"a decision workbook lays out at most {MAX_OPTIONS} "
                                     f"ranked options (one column and one scan each); this "
                                     f"decision ranks {n}: leave out the dearest")])
    for p in book.decision.ranked:
        t = p.option.terms
        if isinstance(t, calc.PerMtokTerms) and len(t.tiers) > MAX_TIERS:
            where = "quotes" if p.option.quote is None else f"quotes[{p.option.quote}].tiers"
            raise InputError([(where, f"a decision workbook lays out at most {MAX_TIERS} "
                                      f"tiers an offer (three rows each, and a part of every "
                                      f"bill of the Scan); {p.option.name!r} states "
                                      f"{len(t.tiers)}: join tiers, or ask for the JSON or "
                                      f"PDF answer")])
    w = _Writer(sheet, scan, book, names)
    header = w.write()
    sheet.set_widths({1: 46, 2: 20, 3: 11, **{FIRST + j: 16 for j in range(n)}})
    return header, w.exported
