"""Sweep benchmark: 10^6 scenarios through the declared-calculation evaluator (fused:
costmodel.model.fused), beside a hand-written numpy expression of the same formula on the same
data and the plain evaluator (whole arrays, one closure per node: the fused one's reference),
in the same run; at a flat electricity price, and on a 24-hour time-of-use tariff with a load
shape, a demand and a fixed charge (the tariff's scale and shift, idle power and the rest
varying per row).

    python bench/sweep.py [--n 1000000] [--repeat 5]

Each round times every contender once, interleaved (the machine is shared: its load is
printed); the figures are the medians of --repeat rounds, with each ratio to the hand-written
numpy beside its goal (issue 42: at most 1.0x). The results are checked equal (rel 1e-12) to
the hand-written and to the plain evaluator's before timing.

The memory-bandwidth floor: the bytes a sweep must move (each row-wise input read once, the
answer written once) take at least as long as a plain numpy copy of as many bytes (half read,
half written); the evaluator's time is printed as a multiple of it, and without the one
power a row, (1 + r) ** n, which is arithmetic, not memory, and costs the hand-written numpy
as much (timed alone beside them). One scenario (every step; plain floats, and with a
tariff's arrays) is timed through the evaluator and the plain one beside it: the fused path
must not slow it down.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from formula import hand_written, hand_written_tariff

from costmodel.model.evaluate import Evaluator
from costmodel.model.steps import MODEL

GOAL = 1.0  # evaluator / hand-written numpy, both sweeps (issue 42)


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
             operating_point_throughput_basis=1, accelerator_cost_basis=0,
             accelerator_rack_power_basis=0, accelerator_all_in_power=np.nan,
             electricity_pricing=0, load_basis=0, electricity_site_basis=0, money_rate=1.0)
    for name in MODEL.inputs:  # a flat price: no tariff, no load shape
        x.setdefault(name, np.nan)
    return x


def tariff_inputs(n: int, seed: int = 2) -> dict:
    """:func:`sweep_inputs` on a 24-hour time-of-use tariff (a weekday peak 16:00-21:00) with a
    night-heavy load shape, a demand charge and a fixed charge shared by one rack; the
    tariff's scale and shift and the fixed charge vary per row."""
    rng = np.random.default_rng(seed)
    x = sweep_inputs(n, seed)
    hours = np.arange(24)
    x.update(electricity_pricing=1, load_basis=1,
             electricity_tariff_rates=np.where((hours >= 16) & (hours < 21), 0.22,
                                               0.09).reshape(1, 24),
             electricity_tariff_demand_charge=np.full((1, 1), 15.0),
             # no demand period: the one row that bills nothing (costmodel.model.profile)
             electricity_tariff_demand_period_hours=np.zeros((1, 24)),
             electricity_tariff_demand_period_charge=np.zeros((1, 1)),
             electricity_tariff_demand_period_months=np.full((1, 1), 12.0),
             tariff_month_weight=np.ones((1, 1)), tariff_months_billed=np.full((1, 1), 12.0),
             hour_weight=np.full((1, 24), 1 / 24),
             load_hourly=np.where((hours < 7) | (hours >= 22), 0.9, 0.4).reshape(1, 24),
             electricity_tariff_scale=rng.uniform(0.8, 1.2, n),
             electricity_tariff_shift=rng.uniform(0, 0.02, n),
             electricity_tariff_fixed_charge=rng.uniform(0, 1000, n))
    return x


def _rounds(contenders: dict, repeat: int) -> dict[str, tuple[float, float]]:
    """The median wall and CPU time of each contender [s], each timed in turn in each of
    ``repeat`` rounds, in the reverse order every other round (so none always runs first);
    the CPU time, this process's, moves less with the machine's load."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for round_ in range(repeat):
        order = list(contenders.items())
        for name, fn in order[::-1] if round_ % 2 else order:
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[name].append((time.perf_counter() - w0, time.process_time() - c0))
    return {name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
            for name, t in times.items()}


def _line(label: str, t: tuple[float, float], base: tuple[float, float], note: str) -> str:
    return (f"  {label:20s} {t[0] * 1e3:8.1f} ms {t[0] / base[0]:5.2f}x   CPU {t[1] * 1e3:8.1f} ms "
            f"{t[1] / base[1]:5.2f}x  {note}")


def _compare(label: str, x: dict, hand, repeat: int) -> None:
    ev = Evaluator(MODEL, outputs=["cost_per_mtok_total"])
    plain = Evaluator(MODEL, outputs=["cost_per_mtok_total"], fused=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = hand(x)
    got = ev(x)["cost_per_mtok_total"]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got, plain(x)["cost_per_mtok_total"], rtol=1e-12)
    plan, n = ev._fused.plan(x)
    # the floor: every row-wise input the answer reads, once, and the answer, once
    read = sum(np.asarray(x[name]).nbytes for name in plan.row_inputs)
    written = got.nbytes
    src, dst = np.ones((read + written) // 16), np.empty((read + written) // 16)

    def hand_run():
        with np.errstate(divide="ignore", invalid="ignore"):
            hand(x)

    # the one power a row both compute, (1 + r) ** n: libm's pow, ~25 ns a row here
    base, life, power = 1 + x["financing_cost_of_capital"], x["financing_life"], np.empty(n)
    t = _rounds({"hand": hand_run, "fused": lambda: ev(x), "plain": lambda: plain(x),
                 "copy": lambda: np.copyto(dst, src),
                 "power": lambda: np.power(base, life, out=power)}, repeat)
    h, f, c = t["hand"], t["fused"], t["copy"]
    print(label)
    print(_line("hand-written numpy", h, h, "(baseline, same run)"))
    print(_line("declared evaluator", f, h, f"(goal <= {GOAL:g}x; fused: {plan.operations} "
                                            f"operations a row, blocks of {plan.block:,} rows)"))
    print(_line("plain evaluator", t["plain"], h, f"(whole arrays, the reference; "
                                                  f"{len(plain.steps)} steps)"))
    print(_line("memory floor", c, h, f"({read / 1e6:.0f} MB read + {written / 1e6:.0f} MB "
                                      f"written: a plain copy, {(read + written) / c[0] / 1e9:.1f}"
                                      f" GB/s)"))
    print(_line("one power a row", t["power"], h, "((1 + r) ** n alone, which both compute)"))
    print(f"  the evaluator is {f[0] / c[0]:.1f}x the memory floor ({f[1] / c[1]:.1f}x in CPU); "
          f"less the power, {(f[0] - t['power'][0]) / c[0]:.1f}x "
          f"({(f[1] - t['power'][1]) / c[1]:.1f}x)")


def _one_scenario(repeat: int, calls: int = 3000) -> None:
    """One scenario, every step, through the evaluator beside the plain one: on plain floats
    (the scalar path, as before), and with the tariff's and the load shape's arrays beside
    them (the fused function without rows)."""
    print("one scenario, every step (time per call)")
    for label, x in (("plain floats", sweep_inputs(1)), ("with a tariff", tariff_inputs(1))):
        one = {name: float(v[0]) if np.ndim(v) == 1 else v for name, v in x.items()}
        ev, plain = Evaluator(MODEL), Evaluator(MODEL, fused=False)
        got, expected = ev(one), plain(one)
        assert all(np.array_equal(got[k], v, equal_nan=True) for k, v in expected.items())

        def run(e, one=one):
            return lambda: [e(one) for _ in range(calls)]

        t = _rounds({"fused": run(ev), "plain": run(plain)}, repeat)
        f, p = t["fused"], t["plain"]
        print(f"  {label:20s} {f[0] / calls * 1e6:8.1f} us {f[0] / p[0]:5.2f}x   CPU "
              f"{f[1] / calls * 1e6:8.1f} us {f[1] / p[1]:5.2f}x  the plain evaluator's "
              f"(goal <= 1x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"scenarios            {args.n:,}  (median of {args.repeat}, interleaved; load "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores)")
    _compare("flat electricity price", sweep_inputs(args.n), hand_written, args.repeat)
    _compare("24-hour tariff, load shape, demand and fixed charges",
             tariff_inputs(args.n), hand_written_tariff, args.repeat)
    _one_scenario(args.repeat)
    print(f"load after           {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
