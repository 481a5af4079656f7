"""Workbook benchmark: export a three-system comparison read off curves, every formula with its
cached value (build + save), beside one LibreOffice headless recalculation of the same file, in
the same run.

    python bench/workbook.py [--repeat 5]

Goal (issue 12): the export under 300 ms; the ratio printed is the export time over that
budget (below 1.00 meets it).
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

from conftest import CURVE_SCENARIOS, workbook_systems  # noqa: E402
from openpyxl import load_workbook  # noqa: E402

from costmodel.render.workbook.excel_formula import MAY_BE_EMPTY  # noqa: E402
from costmodel.render.workbook.export import build_workbook, save_workbook  # noqa: E402
from costmodel.render.workbook.recalc import recalculate, soffice  # noqa: E402

BUDGET = 0.300  # [s]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    systems, _ = workbook_systems(CURVE_SCENARIOS, matched=True)
    assert all(s.curve is not None for s in systems)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "three.xlsx"
        t_export = best_time(lambda: save_workbook(build_workbook(systems), path), args.repeat)
        cached = load_workbook(path, data_only=True)["Calculations"]
        formulas = sum(1 for row in load_workbook(path)["Calculations"].iter_rows()
                       for c in row if c.data_type == "f")
        # a step's cell is empty only where the engine has no value (MAY_BE_EMPTY)
        empty = sum(1 for row in cached.iter_rows(min_row=5, min_col=2, max_col=6)
                    if str(row[0].value).split(" = ")[0] not in MAY_BE_EMPTY
                    for c in row[2:] if c.value is None)
        print(f"export, 3 systems with curves  {t_export * 1e3:8.1f} ms  "
              f"({path.stat().st_size / 1024:.0f} kB; {formulas} step formulas, "
              f"{empty} without a cached value)")
        print(f"budget                          {BUDGET * 1e3:8.1f} ms  "
              f"ratio {t_export / BUDGET:.2f} ({'within' if t_export < BUDGET else 'OVER'})")
        if soffice() is None:
            print("LibreOffice recalculation       not installed")
            return
        t0 = time.perf_counter()
        recalculate(path, Path(tmp) / "out")
        t_lo = time.perf_counter() - t0
        print(f"LibreOffice recalculation       {t_lo * 1e3:8.1f} ms  (one run, same file)")
        print(f"export / LibreOffice            {t_export / t_lo:8.2f}x")


if __name__ == "__main__":
    main()
