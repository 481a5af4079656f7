"""Sweep benchmark: 10^6 scenarios through the declared-calculation evaluator, beside a
hand-written numpy expression of the same formula on the same data, in the same run.

    python bench/sweep.py [--n 1000000] [--repeat 5]

Prints both times (best of --repeat) and the ratio evaluator / hand-written; the goal is a
ratio within 1.5x. Both results are checked equal before timing.
"""
from __future__ import annotations

import argparse

import numpy as np
from formula import hand_written
from timing import best_time

from costmodel.evaluate import Evaluator
from costmodel.model import MODEL


def sweep_inputs(n: int, seed: int = 1) -> dict:
    """n scenarios: every numeric input varies per row; the categorical choices are fixed for
    the batch (facility boundary, measured basis, owned hardware, per-kW throughput)."""
    rng = np.random.default_rng(seed)
    u = rng.uniform
    x = {
        "accelerator_rated_power": u(600, 1500, n), "accelerator_measured_power": u(400, 1200, n),
        "accelerator_memory_bandwidth": u(3, 22, n), "accelerator_price": u(15e3, 60e3, n),
        "accelerator_hourly_price": np.full(n, np.nan),
        "node_accelerators": rng.integers(4, 9, n).astype(float), "node_host_power": u(800, 3e3, n),
        "node_psu_efficiency": u(0.9, 0.97, n), "node_price": u(2e4, 8e4, n),
        "rack_nodes": rng.integers(2, 19, n).astype(float), "rack_switch_power": u(500, 4e3, n),
        "rack_other_power": u(0, 2e3, n), "rack_power_delivery_efficiency": u(0.94, 0.99, n),
        "rack_price": u(5e4, 3e5, n), "facility_pue": u(1.05, 1.6, n),
        "facility_hosting": u(80, 250, n), "financing_life": u(3, 7, n),
        "financing_cost_of_capital": u(0.0, 0.15, n), "financing_salvage": u(0, 0.3, n),
        "financing_maintenance": u(0.01, 0.06, n), "electricity_price": u(0.04, 0.25, n),
        "electricity_carbon_intensity": u(20, 700, n), "utilisation": u(0.3, 1.0, n),
        "idle_power": u(0.1, 0.4, n), "operating_point_throughput": np.full(n, np.nan),
        "operating_point_throughput_per_kw": u(100, 90e3, n),
        "operating_point_normalised_by": u(600, 1500, n),
        "workload_isl": np.full(n, 8192.0), "workload_osl": np.full(n, 1024.0),
        "pricing_gross_margin": u(0, 0.7, n), "pricing_output_weight": np.full(n, 4.0),
    }
    x["financing_cost_of_capital"][::10] = 0.0  # straight-line rows
    x.update(power_boundary=3, power_basis=1, operating_point_token_kind=0,
             operating_point_throughput_basis=1, accelerator_cost_basis=0)
    return x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    x = sweep_inputs(args.n)
    ev = Evaluator(MODEL, outputs=["cost_per_mtok_total"])
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = hand_written(x)
    got = ev(x)["cost_per_mtok_total"]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_hand = best_time(lambda: hand_written(x), args.repeat)
    t_eval = best_time(lambda: ev(x), args.repeat)
    print(f"scenarios            {args.n:,}")
    print(f"hand-written numpy   {t_hand * 1e3:8.1f} ms  (baseline, same run)")
    print(f"declared evaluator   {t_eval * 1e3:8.1f} ms  ({len(ev.steps)} steps)")
    print(f"ratio                {t_eval / t_hand:8.2f}x  (goal <= 1.5x)")


if __name__ == "__main__":
    main()
