"""Web pages: server time per page and bytes on first load (issue 13, Speed).

Goals: Price and Compare of one scenario p95 <= 100 ms; Compare of six systems with curves
p95 <= 300 ms; a page and its assets < 500 kB on first load. Each page is fetched through
Flask's test client (server time: routing, the application layer, rendering; no network) on a
fresh SQLite database seeded from fixtures/, after one warm-up request; p50 and p95 of
``--runs`` requests each. Distinct scenarios (``cold`` rows) change one typed input per request
so that nothing is answered from a cache.

    python bench/pages.py [--runs 60]
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_ONE_MS, GOAL_SIX_MS, GOAL_BYTES = 100.0, 300.0, 500_000
CURVES = ("fixture:curve-gpt-oss-120b-h100", "fixture:curve-gpt-oss-120b-b200",
          "fixture:curve-gpt-oss-120b-mi300x")
H100_CURVE = "curve:h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
B200_CURVE = "curve:b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
MI300X_CURVE = "curve:mi300x/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"


def seeded_app(folder: Path):
    from costmodel.server import create_app
    from costmodel.sources.catalog import fixtures_dir
    from costmodel.store.seed import prepare
    url = f"sqlite:///{folder / 'bench.db'}"
    prepare(url, fixtures_dir())
    return create_app({"DATABASE_URL": url, "OPEN_READS": True, "RATE_LIMIT": "off"})


def six_systems(i: int) -> str:
    """Six systems with curves (three fixture scenarios, three Price-page forms), matched."""
    forms = [urlencode({"accelerator": a, "system": "", "point": p, "interactivity": "60",
                        "utilisation": str(50 + (i + k) % 40)})
             for k, (a, p) in enumerate((("h100", H100_CURVE), ("b200", B200_CURVE),
                                         ("mi300x", MI300X_CURVE)))]
    return urlencode([("sys", s) for s in CURVES] + [("sys", "form:" + f) for f in forms]
                     + [("at", "matched")])


def timed(client, paths: list[str]) -> list[float]:
    """Server time of each request [ms]; every answer must be 200."""
    out = []
    for path in paths:
        t0 = time.perf_counter()
        resp = client.get(path)
        out.append((time.perf_counter() - t0) * 1000)
        if resp.status_code != 200:
            raise SystemExit(f"{path}: {resp.status_code}")
    return out


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def first_load_bytes(client, path: str) -> tuple[int, int]:
    """(bytes of the page, bytes of the page and every asset it links)."""
    page = client.get(path)
    total = len(page.data)
    for ref in set(re.findall(r'(?:href|src)="(/assets/[^"]+)"', page.get_data(as_text=True))):
        total += len(client.get(ref).data)
    return len(page.data), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    n = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        app = seeded_app(Path(tmp))
        client = app.test_client()
        cases = {
            "price, one scenario (same URL)": ["/"] * n,
            "price, one scenario (cold: new input each time)":
                [f"/?utilisation={40 + i % 60}&accelerator_price={30000 + i}" for i in range(n)],
            "compare, one scenario (two systems, own point)":
                [f"/compare?sys=fixture:sample-tco&sys=fixture:curve-gpt-oss-120b-h100&at=own"
                 f"&n={i}" for i in range(n)],
            "compare, three curves, matched": ["/compare?" + urlencode(
                [("sys", s) for s in CURVES] + [("at", "matched")])] * n,
            "compare, six systems with curves (cold)": [f"/compare?{six_systems(i)}"
                                                        for i in range(n)],
            "sensitivity (20,000 draws)": ["/sensitivity"] * max(n // 4, 2),
        }
        goals = {"price, one scenario (same URL)": GOAL_ONE_MS,
                 "price, one scenario (cold: new input each time)": GOAL_ONE_MS,
                 "compare, one scenario (two systems, own point)": GOAL_ONE_MS,
                 "compare, three curves, matched": GOAL_ONE_MS,
                 "compare, six systems with curves (cold)": GOAL_SIX_MS}
        print(f"server time per page, {n} requests each after a warm-up (Flask test client)")
        print(f"{'page':52} {'p50 ms':>8} {'p95 ms':>8} {'goal ms':>8} {'p95/goal':>9}")
        for name, paths in cases.items():
            timed(client, paths[:1])  # warm-up: imports, catalog and curve snapshots
            times = timed(client, paths)
            goal = goals.get(name)
            ratio = f"{p95(times) / goal:9.2f}" if goal else f"{'-':>9}"
            print(f"{name:52} {statistics.median(times):8.1f} {p95(times):8.1f} "
                  f"{goal or '-':>8} {ratio}")
        print()
        print(f"{'first load (page + its assets)':52} {'page kB':>8} {'total kB':>8} "
              f"{'goal kB':>8} {'total/goal':>9}")
        for path in ("/", "/compare", "/compare?" + six_systems(0), "/sensitivity"):
            page, total = first_load_bytes(client, path)
            shown = path if len(path) < 50 else path[:47] + "..."
            print(f"{shown:52} {page / 1000:8.1f} {total / 1000:8.1f} {GOAL_BYTES / 1000:8.0f} "
                  f"{total / GOAL_BYTES:9.2f}")
        app.extensions["costmodel"].dispose()


if __name__ == "__main__":
    main()
