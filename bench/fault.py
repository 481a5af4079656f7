"""Fault test: ``kill -9`` of the whole service (gunicorn master and workers) in the middle of
a load of revision saves, then a restart, on SQLite and on PostgreSQL.

    python bench/fault.py [--seconds 4] [--clients 16] [--rounds 3]

Every save the service acknowledged (201 with its scenario id) must be present after the
restart, with its revision, content hash and name as acknowledged; the database must be
consistent: SQLite's ``PRAGMA integrity_check`` says ok, every scenario's latest revision
exists and no revision is an orphan. Prints one line a backend and round and exits non-zero
on any loss. PostgreSQL is used when one answers on 127.0.0.1:5432 (trust auth) or at
``TEST_DATABASE_URL``. Traffic stays on 127.0.0.1; every run is bounded.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from load import free_port, start

COSTMODEL = str(Path(sys.executable).with_name("costmodel"))
SCENARIO = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


def _postgres() -> tuple[str, str] | None:
    """(admin URL, a fresh database's URL), or None when no PostgreSQL answers."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    admin = make_url(os.environ.get("TEST_DATABASE_URL",
                                    "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    if admin.drivername == "postgresql":
        admin = admin.set(drivername="postgresql+psycopg")
    name = f"costmodel_fault_{uuid.uuid4().hex[:8]}"
    try:
        engine = create_engine(admin, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
    except Exception as exc:  # any failure: no PostgreSQL to test here
        print(f"postgresql: skipped ({type(exc).__name__})")
        return None
    return (admin.render_as_string(hide_password=False),
            admin.set(database=name).render_as_string(hide_password=False))


def _drop(admin_url: str, url: str) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    engine.dispose()


def _key(env: dict) -> str:
    out = subprocess.run([COSTMODEL, "keys", "create", "--name", "fault", "--role", "editor"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return out.strip().rsplit(" ", 1)[-1]


def _load(port: int, token: str, clients: int, acked: dict, stop: threading.Event) -> None:
    """Clients saving scenarios until ``stop``; acknowledged saves go into ``acked``."""
    def client(n: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"fault-{n}-{i}"
            body = json.dumps({"name": name, "scenario": {**SCENARIO, "name": name}}).encode()
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/v1/scenarios", data=body,
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 201:
                        out = json.loads(r.read())
                        acked[out["scenario_id"]] = (name, out["content_hash"])
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                pass  # the server died under us: not acknowledged, nothing owed
            i += 1
    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    for t in threads:
        t.start()
    stop.wait()
    for t in threads:
        t.join(10)


def _check(url: str, acked: dict) -> tuple[int, int, str]:
    """(present, missing, consistency verdict) after the restart, read from the database."""
    from sqlalchemy import create_engine, text
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = {r[0]: (r[1], r[2]) for r in conn.execute(text(
            "SELECT s.id, s.name, r.content_hash FROM scenarios s JOIN "
            "scenario_revisions r ON r.scenario_id = s.id AND r.number = 1"))}
        orphans = conn.execute(text(
            "SELECT count(*) FROM scenario_revisions r LEFT JOIN scenarios s "
            "ON s.id = r.scenario_id WHERE s.id IS NULL")).scalar()
        no_latest = conn.execute(text(
            "SELECT count(*) FROM scenarios s LEFT JOIN scenario_revisions r "
            "ON r.scenario_id = s.id AND r.number = s.latest_revision "
            "WHERE r.scenario_id IS NULL")).scalar()
        verdict = f"orphans {orphans}, without latest revision {no_latest}"
        if engine.url.get_backend_name() == "sqlite":
            verdict += f", integrity_check {conn.execute(text('PRAGMA integrity_check')).scalar()}"
    engine.dispose()
    present = sum(1 for sid, want in acked.items() if rows.get(sid) == want)
    return present, len(acked) - present, verdict


def run(backend: str, url: str, folder: Path, args, round_no: int) -> bool:
    env = {**os.environ, "DATABASE_URL": url, "COSTMODEL_RATE_LIMIT": "1000000000/minute"}
    subprocess.run([COSTMODEL, "db", "upgrade"], env=env, check=True, capture_output=True)
    subprocess.run([COSTMODEL, "db", "seed"], env=env, check=True, capture_output=True)
    token = _key(env)
    port = free_port()
    proc = start("costmodel.server:create_app()", port, env, args.workers, args.threads,
                 folder / f"{backend}.log")
    acked: dict = {}
    stop = threading.Event()
    loader = threading.Thread(target=_load, args=(port, token, args.clients, acked, stop))
    loader.start()
    deadline = time.monotonic() + 60
    while len(acked) < args.min_acked and time.monotonic() < deadline:
        time.sleep(0.05)  # the load is running: the kill falls in its middle, not its start
    time.sleep(args.seconds)
    os.killpg(proc.pid, signal.SIGKILL)  # master and workers, mid-load
    proc.wait(10)
    stop.set()
    loader.join(30)
    # restart on the same database, as an operator would, and read back through the API too
    proc = start("costmodel.server:create_app()", port, env, args.workers, args.threads,
                 folder / f"{backend}.log")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as r:
            healthy = r.status == 200
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    present, missing, verdict = _check(url, acked)
    ok = (missing == 0 and len(acked) >= args.min_acked and healthy
          and "orphans 0" in verdict and "latest revision 0" in verdict
          and ("integrity_check" not in verdict or verdict.endswith("ok")))
    print(f"{backend:10s} round {round_no}: acknowledged {len(acked):5d}, present {present:5d}, "
          f"missing {missing}; {verdict}; restarted healthy {healthy}  "
          f"{'OK' if ok else 'FAILED'}")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0, help="load before the kill")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--min-acked", type=int, default=20,
                    help="acknowledged saves before the kill timer starts")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(1, args.rounds + 1):
            ok &= run("sqlite", f"sqlite:///{folder / f'fault-{i}.db'}", folder, args, i)
            pg = _postgres()
            if pg is not None:
                try:
                    ok &= run("postgresql", pg[1], folder, args, i)
                finally:
                    _drop(*pg)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
