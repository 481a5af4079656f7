"""The Chargeback sheet: a period's ledger as live formulas, rendered from the declaration
(:mod:`costmodel.decisions.chargeback_calculation`) through its formula algebra.

- **The period** (blue input cells): its hours (``chargeback_hours``) and the weight of a
  cached input token (``chargeback_cached_weight``).
- **Pools**, one column each (pool *i* is system *i* of the model's sheets, priced at its
  measured utilisation): accelerators (an input cell), equivalents an accelerator serves an
  hour (the model's ``throughput``, ``weighted_tokens_per_request``,
  ``tokens_per_request``), its cost an hour by part (the model's
  ``electricity_cost_per_hour``, ``capex_per_hour``, ``opex_per_hour``), capacity, use,
  measured utilisation, cost, the usage rate, the idle cost and its line. Each pool's
  utilisation on Inputs is a formula reading its measured utilisation here, so an edited
  token count re-prices the energy as the engine does.
- **Lines**, one row a tenant on a pool (tokens and reserved share as input cells), then
  each pool's idle line: equivalents, the reserved, usage and idle parts, the line's total
  and its cents by largest remainder (the cents left over given to the largest remainders,
  ties to the earlier line; helper columns show the arithmetic).
- **Tenants**: each tenant's tokens and charge (SUMIF over the lines), cost per million
  tokens and share; the **check**: the lines add up to the fleet's cost, unrounded and in
  cents.
- **Emissions**, charged as the cost is (the allocation is linear in a pool's cost an
  accelerator-hour, so a line's kgCO2e is its share of the pool's cost times the pool's
  emissions in the period): each pool's emissions an accelerator-hour (the model's
  ``emissions_total_per_hour`` and ``emissions_market_total_per_hour``: operational at the
  measured utilisation, plus embodied where a footprint is given) and in the period, each
  line's and each tenant's kgCO2e by basis, the fleet's. Empty (a dash) where a pool has no
  factor for the basis, as the engine's null.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...decisions import chargeback_calculation as calc
from ...model.inputs import MIN_UTILISATION
from .decision_formulas import Formula, Formulas, value_of
from .layout import FIRST_COL, Names, WorkbookSystem, system_ref
from .sheet import (
    Sheet,
    cached,
    cell_ref,
    col_name,
    formula_xml,
    number_xml,
    with_dash,
    xml_text,
)

__all__ = ["CHARGEBACK_SHEET", "ChargebackBook", "PoolBook", "write_chargeback",
           "ChargeFormulas", "LINE_COLUMNS"]

CHARGEBACK_SHEET = "Chargeback"
GRAMS_PER_KILOGRAM = 1000.0  # [g/kg] (the sheet's named cell chargeback_grams_per_kg)
# the lines' columns, 1-based
LINE_COLUMNS = {"tenant": 1, "pool": 2, "input": 3, "cached": 4, "output": 5, "reserved": 6,
                "equivalents": 7, "over": 8, "weight": 9, "reserved_charge": 10, "usage": 11,
                "idle": 12, "total": 13, "read": 14, "floor": 15, "remainder": 16, "cents": 17,
                "charge": 18, "kg_location": 19, "kg_market": 20}
_HEADERS = {"tenant": "tenant", "pool": "pool", "input": "new input [token]",
            "cached": "cached input [token]", "output": "output [token]",
            "reserved": "reserved share", "equivalents": "equivalents [token]",
            "over": "usage equivalents [token]", "weight": "idle weight",
            "reserved_charge": "reserved [USD]",
            "usage": "usage [USD]", "idle": "idle share [USD]", "total": "line [USD]",
            "read": "cents read", "floor": "cents floored", "remainder": "remainder",
            "cents": "cents", "charge": "charge [USD]", "kg_location": "location [kgCO2e]",
            "kg_market": "market [kgCO2e]"}
BASES = ("location", "market")  # the emission bases, as the ledger's JSON names them
_PER_HOUR_STEP = {"location": "emissions_total_per_hour",
                  "market": "emissions_market_total_per_hour"}
_KG = "#,##0.000"
# the pool block's rows: (label of the declaration's cell or a term, words, unit, format)
_POOL_ROWS = [
    ("accelerators", "Accelerators", "count", "#,##0"),
    ("hours", "Hours in the period", "h", "#,##0.00"),
    ("per_hour", "Equivalents an accelerator serves an hour", "token/h", "#,##0"),
    ("output_weight", "Output weight (pricing_output_weight)", "input tokens", "0.00"),
    ("energy", "Energy an accelerator-hour, at the measured utilisation", "USD/h", "0.0000"),
    ("capital", "Capital (or rent) an accelerator-hour", "USD/h", "0.0000"),
    ("operating", "Operating an accelerator-hour", "USD/h", "0.0000"),
    ("capacity", "Capacity in the period", "token", "#,##0"),
    ("used", "Equivalents used", "token", "#,##0"),
    ("utilisation", "Measured utilisation (Inputs' utilisation reads it)", "fraction",
     "0.00%"),
    ("cost", "Cost in the period", "USD", "#,##0.00"),
    ("reserved share", "Reserved share", "fraction", "0.00%"),
    ("usage", "Usage equivalents (beyond reservations)", "token", "#,##0"),
    ("shared cost", "Unreserved cost", "USD", "#,##0.00"),
    ("rate", "Usage rate", "USD/token", "0.000E+00"),
    ("idle", "Idle cost (unreserved cost usage does not pay)", "USD", "#,##0.00"),
    ("weights", "Idle shared over (usage or tenants)", "", "#,##0.##"),
    ("idle line", "Idle line", "USD", "#,##0.00"),
    ("emissions location", "Emissions an accelerator-hour, location-based (with embodied "
                           "where given)", "gCO2e/h", "#,##0.00"),
    ("emissions market", "Emissions an accelerator-hour, market-based (with embodied "
                         "where given)", "gCO2e/h", "#,##0.00"),
    ("kg location", "Emissions in the period, location-based", "kgCO2e", _KG),
    ("kg market", "Emissions in the period, market-based", "kgCO2e", _KG),
]
_ROW_STYLE = {"accelerators": "input", "cost": "result", "idle line": "result"}
_LINE_LABELS = {"equivalents": "equivalents", "over": "over", "reserved": "reserved_charge",
                "usage": "usage", "idle": "idle", "weight": "weight", "total": "total"}
_MONEY = "#,##0.00"
_TOKENS = "#,##0"


@dataclass(frozen=True)
class PoolBook:
    """A pool as the sheet needs it: its name, accelerators, reservations [fraction] by
    tenant, uses (one a tenant of the ledger), its charge (the engine's), whether its
    scenario has a load shape (its utilisation on Inputs is then not read) and its emissions
    charged as its cost is [gCO2e] by basis (a basis without a factor absent)."""
    name: str
    accelerators: int
    reserved: Mapping[str, float]
    uses: Sequence[calc.Use]
    charge: calc.PoolCharge
    load_shape: bool
    emissions: Mapping[str, calc.PoolCharge] = field(default_factory=dict)

    def line_kg(self, basis: str, j: int | None) -> float:
        """The engine's kgCO2e of tenant ``j``'s line (None: the idle line) by ``basis``;
        NaN where the pool has no factor for it."""
        c = self.emissions.get(basis)
        if c is None:
            return math.nan
        grams = c.idle_line if j is None else c.uses[j].total
        return float(value_of(grams)) / GRAMS_PER_KILOGRAM


@dataclass(frozen=True)
class ChargebackBook:
    """The ledger as the sheet writes it: the fleet, the period and its hours, the idle
    rule, the cached weight, the tenants, the pools (system i is pool i) and the lines (each
    with ``tenant`` None for an idle line, ``pool``, ``amount``, ``cents``)."""
    fleet: str
    period: str
    hours: float
    idle_rule: str
    cached_weight: float
    tenants: Sequence[str]
    pools: Sequence[PoolBook]
    lines: Sequence[Any]
    rules: Sequence[str]
    by: str


class ChargeFormulas(Formulas):
    """The chargeback's algebra over formulas: the decision's, with a division that is 0
    where the divisor is (``IF(b=0,0,a/b)``), 1 where a value is positive, a column's sum
    (``SUM`` of a range when the cells are one column in a row) and the chargeback's named
    constants."""

    def div0(self, a: Any, b: Any) -> Formula:
        from .decision_formulas import _operand, literal
        a, b = literal(a), literal(b)
        value = calc.FLOATS.div0(a.value, b.value)
        return Formula(f"IF({_operand(b, 1)}=0,0,{_operand(a, 3)}/{_operand(b, 3)})", value)

    def positive(self, x: Any) -> Formula:
        from .decision_formulas import _operand, literal
        x = literal(x)
        return Formula(f"IF({_operand(x, 1)}>0,1,0)", calc.FLOATS.positive(x.value))

    def total(self, xs: Sequence[Any]) -> Any:
        from .decision_formulas import literal
        xs = [literal(x) for x in xs]
        value = calc.FLOATS.total([x.value for x in xs])
        if not xs:
            return literal(0.0)
        refs = [_REF.fullmatch(x.text) for x in xs]
        if all(refs) and len({m.group(1) for m in refs}) == 1:
            rows = [int(m.group(2)) for m in refs]
            if rows == list(range(rows[0], rows[0] + len(rows))):
                return Formula(f"SUM({xs[0].text}:{xs[-1].text})", value)
        return Formula(f"SUM({','.join(x.text for x in xs)})", value)

    def const(self, name: str) -> Formula:
        return Formula(name, calc.CONSTANTS[name])


_REF = re.compile(r"\$([A-Z]+)\$(\d+)")


def _abs(row: int, col: int) -> str:
    return cell_ref(row, col, absolute=True)


POOL_WIDTH = 18  # [characters]: 4,104,085,708,800 tokens and more


def write_chargeback(ws: Sheet, inputs: Sheet, systems: Sequence[WorkbookSystem],
                     book: ChargebackBook, names: Names, utilisation_cells: Sequence[str]
                     ) -> tuple[int, int]:
    """The Chargeback sheet (see the module docstring); each pool's utilisation cell on
    Inputs (``utilisation_cells``: A1 references, one a pool) becomes a formula reading its
    measured utilisation here. Returns the header rows to repeat when printed."""
    n = len(systems)
    C = LINE_COLUMNS
    last_col = C["charge"]
    widths = {1: 30, 2: 12, 3: 14, 4: 13, 5: 14, 6: 9, 7: 15, 8: 15, 9: 7, 10: 11, 11: 11,
              12: 11, 13: 12, 14: 11, 15: 9, 16: 9, 17: 9, 18: 12, 19: 12, 20: 12}
    # a pool's column holds its capacity in tokens, 15 digits and more ("###" if narrower)
    ws.set_widths({**widths, **{FIRST_COL + i: max(widths.get(FIRST_COL + i, 9), POOL_WIDTH)
                                for i in range(n)}})
    ws.text(1, 1, f"Chargeback: {book.fleet}, {book.period}", "title")
    ws.paragraph(2, "Blue cells are inputs: the period's hours, the cached weight, each "
                    "pool's accelerators and each tenant's tokens and reserved share. Change "
                    "one and every charge, the idle cost and the cents recompute; a pool's "
                    "utilisation on Inputs reads its measured utilisation here, so its "
                    "energy follows. Tenant key: "
                 + f"{book.by}; idle rule: {book.idle_rule}.", last_col)
    ws.paragraph(3, "; ".join(book.rules) + ".", last_col)
    # -- the period ------------------------------------------------------------------------
    row = 5
    ws.text(row, 1, "The period", "section")
    row += 1
    ws.text(row, 1, "Hours in the period", "wrap")
    ws.text(row, 2, "chargeback_hours", "name")
    ws.text(row, 3, "h")
    ws.number(row, FIRST_COL, book.hours, "input", "#,##0.00")
    names.add("chargeback_hours", ws.title, _abs(row, FIRST_COL))
    row += 1
    ws.text(row, 1, "Weight of a cached input token", "wrap")
    ws.text(row, 2, "chargeback_cached_weight", "name")
    ws.text(row, 3, "input tokens")
    ws.number(row, FIRST_COL, book.cached_weight, "input", "0.00")
    names.add("chargeback_cached_weight", ws.title, _abs(row, FIRST_COL))
    row += 1
    ws.text(row, 1, "Grams in a kilogram", "wrap")
    ws.text(row, 2, "chargeback_grams_per_kg", "name")
    ws.text(row, 3, "g/kg")
    ws.number(row, FIRST_COL, GRAMS_PER_KILOGRAM, "calc", "#,##0")
    names.add("chargeback_grams_per_kg", ws.title, _abs(row, FIRST_COL))
    # -- where each thing sits ---------------------------------------------------------------
    pool_top = row + 2
    pool_row = {label: pool_top + 1 + k for k, (label, *_) in enumerate(_POOL_ROWS)}
    lines_header = pool_top + len(_POOL_ROWS) + 3
    first_line = lines_header + 1
    line_row = {id(x): first_line + k for k, x in enumerate(book.lines)}
    last_line = first_line + len(book.lines) - 1
    # -- pools ------------------------------------------------------------------------------
    ws.header(pool_top, ["pools", "name", "unit", *(p.name for p in book.pools)])
    for label, words, unit, _ in _POOL_ROWS:
        r = pool_row[label]
        ws.text(r, 1, words, "wrap")
        ws.text(r, 2, "pool_" + label.replace(" ", "_"), "name")
        ws.text(r, 3, unit)
    fmt = {label: f for label, _, _, f in _POOL_ROWS}
    tenant_index = {t: j for j, t in enumerate(book.tenants)}
    L = {k: col_name(c) for k, c in C.items()}  # each line column's letter
    plain_xf = ws.xf("plain")
    input_xf = {k: ws.xf("input", f) for k, f in (("input", _TOKENS), ("cached", _TOKENS),
                                                   ("output", _TOKENS),
                                                   ("reserved", "0.00%"))}
    line_xf = {k: ws.xf("result" if k == "total" else "calc",
                        _TOKENS if k in ("equivalents", "over") else
                        "0" if k == "weight" else _MONEY) for k in _LINE_LABELS.values()}
    by_pool: dict[str, list[tuple[Any, int]]] = {}
    for x in book.lines:
        by_pool.setdefault(x.pool, []).append((x, line_row[id(x)]))
    for i, (pool, system) in enumerate(zip(book.pools, systems, strict=True)):
        col = FIRST_COL + i
        v = {**system.result.scenario.to_inputs(), **system.result.values}

        def model(name: str, i: int = i, v: Mapping[str, float] = v) -> Formula:
            return Formula(system_ref(name, i, n), v[name])

        def put(label: str, f: Formula, style: str | None = None, col: int = col) -> Formula:
            r = pool_row[label]
            ws.formula(r, col, "=" + f.text, f.value, style or _ROW_STYLE.get(label, "calc"),
                       fmt[label])
            if col == FIRST_COL:  # the name spans every pool's column
                names.row("pool_" + label.replace(" ", "_"), ws.title, r)
            return Formula(_abs(r, col), f.value)

        r = pool_row["accelerators"]
        ws.number(r, col, pool.accelerators, "input", fmt["accelerators"])
        if i == 0:
            names.row("pool_accelerators", ws.title, r)
        accelerators = Formula(_abs(r, col), float(pool.accelerators))
        hours = put("hours", Formula("chargeback_hours", book.hours))
        o = ChargeFormulas()
        per_hour = put("per_hour", calc.per_hour(o, model("throughput"),
                                                 model("weighted_tokens_per_request"),
                                                 model("tokens_per_request")))
        weight = put("output_weight", model("pricing_output_weight"))
        terms = calc.PoolTerms(hours, accelerators,
                               put("energy", model("electricity_cost_per_hour")),
                               put("capital", model("capex_per_hour")),
                               put("operating", model("opex_per_hour")),
                               per_hour, weight,
                               Formula("chargeback_cached_weight", book.cached_weight))
        rows = by_pool.get(pool.name, [])
        tenant_rows = [(x, r) for x, r in rows if x.tenant is not None]
        idle_row = next(r for x, r in rows if x.tenant is None)
        uses = []
        # a tenant line's cells (its tokens, then the declaration's charges as they are
        # placed), each a finished <c> element by column, written as one run per line
        cells: dict[int, dict[int, str]] = {}
        for x, r in tenant_rows:
            j = tenant_index[x.tenant]
            u = pool.uses[j]
            line = cells[r] = {}
            row = str(r)
            texts = {C[key]: ws.string_xml(L[key] + row, plain_xf, text)
                     for key, text in (("tenant", x.tenant), ("pool", pool.name))}
            if None in texts.values():  # the sheet writes them, before the line's run
                ws.text(r, C["tenant"], x.tenant)
                ws.text(r, C["pool"], pool.name)
            else:
                line.update(texts)
            for key, value in (("input", u.input), ("cached", u.cached), ("output", u.output),
                               ("reserved", u.reserved)):
                figure = float(value)
                if not math.isfinite(figure):  # (a ledger's tokens are finite)
                    raise ValueError(f"{key} of {x.tenant!r} on {pool.name!r}: {figure}")
                line[C[key]] = number_xml(L[key] + row, input_xf[key], figure)
            uses.append(calc.Use(*(Formula(_abs(r, C[k]), float(value_of(getattr(u, a))))
                                   for k, a in (("input", "input"), ("cached", "cached"),
                                                ("output", "output"),
                                                ("reserved", "reserved")))))

        def place(label: str, f: Formula, col: int = col, tenant_rows=tenant_rows,
                  idle_row: int = idle_row, cells=cells) -> Formula | None:
            head, _, k = label.rpartition(" ")
            if k.isdigit() and head in _LINE_LABELS:
                key = _LINE_LABELS[head]
                r = tenant_rows[int(k)][1]
                # the algebra's functions are Excel 2007's: written as they are
                cells[r][C[key]] = formula_xml(f"{L[key]}{r}", line_xf[key], f.text,
                                               cached(f.value))
                return Formula(_abs(r, C[key]), f.value)
            if label == "idle line":
                ws.formula(idle_row, C["total"], "=" + f.text, f.value, "result", _MONEY)
            return put(label, f, col=col)

        o.place = place
        charge = calc.charge_pool(o, terms, uses, book.idle_rule)
        for r, line in cells.items():
            ordered = sorted(line)
            ws.put_row(r, ordered[0], ordered[-1], "".join(line[c] for c in ordered))
            ws._seen(r, ordered[-1])
        # the pool's emissions: the model's grams an accelerator-hour at the measured
        # utilisation, and in the period (empty where no factor is given, as the engine's)
        for basis in BASES:
            r = pool_row[f"emissions {basis}"]
            ref = system_ref(_PER_HOUR_STEP[basis], i, n)
            ws.formula(r, col, f'=IF({ref}="","",{ref})', v[_PER_HOUR_STEP[basis]], "calc",
                       fmt[f"emissions {basis}"], empty=True)
            per_hour_ref = _abs(r, col)
            kg = pool.emissions.get(basis)
            r = pool_row[f"kg {basis}"]
            ws.formula(r, col, f'=IF({per_hour_ref}="","",{_abs(pool_row["accelerators"], col)}'
                               f'*{_abs(pool_row["hours"], col)}*{per_hour_ref}'
                               f'/chargeback_grams_per_kg)',
                       math.nan if kg is None else float(value_of(kg.cost)) / GRAMS_PER_KILOGRAM,
                       "result", fmt[f"kg {basis}"], empty=True)
            if i == 0:
                for label in (f"emissions {basis}", f"kg {basis}"):
                    names.row("pool_" + label.replace(" ", "_"), ws.title, pool_row[label])
        ws.text(idle_row, C["tenant"], "(idle: no tenant's usage)", "note")
        ws.text(idle_row, C["pool"], pool.name)
        # the pool's utilisation on Inputs reads the measured one (the engine's floor kept)
        if not pool.load_shape:
            inputs.formula(*_rowcol(utilisation_cells[i]),
                           f"=MAX({system_ref('pool_utilisation', i, n)},{MIN_UTILISATION:.6f})",
                           max(float(value_of(charge.utilisation)), MIN_UTILISATION),
                           "calc", "0.00%")
    # -- cents by largest remainder -------------------------------------------------------------
    fleet_row = last_line + 2
    ws.header(lines_header, [_HEADERS[k] for k in C])
    total_range = f"{_abs(first_line, C['total'])}:{_abs(last_line, C['total'])}"
    floors = f"{_abs(first_line, C['floor'])}:{_abs(last_line, C['floor'])}"
    left_ref = _abs(fleet_row + 3, FIRST_COL)
    # each line's cents, columns read..charge, one format string filled in a line
    cents_cols = [C[k] for k in ("read", "floor", "remainder", "cents", "charge")]
    if cents_cols != list(range(cents_cols[0], cents_cols[0] + 5)):
        raise ValueError("the cents' columns are one run")
    L = {k: col_name(C[k]) for k in ("total", "read", "floor", "remainder", "cents",
                                     "charge")}
    rem_col = f"${L['remainder']}${first_line}:${L['remainder']}$"
    xf = {k: ws.xf(style, f) for k, style, f in (
        ("read", "calc", "0.000000"), ("floor", "calc", "0"), ("remainder", "calc", "0.000000"),
        ("cents", "calc", "0"), ("charge", "result", _MONEY))}
    cells = (
        f'<c r="{L["read"]}{{0}}" s="{xf["read"]}"><f>ROUND({L["total"]}{{0}}*100,6)</f>'
        f'<v>{{1!r}}</v></c>'
        f'<c r="{L["floor"]}{{0}}" s="{xf["floor"]}"><f>INT({L["read"]}{{0}})</f>'
        f'<v>{{2!r}}</v></c>'
        f'<c r="{L["remainder"]}{{0}}" s="{xf["remainder"]}"><f>ROUND({L["read"]}{{0}}-'
        f'{L["floor"]}{{0}},6)</f><v>{{3!r}}</v></c>'
        f'<c r="{L["cents"]}{{0}}" s="{xf["cents"]}"><f>{L["floor"]}{{0}}+IF(SUMPRODUCT(('
        f'{rem_col}{last_line}&gt;{L["remainder"]}{{0}})*1)+{{4}}&lt;{xml_text(left_ref)},'
        f'1,0)</f><v>{{5!r}}</v></c>'
        f'<c r="{L["charge"]}{{0}}" s="{xf["charge"]}"><f>{L["cents"]}{{0}}/100</f>'
        f'<v>{{6!r}}</v></c>').format
    # each line's kgCO2e by basis: its share of the pool's cost times the pool's emissions in
    # the period (empty where the pool has no factor, or no cost to share it by)
    kg_xf = ws.xf("calc", with_dash(_KG), "right")
    pool_index = {p.name: i for i, p in enumerate(book.pools)}
    kg_formula = {}  # (pool, basis) -> the formula's text, {0} its row
    for i in range(n):
        cost = _abs(pool_row["cost"], FIRST_COL + i)
        for basis in BASES:
            kg = _abs(pool_row[f"kg {basis}"], FIRST_COL + i)
            kg_formula[i, basis] = xml_text(
                f'IF(OR({kg}="",{cost}=0),"",{L["total"]}{{0}}*{kg}/{cost})')
    kg_col = {basis: col_name(C[f"kg_{basis}"]) for basis in BASES}
    for x in book.lines:
        r = line_row[id(x)]
        read = float(round(x.amount * 100, 6))
        floor = float(int(read // 1))
        before = "0" if r == first_line else \
            f"SUMPRODUCT(({rem_col}{r - 1}={L['remainder']}{r})*1)"
        i = pool_index[x.pool]
        j = None if x.tenant is None else tenant_index[x.tenant]
        emissions = "".join(formula_xml(
            f"{kg_col[basis]}{r}", kg_xf, kg_formula[i, basis].format(r),
            cached(book.pools[i].line_kg(basis, j), True), escaped=True) for basis in BASES)
        ws.put_row(r, cents_cols[0], C["kg_market"], cells(
            r, read, floor, float(round(read - floor, 6)), before, float(x.cents),
            float(x.cents / 100)) + emissions)
    ws._seen(last_line, C["kg_market"])
    # -- the fleet and the check ------------------------------------------------------------------
    fleet_cost = sum(float(value_of(p.charge.cost)) for p in book.pools)
    cost_refs = ",".join(system_ref("pool_cost", i, n) for i in range(n))
    checks = [
        ("chargeback_fleet_cost", "The fleet's cost for the period", "USD",
         f"=SUM({cost_refs})", fleet_cost, _MONEY),
        ("chargeback_lines_total", "The lines, added up (tenants and idle lines)", "USD",
         f"=SUM({total_range})", sum(x.amount for x in book.lines), _MONEY),
        ("chargeback_fleet_cents", "The fleet's cost in cents", "cents",
         "=ROUND(ROUND(chargeback_fleet_cost*100,6),0)", float(round(fleet_cost * 100)), "0"),
        ("chargeback_cents_left", "Cents left over after flooring, given to the largest "
                                  "remainders", "cents",
         f"=chargeback_fleet_cents-SUM({floors})",
         float(sum(x.cents for x in book.lines) - sum(int(round(x.amount * 100, 6) // 1)
                                                      for x in book.lines)), "0"),
        ("chargeback_cents_total", "The lines' cents, added up", "cents",
         f"=SUM({_abs(first_line, C['cents'])}:{_abs(last_line, C['cents'])})",
         float(sum(x.cents for x in book.lines)), "0"),
    ]
    for k, (name, words, unit, formula, value, f) in enumerate(checks):
        r = fleet_row + k
        ws.text(r, 1, words, "wrap")
        ws.text(r, 2, name, "name")
        ws.text(r, 3, unit)
        ws.formula(r, FIRST_COL, formula, value, "result" if k == 0 else "calc", f)
        names.add(name, ws.title, _abs(r, FIRST_COL))
    r = fleet_row + len(checks)
    ws.text(r, 1, "Check: the lines' cents are the fleet's cost in cents", "wrap")
    ws.formula(r, FIRST_COL, '=IF(chargeback_cents_total=chargeback_fleet_cents,"conserved",'
                             '"NOT CONSERVED")', "conserved", "result")
    names.add("chargeback_check", ws.title, _abs(r, FIRST_COL))
    # the fleet's emissions by basis: empty where a pool has no factor (as the engine's null)
    for basis in BASES:
        r += 1
        pools = f"{_abs(pool_row[f'kg {basis}'], FIRST_COL)}:" \
                f"{_abs(pool_row[f'kg {basis}'], FIRST_COL + n - 1)}"
        charges = [p.emissions.get(basis) for p in book.pools]
        kg = math.nan if any(c is None for c in charges) else \
            sum(float(value_of(c.cost)) for c in charges) / GRAMS_PER_KILOGRAM
        ws.text(r, 1, f"The fleet's emissions, {basis}-based", "wrap")
        ws.text(r, 2, f"chargeback_fleet_kg_{basis}", "name")
        ws.text(r, 3, "kgCO2e")
        ws.formula(r, FIRST_COL, f'=IF(SUMPRODUCT(({pools}="")*1)>0,"",SUM({pools}))', kg,
                   "result", _KG, empty=True)
        names.add(f"chargeback_fleet_kg_{basis}", ws.title, _abs(r, FIRST_COL))
    # -- tenants ----------------------------------------------------------------------------------
    top = r + 2
    ws.header(top, ["tenant", "", "new input [token]", "cached input [token]",
                    "output [token]", "", "charge [USD]", "USD per Mtok", "share",
                    "location [kgCO2e]", "market [kgCO2e]"])
    tenant_col = f"{_abs(first_line, C['tenant'])}:{_abs(last_line, C['tenant'])}"

    def sumif(tenant_ref: str, key: str) -> str:
        span = f"{_abs(first_line, C[key])}:{_abs(last_line, C[key])}"
        return f"SUMIF({tenant_col},{tenant_ref},{span})"

    cents_of: dict[str, int] = {}
    for x in book.lines:
        if x.tenant is not None:
            cents_of[x.tenant] = cents_of.get(x.tenant, 0) + x.cents
    total_cents = sum(x.cents for x in book.lines)
    for k, t in enumerate(book.tenants):
        r = top + 1 + k
        ws.text(r, 1, t)
        ref = cell_ref(r, 1)
        tokens = [sum(float(value_of(p.uses[k].input)) for p in book.pools),
                  sum(float(value_of(p.uses[k].cached)) for p in book.pools),
                  sum(float(value_of(p.uses[k].output)) for p in book.pools)]
        for col, key, value in ((3, "input", tokens[0]), (4, "cached", tokens[1]),
                                (5, "output", tokens[2])):
            ws.formula(r, col, "=" + sumif(ref, key), value, "calc", _TOKENS)
        cents = cents_of.get(t, 0)
        ws.formula(r, 7, f"={sumif(ref, 'cents')}/100", cents / 100, "result", _MONEY)
        all_tokens = sum(tokens)
        ws.formula(r, 8, f"=IF(SUM(C{r}:E{r})=0,0,G{r}/SUM(C{r}:E{r})*tokens_per_mtok)",
                   cents / 100 / all_tokens * 1e6 if all_tokens else 0.0, "calc", "0.0000")
        ws.formula(r, 9, f"=IF(chargeback_fleet_cents=0,0,G{r}*100/chargeback_fleet_cents)",
                   cents / total_cents if total_cents else 0.0, "calc", "0.00%")
        for col, basis in ((10, "location"), (11, "market")):
            lines_kg = [p.line_kg(basis, k) for p in book.pools]
            fleet = f"chargeback_fleet_kg_{basis}"
            ws.formula(r, col, f'=IF({fleet}="","",{sumif(ref, "kg_" + basis)})',
                       sum(lines_kg), "calc", _KG, empty=True)
    ws.keep_together(top, top + len(book.tenants))
    return (lines_header, lines_header)


def _rowcol(ref: str) -> tuple[int, int]:
    """``$D$12`` -> (12, 4), 1-based."""
    m = _REF.fullmatch(ref)
    letters, row = m.group(1), int(m.group(2))
    col = 0
    for ch in letters:
        col = col * 26 + ord(ch) - 64
    return row, col

