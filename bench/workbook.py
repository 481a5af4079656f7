"""Workbook benchmark: export a three-system comparison read off curves (build + save), beside
one LibreOffice headless recalculation of the same file, in the same run.

    python bench/workbook.py [--repeat 5]

Goal: the export under 0.5 s.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from timing import best_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CURVE_SCENARIOS, matched_extra, workbook_systems  # noqa: E402

from costmodel.workbook.export import build_workbook, save_workbook  # noqa: E402
from costmodel.workbook.recalc import recalculate, soffice  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    systems, _ = workbook_systems(CURVE_SCENARIOS, extra=matched_extra(CURVE_SCENARIOS))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "three.xlsx"
        t_export = best_time(lambda: save_workbook(build_workbook(systems), path), args.repeat)
        print(f"export, 3 systems with curves  {t_export * 1e3:8.1f} ms  "
              f"({path.stat().st_size / 1024:.0f} kB; goal < 500 ms)")
        if soffice() is None:
            print("LibreOffice recalculation       not installed")
            return
        t0 = time.perf_counter()
        recalculate(path, Path(tmp) / "out")
        t_lo = time.perf_counter() - t0
        print(f"LibreOffice recalculation       {t_lo * 1e3:8.1f} ms  (one run, same file)")
        print(f"ratio                           {t_export / t_lo:8.2f}x")


if __name__ == "__main__":
    main()
