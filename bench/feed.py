"""The spreadsheet feed (issue 41): what a refresh costs. ``GET /api/v1/feed.csv`` with the
12 published operating points and ``--saved`` saved scenarios, priced cold (a worker that
holds nothing: every row priced), warm (the table held: two small queries and the bytes) and
answered 304 (If-None-Match), each as a ratio to a cached ``POST /api/v1/price`` of one
published scenario measured beside it (median of ``--repeat`` runs each, the load average
printed: the machine is shared).

    python bench/feed.py [--saved 100] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEAK = ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_peak.toml"
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"


def median_seconds(run, repeat: int, inner: int = 1) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            run()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saved", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from costmodel.app import feed as feed_module
    from costmodel.app.services import Services
    from costmodel.server import create_app
    from costmodel.sources.catalog import fixtures_dir
    from costmodel.store.seed import prepare
    url = f"sqlite:///{tempfile.mkdtemp(prefix='costmodel-feed-')}/c.db"
    prepare(url, fixtures_dir())
    app = create_app({"DATABASE_URL": url, "OPEN_READS": True, "TESTING": True})
    client = app.test_client()
    from costmodel.app.keys import create_key
    _, token = create_key(app.extensions["costmodel"], "bench", "editor")  # writes need one
    base = tomllib.loads(SAMPLE.read_text())
    for i in range(args.saved):  # each its own numbers: each priced on its own
        r = client.post("/api/v1/scenarios", headers={"Authorization": f"Bearer {token}"},
                        json={"name": f"bench {i}",
                              "scenario": {**base, "utilisation": 0.3 + 0.5 * i / args.saved}})
        assert r.status_code == 201, r.get_json()
    peak = {"scenario": tomllib.loads(PEAK.read_text())}
    assert client.post("/api/v1/price", json=peak).status_code == 200

    def price() -> None:
        assert client.post("/api/v1/price", json=peak).status_code == 200

    def cold() -> None:  # a worker that holds nothing: a new Services, its caches empty
        services = Services(url)
        try:
            feed_module.feed(services)
        finally:
            services.dispose()

    def warm() -> None:
        assert client.get("/api/v1/feed.csv").status_code == 200

    tag = client.get("/api/v1/feed.csv").headers["ETag"]

    def not_modified() -> None:
        assert client.get("/api/v1/feed.csv", headers={"If-None-Match": tag}).status_code == 304

    baseline = median_seconds(price, args.repeat, inner=50)
    rows = [("cold (every row priced)", median_seconds(cold, args.repeat)),
            ("warm (the table held)", median_seconds(warm, args.repeat, inner=20)),
            ("304 (If-None-Match)", median_seconds(not_modified, args.repeat, inner=20))]
    print(f"load average {os.getloadavg()[0]:.2f} (1 min); {12 + args.saved} rows; "
          f"median of {args.repeat}")
    print(f"  cached POST /api/v1/price (baseline)   {baseline * 1e3:9.3f} ms   1.0x")
    for name, seconds in rows:
        print(f"  GET /api/v1/feed.csv, {name:24} {seconds * 1e3:9.3f} ms "
              f"{seconds / baseline:7.1f}x")


if __name__ == "__main__":
    main()
