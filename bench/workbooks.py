"""Every workbook the service writes, at the largest request its limits let through (issue 42,
part 3: each in at most 1 s), beside the plain workbook of one scenario in the same run.

    python bench/workbooks.py [--repeat 5] [--only decision,task-2]

One row a workbook kind: the median of ``--repeat`` runs of the use case the route calls
(pricing included, as a request waits for it) [s], wall and CPU (the process's own: what one
core spends, which a shared machine's load hardly moves), the CPU time against the goal
(1 s), and the wall time over the plain workbook's, run alternately with it (the ratio is
of the same minutes), with the load average before the runs. The requests:

- ``plain``: one scenario (sample-tco): the baseline; ``tariff``: one with a time-of-use
  tariff and a load shape (sample-tou): a saved scenario's, a plan's;
- ``compare-12``: 12 scenarios (``MAX_SCENARIOS``), three builds read off their curves
  and, every fourth, the time-of-use sample;
- ``quotes-50x12``: 50 quotes (``MAX_QUOTES``) against 12 scenarios;
- ``decision-12``: 12 ranked options (``MAX_OPTIONS``: two own builds, a capacity offer and
  nine per-Mtok offers of six tiers); ``decision-12x20``: the same, each per-Mtok offer at
  the most tiers a decision workbook lays out (``MAX_TIERS``; a quote may state 100);
- ``task-2``, ``task-12``: a task of ``MAX_TASK_CELLS`` steps x systems on 2 and 12 systems;
- ``profit-12``: 12 scenarios sold at a market;
- ``sensitivity``: one scenario's tornado and a 200,000-draw Monte Carlo (the page's most);
- ``chargeback``: a month of ``--tenants`` tenants on 12 pools, every tenant on every pool
  (by default as many as ``MAX_CHARGEBACK_LINES`` lets through: 165 tenants, 1,992 lines;
  the JSON answer takes ``MAX_TENANTS``, 10,000).
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

from timing import median_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import app  # noqa: E402
from costmodel.app.caps import MAX_QUOTES, MAX_SCENARIOS, MAX_TASK_CELLS  # noqa: E402

try:  # the bounds of issue 42 (absent from a tree before them: their values then)
    from costmodel.app.caps import MAX_CHARGEBACK_LINES
    from costmodel.render.workbook.bounds import MAX_TIERS
except ImportError:
    MAX_CHARGEBACK_LINES, MAX_TIERS = 2_000, 20
from costmodel.decisions.demand import validate_demand  # noqa: E402
from costmodel.decisions.quotes import validate_quote  # noqa: E402
from costmodel.decisions.task import validate_task  # noqa: E402
from costmodel.sources.quote_file import quotes_of, read_quotes  # noqa: E402

GOAL = 1.0  # [s] a workbook at its limits (issue 42)
SCENARIOS = ROOT / "fixtures" / "scenarios"
CURVES = [SCENARIOS / f"curve-gpt-oss-120b-{hw}.toml" for hw in ("b200", "h100", "mi300x")]
NEGOTIATION = ROOT / "fixtures" / "quotes" / "negotiation.toml"
CTX = app.LocalContext()
PRICES = "uniform(0.05 USD/kWh, 0.15 USD/kWh)"  # the Monte Carlo's electricity price


def _spec(path: Path) -> app.ScenarioSpec:
    return app.ScenarioSpec(app.FileScenario(path))


def _twelve() -> list[app.ScenarioSpec]:
    """12 scenarios: the three curve builds in turn, every fourth the sample tariff."""
    return [_spec(SCENARIOS / "sample-tou.toml" if i % 4 == 3 else CURVES[i % 3])
            for i in range(MAX_SCENARIOS)]


def _q(value: float, unit: str) -> dict:
    return {"value": value, "unit": unit}


def _decision(tiers: int) -> app.DecisionRequest:
    capacity, api = read_quotes(str(NEGOTIATION))
    quotes = [capacity]
    for i in range(9):
        data = copy.deepcopy(api.to_data())
        data["name"] = f"api-{i}"
        data["tiers"] = [{"up_to": _q(5000.0 * (k + 1), "Mtok/month"),
                          "price_input": _q(0.6 - 0.01 * i - 0.02 * k / tiers * 5,
                                            "USD/Mtok"),
                          "price_output": _q(2.4 - 0.05 * k / tiers * 5, "USD/Mtok")}
                         for k in range(tiers - 1)]
        data["tiers"].append({"price_input": _q(0.3, "USD/Mtok"),
                              "price_output": _q(1.2, "USD/Mtok")})
        quotes.append(validate_quote(data))
    demand = tomllib.loads(NEGOTIATION.read_text())["demand"]
    builds = [SCENARIOS / f"curve-gpt-oss-120b-{hw}.toml" for hw in ("b200", "h100")]
    return app.DecisionRequest(quotes, [_spec(b) for b in builds], validate_demand(demand))


def _quotes() -> list:
    return quotes_of({"quote": [
        {"name": f"offer-{i}", "vendor": f"Vendor {i}", "date": "2026-11-20",
         "form": "per_mtok", "price_input": f"{0.5 + i / 1000:.3f} USD/Mtok",
         "price_output": f"{2 + i / 1000:.3f} USD/Mtok", "term": "12 month",
         "operating_point": {"interactivity": "100 token/s/user"}}
        for i in range(MAX_QUOTES)]}, "offers")


def _task(systems: int) -> app.TaskRequest:
    steps = MAX_TASK_CELLS // systems
    specs = [_spec(CURVES[i % 3]) for i in range(systems)]
    return app.TaskRequest(specs, validate_task(
        {"steps": steps, "context": 8000, "growth": 1500, "output": 300,
         "cached_share": 0.8, "tool_time": "1.2 s"}))


def _chargeback(tenants: int, pools: int = 12) -> Callable[[], object]:
    from costmodel.app.chargeback import ChargebackRequest, chargeback, chargeback_workbook
    from costmodel.sources.usage import read_usage_bytes
    scenario = tomllib.loads((SCENARIOS / "sample-tco.toml").read_text())
    fleet = {"name": "bench fleet", "period": "2026-11",
             "pools": [{"name": f"pool-{k}", "scenario": scenario, "nodes": 18,
                        "models": [f"model-{k}"]} for k in range(pools)]}
    rows = ["time,tenant,model,input_tokens,cached_input_tokens,output_tokens,requests"]
    rows += [f"2026-11-{1 + (t % 28):02d}T00:00:00Z,t{t},model-{k},{1000 + t},{t},{300 + k},1"
             for t in range(tenants) for k in range(pools)]
    records = read_usage_bytes(("\n".join(rows) + "\n").encode(), "usage.csv")
    request = ChargebackRequest(fleet, records)
    return lambda: chargeback_workbook(chargeback(CTX, request))


def kinds(tenants: int) -> dict[str, Callable[[], object]]:
    """Each workbook kind's request, as a function that answers it."""
    plain, tou = _spec(SCENARIOS / "sample-tco.toml"), _spec(SCENARIOS / "sample-tou.toml")
    twelve = _twelve()
    quotes = _quotes()
    gb300 = app.ScenarioSpec(app.InlineScenario(
        {"name": "gb300", "accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}))
    market = {"price_input": "0.5 USD/Mtok", "price_cached_input": "0.1 USD/Mtok",
              "price_output": "2 USD/Mtok", "cached_share": 0.5, "revenue_share": 0.2,
              "source": "illustrative assumption"}
    decision6, most = _decision(6), _decision(MAX_TIERS)
    task2, task12 = _task(2), _task(MAX_SCENARIOS)
    return {
        "plain": lambda: app.workbook(CTX, [plain]),
        "tariff": lambda: app.workbook(CTX, [tou]),
        "compare-12": lambda: app.workbook(CTX, twelve),
        "quotes-50x12": lambda: app.quotes_workbook(
            app.quotes_compare(CTX, quotes, [gb300] * MAX_SCENARIOS)),
        "decision-12": lambda: app.decision_workbook(CTX, decision6),
        f"decision-12x{MAX_TIERS}": lambda: app.decision_workbook(CTX, most),
        "task-2": lambda: app.task_workbook(CTX, task2),
        "task-12": lambda: app.task_workbook(CTX, task12),
        "profit-12": lambda: app.profit_workbook(CTX, app.ProfitRequest(
            twelve, [app.MarketSpec(market)] * MAX_SCENARIOS)),
        "sensitivity": lambda: app.render_workbook(
            [app.tornado(CTX, plain).priced], sensitivity=[
                app.tornado(CTX, plain).result,
                app.monte_carlo(CTX, plain, {"electricity.price": PRICES}, draws=200_000,
                                seed=1).result]),
        "chargeback": _chargeback(tenants),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated kinds (plain always runs)")
    ap.add_argument("--tenants", type=int, default=(MAX_CHARGEBACK_LINES - 12) // 12)
    args = ap.parse_args()
    load = os.getloadavg()
    every = kinds(args.tenants)
    wanted = ["plain", *(k for k in args.only.split(",") if k and k != "plain")] \
        if args.only else list(every)
    for kind in wanted:
        fn = every[kind]
        size = len(fn().content)  # once before timing: imports, caches, the size
        # the plain workbook alternating with this one: the ratio is of the same minutes
        ts, cpus, base = [], [], []
        for _ in range(args.repeat):
            base.append(median_time(every["plain"], 1))
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        t, cpu, plain = (statistics.median(x) for x in (ts, cpus, base))
        print(f"{kind:16s} {t:6.3f} s (CPU {cpu:6.3f} s)  goal {GOAL:.1f} s: "
              f"{'within' if cpu <= GOAL else 'OVER  '} {cpu / GOAL:5.2f}x  "
              f"{t / plain:5.1f}x plain ({plain:.3f} s)  {size / 1024:6.0f} kB", flush=True)
    print(f"median of {args.repeat}; load average before: {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}")


if __name__ == "__main__":
    main()
