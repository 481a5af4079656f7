"""The words on the forms' labels: the one mapping from a form field (or the scenario path an
error names) to the label its field shows. The fields' macros (``templates/web/
_scenario_fields.html``) label each field from it and every page's list of errors names the
field by it, so an error says "Exchange rate", the words beside the box, never "fx rate"."""
from __future__ import annotations

from .scenario_form import field_of

__all__ = ["LABELS", "label_of"]

LABELS: dict[str, str] = {
    # the scenario (Price, Sensitivity, Plan; the Quotes page's Price-page build)
    "name": "Scenario name",
    "accelerator": "Accelerator",
    "accelerator_price": "Accelerator price (capex)",
    "system": "System preset (node and rack)",
    "point": "Published point or curve",
    "interactivity": "Target interactivity",
    "percentile": "Interactivity statistic",
    "electricity_kind": "Pay for electricity by",
    "electricity": "Flat price (catalog)",
    "electricity_price": "Flat price (typed)",
    "tariff": "Tariff (catalog)",
    "carbon": "Grid factor, location-based (catalog)",
    "market_carbon": "Grid factor, market-based (catalog)",
    "boundary": "Power boundary",
    "basis": "Power basis",
    "utilisation": "Utilisation",
    "load": "Load shape",
    "load_hourly": "Weekdays (or every day): 24 fractions",
    "load_weekend": "Weekend days: 24 fractions (optional)",
    "financing": "Own or rent",
    "life": "Economic life",
    "cost_of_capital": "Cost of capital",
    "salvage": "Salvage value",
    "rate": "Reference rate (rent)",
    "margin": "Gross margin",
    # the currency figures are shown in (every page that prices)
    "currency": "Currency the figures are shown in",
    "fx_rate": "Exchange rate",
    "fx_date": "Date of the rate",
    "fx_source": "Source of the rate",
    # the Price page: profit at a market price, and the what-if
    "market": "Market price",
    "market_input": "Price per million input tokens",
    "market_cached_input": "Price per million cached input tokens",
    "market_output": "Price per million output tokens",
    "revenue_share": "Revenue share",
    "cached_share": "Cached share of input tokens",
    "flexible_share": "Flexible share of the load",
    # the Sensitivity page
    "sa_output": "Output analysed",
    "sa_swing": "Tornado swing",
    "sa_draws": "Monte Carlo draws",
    # the Plan page
    "pl_demand": "Average demand",
    "pl_availability": "Availability",
    "pl_budget": "Power budget",
    "pl_headroom": "Planning headroom",
    "pl_deployment": "Whole deployments",
    # the Task page
    "t_steps": "Steps (model calls)",
    "t_context": "Input of the first step [tokens]",
    "t_growth": "More input each step [tokens per step]",
    "t_output": "Output of each step [tokens per step]",
    "t_cached_share": "Share of the input from the prefix cache",
    "t_tool_time": "Tool time before each step [s]",
    "t_target": "Task latency target [s]",
    "t_percentile": "Read at the percentile",
    "t_cached_weight": "Cost of a cached input token, as a share of a new one",
    # the Quotes page: one typed quote, the buyer's demand
    "q_name": "Name",
    "q_vendor": "Vendor",
    "q_date": "Date (YYYY-MM-DD)",
    "q_form": "Form of price",
    "q_market": "Or a market price (a catalog reference: provider/offer[@date])",
    "q_price_input": "Price per million input tokens",
    "q_price_output": "Price per million output tokens",
    "q_hourly_price": "Price per accelerator-hour",
    "q_monthly_price": "Price per month (reserved)",
    "q_accelerators": "Accelerators",
    "q_term": "Term",
    "q_volume": "Volume",
    "q_commitment": "Commitment (take-or-pay)",
    "q_interactivity": "Guaranteed interactivity",
    "q_isl": "Input tokens per request (ISL)",
    "q_osl": "Output tokens per request (OSL)",
    "q_model": "Model",
    "d_volume": "Volume a month (or request/day, task/day)",
    "d_peak": "Peak rate (blank: the average)",
    "d_interactivity": "Service level (interactivity)",
    "d_percentile": "Read at the percentile",
    "d_load": "Load shape by hour (24 fractions of the peak, 00:00 first; 24 more for "
              "weekend days)",
    "d_improvement": "Market price falls by",
    "q_file": "Or upload a quote file (TOML or JSON)",
}


def label_of(where: str) -> str:
    """The label of form field ``where``, or of the field an error at scenario path
    ``where`` is shown beside (``money.fx.EUR.rate`` -> "Exchange rate"); a field without
    a label (``sys2``, a page's own) is said as its name in words."""
    if where in LABELS:
        return LABELS[where]
    field = field_of(where) if "." in where or "[" in where else ""
    return LABELS.get(field) or where.replace("_", " ")
