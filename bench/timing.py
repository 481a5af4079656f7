"""Timing shared by the benchmarks: the best of several runs, to damp noise from the machine."""
from __future__ import annotations

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
