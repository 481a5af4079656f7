"""Command-line start-up (issue 37): how long a user waits for ``costmodel --version`` and for
``costmodel price FILE``, most of which was importing (pint's unit registry, scipy, the
analyses).

Goals: ``--version`` under 0.3 s, ``price`` of the sample scenario under 0.6 s. Each command
runs in a fresh process (as a user runs it), after one untimed run that fills the unit cache;
the median of ``--repeat`` runs each [s] (wall time, the goal's, and the process's CPU time,
which the machine's other work disturbs less), the wall time's ratio to the interpreter's own
start (``python -c pass``, the same machine, the same moment) and the load average beside it. Two
rows without a goal say what the rest costs: a scenario on a benchmark curve (scipy's
interpolation) and the sample priced with the unit cache turned off.

    python bench/cli.py [--repeat 5]

The package is compiled to bytecode first, as a wheel install is. Where a goal is missed,
``python -X importtime -m costmodel.cli price FILE`` names the module.
"""
from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
CURVE = ROOT / "fixtures" / "scenarios" / "curve-gpt-oss-120b-h100.toml"


def command() -> list[str]:
    """The ``costmodel`` script beside this interpreter (what a user runs), else ``-m``."""
    script = Path(sys.executable).parent / "costmodel"
    return [str(script)] if script.exists() else [sys.executable, "-m", "costmodel.cli"]


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run in a fresh process: (wall time, CPU time of the process) [s]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, timeout=120)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    no_cache = {**env, "COSTMODEL_CACHE_DIR": ""}
    # An installed wheel brings its bytecode; an editable install under PYTHONDONTWRITEBYTECODE
    # (the CI machines set it) would compile every module of the package at each start, ~0.1 s
    # that no user of an installed package pays (`make run` and `make test` compile it too).
    compileall.compile_dir(ROOT / "costmodel", quiet=1)
    cli = command()
    rows = [("python -c pass (baseline)", [sys.executable, "-c", "pass"], env, None),
            ("costmodel --version", [*cli, "--version"], env, 0.3),
            ("costmodel price sample-tco.toml", [*cli, "price", str(SAMPLE)], env, 0.6),
            ("costmodel price (a curve scenario)", [*cli, "price", str(CURVE)], env, None),
            ("costmodel price, unit cache off", [*cli, "price", str(SAMPLE)], no_cache, None)]
    for _, argv, e, _ in rows:
        run(argv, e)  # warm: the unit cache filled, the files in the page cache
    baseline = None
    print(f"{'command':36s} {'median':>8s} {'x python':>9s} {'CPU':>8s} {'goal':>12s}  "
          f"load (1 min)")
    for name, argv, e, goal in rows:
        runs = [run(argv, e) for _ in range(args.repeat)]
        t, cpu = (statistics.median(x) for x in zip(*runs, strict=True))
        baseline = baseline or t
        verdict = "" if goal is None else f"{goal:5.1f} s {'met' if t < goal else 'MISSED'}"
        print(f"{name:36s} {t:6.2f} s {t / baseline:8.1f}x {cpu:6.2f} s {verdict:>12s}  "
              f"{os.getloadavg()[0]:.2f}")
    print(f"(median of {args.repeat} runs each in fresh processes, wall and CPU (user + system) "
          f"time; {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
