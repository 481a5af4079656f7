"""The Decision and Scan sheets: a decision for a demand (:mod:`costmodel.decisions.decision`)
as live formulas, so a finance team can change the demand or an offer's price and see the
ranking, the winner, its range and the break-evens move.

- **Decision**: the demand (volume, average over peak, the shares a per-Mtok price reads, the
  cost of capital) as inputs; one column per ranked option with its terms as inputs (tier
  prices, capacity prices, throughput, availability, our own build's hourly cost idle and per
  unit of utilisation) and, as formulas, its accelerators, bill a month, cost per Mtok, rank,
  term total and present value; then the recommendation (INDEX/MATCH on the ranks), its
  margin over the next, the range where it holds and each option's break-even with it.
- **Scan**: the engine's search written out. A grid of 121 demand scales (1/100 to 100 times
  the demand, logarithmic) with every option's bill at each; where the winner first loses
  below and above the demand, and where each option's bill first crosses the winner's, each
  refined by the engine's 40 halvings, one row each.

Every bill is the declared one (:mod:`costmodel.decisions.decision_calculation`) rendered by
:mod:`.decision_formulas`, so each formula's cached value is the engine's figure.

Our own build's cost of an accelerator-hour is affine in its utilisation (energy and demand
charges follow the load; capital, maintenance and hosting do not), so the sheet carries it as
its value idle and its slope, read from the model at utilisation 0 and at the build's
utilisation; the export checks the line through them against the model at a third point.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...decisions import decision_calculation as calc
from ...decisions.decision import SCALES as _SCALES
from ...decisions.decision import Decision, Priced
from ...model.errors import InputError
from .decision_formulas import Formula, Formulas
from .layout import Names
from .sheet import Sheet, cell_ref

__all__ = ["DECISION_SHEET", "SCAN_SHEET", "MAX_OPTIONS", "DecisionBook", "write_decision",
           "DEMAND_INPUTS", "OPTION_INPUTS", "DECISION_RECORD", "write_record", "tier_rows"]

DECISION_SHEET, SCAN_SHEET = "Decision", "Scan"
DECISION_RECORD = "decision"  # the Meta row's label of the request a decision answered
_CHUNK = 30_000  # characters a Meta cell holds of the record (a cell holds 32,767)
MAX_OPTIONS = 12  # ranked options a decision workbook lays out (each a column, and a Scan)
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

    # -- cells -----------------------------------------------------------------------------
    def _label(self, row: int, words: str, name: str, unit: str) -> None:
        self.sheet.text(row, 1, words, "wrap")
        self.sheet.text(row, 2, name, "name")
        self.sheet.text(row, 3, unit, "name")

    def _range(self, name: str, sheet: str | None = None) -> str:
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
                       "A month is 730 hours; tokens are counted mixed (input + output). "
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
                self.names.add(name, s.title, self._range(name))
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
            self.names.add(name, s.title, self._range(name))
            self.exported[name] = vals
        self.terms = [self._terms(j, p) for j, p in enumerate(self.ranked)]
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
                                  ("option_term_total", "Over the term", "USD"),
                                  ("option_term_pv", "Present value over the term", "USD")):
            row += 1
            self.rows[name] = row
            self._label(row, words, name, unit)
        self.prices: dict[int, dict[str, Formula]] = {}
        for j, p in enumerate(self.ranked):
            self._bill_column(j, p)
        for name in ("option_bill", "option_rank"):
            self.names.add(name, s.title, self._range(name))
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
                values["option_hour_idle"][j], values["option_hour_slope"][j] = _own_line(
                    p, f"ranked.{j}")
        order = [*(k for k in table if k.startswith("option_tier")),
                 *(k for k in table if not k.startswith("option_tier"))]
        return {k: (*table[k], values[k]) for k in order if any(v is not None
                                                                  for v in values[k])}

    def _terms(self, j: int, p: Priced) -> Any:
        """Option j's terms as formulas reading its cells (structure as the engine's)."""
        t = p.option.terms

        def cell(name: str, value: Any) -> Any:
            return None if value is None else Formula(_decision_ref(self.rows[name],
                                                                    FIRST + j), value)
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
        idle, slope = _own_line(p, f"ranked.{j}")
        idle_f, slope_f = cell("option_hour_idle", idle), cell("option_hour_slope", slope)
        return calc.OwnTerms(cell("option_throughput", t.throughput),
                             cell("option_availability", t.available),
                             lambda o, u: idle_f + slope_f * u)

    def _bill_column(self, j: int, p: Priced) -> None:
        s, col = self.sheet, FIRST + j
        placed = {"accelerators": ("option_accelerators", "dimensionless"),
                  "utilisation": ("option_utilisation", "dimensionless"),
                  "blended overage": ("option_overage_blended", "USD/Mtok"),
                  **{f"blended {k}": (f"option_tier{k}_blended", "USD/Mtok")
                     for k in range(1, 100)}}
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
        t = self.terms[j]
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
        bills, flags, order = (self._range(k) for k in ("option_bill", "option_flags",
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
        scan = _Scan(self)
        found = scan.write()
        s.text(row, 1, "Recommendation", "section")
        names, ranks, bills = (self._range(k) for k in ("option_name", "option_rank",
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


def _scan_ref(row: int, col: int, absolute: bool = False) -> str:
    """A Scan cell as any sheet reads it."""
    return f"{SCAN_SHEET}!{cell_ref(row, col, absolute)}"


def _decision_ref(row: int, col: int) -> str:
    """A Decision cell as any sheet reads it."""
    return f"{DECISION_SHEET}!{cell_ref(row, col, True)}"


class _Scan:
    """The Scan sheet: the grid, and each bisection as 40 rows."""

    def __init__(self, w: _Writer):
        self.w, self.sheet, self.n = w, w.scan, w.n
        self.col_cost = 5  # column E: option 1's bill
        self.col_flag = self.col_cost + self.n  # wins / holds
        self.col_side = self.col_flag + 1  # the grid's sides against the winner

    def _costs(self, row: int, scale: Formula) -> list[Formula]:
        """Every option's bill at ``scale`` written along ``row`` (a tier's price for the
        demand read from its Decision cell)."""
        out = []
        for j, t in enumerate(self.w.terms):
            o = Formulas(known=self.w.prices[j])
            f = calc.bill(o, calc.scaled(o, self.w.demand, scale), t)
            self.sheet.figure(row, self.col_cost + j, f.value, "option_bill", "USD/month",
                              "calc", f.text)
            out.append(Formula(_scan_ref(row, self.col_cost + j), f.value))
        return out

    def _row_range(self, row: int) -> str:
        return f"{_scan_ref(row, self.col_cost)}:{cell_ref(row, self.col_cost + self.n - 1)}"

    def write(self) -> dict[str, Any]:
        s, n = self.sheet, self.n
        s.text(1, 1, "Scan: where the recommendation holds and where bills cross", "title")
        s.paragraph(2, "The engine's search, written out: every option's bill a month at 121 "
                       "scales of the demand (volume and peak together, 1/100 to 100 times, "
                       "logarithmic); the first scale below and above the demand where the "
                       "recommended option loses, and for each option the crossing of its "
                       "bill with the recommended one's nearest the demand, each refined by "
                       "40 halvings of the interval (geometric means). Scales are multiples "
                       "of the demand on the Decision sheet.", self.col_side + n - 1)
        header = ["k", "scale", "below (1)", "above (1)", *(p.option.name for p in self.w.ranked),
                  "recommended cheapest (1)",
                  *(f"recommended <= {p.option.name} (1)" for p in self.w.ranked)]
        top = 4
        s.header(top, header)
        first = top + 1
        wins_vals: list[bool] = []
        sides: list[list[bool]] = [[] for _ in range(n)]
        for k, scale in enumerate(_SCALES):
            row = first + k
            s.number(row, 1, k, "constant", "0")
            s.number(row, 2, scale, "constant", "0.0000")
            # which side of the demand, as the engine's floats say (a spreadsheet compares
            # 1.0000000000000002 and 1 as equal)
            s.number(row, 3, int(scale < 1.0), "constant", "0")
            s.number(row, 4, int(scale > 1.0), "constant", "0")
            costs = self._costs(row, Formula(_scan_ref(row, 2, True), scale))
            rng = self._row_range(row)
            ours = f"INDEX({rng},decision_best)"
            b = costs[0].value  # as exported, the recommended option is the first column
            wins = b <= min(c.value for c in costs)
            wins_vals.append(wins)
            s.formula(row, self.col_flag, f"IF({ours}<=MIN({rng}),1,0)", int(wins), "calc",
                      "0")
            for j, c in enumerate(costs):
                side = b <= c.value
                sides[j].append(side)
                s.formula(row, self.col_side + j, f"IF({ours}<={c.text},1,0)", int(side),
                          "calc", "0")
        last = first + len(_SCALES) - 1
        self.grid = {"k": (first, last, 1), "scale": (first, last, 2),
                     "below": (first, last, 3), "above": (first, last, 4),
                     "wins": (first, last, self.col_flag),
                     **{f"side {j}": (first, last, self.col_side + j) for j in range(n)}}
        self.sides = sides
        self.wins = wins_vals
        s.set_widths({1: 6, 2: 9, 3: 9, 4: 9, **{self.col_cost + j: 14 for j in range(n)},
                      self.col_flag: 13, **{self.col_side + j: 13 for j in range(n)}})
        row = last + 2
        found: dict[str, Any] = {}
        row, found["holds_from"] = self._holds(row, below=True)
        row, found["holds_to"] = self._holds(row + 1, below=False)
        found["option_break_even"], found["option_cheaper_below"] = [], []
        for j in range(n):
            row, be, cheaper = self._pair(row + 1, j)
            found["option_break_even"].append(be)
            found["option_cheaper_below"].append(cheaper)
        return found

    def _col(self, key: str) -> str:
        first, last, col = self.grid[key]
        return f"{_scan_ref(first, col, True)}:{cell_ref(last, col, True)}"

    def _grid_part(self, key: str, offset: int) -> str:
        """A grid column's rows k = offset .. 119 + offset (a row and the next compared)."""
        first, last, col = self.grid[key]
        return (f"{_scan_ref(first + offset, col, True)}:"
                f"{cell_ref(last - 1 + offset, col, True)}")

    def _bisect(self, row: int, title: str, start: tuple[Formula, Formula],
                holds: Callable[[list[Formula], int], Formula]) -> tuple[int, Formula]:
        """A bisection block from ``start`` (inside, outside), ``holds(costs, row)`` the
        condition at a row's middle; returns the last row and the edge found."""
        s = self.sheet
        s.text(row, 1, title, "label")
        row += 1
        s.header(row, ["step", "inside", "outside", "middle",
                       *(p.option.name for p in self.w.ranked), "holds (1)"])
        row += 1
        inside, outside = start
        s.text(row, 1, "start", "name")
        s.formula(row, 2, inside.text, inside.value, "calc", "0.0000000")
        s.formula(row, 3, outside.text, outside.value, "calc", "0.0000000")
        base = row
        inside = Formula(_scan_ref(row, 2), inside.value)
        outside = Formula(_scan_ref(row, 3), outside.value)
        cols = {"middle": 4, "holds": self.col_flag, "inside": 2, "outside": 3}

        def place(label: str, f: Formula) -> Formula | None:
            what, k = label.split()
            col, r = cols.get(what), base + int(k)
            if col is None:
                return None
            if what == "holds":
                s.formula(r, col, f"IF({f.text},1,0)", int(bool(f.value)), "calc", "0")
                return Formula(f"{_scan_ref(r, col)}=1", bool(f.value), 0)
            if what == "middle":
                s.number(r, 1, int(k), "constant", "0")
            s.formula(r, col, f.text, f.value, "calc", "0.0000000")
            return Formula(_scan_ref(r, col), f.value)
        o = Formulas(place)
        step = iter(range(1, calc.BISECTIONS + 1))

        def f(mid: Formula) -> Formula:
            r = base + next(step)
            return holds(self._costs(r, mid), r)
        edge = calc.edge(o, f, inside, outside)
        return base + calc.BISECTIONS, edge

    def _holds(self, row: int, below: bool) -> tuple[int, tuple[Any, str]]:
        ks, scales, wins = self._col("k"), self._col("scale"), self._col("wins")
        below_, above_ = self._col("below"), self._col("above")
        k_of = [k for k, sc in enumerate(_SCALES) if (sc < 1.0 if below else sc > 1.0)]
        lost = [k for k in k_of if not self.wins[k]]
        if below:
            kb = max(k_of)
            k = max(lost) if lost else -1
            kf = f"(SUMPRODUCT(MAX(({below_}=1)*({wins}=0)*({ks}+1)))-1)"
            none = f"{kf}<0"
            inside = Formula(f"IF({none},1,IF({kf}={kb},1,INDEX({scales},{kf}+2)))",
                             1.0 if k < 0 or k == kb else _SCALES[k + 1])
        else:
            ka = min(k_of)
            k = min(lost) if lost else -1
            kf = f"(1000-SUMPRODUCT(MAX(({above_}=1)*({wins}=0)*(1000-{ks}))))"
            none = f"{kf}=1000"
            inside = Formula(f"IF({none},1,IF({kf}={ka},1,INDEX({scales},{kf})))",
                             1.0 if k < 0 or k == ka else _SCALES[k - 1])
        outside = Formula(f"IF({none},1,INDEX({scales},{kf}+1))",
                          1.0 if k < 0 else _SCALES[k])

        def holds(costs: list[Formula], r: int) -> Formula:
            rng = self._row_range(r)  # as exported, the recommended option is column 1
            return Formula(f"INDEX({rng},decision_best)<=MIN({rng})",
                           costs[0].value <= min(c.value for c in costs), 0)
        title = ("Where the recommended option first loses below the demand" if below else
                 "Where the recommended option first loses above the demand")
        last, edge = self._bisect(row, title, (inside, outside), holds)
        value = None if k < 0 else edge.value * self.w.book.decision.load.volume
        return last, (value, f'IF({none},"",{edge.text}*decision_volume)')

    def _pair(self, row: int, j: int) -> tuple[int, tuple[Any, str], tuple[Any, str]]:
        """Option j's crossing with the recommended option nearest the demand."""
        side = self.sides[j]
        change = [k for k in range(len(_SCALES) - 1) if side[k] != side[k + 1]]
        lower = [k for k in change if _SCALES[k] < 1.0]
        upper = [k for k in change if _SCALES[k + 1] > 1.0]
        a, b = self._grid_part(f"side {j}", 0), self._grid_part(f"side {j}", 1)
        ks0, s0, s1 = self._grid_part("k", 0), self._grid_part("below", 0), \
            self._grid_part("above", 1)
        found = []
        last = row
        for below in (True, False):
            if below:
                k = max(lower) if lower else -1
                kf = f"(SUMPRODUCT(MAX(({a}<>{b})*({s0}=1)*({ks0}+1)))-1)"
                none = f"{kf}<0"
            else:
                k = min(upper) if upper else -1
                kf = f"(1000-SUMPRODUCT(MAX(({a}<>{b})*({s1}=1)*(1000-{ks0}))))"
                none = f"{kf}=1000"
            scales_all = self._col("scale")
            start = (Formula(f"IF({none},1,INDEX({scales_all},{kf}+1))",
                             1.0 if k < 0 else _SCALES[k]),
                     Formula(f"IF({none},1,INDEX({scales_all},{kf}+2))",
                             1.0 if k < 0 else _SCALES[k + 1]))
            side_col = self._col(f"side {j}")
            at_start = side[k] if k >= 0 else True

            def holds(costs: list[Formula], r: int, kf: str = kf, none: str = none,
                      at_start: bool = at_start, side_col: str = side_col) -> Formula:
                rng = self._row_range(r)
                cheaper = costs[0].value <= costs[j].value
                return Formula(f"(INDEX({rng},decision_best)<={costs[j].text})="
                               f"(IF({none},1,INDEX({side_col},{kf}+1))=1)",
                               cheaper == at_start, 0)
            name = self.w.ranked[j].option.name
            title = (f"{name}: its bill crosses the recommended one's below the demand"
                     if below else
                     f"{name}: its bill crosses the recommended one's above the demand")
            last, edge = self._bisect(last + (1 if found else 0), title, start, holds)
            found.append((None if k < 0 else edge.value, edge.text, none))
        (lo, lo_text, lo_none), (hi, hi_text, hi_none) = found
        chosen = None
        if lo is not None and hi is not None:
            chosen = lo if abs(math.log(lo)) <= abs(math.log(hi)) else hi
        else:
            chosen = lo if lo is not None else hi
        scale_text = (f"IF({lo_none},IF({hi_none},\"\",{hi_text}),IF({hi_none},{lo_text},"
                      f"IF(ABS(LN({lo_text}))<=ABS(LN({hi_text})),{lo_text},{hi_text})))")
        s = self.sheet
        last += 2
        s.text(last, 1, f"{self.w.ranked[j].option.name}: the crossing nearest the demand "
                        f"(scale), and the bills just below it", "label")
        last += 1
        s.formula(last, 2, f"IF(INDEX({self.w._range('option_rank', DECISION_SHEET)},"
                           f"{j + 1})=1,\"\",{scale_text})",
                  "" if chosen is None or j == 0 else chosen, "calc", "0.0000000", empty=True)
        crossing = _scan_ref(last, 2)
        just_below = Formula(f"{crossing}*decision_just_below",
                             None if chosen is None else chosen * calc.JUST_BELOW, 2)
        if chosen is None or j == 0:
            just_below = Formula(just_below.text, 1.0, 2)
        costs = self._costs(last, Formula(f'IF({crossing}="",1,{just_below.text})',
                                          just_below.value))
        rng = self._row_range(last)
        names = self.w._range("option_name", DECISION_SHEET)
        won = costs[0].value <= costs[j].value
        cheaper_value = None if chosen is None or j == 0 else (
            self.w.ranked[0].option.name if won else self.w.ranked[j].option.name)
        volume = None if chosen is None or j == 0 else chosen * \
            self.w.book.decision.load.volume
        return last, (volume, f'IF({crossing}="","",{crossing}*decision_volume)'), \
            (cheaper_value, f'IF({crossing}="","",IF(INDEX({rng},decision_best)<='
                            f'{costs[j].text},INDEX({names},decision_best),'
                            f'INDEX({names},{j + 1})))')


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
    w = _Writer(sheet, scan, book, names)
    header = w.write()
    sheet.set_widths({1: 46, 2: 20, 3: 11, **{FIRST + j: 16 for j in range(n)}})
    return header, w.exported



def write_record(meta: Sheet, row: int, record: dict[str, Any]) -> None:
    """The decision's request on the Meta sheet at ``row`` (after a blank row below the
    systems'), labelled :data:`DECISION_RECORD`, in chunks a cell holds."""
    payload = json.dumps(record, ensure_ascii=False, allow_nan=False)
    meta.text(row, 1, DECISION_RECORD)
    for j, k in enumerate(range(0, len(payload), _CHUNK)):
        meta.text(row, 2 + j, payload[k:k + _CHUNK])
