"""Load benchmark: gunicorn serving the pricing API beside a bare Flask app answering a JSON
echo, same gunicorn settings, same machine, same load generator (wrk), alternating in one
run. Prints each throughput (the median of ``--rounds`` alternating rounds) and its ratio to
the echo's, with the machine's load average before and after the runs.

    python bench/load.py [--seconds 5] [--rounds 5] [--connections 16] [--workers 2]

Runs of ``POST /api/v1/price``: ``repeated`` sends one body again and again (answered from the
result cache); ``varied`` and ``varied, summary`` send a different electricity price every
request (every answer computed; the second with ``?view=summary``: goal >= 60% of the echo's
requests a second). ``batch`` sends ``POST /api/v1/price/batch`` with 10,000 rows of
electricity price and utilisation (one of four bodies in turn, none cached) and counts
scenarios a second end to end over HTTP (goal >= 190,000). ``columns, Arrow`` sends the same
batch as columns, 1,000,000 rows an Arrow IPC stream answered as one (goal >= 1,000,000
scenarios a second end to end), and ``columns, JSON`` as a JSON body of columns answered as
JSON (no goal: JSON's numbers are text to write and read). ``metrics off`` runs the varied
summary against a third server, the same service with ``COSTMODEL_METRICS=off``, in the same
rounds: the ratio on/off is what the figures of ``/metrics`` cost (the service as deployed
counts in prometheus_client's multiprocess mode, ``PROMETHEUS_MULTIPROC_DIR``; goal: at most
5 % slower).
Needs wrk (Debian package ``wrk``). Traffic stays on 127.0.0.1; every run is bounded.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from cluster import free_port

ROOT = Path(__file__).resolve().parents[1]
BODY = ('{"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak", '
        '"electricity": {"price": "%s USD/kWh"}, "power": {"boundary": "facility"}}}')
LUA_FIXED = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '%s'
"""
BATCH_ROWS = 10_000
LUA_BATCH = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
bodies = {}
for i = 1, %d do
  local f = io.open("%s" .. i .. ".json", "rb")
  bodies[i] = f:read("*all")
  f:close()
end
counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, bodies[counter %% #bodies + 1])
end
"""
LUA_VARIED = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
counter = 0
request = function()
  counter = counter + 1
  local price = string.format("0.%%06d", (counter * 7919 + math.random(0, 999999)) %% 1000000)
  return wrk.format(nil, nil, nil, string.format('%s', price))
end
"""


def start(app: str, port: int, env: dict, workers: int, threads: int,
          log: Path) -> subprocess.Popen:
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    # the log goes to a file: a pipe nobody reads would fill and stall the workers
    with log.open("ab") as fh:
        proc = subprocess.Popen([gunicorn, app, "-b", f"127.0.0.1:{port}", "-w",
                                 str(workers), "-k", "gthread", "--threads", str(threads),
                                 "--log-level", "warning"], cwd=ROOT, env=env,
                                stdout=fh, stderr=fh, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{app} did not start: {log.read_text()[-800:]}")


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def wrk(url: str, script: str, seconds: int, connections: int, folder: Path) -> float:
    lua = folder / "script.lua"
    lua.write_text(script)
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", str(lua),
                          url], capture_output=True, text=True, timeout=seconds + 30).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"{errors.group(1)} error responses from {url}:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def batch_bodies(folder: Path, count: int = 4) -> str:
    """``count`` batch bodies of BATCH_ROWS rows, each row its own electricity price and
    utilisation, written as ``batch<i>.json``; the files' common prefix."""
    rng = random.Random(7)
    for i in range(1, count + 1):
        rows = [{"electricity.price": f"{rng.uniform(0.02, 0.2):.6f} USD/kWh",
                 "utilisation": round(rng.uniform(0.3, 1.0), 6)} for _ in range(BATCH_ROWS)]
        body = {"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
                             "power": {"boundary": "facility"}},
                "overrides": rows, "outputs": ["cost_per_mtok_total", "cost_per_mtok.energy"]}
        (folder / f"batch{i}.json").write_text(json.dumps(body))
    return str(folder / "batch")


COLUMN_ROWS = 1_000_000
ARROW = "application/vnd.apache.arrow.stream"
LUA_COLUMNS = """wrk.method = "POST"
wrk.headers["Content-Type"] = "%s"
local f = io.open("%s", "rb")
wrk.body = f:read("*all")
f:close()
"""


def column_bodies(folder: Path) -> tuple[Path, Path]:
    """The columnar batch of COLUMN_ROWS rows (electricity price and utilisation, as the row
    form's batch) as an Arrow IPC stream and as a JSON body: their files."""
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(7)
    prices = rng.uniform(0.02, 0.2, COLUMN_ROWS).round(6)
    util = rng.uniform(0.3, 1.0, COLUMN_ROWS).round(6)
    request = {"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
                            "power": {"boundary": "facility"}},
               "outputs": ["cost_per_mtok_total", "cost_per_mtok.energy"]}
    schema = pa.schema([pa.field("electricity.price", pa.float64(),
                                 metadata={"unit": "USD/kWh"}),
                        pa.field("utilisation", pa.float64())],
                       metadata={"costmodel": json.dumps(request)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        writer.write_table(pa.Table.from_arrays([pa.array(prices), pa.array(util)],
                                                schema=schema))
    arrow = folder / "columns.arrow"
    arrow.write_bytes(sink.getvalue().to_pybytes())
    body = folder / "columns.json"
    body.write_text(json.dumps({**request, "columns": {
        "electricity.price": {"unit": "USD/kWh", "values": prices.tolist()},
        "utilisation": {"values": util.tolist()}}}))
    return arrow, body


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--batch-connections", type=int, default=4)
    # a columnar batch of a million rows holds a heavy slot (2 a worker): one a core
    ap.add_argument("--column-connections", type=int, default=2)
    ap.add_argument("--column-seconds", type=int, default=10)
    ap.add_argument("--only", default=None,
                    help="comma-separated runs to measure (echo,repeated,varied,summary,batch,"
                         "arrow,json); the echo always")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (apt-get install wrk)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = f"sqlite:///{folder / 'bench.db'}"
        # the rate limiter counts every request (its cost is measured) but never refuses one
        env = {**os.environ, "DATABASE_URL": db, "COSTMODEL_OPEN_READS": "1",
               "COSTMODEL_RATE_LIMIT": "1000000000/minute",
               "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")])}
        subprocess.run([str(Path(sys.executable).with_name("costmodel")), "db", "upgrade"],
                       env=env, check=True, capture_output=True)
        subprocess.run([str(Path(sys.executable).with_name("costmodel")), "db", "seed"],
                       env=env, check=True, capture_output=True)
        echo_port, price_port, off_port = free_port(), free_port(), free_port()
        echo = start("echo_app:create_app()", echo_port, env, args.workers, args.threads,
                     folder / "echo.log")
        # the workers' counts in files, summed by /metrics: as deploy/gunicorn.conf.py runs it
        (folder / "metrics").mkdir()
        service = start("costmodel.server:create_app()", price_port,
                        {**env, "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics")},
                        args.workers, args.threads, folder / "service.log")
        off = start("costmodel.server:create_app()", off_port,
                    {**env, "COSTMODEL_METRICS": "off"}, args.workers, args.threads,
                    folder / "off.log")
        try:
            for port in (price_port, off_port):  # each worker's first answer waits for imports
                req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/price",
                                             data=(BODY % "0.1").encode(),
                                             headers={"Content-Type": "application/json"})
                assert b"cost_per_mtok" in urllib.request.urlopen(req, timeout=120).read()
            body = (BODY % "0.1").encode()
            req = urllib.request.Request(f"http://127.0.0.1:{price_port}/api/v1/price",
                                         data=body, headers={"Content-Type": "application/json"})
            # the first answer waits for a worker to import the app and read the catalog and
            # curves: seconds on a loaded two-core machine, so its timeout is generous
            assert b"cost_per_mtok" in urllib.request.urlopen(req, timeout=120).read()
            price_url = f"http://127.0.0.1:{price_port}/api/v1/price"
            prefix = batch_bodies(folder)
            with open(prefix + "1.json", "rb") as fh:
                req = urllib.request.Request(price_url + "/batch", data=fh.read(),
                                             headers={"Content-Type": "application/json"})
            answer = json.loads(urllib.request.urlopen(req, timeout=60).read())
            assert answer["priced"] == BATCH_ROWS, answer["errors"][:3]
            arrow, columns_json = column_bodies(folder)
            for path, kind in ((arrow, ARROW), (columns_json, "application/json")):
                req = urllib.request.Request(price_url + "/batch?format=json",
                                             data=path.read_bytes(),
                                             headers={"Content-Type": kind})
                answer = json.loads(urllib.request.urlopen(req, timeout=120).read())
                assert answer["priced"] == COLUMN_ROWS, answer["errors"][:3]
            wanted = set(args.only.split(",")) if args.only else None
            runs: dict[str, list[float]] = {k: [] for k in (
                "echo", "repeated", "varied", "summary", "off", "batch", "arrow", "json")}
            # the servers idle while the other is measured; alternating the runs and keeping
            # the median of each spreads the noise of a shared machine over all of them alike
            load_before = os.getloadavg()
            measures = {
                "echo": lambda: wrk(f"http://127.0.0.1:{echo_port}/echo",
                                    LUA_FIXED % (BODY % "0.1"), args.seconds,
                                    args.connections, folder),
                "repeated": lambda: wrk(price_url, LUA_FIXED % (BODY % "0.1"), args.seconds,
                                        args.connections, folder),
                "varied": lambda: wrk(price_url, LUA_VARIED % (BODY % "%s"), args.seconds,
                                      args.connections, folder),
                "summary": lambda: wrk(price_url + "?view=summary",
                                       LUA_VARIED % (BODY % "%s"), args.seconds,
                                       args.connections, folder),
                "off": lambda: wrk(f"http://127.0.0.1:{off_port}/api/v1/price?view=summary",
                                   LUA_VARIED % (BODY % "%s"), args.seconds,
                                   args.connections, folder),
                "batch": lambda: BATCH_ROWS * wrk(
                    price_url + "/batch", LUA_BATCH % (4, prefix), args.seconds,
                    args.batch_connections, folder),
                # a columnar batch answered in its own format: Arrow, and JSON
                "arrow": lambda: COLUMN_ROWS * wrk(
                    price_url + "/batch", LUA_COLUMNS % (ARROW, arrow), args.column_seconds,
                    args.column_connections, folder),
                "json": lambda: COLUMN_ROWS * wrk(
                    price_url + "/batch", LUA_COLUMNS % ("application/json", columns_json),
                    args.column_seconds, args.column_connections, folder),
            }
            for _ in range(args.rounds):
                for name, measure in measures.items():
                    if wanted is None or name == "echo" or name in wanted:
                        runs[name].append(measure())
            # the figures counted what was sent (a bench that measured nothing would be cheap)
            text = urllib.request.urlopen(f"http://127.0.0.1:{price_port}/metrics",
                                          timeout=30).read().decode()
            assert 'route="/api/v1/price"' in text, text[:500]
        finally:
            stop(off)
            stop(service)
            stop(echo)
        load_after = os.getloadavg()
        best = {k: statistics.median(v) if v else math.nan for k, v in runs.items()}
    baseline = best["echo"]
    print(f"gunicorn -w {args.workers} -k gthread --threads {args.threads}; wrk -t2 "
          f"-c{args.connections} (batch -c{args.batch_connections}) -d{args.seconds}s, median of "
          f"{args.rounds} alternating rounds; {os.cpu_count()} cores; load average (1 min) "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"bare Flask JSON echo                  {baseline:10.0f} req/s  (baseline, same run)")
    print(f"POST /api/v1/price repeated           {best['repeated']:10.0f} req/s  "
          f"{best['repeated'] / baseline:6.0%} of echo")
    print(f"POST /api/v1/price varied             {best['varied']:10.0f} req/s  "
          f"{best['varied'] / baseline:6.0%} of echo")
    print(f"POST /api/v1/price varied, summary    {best['summary']:10.0f} req/s  "
          f"{best['summary'] / baseline:6.0%} of echo (goal >= 60%)")
    print(f"POST /api/v1/price/batch, {BATCH_ROWS:,} rows {best['batch']:10.0f} scenarios/s "
          f"(goal >= 190,000)")
    print(f"varied, summary, COSTMODEL_METRICS=off {best['off']:10.0f} req/s  "
          f"{best['off'] / baseline:6.0%} of echo")
    print(f"metrics cost: varied summary with metrics / without = "
          f"{best['summary'] / best['off']:.3f} (goal >= 0.95); rounds, on/off: "
          + ", ".join(f"{a / b:.3f}" for a, b in zip(runs["summary"], runs["off"],
                                                       strict=False)))
    print(f"POST /api/v1/price/batch, columns, Arrow, {COLUMN_ROWS:,} rows {best['arrow']:10.0f} "
          f"scenarios/s (goal >= 1,000,000; {best['arrow'] / 1e6:.2f}x the goal; "
          f"{best['arrow'] / best['batch']:.1f}x the row form)")
    print(f"POST /api/v1/price/batch, columns, JSON, {COLUMN_ROWS:,} rows  {best['json']:10.0f} "
          f"scenarios/s ({best['json'] / best['batch']:.1f}x the row form)")


if __name__ == "__main__":
    main()
