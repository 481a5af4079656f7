"""The profit tests' scenarios and their figures, derived by hand (the arithmetic below).

Two systems, one owned and one rented, alike but for how the accelerator is paid, at a
utilisation below 1. Every input is an illustrative assumption chosen so that the arithmetic
is short; none is a published figure.

Both: a 1,000 W accelerator (rated, at the chip boundary), 10,000 mixed
token/s at the operating point, serving half the hours (utilisation 0.5) and drawing 30 % of
its power idle; ISL 1,000 and OSL 250 tokens a request; electricity 0.10 USD/kWh; no hosting;
an all-in power of 1,600 W at the rack boundary and a PUE of 1.25.

- energy: power x (0.5 + 0.5 x 0.3) = 1 kW x 0.65 x 0.10 USD/kWh = 0.065 USD/h
- owned: 26,280 USD (no node or rack price), 3 years, no cost of capital, salvage or
  maintenance: 26,280 / 3 / 8,760 h = 1.000 USD/h -> cost 1.065 USD/h
- rented: 2 USD/h -> cost 2.065 USD/h
- tokens an hour: 0.5 x 10,000 x 3,600 = 18,000,000; a request is 1,250 tokens, so
  14,400 requests an hour
- facility power: 1,600 W x 1.25 = 2,000 W, so 10^9 / 2,000 = 500,000 accelerators a GW

The market: 0.50 USD per million input tokens, 0.10 cached, 2.00 output; half the input
from the prefix cache; a revenue share of 20 %.

- a request: (500 x 0.50 + 500 x 0.10 + 250 x 2.00) / 10^6 = 800 / 10^6 = 0.0008 USD; the
  market's price per million tokens of either kind: 800 / 1,250 = 0.64 USD/Mtok
- revenue: 14,400 x 0.0008 = 11.52 USD/h; the share 0.2 x 11.52 = 2.304; kept 9.216
- profit: owned 9.216 - 1.065 = 8.151 USD/h; rented 9.216 - 2.065 = 7.151 USD/h
- margin: 8.151 / 11.52 = 0.707552083...; 7.151 / 11.52 = 0.620746527...
- a month (730 h): owned 5,950.23, rented 5,220.23 USD
- a GW-year: 8.151 x 8,760 x 500,000 = 35,701,380,000 USD; 7.151 x ... = 31,321,380,000
- break-even: every price x cost / revenue kept = 1.065 / 9.216 (owned), 2.065 / 9.216
  (rented); per million tokens of either kind 0.64 x that = 1.065 / 14.4 = 0.073958333...,
  2.065 / 14.4 = 0.143402777...; output 2 x 1.065 / 9.216 = 0.231119791...
- tokens per dollar of cost: 18,000,000 / 1.065 = 16,901,408.45..., / 2.065 = 8,716,707.02...
"""
from __future__ import annotations

import tomllib

BASE = {
    "utilisation": 0.5, "idle_power": 0.3,
    "accelerator": {"rated_power": "1000 W", "all_in_power": "1600 W"},
    "node": {"price": "0 USD"}, "rack": {"price": "0 USD"},
    "financing": {"life": "3 year", "cost_of_capital": 0, "salvage": 0, "maintenance": 0},
    "facility": {"hosting": "0 USD/kW/month", "pue": 1.25},
    "electricity": {"price": "0.10 USD/kWh", "source": "illustrative assumption"},
    "operating_point": {"throughput": "10000 token/s"},
    "workload": {"isl": 1000, "osl": 250},
}
OWNED = {**BASE, "name": "owned",
         "accelerator": {**BASE["accelerator"], "price": "26280 USD"}}
RENTED = {**BASE, "name": "rented",
          "accelerator": {**BASE["accelerator"], "hourly_price": "2 USD/h"}}
MARKET = {"price_input": "0.5 USD/Mtok", "price_cached_input": "0.1 USD/Mtok",
          "price_output": "2 USD/Mtok", "cached_share": 0.5, "revenue_share": 0.2,
          "source": "illustrative assumption"}

COST = {"owned": 1.065, "rented": 2.065}  # USD/h
REVENUE = 11.52  # USD/h
SHARE = 2.304  # USD/h
KEPT = 9.216  # USD/h
PROFIT = {"owned": 8.151, "rented": 7.151}  # USD/h
MARGIN = {"owned": 8.151 / 11.52, "rented": 7.151 / 11.52}
PROFIT_MONTH = {"owned": 5950.23, "rented": 5220.23}  # USD/month
PROFIT_GW_YEAR = {"owned": 35_701_380_000.0, "rented": 31_321_380_000.0}  # USD/GW/year
BREAK_EVEN = {"owned": 1.065 / 14.4, "rented": 2.065 / 14.4}  # USD/Mtok, either kind
BREAK_EVEN_OUTPUT = {"owned": 2 * 1.065 / 9.216, "rented": 2 * 2.065 / 9.216}  # USD/Mtok
TOKENS_PER_USD = {"owned": 18e6 / 1.065, "rented": 18e6 / 2.065}  # token/USD
ACCELERATORS_PER_GW = 500_000.0


def toml_text(scenario: dict, market: dict | None = MARKET) -> str:
    """A scenario file: the scenario's tables and, beside them, its [market]."""
    def value(v):
        if isinstance(v, str):
            return '"' + v.replace('"', '\\"') + '"'
        return repr(v)

    lines = [f"{k} = {value(v)}" for k, v in scenario.items() if not isinstance(v, dict)]
    tables = {k: v for k, v in scenario.items() if isinstance(v, dict)}
    if market is not None:
        tables["market"] = market
    for name, table in tables.items():
        lines += ["", f"[{name}]", *(f"{k} = {value(v)}" for k, v in table.items())]
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # (a file that reads back)
    return text
