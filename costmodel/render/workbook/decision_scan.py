"""The Scan sheet of a decision's workbook: the engine's search
(:func:`costmodel.decisions.decision.decide`) written out as formulas.

A grid of 121 demand scales (1/100 to 100 times the demand, logarithmic) with every option's
bill at each; where the recommended option first loses below and above the demand, and where
each option's bill crosses the recommended one's nearest the demand, each refined by the
engine's 40 halvings (:func:`costmodel.decisions.decision_calculation.edge`), a row each.
Which side of the demand a grid scale lies on is written as the engine's floats say (a
spreadsheet compares 1 + 2e-16 and 1 as equal).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from ...decisions import decision_calculation as calc
from ...decisions.decision import SCALES as _SCALES
from ..display import excel_format
from .decision_formulas import Compiled, Formula, Formulas, value_of
from .sheet import cached, cell_ref, col_name, formula_xml, plain_formula, xml_text

__all__ = ["DECISION_SHEET", "SCAN_SHEET", "Scan"]

DECISION_SHEET, SCAN_SHEET = "Decision", "Scan"
_SCALE = "\0scale\0"  # the scale a bill's formula reads, until a row names its cell


def _scan_ref(row: int, col: int, absolute: bool = False) -> str:
    """A Scan cell as any sheet reads it."""
    return f"{SCAN_SHEET}!{cell_ref(row, col, absolute)}"


def _last_where(condition: str, ks: str) -> tuple[str, str]:
    """The largest grid index in ``ks`` where ``condition`` (1 or 0 along the same rows)
    holds, as a formula, and the formula that is true when it holds nowhere (-1)."""
    k = f"(SUMPRODUCT(MAX({condition}*({ks}+1)))-1)"
    return k, f"{k}<0"


def _first_where(condition: str, ks: str) -> tuple[str, str]:
    """:func:`_last_where`'s smallest index (1000, beyond the grid's 121, when none)."""
    k = f"(1000-SUMPRODUCT(MAX({condition}*(1000-{ks}))))"
    return k, f"{k}=1000"


class Scan:
    """The Scan sheet: the grid, and each bisection as 40 rows."""

    def __init__(self, w: Any):  # the Decision sheet's writer
        self.w, self.sheet, self.n = w, w.scan, w.n
        self.col_cost = 5  # column E: option 1's bill
        self.col_flag = self.col_cost + self.n  # wins / holds
        self.col_side = self.col_flag + 1  # the grid's sides against the winner
        # each option's bill at a scale, rendered once with the scale a placeholder (the
        # Scan writes some 14,000 bills that differ only in the scale cell they read), and
        # its value computed by the engine's algebra over the values of the cells it reads
        demand = w.demand
        self.demand = calc.Demand(*(value_of(getattr(demand, f.name))
                                    for f in fields(calc.Demand)))
        self.bills = [Compiled(w.prices[j]).function(
            lambda o, s, t=t: calc.bill(o, calc.scaled(o, self.demand, s), t))
            for j, t in enumerate(w.term_values)]
        self.templates = []
        for j, t in enumerate(w.terms):
            o = Formulas(known=w.prices[j])
            text = calc.bill(o, calc.scaled(o, demand, Formula(_SCALE, 1.0)), t).text
            if not plain_formula(text):
                raise ValueError(f"a bill's formula calls a function newer than Excel 2007: "
                                 f"{text[:200]}")
            self.templates.append(xml_text(text))
        self.xf = self.sheet.xf("calc", excel_format("option_bill", "USD/month"))
        # a row of bills at once: {0} the row, {1} the scale's text, {2}... the bills
        letters = [col_name(self.col_cost + j) for j in range(self.n)]
        self.refs = [f"{SCAN_SHEET}!{letter}" for letter in letters]
        self.row_xml = "".join(
            f'<c r="{letter}{{0}}" s="{self.xf}"><f>'
            f'{t.replace("{", "{{").replace("}", "}}").replace(_SCALE, "{1}")}</f>'
            f'<v>{{{j + 2}!r}}</v></c>' for j, (letter, t) in enumerate(
                zip(letters, self.templates, strict=True))).format

    def _costs(self, row: int, scale: Formula) -> list[Formula]:
        """Every option's bill at ``scale`` (an atom: a cell, a function) written along
        ``row`` (a tier's price for the demand read from its Decision cell)."""
        s = scale.value
        values = [bill(s) for bill in self.bills]
        scale_text = xml_text(scale.text)
        if all(v.__class__ is float and math.isfinite(v) for v in values):
            xml = self.row_xml(row, scale_text, *values)
        else:  # an error value or an empty result: each cell as the sheet writes it
            xml = "".join(formula_xml(cell_ref(row, self.col_cost + j), self.xf,
                                      self.templates[j].replace(_SCALE, scale_text),
                                      cached(v), escaped=True)
                          for j, v in enumerate(values))
        self.sheet.put_row(row, self.col_cost, self.col_cost + self.n - 1, xml)
        self.sheet._seen(row, self.col_cost + self.n - 1)
        r = str(row)
        return [Formula(ref + r, v) for ref, v in zip(self.refs, values, strict=True)]

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
            if what == "holds":  # (the algebra's functions are Excel 2007's: plain)
                s.formula(r, col, f"IF({f.text},1,0)", int(bool(f.value)), "calc", "0",
                          plain=True)
                return Formula(f"{_scan_ref(r, col)}=1", bool(f.value), 0)
            if what == "middle":
                s.number(r, 1, int(k), "constant", "0")
            s.formula(r, col, f.text, f.value, "calc", "0.0000000", plain=True)
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
            kf, none = _last_where(f"({below_}=1)*({wins}=0)", ks)
            inside = Formula(f"IF({none},1,IF({kf}={kb},1,INDEX({scales},{kf}+2)))",
                             1.0 if k < 0 or k == kb else _SCALES[k + 1])
        else:
            ka = min(k_of)
            k = min(lost) if lost else -1
            kf, none = _first_where(f"({above_}=1)*({wins}=0)", ks)
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
                kf, none = _last_where(f"({a}<>{b})*({s0}=1)", ks0)
            else:
                k = min(upper) if upper else -1
                kf, none = _first_where(f"({a}<>{b})*({s1}=1)", ks0)
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
        s.formula(last, 2, f"IF(INDEX({self.w.range_of('option_rank', DECISION_SHEET)},"
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
        names = self.w.range_of("option_name", DECISION_SHEET)
        won = costs[0].value <= costs[j].value
        cheaper_value = None if chosen is None or j == 0 else (
            self.w.ranked[0].option.name if won else self.w.ranked[j].option.name)
        volume = None if chosen is None or j == 0 else chosen * \
            self.w.book.decision.load.volume
        return last, (volume, f'IF({crossing}="","",{crossing}*decision_volume)'), \
            (cheaper_value, f'IF({crossing}="","",IF(INDEX({rng},decision_best)<='
                            f'{costs[j].text},INDEX({names},decision_best),'
                            f'INDEX({names},{j + 1})))')
