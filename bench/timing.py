"""Timing shared by the benchmarks: the best, or the median, of several runs."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """The shortest of ``repeat`` runs of ``fn`` [s]."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """The median of ``repeat`` runs of ``fn`` [s]."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
