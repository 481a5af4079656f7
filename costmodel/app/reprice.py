"""Reprice use case: an edited workbook read back (by the reader, which validates every input
and names the cell of any refusal) and priced; a decision's workbook also decided again, at
the demand and offers as edited on its Decision sheet."""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..decisions.demand import validate_demand
from ..decisions.quotes import validate_quote
from ..model.errors import InputError
from ..model.inputs import validate_scenario
from ..model.results import Result, check_finite
from .context import Context, LocalContext
from .decide import DecisionRequest, QuotesDecision, quotes_decide
from .engine import price_scenario
from .pricing import Priced

if TYPE_CHECKING:
    from ..render.workbook.reader import InputChange

__all__ = ["WorkbookImport", "reprice"]


@dataclass
class WorkbookImport:
    """An edited workbook read back: each system priced [every step in its declared unit],
    the inputs that differ from the export, what the reader noticed, and for a decision's
    workbook the decision made again; asked for (``reprice(..., before=True)``), the same
    figures as the workbook was exported: what the edits did."""
    results: list[Result]
    changes: list[InputChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    decision: QuotesDecision | None = None
    before: list[Result] = field(default_factory=list)
    decision_before: QuotesDecision | None = None

    def to_json(self) -> dict:
        return {"results": [r.to_json() for r in self.results],
                "changes": [vars(c) for c in self.changes], "warnings": self.warnings,
                **({} if self.decision is None else {"decision": self.decision.to_json()})}


def reprice(source: bytes | str | Path, name: str = "workbook",
            ctx: Context | Callable[[], Context] | None = None, *,
            before: bool = False) -> WorkbookImport:
    """An edited workbook read back: its inputs validated (by the reader) and priced; a
    decision's, decided again with the own builds as repriced (``ctx``: where a capacity
    offer's hardware and reference rates are looked up, or a function giving it, called only
    for a decision's workbook; the fixtures by default). ``before``: also price (and decide)
    what the workbook was exported with, its Meta records."""
    from ..render.workbook.decision_reader import read_decision
    from ..render.workbook.reader import read_workbook
    read = read_workbook(source, name=name)
    edits = read_decision(read)  # a decision's: the Decision sheet's edits in its request
    changes = read.changes + ([] if edits is None else edits.changes)
    results = []
    for system in read.systems:
        result = price_scenario(system.scenario, system.provenance)
        result.defaults_used = list(system.defaults_used)  # as exported, less what was edited
        try:
            check_finite(result)
        except InputError as exc:  # the same kind, each input named by its cell
            InputError.__init__(exc, [system.locate(p, m) for p, m in exc.errors])
            raise
        results.append(result)
    decision = decision_before = None
    context = None
    if edits is not None:  # only a decision looks anything up (a service: its database)
        context = (ctx() if callable(ctx) else ctx) or LocalContext()
        decision = _decide_again(context, edits, results)
    exported = _as_exported(read) if before else []
    if before and edits is not None:
        from ..render.workbook.decision_reader import DecisionRead
        record = read.record
        decision_before = _decide_again(context, DecisionRead(
            copy.deepcopy(record["quotes"]), copy.deepcopy(record["demand"]),
            record.get("improvement")), exported)
    return WorkbookImport(results, changes, read.warnings, decision, exported,
                          decision_before)


def _as_exported(read) -> list[Result]:
    """Each system priced as the workbook was exported: its Meta record (which the reader has
    read and checked), validated and priced again."""
    from ..render.workbook.reader import _meta
    out = []
    for payload in _meta(read.book.sheets["Meta"]):
        result = price_scenario(validate_scenario(payload["scenario"]),
                              dict(payload.get("provenance", {})))
        result.defaults_used = list(payload.get("defaults_used", []))
        out.append(result)
    return out


def _decide_again(ctx: Context, read, results: list[Result]) -> QuotesDecision:
    """The decision at the edited request; a refusal of an edited offer names its cells."""
    quotes = []
    for i, data in enumerate(read.quotes):
        try:
            quotes.append(validate_quote(data, f"quotes[{i}]"))
        except InputError as exc:
            cells = ", ".join(read.cells.get(str(i), [])) or f"quote {i + 1}"
            raise InputError([(cells, m) for _, m in exc.errors]) from None
    try:
        demand = validate_demand(read.demand)
    except InputError as exc:
        cells = ", ".join(read.cells.get("demand", [])) or "Decision (the demand)"
        raise InputError([(cells, m) for _, m in exc.errors]) from None
    request = DecisionRequest(quotes, (), demand, read.improvement)
    return quotes_decide(ctx, request, [Priced(r) for r in results])
