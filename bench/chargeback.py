"""Chargeback benchmark: 10^6 usage records read and charged on the CLI path
(``costmodel chargeback USAGE --fleet FILE --json``), in a process of its own each run.

    python bench/chargeback.py [--rows 1000000] [--repeat 5]

Writes a CSV of ``--rows`` records (200 tenants, two models on two pools, November 2026),
then runs the command ``--repeat`` times. Prints the median wall time [s], rows a second
against the goal of 500,000 (the ratio), the peak memory of the slowest-growing run [MB], and
the load average before the runs.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOAL = 500_000  # [rows/s] end to end
FLEET = """name = "bench fleet"
period = "2026-11"
[[pools]]
name = "gb300"
scenario = "{scenario}"
nodes = 18
models = ["deepseek-r1"]
reserved = {{ t0 = {{ share = 0.1 }} }}
[[pools]]
name = "rented"
scenario = "{rental}"
accelerators = 16
models = ["gpt-oss"]
"""


def write_usage(path: Path, rows: int) -> None:
    rng = np.random.default_rng(1)
    start = 1_793_491_200  # 2026-11-01T00:00:00Z
    t = start + rng.integers(0, 30 * 86400, rows)
    tenant = rng.integers(0, 200, rows)
    model = np.where(rng.random(rows) < 0.7, "deepseek-r1", "gpt-oss")
    cols = [t.astype(str), np.char.add("t", tenant.astype(str)), model,
            rng.integers(0, 5000, rows).astype(str), rng.integers(0, 2000, rows).astype(str),
            rng.integers(0, 1000, rows).astype(str), np.ones(rows, dtype=int).astype(str)]
    with path.open("w") as f:
        f.write("time,tenant,model,input_tokens,cached_input_tokens,output_tokens,requests\n")
        for k in range(0, rows, 100_000):
            block = np.stack([c[k:k + 100_000] for c in cols], axis=1)
            f.write("\n".join(",".join(r) for r in block))
            f.write("\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        usage = d / "usage.csv"
        write_usage(usage, args.rows)
        fleet = d / "fleet.toml"
        scenarios = ROOT / "fixtures" / "scenarios"
        fleet.write_text(FLEET.format(scenario=scenarios / "sample-tco.toml",
                                      rental=scenarios / "rate-gb300-rental.toml"))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "costmodel.cli", "chargeback", str(usage), "--fleet",
               str(fleet), "--json"]
        times, peaks = [], []
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
            peaks.append(max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    median = statistics.median(times)
    rate = args.rows / median
    print(f"chargeback of {args.rows:,} records on the CLI: median {median:.2f} s of "
          f"{args.repeat} runs, {rate:,.0f} rows/s ({rate / GOAL:.2f} x the goal of "
          f"{GOAL:,}), peak memory {max(peaks) / 1024:,.0f} MB; load before: "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
