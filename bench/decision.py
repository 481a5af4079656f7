"""Decision workbook benchmark: write the workbook of a decision at its limit of 12 ranked
options (the B200 and H100 own builds, the negotiation example's H100 capacity offer and nine
per-Mtok offers of six tiers each, for the example's demand), beside the plain workbook of the
same own builds.

    python bench/decision.py [--repeat 5]

Prints the median of ``--repeat`` runs of each [s], their ratio (the Decision and Scan sheets'
cost over the model sheets'), and the load average before the runs.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import tomllib
from pathlib import Path

from timing import median_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import app  # noqa: E402
from costmodel.cli import CONTEXT, specs_for  # noqa: E402
from costmodel.decisions.demand import validate_demand  # noqa: E402
from costmodel.decisions.quotes import validate_quote  # noqa: E402
from costmodel.render.workbook.export import WorkbookSystem, build_workbook  # noqa: E402
from costmodel.sources.quote_file import read_quotes  # noqa: E402

NEGOTIATION = ROOT / "fixtures" / "quotes" / "negotiation.toml"
BUILDS = [ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml"
          for hw in ("b200", "h100")]


def _q(value: float, unit: str) -> dict:
    return {"value": value, "unit": unit}


def request() -> app.DecisionRequest:
    """The negotiation example's demand and capacity offer, and nine tiered API offers."""
    capacity, api = read_quotes(str(NEGOTIATION))
    quotes = [capacity]
    for i in range(9):
        data = copy.deepcopy(api.to_data())
        data["name"] = f"api-{i}"
        data["tiers"] = [{"up_to": _q(5000.0 * (k + 1), "Mtok/month"),
                          "price_input": _q(0.6 - 0.01 * i - 0.02 * k, "USD/Mtok"),
                          "price_output": _q(2.4 - 0.05 * k, "USD/Mtok")} for k in range(5)]
        data["tiers"].append({"price_input": _q(0.3, "USD/Mtok"),
                              "price_output": _q(1.2, "USD/Mtok")})
        quotes.append(validate_quote(data))
    demand = tomllib.loads(NEGOTIATION.read_text())["demand"]
    return app.DecisionRequest(quotes, specs_for(tuple(map(str, BUILDS)), ()),
                               validate_demand(demand))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    load = os.getloadavg()
    answer = app.quotes_decide(CONTEXT, request())
    ranked = len(answer.decision.ranked)
    systems = [WorkbookSystem(p.result, p.curve) for p in answer.systems]
    t_decision = median_time(lambda: app.render_decision_workbook(answer), args.repeat)
    t_plain = median_time(lambda: build_workbook(systems), args.repeat)
    print(f"decision workbook, {ranked} ranked offers   {t_decision:7.2f} s  (median of "
          f"{args.repeat})")
    print(f"the same own builds' workbook     {t_plain:7.2f} s")
    print(f"ratio                              {t_decision / t_plain:7.1f}x   "
          f"(load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")


if __name__ == "__main__":
    main()
