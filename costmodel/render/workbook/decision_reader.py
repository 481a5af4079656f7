"""Reading an edited decision workbook back: the Decision sheet's inputs, by their defined
names, put into the request the workbook answers (the quotes and the demand recorded on the
Meta sheet), so the decision can be made again at the edited figures
(:func:`costmodel.app.reprice`).

What maps back, and how:

- the demand's volume [Mtok/month, mixed tokens] becomes the demand's ``volume`` (the request
  shape kept: ISL and OSL as exported); its average over peak sets the ``peak`` (average /
  it; a flat demand with 1 has none), and with a load shape it cannot change (the shape sets
  it); the cached and batch shares become the demand's; the input share is the request shape
  (edit ISL/OSL in the quote file);
- an offer's prices, tier limits, cache price, batch discount, committed volume, overage
  prices, minimum spend a month (the commitment over its term), term, accelerators offered,
  the price of an accelerator-month (an hourly offer's: x 730 h), the block's price, the
  throughput (as quoted, mixed tokens) and the availability become the quote's;
- an own build's figures come from its model: they are edited on the Inputs sheet, and a
  change on the Decision sheet is refused, naming the cell.

The reading is the workbook reader's (:mod:`.reader`): its limits, its cell rules (an input is
a number, not a formula or text; a number within 15 digits of the exported one is no edit),
each refusal naming the cell.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...decisions.decision_calculation import CONSTANTS
from ...decisions.demand import Demand
from ...decisions.quotes import Quote, QuoteOperatingPoint, Tier
from ...model.inputs import QuantityField, quantity_meta
from .decision_record import DecisionRecord, RecordOption, validate_record
from .decision_sheet import DECISION_SHEET, DEMAND_INPUTS, OPTION_INPUTS, tier_rows
from .reader import (
    InputChange,
    WorkbookRead,
    _as_exported,
    _Book,
    _cells,
    _coordinate,
    _fail,
    _number,
    check_bounds,
)

__all__ = ["DecisionRead", "read_decision"]

_COUNTS = {"option_offered"}


@dataclass
class DecisionRead:
    """The request of a decision's workbook with its edits: quotes and demand as data (their
    validation's input), the yearly market improvement, what changed, and the cell each edited
    figure was read from (by the quote's index, or "demand")."""
    quotes: list[dict[str, Any]]
    demand: dict[str, Any]
    improvement: float | None
    changes: list[InputChange] = field(default_factory=list)
    cells: dict[str, list[str]] = field(default_factory=dict)


# the bounds of an edited figure: its field's in the model it is put into (the demand's, a
# quote's or a tier's), checked at the cell so that they are said as the sheet shows them
_SHARE = quantity_meta(Demand, "batch_share")
_VOLUME = quantity_meta(Demand, "volume")
_FACTOR = QuantityField("dimensionless", positive=True, maximum=1.0)
_QUOTE_FIELDS = {"option_availability": "availability", "option_term": "term",
                 "option_cached_fraction": "cached_input_fraction",
                 "option_batch_discount": "batch_discount",
                 "option_committed": "committed_volume", "option_overage_input":
                 "overage_input", "option_overage_output": "overage_output"}
_TIER_FIELDS = {"input": "price_input", "output": "price_output", "to": "up_to"}


def _bounds(name: str) -> QuantityField | None:
    """The bounds of option figure ``name`` in the quote (or tier) field it edits."""
    if name.startswith("option_tier"):
        return quantity_meta(Tier, _TIER_FIELDS[name.rsplit("_", 1)[1]])
    if name == "option_throughput":
        return quantity_meta(QuoteOperatingPoint, "throughput")
    field_ = _QUOTE_FIELDS.get(name)
    return None if field_ is None else quantity_meta(Quote, field_)


def _q(value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


def read_decision(read: WorkbookRead) -> DecisionRead | None:
    """The request a decision's workbook answers (Meta's record, validated:
    :func:`.decision_record.validate_record`) with the Decision sheet's edits in it; None for
    any other workbook."""
    book = read.book
    if read.record is None:
        return None
    record = validate_record(read.record, read.record_at)
    if DECISION_SHEET not in book.sheets:
        raise _fail("the Decision sheet is missing (renamed or deleted?): a decision's "
                    "workbook is read back from it")
    exported = record.inputs
    options = record.options
    out = DecisionRead(record.quotes, record.demand, record.improvement)
    _demand(book, exported, out)
    n = len(options)
    rows = {**OPTION_INPUTS, "option_term": ("Term", "month")}
    k = 1
    while f"option_tier{k}_input" in exported:
        rows |= tier_rows(k)
        k += 1
    sheet = book.sheets[DECISION_SHEET]
    for name, (_, unit) in rows.items():
        if name not in exported:
            continue
        try:
            cells = _cells(book, name, DECISION_SHEET, n, "workbook names")
        except KeyError:
            raise _fail(f"defined name {name!r} is missing", "workbook names") from None
        for j, (r, c) in enumerate(cells):
            where = f"{DECISION_SHEET}!{_coordinate(r, c)} ({name}, {options[j].name})"
            before = exported[name][j]
            value = _number(sheet.value(r, c), name, where, optional=True,
                            count=name in _COUNTS)
            if before is not None and value is not None:
                value = _as_exported(value, before)
            if value == before:
                continue
            if value is not None:
                check_bounds(value, _bounds(name), sheet.formats.get((r, c), ""), name, unit,
                             where)
            _option(out, record, options[j], name, value, where)
            out.changes.append(InputChange(options[j].name, name, before, value, unit))
            out.cells.setdefault(str(options[j].quote), []).append(where)
    return out


def _demand(book: _Book, exported: dict[str, Any], out: DecisionRead) -> None:
    sheet = book.sheets[DECISION_SHEET]
    read = {}
    for name, (_, unit) in DEMAND_INPUTS.items():
        try:
            (r, c), = _cells(book, name, DECISION_SHEET, 1, "workbook names")
        except KeyError:
            raise _fail(f"defined name {name!r} is missing", "workbook names") from None
        where = f"{DECISION_SHEET}!{_coordinate(r, c)} ({name})"
        value = _as_exported(_number(sheet.value(r, c), name, where, optional=False),
                             exported[name])
        read[name] = (value, where, sheet.formats.get((r, c), ""))
        if value != exported[name]:
            out.changes.append(InputChange("demand", name, exported[name], value, unit))
            out.cells.setdefault("demand", []).append(where)
    d = out.demand
    volume, factor = read["decision_volume"][0], read["decision_load_factor"][0]
    if read["decision_input_share"][0] != exported["decision_input_share"]:
        raise _fail("the input share is the request shape's (ISL / (ISL + OSL)): change ISL "
                    "and OSL in the quote file's [demand]", read["decision_input_share"][1])
    for name, key in (("decision_cached_share", "cached_input_share"),
                      ("decision_batch_share", "batch_share")):
        value, where, number_format = read[name]
        if value == exported[name]:
            continue
        if name == "decision_cached_share" and d.get("task") is not None:
            raise _fail("a demand in tasks takes its cached share from its task", where)
        check_bounds(value, _SHARE, number_format, name, "dimensionless", where)
        d[key] = _q(value, "dimensionless")
    edited = {n for n in ("decision_volume", "decision_load_factor")
              if read[n][0] != exported[n]}
    if not edited:
        return
    check_bounds(volume, _VOLUME, read["decision_volume"][2], "decision_volume",
                 DEMAND_INPUTS["decision_volume"][1], read["decision_volume"][1])
    check_bounds(factor, _FACTOR, read["decision_load_factor"][2], "decision_load_factor",
                 "dimensionless", read["decision_load_factor"][1])
    shaped = d.get("load") is not None
    if shaped and "decision_load_factor" in edited:
        raise _fail("with a load shape the average over peak is the shape's mean: change "
                    "the shape in the quote file's [demand.load]",
                    read["decision_load_factor"][1])
    for key in ("volume", "requests_per_day", "tasks_per_day", "task", "peak"):
        d.pop(key, None)
    d["token_kind"] = "mixed"  # the sheet counts mixed tokens
    d["volume"] = _q(volume, "Mtok/month")
    d.setdefault("isl", _q(exported["isl"], "token"))
    d.setdefault("osl", _q(exported["osl"], "token"))
    d.setdefault("cached_input_share", _q(exported["decision_cached_share"], "dimensionless"))
    if not shaped and factor != 1.0:
        average = volume * CONSTANTS["tokens_per_mtok"] / CONSTANTS["seconds_per_month"]
        d["peak"] = _q(average / factor, "token/s")


def _option(out: DecisionRead, record: DecisionRecord, option: RecordOption, name: str,
            value: Any, where: str) -> None:
    """An edit of option ``option``'s ``name`` put into its quote (the record's as data; read
    from it as validated, ``record.parsed``)."""
    if option.quote is None:
        raise _fail("an own build's figures come from its model: change them on the Inputs "
                    "sheet (the Decision sheet shows them as exported)", where)
    q, parsed = out.quotes[option.quote], record.parsed[option.quote]
    if parsed.market is not None and (name.startswith("option_tier")
                                      or name == "option_cached_fraction"):
        raise _fail("a market price's prices are the catalog's: give the offer prices of its "
                    "own (price_input and price_output, no market) in the quote file", where)
    if name.startswith("option_tier"):
        k, part = int(name[len("option_tier"):].split("_")[0]), name.rsplit("_", 1)[1]
        field_ = {"input": "price_input", "output": "price_output", "to": "up_to"}[part]
        unit = "Mtok/month" if part == "to" else "USD/Mtok"
        if parsed.tiers:
            if k > len(parsed.tiers):
                raise _fail(f"this offer has {len(parsed.tiers)} price tier"
                            f"{'s' if len(parsed.tiers) > 1 else ''}: add a tier in the quote "
                            f"file", where)
            tier = q["tiers"][k - 1]
            if value is None:
                tier.pop(field_, None)
            else:
                tier[field_] = _q(value, unit)
        elif part == "to":
            raise _fail("an offer with one price has no tier to limit", where)
        else:
            q[field_] = None if value is None else _q(value, unit)
        return
    simple = {"option_cached_fraction": ("cached_input_fraction", "dimensionless"),
              "option_batch_discount": ("batch_discount", "dimensionless"),
              "option_committed": ("committed_volume", "Mtok/month"),
              "option_overage_input": ("overage_input", "USD/Mtok"),
              "option_overage_output": ("overage_output", "USD/Mtok"),
              "option_term": ("term", "month")}
    if name in simple:
        key, unit = simple[name]
        if value is None:
            q.pop(key, None)
        else:
            q[key] = _q(value, unit)
        if name == "option_term" and q.get("commitment") is not None:
            raise _fail("this offer's minimum spend is over its term: change the minimum "
                        "spend a month with the term, or the quote file", where)
        return
    if value is None:
        raise _fail("required for this offer, but the cell is empty", where)
    if name == "option_floor":
        q["commitment"] = _q(value * parsed.term, "USD")
    elif name == "option_offered":
        q["accelerators"] = int(value)
    elif name == "option_unit":
        if parsed.rate is not None:
            raise _fail("a reference rate's price is the catalog's: give the offer an "
                        "hourly_price of its own in the quote file", where)
        if parsed.form == "per_accelerator_hour":
            q["hourly_price"] = _q(value / CONSTANTS["hours_per_month"], "USD/h")
        elif parsed.accelerators is not None:
            q["monthly_price"] = _q(value * parsed.accelerators, "USD/month")
        else:
            raise _fail("this offer names no number of accelerators to price by the "
                        "accelerator-month: change its monthly price in the quote file", where)
    elif name == "option_block":
        q["monthly_price"] = _q(value, "USD/month")
    elif name == "option_throughput":
        op = q.get("operating_point")
        op = q["operating_point"] = dict(op) if isinstance(op, dict) else {}
        op["throughput"] = _q(value, "token/s")
        op["token_kind"] = "mixed"
        op.pop("throughput_per_kw", None)
    elif name == "option_availability":
        for key in ("mtbi", "recovery"):
            q.pop(key, None)
        q["availability"] = _q(value, "dimensionless")
