"""Usage CSV benchmark: read 10^6 plain-CSV usage rows (time, tenant, model, four counts, a
project tag) from a temporary file with ``read_usage``, beside pyarrow's bare read of the
same file (the floor: its C reader with no checks, no keys).

    python bench/usage.py [--rows 1000000] [--repeat 5]

Prints the file's size, the median of ``--repeat`` reads [s] and rows a second (goal: at
least 1,000,000, so that a chargeback's 500,000 rows a second end to end holds), the ratio to
pyarrow's bare read, the peak memory of a process that reads the file once (its maximum
resident set, less that of one that only imports the package), and the load average before
the runs.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import median_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402

from costmodel.sources.usage import read_usage  # noqa: E402

GOAL = 1_000_000  # [rows/s]
START = 1793491200  # [s] 2026-11-01T00:00:00Z


def write_rows(path: Path, rows: int) -> None:
    """``rows`` usage rows over a 30-day month: 40 tenants, 3 models, ISO 8601 times."""
    rng = np.random.default_rng(40)
    seconds = np.sort(rng.integers(START, START + 30 * 86400, rows))
    times = pa.array(seconds.astype("datetime64[s]")).cast(pa.string())
    new_input = rng.integers(50, 4000, rows)
    table = pa.table({
        "time": pc.utf8_replace_slice(times, 10, 11, "T"),
        "tenant": pa.array(np.array([f"team-{i:02d}" for i in range(40)])[
            rng.integers(0, 40, rows)]),
        "model": pa.array(np.array(["gpt-oss-120b", "llama-3.3-70b", "qwen3-32b"])[
            rng.integers(0, 3, rows)]),
        "input_tokens": new_input,
        "cached_input_tokens": rng.integers(0, 4000, rows),
        "output_tokens": rng.integers(10, 2000, rows),
        "requests": np.ones(rows, dtype=np.int64),
        "project": pa.array(np.array(["web", "batch", "helpdesk", ""])[
            rng.integers(0, 4, rows)]),
    })
    pacsv.write_csv(table, path, pacsv.WriteOptions(quoting_style="none"))


def peak_memory(path: Path, read: bool) -> int:
    """The peak resident set (VmHWM: reset by exec, unlike ru_maxrss, which a child keeps
    from this process) of a child process that imports the reader and, if ``read``, reads
    ``path`` [byte]."""
    code = ("from costmodel.sources.usage import read_usage; "
            + (f"read_usage([{str(path)!r}]); " if read else "")
            + "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    return int(out.split()[1]) * 1024  # kB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "usage.csv"
        write_rows(path, args.rows)
        records = read_usage([path])
        assert len(records) == args.rows
        ours = median_time(lambda: read_usage([path]), args.repeat)
        bare = median_time(lambda: pacsv.read_csv(path), args.repeat)
        peak = peak_memory(path, True) - peak_memory(path, False)
        size = path.stat().st_size
    rate = args.rows / ours
    print(f"usage CSV: {args.rows:,} rows, {size / 1e6:.1f} MB; load average before "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"  read_usage: median of {args.repeat} {ours:.3f} s = {rate:,.0f} rows/s "
          f"({rate / GOAL:.2f} x the goal of {GOAL:,})")
    print(f"  pyarrow's bare read: median {bare:.3f} s; read_usage / bare = {ours / bare:.2f}")
    print(f"  peak memory of one read: {peak / 1e6:.0f} MB above the import "
          f"({peak / args.rows:.0f} bytes a row; the file is {size / args.rows:.0f})")


if __name__ == "__main__":
    main()
