"""Pressure: does the service keep answering its ordinary requests while attackers send it
the most expensive requests they can? gunicorn (4 workers x 4 threads, as the hardening
issue's report) on a temporary SQLite database, the default limits (600 requests a minute a
key, 2 heavy analyses at once a worker), and two attacks of ``--seconds`` each:

(a) 16 clients, each signed in with the attackers' viewer key as a browser signs in, upload
    a 400-quote file (about 73 KB, with the buyer's demand) to the Quotes page
    (``POST /quotes``, multipart with the session's CSRF token), again and again;
(b) 8 clients ``POST /api/v1/price`` a scenario whose ``electricity`` section holds 150,000
    unknown keys (about 1.6 MiB).

Meanwhile a probe sends ``GET /healthz`` and an ordinary ``POST /api/v1/price`` (its own key)
every 0.5 s. Printed per run and attack: each probe's p50/p95/max latency and its failures
(5 s timeout, or not 200), the attackers' statuses, and the load average. Goal: probes' p95
under 1 s.

    python bench/pressure.py [--runs 3] [--seconds 30] [--rate off]

To measure another commit, put its tree first on the path:
``git archive <commit> | tar -x -C /tmp/old; PYTHONPATH=/tmp/old python bench/pressure.py``.
Traffic stays on 127.0.0.1; every request has a timeout and the script stops by itself.
"""
from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

from load import free_port, start, stop

COSTMODEL = str(Path(sys.executable).with_name("costmodel"))
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
SCENARIO = "fixture:curve-gpt-oss-120b-h100"  # our own build, read off a curve
PROBE_EVERY = 0.5  # [s]
PROBE_TIMEOUT = 5.0  # [s] as the report's health checks
ATTACK_TIMEOUT = 60.0  # [s] an attacker's request; it gives up after that


def quote_file(count: int) -> bytes:
    """A TOML quote file of ``count`` varied offers (capacity and per-token) and the buyer's
    demand: about 180 bytes an offer (the report's 400-quote file: 86 KB)."""
    lines = ['[demand]\nvolume = "50000 Mtok/month"\npeak = "30000 token/s"\n'
             'interactivity = "100 token/s/user"\n']
    for i in range(count):
        if i % 2:
            lines.append(f'[[quote]]\nname = "cap-{i}"\nvendor = "V{i}"\ndate = "2026-11-20"\n'
                         f'form = "per_accelerator_hour"\nhourly_price = "{1.5 + i % 97 / 40:.3f}'
                         f' USD/h"\naccelerators = {8 * (1 + i % 16)}\nterm = "12 month"\n'
                         f'hardware = "h100"\n')
        else:
            lines.append(f'[[quote]]\nname = "api-{i}"\nvendor = "V{i}"\ndate = "2026-11-20"\n'
                         f'form = "per_mtok"\nprice_input = "{0.2 + i % 89 / 100:.3f} USD/Mtok"'
                         f'\nprice_output = "{1 + i % 83 / 40:.3f} USD/Mtok"\nterm = "12 month"'
                         f'\ncommitment = "{10000 * (1 + i % 50)} USD"\n')
    return "\n".join(lines).encode()


def unknown_keys_body(count: int = 150_000) -> bytes:
    """A price request whose ``electricity`` section holds ``count`` unknown keys."""
    keys = ",".join(f'"x{i:05x}":1' for i in range(count))
    head = json.dumps({"scenario": GB300})[:-2]  # '{"scenario": {...' without '}}'
    return f'{head}, "electricity": {{{keys}}}}}}}'.encode()


def multipart(fields: dict[str, str], name: str, filename: str, content: bytes
              ) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
             .encode() for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                 f'filename="{filename}"\r\nContent-Type: application/toml\r\n\r\n'.encode()
                 + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), \
        f"multipart/form-data; boundary={boundary}"


class Browser:
    """A cookie jar and the session's CSRF token, signed in (or not) as a browser is."""

    def __init__(self, base: str, key: str | None = None):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.csrf = self._token("/signin" if key else "/quotes")
        if key:
            form = urllib.parse.urlencode({"api_key": key, "csrf_token": self.csrf,
                                           "next": "/quotes"}).encode()
            self.opener.open(f"{base}/signin", data=form, timeout=30).read()  # 303 -> /quotes
            self.csrf = self._token("/quotes")

    def _token(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as r:
            return re.search(r'name="csrf_token" value="([^"]+)"', r.read().decode()).group(1)

    def upload(self, content: bytes, filename: str = "offers.toml",
               timeout: float = ATTACK_TIMEOUT) -> tuple[int, bytes]:
        body, kind = multipart({"csrf_token": self.csrf, "scenario": SCENARIO},
                               "quote_file", filename, content)
        return self.send("/quotes", body, kind, timeout)

    def send(self, path: str, body: bytes | None = None, kind: str | None = None,
             timeout: float = ATTACK_TIMEOUT) -> tuple[int, bytes]:
        req = urllib.request.Request(self.base + path, data=body,
                                     headers={"Content-Type": kind} if kind else {})
        try:
            with self.opener.open(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


def _call(url: str, body: bytes | None, token: str | None, timeout: float
          ) -> tuple[int | str, float]:
    """(status or the failure's name, seconds)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers),
                                    timeout=timeout) as r:
            r.read()
            status: int | str = r.status
    except urllib.error.HTTPError as exc:
        exc.read()
        status = exc.code
    except (OSError, TimeoutError) as exc:
        status = type(exc).__name__
    return status, time.perf_counter() - t0


def attack(base: str, seconds: float, clients: int, send) -> tuple[dict, Counter]:
    """``clients`` threads calling ``send()`` -> status until ``seconds`` pass, with the
    probes every 0.5 s: ({probe: [(status, seconds)]}, the attackers' statuses)."""
    stop_at = time.monotonic() + seconds
    statuses: Counter = Counter()
    lock = threading.Lock()

    def attacker() -> None:
        while time.monotonic() < stop_at:
            try:
                status = send()
            except (OSError, TimeoutError) as exc:
                status = type(exc).__name__
            with lock:
                statuses[status] += 1
    threads = [threading.Thread(target=attacker, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    probes: dict[str, list] = {"healthz": [], "price": []}
    price = json.dumps({"scenario": GB300}).encode()
    while time.monotonic() < stop_at:
        tick = time.monotonic()
        probes["healthz"].append(_call(f"{base}/healthz", None, None, PROBE_TIMEOUT))
        probes["price"].append(_call(f"{base}/api/v1/price", price, PROBE_TOKEN[0],
                                     PROBE_TIMEOUT))
        time.sleep(max(0.0, PROBE_EVERY - (time.monotonic() - tick)))
    for t in threads:
        t.join(ATTACK_TIMEOUT + 5)  # each finishes (or times out) its request in flight
    return probes, statuses


PROBE_TOKEN: list[str | None] = [None]


def _key(env: dict, name: str) -> str:
    out = subprocess.run([COSTMODEL, "keys", "create", "--name", name, "--role", "viewer"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return out.strip().rsplit(" ", 1)[-1]


def summary(samples: list[tuple[int | str, float]]) -> tuple[float, float, float, int]:
    """(p50, p95, max [s], failures) of a probe's samples; a failure counts at its time."""
    times = sorted(t for _, t in samples)
    fails = sum(1 for s, _ in samples if s != 200)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return statistics.median(times), p95, times[-1], fails


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--quotes", type=int, default=400)
    ap.add_argument("--attacks", default="ab", help="which to run: a, b or ab")
    ap.add_argument("--rate", default=None,
                    help="COSTMODEL_RATE_LIMIT for the service (default: the deployed rule; "
                         "'off' shows what the work itself costs, no rate to hide behind)")
    args = ap.parse_args()
    upload = quote_file(args.quotes)
    flood = unknown_keys_body()
    table: dict[str, list[tuple]] = {"a": [], "b": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # one session secret for every worker, as deployed: a browser's session holds on each
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder / 'pressure.db'}",
               "COSTMODEL_SECRET_KEY": uuid.uuid4().hex}
        env.pop("COSTMODEL_RATE_LIMIT", None)  # the default rule, as deployed
        if args.rate is not None:
            env["COSTMODEL_RATE_LIMIT"] = args.rate
        for cmd in (["db", "upgrade"], ["db", "seed"]):
            subprocess.run([COSTMODEL, *cmd], env=env, check=True, capture_output=True)
        attackers, PROBE_TOKEN[0] = _key(env, "attackers"), _key(env, "probe")
        port = free_port()
        proc = start("costmodel.server:create_app()", port, env, 4, 4, folder / "server.log")
        base = f"http://127.0.0.1:{port}"
        print(f"gunicorn -w 4 -k gthread --threads 4; {os.cpu_count()} cores; upload "
              f"{args.quotes} quotes ({len(upload) / 1000:.0f} KB); unknown-keys body "
              f"{len(flood) / 2**20:.2f} MiB; {args.seconds:g} s an attack; probes every "
              f"{PROBE_EVERY} s, timeout {PROBE_TIMEOUT:g} s; rate limit "
              f"{env.get('COSTMODEL_RATE_LIMIT') or 'the default (600/minute)'}")
        try:
            local = threading.local()

            def upload_once() -> int:
                if not hasattr(local, "browser"):
                    local.browser = Browser(base, attackers)
                return local.browser.upload(upload)[0]

            def flood_once() -> int | str:
                return _call(f"{base}/api/v1/price", flood, attackers, ATTACK_TIMEOUT)[0]
            for run in range(args.runs):
                for name, clients, send in (("a", 16, upload_once), ("b", 8, flood_once)):
                    if name not in args.attacks:
                        continue
                    probes, statuses = attack(base, args.seconds, clients, send)
                    load = os.getloadavg()[0]
                    row = (*summary(probes["healthz"]), *summary(probes["price"]), load,
                           dict(statuses))
                    table[name].append(row)
                    print(f"run {run + 1} ({name}) healthz p50 {row[0]:.3f} p95 {row[1]:.3f} "
                          f"max {row[2]:.3f} s, {row[3]} failed of {len(probes['healthz'])};"
                          f" price p50 {row[4]:.3f} p95 {row[5]:.3f} max {row[6]:.3f} s, "
                          f"{row[7]} failed; load {load:.2f}; attackers {dict(statuses)}",
                          flush=True)
                    time.sleep(3)  # the requests in flight drain
        finally:
            stop(proc)
    for name, what in (("a", f"16 x {args.quotes}-quote uploads to /quotes"),
                       ("b", "8 x 150,000 unknown keys to /api/v1/price")):
        rows = table[name]
        if not rows:
            continue
        med = [statistics.median(r[i] for r in rows) for i in range(8)]
        print(f"median of {len(rows)} ({what}): healthz p50 {med[0]:.3f} p95 {med[1]:.3f} "
              f"max {med[2]:.3f} s, failed {med[3]:g}; price p50 {med[4]:.3f} p95 "
              f"{med[5]:.3f} max {med[6]:.3f} s, failed {med[7]:g}; load "
              f"{statistics.median(r[8] for r in rows):.2f} (goal: p95 < 1 s)")


if __name__ == "__main__":
    main()
