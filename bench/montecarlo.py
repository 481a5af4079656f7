"""Monte Carlo benchmark: 10^6 draws of several inputs of the sample TCO scenario through
``costmodel.decisions.sensitivity.monte_carlo``, beside plain numpy evaluations of the same formula
on
the same draws, in the same run.

    python bench/montecarlo.py [--draws 1000000] [--repeat 5] [--seed 7]

Prints the best of --repeat for: the whole Monte Carlo (drawing, validity checks, the
declared evaluator, percentiles, histogram); a hand-written numpy expression of the cost on
the same draws (the baseline); and a plain numpy pipeline (draw, hand-written formula,
percentiles, histogram). Goal: 10^6 draws under 2 s. Results are checked equal before timing.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import formula
import numpy as np
from timing import best_time

from costmodel.app.build import load_scenario_file
from costmodel.decisions.sensitivity import monte_carlo, sample_inputs
from costmodel.model.evaluate import Evaluator
from costmodel.model.steps import MODEL

SCENARIO = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "sample-tco.toml"
DISTRIBUTIONS = {
    "electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)",
    "utilisation": "triangular(0.5, 0.7, 0.9)",
    "operating_point.throughput_per_kw": "normal(11781 token/s/kW, 1200 token/s/kW)",
    "accelerator.price": "lognormal(50000 USD, 1.2)",
    "financing.life": "triangular(4 year, 5 year, 7 year)",
}


def hand_written(x: dict) -> np.ndarray:
    """cost per Mtok [USD/Mtok] for sample-tco's choices: rated basis at the facility."""
    return formula.hand_written(x, chip="accelerator_rated_power")


def plain_pipeline(base: dict, n: int, seed: int, bins: int = 50):
    """Draw the same kinds of distribution with numpy directly, evaluate the hand-written
    formula, and summarise: the least a Monte Carlo of this formula can cost."""
    rng = np.random.default_rng(seed)
    x = dict(base)
    x["electricity_price"] = rng.uniform(0.05, 0.15, n)
    x["utilisation"] = rng.triangular(0.5, 0.7, 0.9, n)
    x["operating_point_throughput_per_kw"] = rng.normal(11781, 1200, n)
    x["accelerator_price"] = rng.lognormal(math.log(50000), math.log(1.2), n)
    x["financing_life"] = rng.triangular(4, 5, 7, n)
    out = hand_written(x)
    return np.percentile(out, [10, 50, 90]), np.histogram(out, bins=bins)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    scenario = load_scenario_file(SCENARIO).scenario
    n, seed = args.draws, args.seed

    # the same draws monte_carlo evaluates (one chunk), for the hand-written baseline
    x, redrawn = sample_inputs(scenario, DISTRIBUTIONS, draws=n, seed=seed)
    expected = hand_written(x)
    got = Evaluator(MODEL, outputs=["cost_per_mtok_total"])(x)["cost_per_mtok_total"]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    result = monte_carlo(scenario, DISTRIBUTIONS, draws=n, seed=seed)
    np.testing.assert_allclose([result.p10, result.p50, result.p90],
                               np.percentile(expected, [10, 50, 90]), rtol=1e-12)

    t_mc = best_time(lambda: monte_carlo(scenario, DISTRIBUTIONS, draws=n, seed=seed),
                     args.repeat)
    t_hand = best_time(lambda: hand_written(x), args.repeat)
    base = scenario.to_inputs()
    t_plain = best_time(lambda: plain_pipeline(base, n, seed), args.repeat)

    print(f"draws                 {n:,}  ({len(DISTRIBUTIONS)} inputs varied; "
          f"{sum(redrawn.values())} redrawn)")
    print(f"P10 / P50 / P90       {result.p10:.6g} / {result.p50:.6g} / {result.p90:.6g} "
          f"{result.unit}")
    print(f"hand-written formula  {t_hand * 1e3:8.1f} ms  (baseline, same draws, same run)")
    print(f"plain numpy pipeline  {t_plain * 1e3:8.1f} ms  (draw + formula + percentiles + "
          f"histogram)")
    print(f"monte_carlo           {t_mc * 1e3:8.1f} ms  (goal < 2,000 ms for 10^6 draws)")
    print(f"ratio                 {t_mc / t_hand:8.2f}x the formula, "
          f"{t_mc / t_plain:.2f}x the plain pipeline")


if __name__ == "__main__":
    main()
