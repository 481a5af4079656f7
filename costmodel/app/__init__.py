"""The application layer: each use case once, for every face (CLI, API, web pages).

A face parses its input into the typed requests of :mod:`costmodel.app.specs`, calls one
function here with a :class:`~costmodel.app.context.Context`, and renders the typed result.
Errors are :class:`~costmodel.model.errors.InputError` and its kinds (``UnknownReference``,
``UnreachablePoint``), marked with the face's ``subject`` of the scenario they are about.
"""
from .analyses import Analysis, analysis_workbook, grid, monte_carlo, tornado
from .context import Context, LocalContext
from .curves import CurveView, show_curve
from .decide import (
    DecisionRequest,
    QuotesDecision,
    decision_workbook,
    quotes_decide,
    render_decision_workbook,
)
from .load import NOT_FROM_CURVE, load, load_all, prepare
from .money import ShownMoney, shown_money
from .planning import Plan, PlanRequest, plan, plan_workbook
from .pricing import (
    FLEXIBLE_SHARE,
    Compared,
    FlexibleShift,
    Priced,
    WorkbookFile,
    compare,
    price,
    price_loaded,
    render_workbook,
    shift_flexible,
    workbook,
)
from .profit import (
    MarketSpec,
    ProfitAnswer,
    ProfitRequest,
    SystemProfit,
    market_for,
    profit,
    profit_rules,
    profit_workbook,
    render_profit_workbook,
    sell,
)
from .quotes import (
    QuotesRanking,
    TermAnalysis,
    TermRequest,
    quotes_compare,
    quotes_term,
    quotes_workbook,
)
from .reprice import WorkbookImport, reprice
from .specs import (
    MATCHED,
    OWN_POINT,
    AtInteractivity,
    FileScenario,
    InlineScenario,
    Matched,
    Override,
    OwnPoint,
    Reading,
    SavedRevision,
    ScenarioSpec,
    overrides_from_mapping,
    overrides_from_text,
)
from .summaries import decision_pdf, plan_pdf
from .task import SystemTask, TaskAnswer, TaskRequest, price_task, steps_asked, task_workbook

__all__ = [
    "Context", "LocalContext",
    "ScenarioSpec", "FileScenario", "InlineScenario", "SavedRevision", "Override",
    "overrides_from_mapping", "overrides_from_text",
    "Reading", "OwnPoint", "Matched", "AtInteractivity", "OWN_POINT", "MATCHED",
    "NOT_FROM_CURVE", "prepare", "load", "load_all",
    "Priced", "Compared", "WorkbookFile", "price", "price_loaded", "compare", "workbook",
    "render_workbook", "reprice", "WorkbookImport", "FlexibleShift", "shift_flexible",
    "FLEXIBLE_SHARE",
    "QuotesRanking", "quotes_compare", "quotes_workbook", "TermRequest", "TermAnalysis",
    "quotes_term", "DecisionRequest", "QuotesDecision", "quotes_decide", "decision_workbook",
    "render_decision_workbook",
    "decision_pdf", "plan_pdf",
    "Analysis", "tornado", "grid", "monte_carlo", "analysis_workbook",
    "CurveView", "show_curve",
    "PlanRequest", "Plan", "plan", "plan_workbook", "ShownMoney", "shown_money",
    "TaskRequest", "TaskAnswer", "SystemTask", "price_task", "task_workbook", "steps_asked",
    "MarketSpec", "ProfitRequest", "ProfitAnswer", "SystemProfit", "profit", "profit_workbook",
    "market_for", "sell", "render_profit_workbook", "profit_rules",
]
