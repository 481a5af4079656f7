"""The application layer: each use case once, for every face (CLI, API, web pages).

A face parses its input into the typed requests of :mod:`costmodel.app.specs`, calls one
function here with a :class:`~costmodel.app.context.Context`, and renders the typed result.
Errors are :class:`~costmodel.model.errors.InputError` and its kinds (``UnknownReference``,
``UnreachablePoint``), marked with the face's ``subject`` of the scenario they are about.

The service's use cases take the face's :class:`~costmodel.app.services.Services` (its
database, catalog snapshot and caches, handed to the face once) and live in their modules:
saved scenarios and revisions (:mod:`.saved`: price, then save; restore; If-Match), API keys
and the pages' sessions (:mod:`.keys`), the stored catalog and curves (:mod:`.catalog`), the
database's schema and fixtures (:mod:`.database`). No face imports the store.

Each name is imported from its module when first used, so a command that prices a file loads
pricing, not the analyses (scipy), workbooks (openpyxl) or PDFs (matplotlib) beside it.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

# module of this package -> the names it gives the package
_MODULES: dict[str, tuple[str, ...]] = {
    "analyses": ("Analysis", "analysis_workbook", "grid", "monte_carlo", "tornado"),
    "context": ("Context", "LocalContext"),
    "curves": ("CurveView", "show_curve"),
    "decide": ("DecisionRequest", "QuotesDecision", "decision_workbook", "quotes_decide",
               "render_decision_workbook"),
    "load": ("NOT_FROM_CURVE", "load", "load_all", "prepare"),
    "money": ("ShownMoney", "shown_money"),
    "planning": ("Plan", "PlanRequest", "plan", "plan_workbook"),
    "pricing": ("FLEXIBLE_SHARE", "Compared", "FlexibleShift", "Priced", "WorkbookFile",
                "compare", "price", "price_loaded", "render_workbook", "shift_flexible",
                "workbook", "Pricer", "PriceAnswer"),
    "profit": ("MarketSpec", "ProfitAnswer", "ProfitRequest", "SystemProfit", "market_for",
               "profit", "profit_rules", "profit_workbook", "render_profit_workbook", "sell"),
    "quotes": ("QuotesRanking", "TermAnalysis", "TermRequest", "quotes_compare", "quotes_term",
               "quotes_workbook"),
    "reprice": ("WorkbookImport", "reprice"),
    "specs": ("MATCHED", "OWN_POINT", "AtInteractivity", "FileScenario", "InlineScenario",
              "Matched", "Override", "OwnPoint", "Reading", "SavedRevision", "ScenarioSpec",
              "overrides_from_mapping", "overrides_from_text"),
    "summaries": ("decision_pdf", "plan_pdf"),
    "task": ("SystemTask", "TaskAnswer", "TaskRequest", "price_task", "steps_asked",
             "task_workbook"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


class _Package(ModuleType):
    """This package: a use case is imported with its module when first named."""

    def __getattr__(self, name: str) -> Any:
        if name not in _HOME:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing a module binds it to its name on the package; where a use case has that
        # name (load, profit, reprice), ``app.profit`` stays the use case, as it always was.
        if isinstance(value, ModuleType) and _HOME.get(name) == name:
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_HOME})


sys.modules[__name__].__class__ = _Package

__all__ = [
    "Context", "LocalContext",
    "ScenarioSpec", "FileScenario", "InlineScenario", "SavedRevision", "Override",
    "overrides_from_mapping", "overrides_from_text",
    "Reading", "OwnPoint", "Matched", "AtInteractivity", "OWN_POINT", "MATCHED",
    "NOT_FROM_CURVE", "prepare", "load", "load_all",
    "Priced", "Compared", "WorkbookFile", "price", "price_loaded", "compare", "workbook",
    "render_workbook", "reprice", "WorkbookImport", "FlexibleShift", "shift_flexible",
    "FLEXIBLE_SHARE", "Pricer", "PriceAnswer",
    "QuotesRanking", "quotes_compare", "quotes_workbook", "TermRequest", "TermAnalysis",
    "quotes_term", "DecisionRequest", "QuotesDecision", "quotes_decide", "decision_workbook",
    "render_decision_workbook",
    "decision_pdf", "plan_pdf",
    "Analysis", "tornado", "grid", "monte_carlo", "analysis_workbook",
    "CurveView", "show_curve",
    "PlanRequest", "Plan", "plan", "plan_workbook", "ShownMoney", "shown_money",
    "TaskRequest", "TaskAnswer", "SystemTask", "price_task", "steps_asked", "task_workbook",
    "MarketSpec", "ProfitRequest", "ProfitAnswer", "SystemProfit", "profit", "profit_workbook",
    "market_for", "sell", "render_profit_workbook", "profit_rules",
]
