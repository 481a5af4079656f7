"""Several hosts: requests a second across 1, 2 and 3 service hosts behind nginx, as ratios to
one host, then the fault runs of tests/http/test_hosts.py, longer.

    python bench/hosts.py [--seconds 5] [--rounds 5] [--connections 16] [--workers 2]
                          [--fault-seconds 20] [--no-faults]

bench/cluster.py starts PostgreSQL and Redis of its own and three hosts (each gunicorn with
deploy/gunicorn.conf.py, ``--workers`` x 4 threads, on 127.0.0.2-4), and nginx
(deploy/nginx.conf) in front of 1, 2, then 3 of them. wrk (Debian package ``wrk``) measures
through nginx, each run ``--seconds`` long, the configurations alternating round by round:

- ``POST /api/v1/price?view=summary``, a different electricity price every request (every
  answer computed: bench/load.py's "varied, summary");
- ``POST /api/v1/price/batch`` with 10,000 rows (one of four bodies in turn), counted in rows
  (scenarios) a second.

The table gives the median of ``--rounds`` runs and its ratio to one host, with the load
average before the runs. Every host shares the machine: on 2 cores, three hosts of 2 workers
cannot be faster than one host using both cores, and the ratios show what nginx and the shared
database and Redis cost, not what more machines would add (README "Several hosts").

Then, unless ``--no-faults``: a host killed (kill -9) under a mixed load through nginx,
PostgreSQL stopped then started, Redis killed then started, each over ``--fault-seconds``,
with counts of every answer and of the acknowledged saves found afterwards. Traffic stays on
loopback; every run is bounded.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from cluster import Cluster, mixed_load, saved_names
from load import BATCH_ROWS, BODY, LUA_BATCH, LUA_VARIED, batch_bodies, wrk

RATE = "1000000000/minute"  # counted (its cost is measured), never refusing


def capacity(cluster: Cluster, args, folder: Path) -> list[tuple[int, float, float]]:
    """(hosts, median varied summary req/s, median batch rows/s) for 1, 2, 3 hosts."""
    token = cluster.key("viewer", "bench")
    auth = f'wrk.headers["Authorization"] = "Bearer {token}"\n'
    prefix = batch_bodies(folder)
    runs: dict[int, tuple[list[float], list[float]]] = {n: ([], []) for n in (1, 2, 3)}
    for _ in range(args.rounds):
        for n in (1, 2, 3):
            cluster.start_nginx(cluster.hosts[:n])
            url = cluster.front + "/api/v1/price"
            runs[n][0].append(wrk(url + "?view=summary", auth + LUA_VARIED % (BODY % "%s"),
                                  args.seconds, args.connections, folder))
            runs[n][1].append(BATCH_ROWS * wrk(url + "/batch", auth + LUA_BATCH % (4, prefix),
                                               args.seconds, args.batch_connections, folder))
    return [(n, statistics.median(v), statistics.median(b)) for n, (v, b) in runs.items()]


def faults(cluster: Cluster, seconds: float) -> None:
    cluster.start_nginx()
    token = cluster.key("editor", "faults")
    third = seconds / 3
    for what, events in (
            ("host 127.0.0.4 killed (kill -9)", [(third, cluster.hosts[2].kill)]),
            ("PostgreSQL stopped, then started", [(third, cluster.postgres.stop),
                                                  (2 * third, cluster.postgres.start)]),
            ("Redis killed, then started", [(third, cluster.redis.stop),
                                            (2 * third, cluster.redis.start)])):
        prefix = f"bench-{what.split()[0].lower()}"
        outcomes = mixed_load(cluster.front, token, seconds, clients=8, prefix=prefix,
                              events=events)
        counts: dict[str, dict[int, int]] = {}
        for o in outcomes:
            counts.setdefault(o.kind, {}).setdefault(o.status, 0)
            counts[o.kind][o.status] += 1
        acked = [o.name for o in outcomes if o.kind == "save" and o.status == 201]
        stored = saved_names(cluster.postgres.url, prefix)
        present = sum(1 for name in acked if stored.get(name) == 1)
        twice = sum(1 for c in stored.values() if c > 1)
        print(f"{what}: " + "; ".join(
            f"{kind} " + ", ".join(f"{s or 'no answer'} x{c}" for s, c in sorted(v.items()))
            for kind, v in sorted(counts.items())))
        print(f"    acknowledged saves {len(acked)}, present {present}, "
              f"missing {len(acked) - present}, stored twice {twice}")
        if cluster.hosts[2].proc is not None and cluster.hosts[2].proc.poll() is not None:
            cluster.hosts[2].start()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--batch-connections", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fault-seconds", type=float, default=20.0)
    ap.add_argument("--no-faults", action="store_true")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (apt-get install wrk)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with Cluster(folder / "cluster", hosts_count=3, workers=args.workers,
                     extra_env={"COSTMODEL_RATE_LIMIT": RATE}) as cluster:
            load = os.getloadavg()
            table = capacity(cluster, args, folder)
            print(f"3 hosts x gunicorn -w {args.workers} --threads 4 (deploy/gunicorn.conf.py) "
                  f"on 127.0.0.2-4, one PostgreSQL, one Redis, nginx in front; wrk -t2 "
                  f"-c{args.connections} (batch -c{args.batch_connections}) -d{args.seconds}s; "
                  f"median of {args.rounds} alternating rounds; {os.cpu_count()} cores; load "
                  f"average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after "
                  f"{os.getloadavg()[0]:.2f}")
            one_v, one_b = table[0][1], table[0][2]
            print("hosts   varied summary req/s  ratio   batch rows/s  ratio")
            for n, v, b in table:
                print(f"{n:5d}   {v:20.0f}  {v / one_v:5.2f}   {b:12.0f}  {b / one_b:5.2f}")
            if not args.no_faults:
                faults(cluster, args.fault_seconds)


if __name__ == "__main__":
    main()
