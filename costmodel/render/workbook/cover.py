"""The Cover (what was priced, when, by which engine, and the disclosure: the switches that can
change in the workbook are live formulas) and the Sources sheet (where every input came
from)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ... import __version__
from ...model.results import ALLOCATION_RULE, CONVENTIONS
from ...model.steps import MODEL, SHOWN, shown
from ..display import display_unit, excel_format
from ..report import money_text
from .excel_formula import MAY_BE_EMPTY, live_formula
from .layout import FIRST_COL, WorkbookSystem, system_header
from .model_sheets import input_value
from .sheet import Sheet

__all__ = ["write_cover", "write_sources", "LIVE_ITEMS", "live_value", "describe",
           "source_groups", "SHARED_SOURCES", "headline_currency", "write_rate"]

# (label, the name a live item shows): inputs and steps; units and formats follow the name
LIVE_ITEMS = [("power boundary", "power_boundary"), ("power basis", "power_basis"),
              ("power per accelerator", "power_per_accelerator"),
              ("token kind", "operating_point_token_kind"),
              ("throughput per accelerator", "throughput"),
              ("electricity price", "electricity_effective_price"),
              ("utilisation", "utilisation"),
              ("cost basis", "accelerator_cost_basis"),
              ("rack power basis", "accelerator_rack_power_basis"),
              ("economic life", "financing_life"),
              ("cost of capital", "financing_cost_of_capital"),
              ("cost per million tokens", "cost_per_mtok_total")]


def unit_of(name: str) -> str:
    """The engine's unit of an input or step ("" for a categorical input)."""
    if name in MODEL.inputs:
        return MODEL.inputs[name].unit
    if name in MODEL.steps:
        return MODEL.steps[name].unit
    return ""


def live_value(system: WorkbookSystem, name: str) -> Any:
    """What ``=name`` computes for ``system``: an input as given, a step as priced."""
    if name in MODEL.steps:
        return system.result.values[name]
    return input_value(system.result.scenario.to_inputs(), name)


def headline_currency(systems: Sequence[WorkbookSystem]) -> str:
    """The currency the headline (Summary, Cover) shows money in: the systems' own
    (``money.currency``) where they share one, else USD (the Results sheet then shows each
    system's own)."""
    codes = {s.result.currency for s in systems}
    return codes.pop() if len(codes) == 1 else "USD"


def write_live(ws: Sheet, row: int, systems: Sequence[WorkbookSystem], text: str,
               name: str, style: str = "result", currency: str = "USD") -> None:
    """One live row: label, unit as displayed, ``=name`` in each system's column (a dash
    where the system has no value). A money figure in another ``currency`` reads its
    step in that currency, ``=shown(name)`` (the USD figure times money_rate on Inputs)."""
    unit = unit_of(name)
    ref = shown(name) if currency != "USD" and name in SHOWN else name
    ws.text(row, 1, text)
    ws.text(row, 3, (display_unit(name, unit).replace("USD", currency)
                     if ref != name else display_unit(name, unit)) if unit else "")
    for i, s in enumerate(systems):
        value = live_value(s, ref)
        num_format = excel_format(name, unit) if unit else None
        ws.formula(row, FIRST_COL + i, live_formula(ref), value, style, num_format,
                   empty=name in MAY_BE_EMPTY)


def write_rate(ws: Sheet, row: int, systems: Sequence[WorkbookSystem], currency: str,
               style: str = "calc") -> int:
    """Beside money shown in ``currency`` (not USD): the exchange rate each system's figures
    are converted at, live (``=money_rate``: edit it on Inputs and they follow), then its date
    and source. Returns the last row written."""
    ws.text(row, 1, f"Exchange rate ({currency} per USD)")
    ws.text(row, 3, f"{currency}/USD")
    for i, s in enumerate(systems):
        ws.formula(row, FIRST_COL + i, live_formula("money_rate"), s.result.scenario.money.rate,
                   style, "0.0000")
    ws.text(row + 1, 1, "  the rate's date and source")
    for i, s in enumerate(systems):
        fx = s.result.scenario.money.fx[currency]
        ws.text(row + 1, FIRST_COL + i, f"{fx.date or 'undated'}; "
                                        f"{fx.source or 'no source given'}", "source")
    return row + 1


def describe() -> dict[str, Callable[[dict], str]]:
    """The fixed disclosure items (what was priced), from a result's disclosure."""
    return {"operating point": lambda d: d["operating_point"]["chosen"],
            "interactivity": lambda d: _q(d["operating_point"]["interactivity"]),
            "time between tokens": lambda d: _q(d["operating_point"]["tbt"]),
            "workload": lambda d: workload(d["workload"]),
            "electricity source": lambda d: d["electricity"]["source"] or "no source given",
            "electricity date": lambda d: d["electricity"]["date"] or "undated",
            "reference rate": lambda d: _rate(d["reference_rate"]),
            "money": lambda d: money_text(d["money"]),
            "defaults used": lambda d: ", ".join(d["defaults_used"]) or "none"}


def write_cover(ws: Sheet, systems: Sequence[WorkbookSystem], title: str | None,
                generated: datetime) -> int:
    """The Cover; returns the row naming the systems."""
    n = len(systems)
    ws.text(1, 1, title or "costmodel: cost and price per million tokens", "title")
    facts = [("generated", generated.isoformat(timespec="seconds")),
             ("engine", f"costmodel {__version__}"),
             ("systems", str(n)),
             ("how to use", "Change the blue cells on Inputs (units as shown); every figure "
                            "recomputes. Boundary, basis and token kind are lists.")]
    ws.set_widths({1: 26, 2: 3, 3: 10, **{FIRST_COL + i: max(34, min(80, 100 / n))
                                          for i in range(n)}})
    for row, (k, v) in enumerate(facts, 3):
        ws.text(row, 1, k, "label")
        ws.text(row, 2, v, "wrap", span=FIRST_COL + n - 2)
        ws.ws.merge_range(row - 1, 1, row - 1, FIRST_COL + n - 2, v, ws.book.format("wrap"))
    top = 3 + len(facts) + 1
    ws.text(top, 1, "Disclosure: what every figure divides by", "section")
    ws.header(top + 1, system_header(systems, ["item", "", "unit"]))
    row = top + 1
    currency = headline_currency(systems)
    for text, name in LIVE_ITEMS:
        row += 1
        write_live(ws, row, systems, text, name, currency=currency)
    if currency != "USD":
        row = write_rate(ws, row + 1, systems, currency, "result")
    disclosures = [s.result.disclosure() for s in systems]
    for text, get in describe().items():
        if text == "money" and currency == "USD" and \
                all(s.result.currency == "USD" for s in systems):
            continue  # money in USD throughout: nothing to say (as before a [money] table)
        row += 1
        ws.text(row, 1, text)
        said = [get(d) for d in disclosures]
        if n > 1 and len(set(said)) == 1:  # the same for every system: said once, across
            ws.text(row, FIRST_COL, said[0], "wrap", span=n)
            ws.ws.merge_range(row - 1, FIRST_COL - 1, row - 1, FIRST_COL + n - 2, said[0],
                              ws.book.format("wrap"))
            continue
        for i, value in enumerate(said):
            ws.text(row, FIRST_COL + i, value, "wrap")
    ws.ws.freeze_panes(top + 1, FIRST_COL - 1)
    return top + 1


SHARED_SOURCES = "Every system"


def source_groups(systems: Sequence[WorkbookSystem]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The sources of every system's scenario keys, grouped: (section, [(source, the keys
    it gives, comma-separated)]), the sections being :data:`SHARED_SOURCES` (in a comparison:
    what every system takes from the same source) and then each system by name."""
    by_system = []
    for s in systems:
        keys: dict[str, list[str]] = {}
        for key, source in sorted(s.result.provenance.items()):
            keys.setdefault(source, []).append(key)
        by_system.append(keys)
    shared: dict[str, list[str]] = {}
    if len(systems) > 1:
        for source, keys in by_system[0].items():
            if all(other.get(source) == keys for other in by_system[1:]):
                shared[source] = keys
    out = [(SHARED_SOURCES, [(src, ", ".join(k)) for src, k in shared.items()])] \
        if shared else []
    for s, keys in zip(systems, by_system, strict=True):
        out.append((s.result.name, [(src, ", ".join(k)) for src, k in keys.items()
                                    if src not in shared]))
    return out


def write_sources(ws: Sheet, systems: Sequence[WorkbookSystem]) -> None:
    """Where every scenario key came from, one row per source with the keys it gives
    (sources every system shares listed once), then the defaults used and the
    conventions."""
    ws.text(1, 1, "Sources: where every input came from", "title")
    ws.text(2, 1, "Each source once, with the scenario keys it gives; the Inputs sheet "
                  "shows the source beside each input.", "note")
    ws.header(3, ["source", "what it gives (scenario keys)"])
    row = 3
    for section, rows in source_groups(systems):
        if not rows:
            continue
        row += 1
        ws.text(row, 1, section, "section")
        for source, keys in rows:
            row += 1
            ws.text(row, 1, source, "wrap")
            ws.text(row, 2, keys, "code_wrap")
    row += 2
    ws.text(row, 1, "Defaults used (illustrative assumptions unless a source is named)",
            "section")
    defaults = [", ".join(s.result.defaults_used) or "none" for s in systems]
    named = [(SHARED_SOURCES, defaults[0])] if len(systems) > 1 and len(set(defaults)) == 1 \
        else [(s.result.name, d) for s, d in zip(systems, defaults, strict=True)]
    for who, text in named:
        row += 1
        ws.text(row, 1, who, "wrap")
        ws.text(row, 2, text, "code_wrap")
    row += 2
    ws.text(row, 1, "Conventions", "section")
    for line in [*CONVENTIONS, f"input/output prices: {ALLOCATION_RULE}"]:
        row += 1
        ws.text(row, 1, line, "wrap", span=2)
        ws.ws.merge_range(row - 1, 0, row - 1, 1, line, ws.book.format("wrap"))
    ws.set_widths({1: 70, 2: 64})
    ws.ws.freeze_panes(3, 0)


def _q(d: dict | None) -> str:
    if not d or d.get("value") is None:
        return "not stated"
    return f"{d['value']:.6g} {d['unit']}"


def _rate(r: dict | None) -> str:
    """The reference rate a system was priced from, as the disclosure states it."""
    if r is None:
        return "none"
    parts = [f"{r['key']} (version {r['version']}): {_q(r['hourly_price'])}, all-in power "
             f"{_q(r['all_in_power'])}; {r['status']}", r["all_in"],
             f"origin: {r['origin'] or 'no source given'}",
             *(f"departs from the rate: {x}" for x in r["departures"])]
    return "; ".join(parts)


def workload(w: dict) -> str:
    parts = [w["model"], f"ISL {w['isl']['value']:g} / OSL {w['osl']['value']:g}",
             w["precision"], w["framework"],
             f"speculative decoding {w['speculative_decoding']}"
             if w["speculative_decoding"] else None]
    return ", ".join(p for p in parts if p)
