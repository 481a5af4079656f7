"""Frontier-read benchmark: 10^5 target interactivities on a 200-point Pareto frontier, read
with costmodel's monotone (PCHIP) reader, beside numpy's linear ``interp`` on the same data in
the same run.

    python bench/frontier.py [--targets 100000] [--points 200] [--repeat 7]

Prints both times (best of --repeat) and the ratio. The reader does more than ``interp``: a
cubic, and a status per target (exact / interpolated / clamped / unreachable).
"""
from __future__ import annotations

import argparse

import numpy as np
from timing import best_time

from costmodel.model.curves import Frontier


def frontier_points(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A decreasing throughput-interactivity frontier of n points [token/s/user, token/s]."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(5, 600, n))
    x = np.unique(x)
    y = 20000 * np.exp(-x / 120) + 50  # throughput falls as interactivity rises
    return x, y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=100_000)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    x, y = frontier_points(args.points)
    rng = np.random.default_rng(4)
    targets = rng.uniform(0, 650, args.targets)  # some clamped, some unreachable
    f = Frontier.from_points(x, y)
    status, _, got = f.read_many(targets)
    inside = (targets >= x[0]) & (targets <= x[-1])
    # on this smooth curve the cubic and the chord agree closely inside the frontier
    lin = np.interp(targets, x, y)
    assert np.nanmax(np.abs(got[inside] / lin[inside] - 1)) < 0.01
    t_numpy = best_time(lambda: np.interp(targets, x, y), args.repeat)
    t_read = best_time(lambda: f.read_many(targets), args.repeat)
    counts = {s: int((status == i).sum()) for i, s in
              enumerate(("exact", "interpolated", "clamped", "unreachable"))}
    print(f"targets              {args.targets:,} on a {len(x)}-point frontier  {counts}")
    print(f"numpy.interp         {t_numpy * 1e3:8.2f} ms  (baseline, same run; linear, no status)")
    print(f"Frontier.read_many   {t_read * 1e3:8.2f} ms  (PCHIP + status per target)")
    print(f"ratio                {t_read / t_numpy:8.2f}x")


if __name__ == "__main__":
    main()
