"""What the figures of /metrics cost a request, in process: the varied summary price (a new
electricity price every request, so every answer is computed) through the WSGI app, with the
metrics on (prometheus_client in its multiprocess mode, counts in files, as deployed) and off
(``COSTMODEL_METRICS=off``), in alternating blocks; CPU time of this process a request, the
median of ``--rounds`` blocks each, and the ratio off/on (goal: the metrics cost at most 5 %).

    python bench/metrics.py [--rounds 5] [--requests 400]

CPU time, not wall time: on a loaded machine it moves less with the other work. bench/load.py
measures the same under gunicorn and wrk (its "metrics off" row), where the load of a shared
machine moves each run's throughput by more than this difference.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BODY = ('{"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak", '
        '"electricity": {"price": "%s USD/kWh"}, "power": {"boundary": "facility"}}}')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=400)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # before prometheus_client is imported: the workers' mode, counts in files
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(Path(tmp) / "metrics")
        (Path(tmp) / "metrics").mkdir()
        sys.path.insert(0, str(ROOT))
        from costmodel.app import events
        from costmodel.app.database import prepare
        from costmodel.server import create_app
        from costmodel.sources.catalog import fixtures_dir
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        prepare(url, fixtures_dir())
        base = {"DATABASE_URL": url, "OPEN_READS": True, "RATE_LIMIT": "1000000000/minute"}
        off = create_app({**base, "METRICS": False})
        on = create_app({**base, "METRICS": True})  # listens to the app layer's events
        listener = events._listener
        counter = [0]

        def block(application, listening) -> float:
            events.listen(listening)  # the off app: nobody listens, as in its own process
            client = application.test_client()
            start = time.process_time()
            for _ in range(args.requests):
                counter[0] += 1
                price = f"0.{(counter[0] * 7919) % 1000000:06d}"
                r = client.post("/api/v1/price?view=summary", data=BODY % price,
                                content_type="application/json")
                assert r.status_code == 200, r.data[:200]
            return (time.process_time() - start) / args.requests
        block(on, listener), block(off, None)  # warm: imports, catalog, curves
        runs: dict[str, list[float]] = {"on": [], "off": []}
        load = os.getloadavg()
        for _ in range(args.rounds):
            runs["off"].append(block(off, None))
            runs["on"].append(block(on, listener))
        events.listen(listener)
        # the figures' own work a request, alone (less noisy than the difference of two
        # whole requests): the answer counted and timed, the cache's event, in files
        from costmodel.http.metrics import figures
        figs = figures()
        hooks = []
        for _ in range(args.rounds):
            start = time.process_time()
            for _ in range(20_000):
                figs.answered("/api/v1/price", "POST", 200, 0.003)
                figs.event("price_cache", 1.0, "miss")
            hooks.append((time.process_time() - start) / 20_000)
        text = on.test_client().get("/metrics").data.decode()
        assert 'route="/api/v1/price"' in text  # the figures counted what was sent
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"in process, {args.requests} varied summary prices a block, median of "
          f"{args.rounds} alternating blocks; {os.cpu_count()} cores; load average (1 min) "
          f"{load[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"metrics off   {med['off'] * 1e6:8.1f} us CPU a request")
    print(f"metrics on    {med['on'] * 1e6:8.1f} us CPU a request  "
          f"(+{(med['on'] - med['off']) * 1e6:.1f} us)")
    alone = statistics.median(hooks)
    print(f"the figures' own work {alone * 1e6:8.1f} us CPU a request (counter, histogram, "
          f"cache event; 20,000 in a loop) = {alone / med['off']:.1%} of a request without "
          f"them")
    print(f"throughput with metrics / without = {med['off'] / med['on']:.3f} (goal >= 0.95); "
          f"blocks, off/on: " + ", ".join(f"{a / b:.3f}" for a, b in
                                          zip(runs["off"], runs["on"], strict=True)))


if __name__ == "__main__":
    main()
