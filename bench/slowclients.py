"""Slow clients: does the service still answer while 64 connections trickle a byte a second?

    python bench/slowclients.py [--connections 64]

gunicorn (2 workers x 4 threads, gthread, the app on a temporary SQLite database) is measured
alone, then behind nginx running deploy/nginx.conf (ports, user and pid/temp paths under a
temporary prefix; timeouts as deployed). In each phase N connections send a request a byte a
second, either its header (never finished) or, after a whole header declaring a
Content-Length, its body; meanwhile ``GET /healthz`` and ``POST /api/v1/price`` are asked in
turn, one started every 0.25 s (each on its own connection, not waiting for the others), each
given 5 s. The table gives how many of those normal requests were answered, their latency, and
how many trickled connections the server ended (closed, reset or answered) and when.

The trickles come from other loopback addresses than the normal requests (127.0.1.x: one
address each; or all from 127.0.0.2), as an attacker would, so that nginx's per-address limit
shows; everything connects to 127.0.0.1. Needs nginx (Debian package ``nginx-light``). Every
phase is bounded; the whole run takes about 70 s.
"""
from __future__ import annotations

import argparse
import http.client
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from cluster import free_port, sub_line
from cluster import nginx_config as deployed_nginx_config

ROOT = Path(__file__).resolve().parents[1]
NGINX = "/usr/sbin/nginx"
PRICE_BODY = (b'{"scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak", '
              b'"electricity": {"price": "0.1 USD/kWh"}, "power": {"boundary": "facility"}}}')
NORMAL_TIMEOUT = 5.0  # seconds a normal request is given
HEADER_TRICKLE = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: trickle\r\n"
                  b"X-Padding: " + b"a" * 4000)
BODY_TRICKLE_HEADER = (b"POST /api/v1/price HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n")


# ---- the servers (tests/http/test_slow_clients.py starts them the same way) ----------------------

def _wait_listening(proc: subprocess.Popen, port: int, log: Path, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    stop(proc)
    raise RuntimeError(f"{what} did not start: {log.read_text()[-800:]}")


def prepare_database(folder: Path) -> dict[str, str]:
    """A migrated and seeded SQLite database in ``folder``: the environment naming it."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder / 'costmodel.db'}",
           "COSTMODEL_OPEN_READS": "1", "COSTMODEL_RATE_LIMIT": "1000000/minute"}
    costmodel = str(Path(sys.executable).with_name("costmodel"))
    for step in ("upgrade", "seed"):
        subprocess.run([costmodel, "db", step], env=env, check=True, capture_output=True,
                       timeout=60)
    return env


def start_gunicorn(port: int, env: dict[str, str], log: Path, *, workers: int = 2,
                   threads: int = 4) -> subprocess.Popen:
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    with log.open("ab") as fh:  # a file: a pipe nobody reads would fill and stall the workers
        proc = subprocess.Popen([gunicorn, "costmodel.server:create_app()", "-b",
                                 f"127.0.0.1:{port}", "-w", str(workers), "-k", "gthread",
                                 "--threads", str(threads), "--log-level", "warning",
                                 "--no-control-socket"],
                                cwd=ROOT, env=env, stdout=fh, stderr=fh, start_new_session=True)
    _wait_listening(proc, port, log, "gunicorn")
    deadline = time.monotonic() + 30  # listening is the master; the workers boot the app
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if request(port, "GET", "/healthz", timeout=5) == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.2)
    stop(proc)
    raise RuntimeError(f"gunicorn did not answer /healthz: {log.read_text()[-800:]}")


def nginx_config(listen: int, upstream: int, *, header_timeout: str | None = None,
                 body_timeout: str | None = None) -> str:
    """deploy/nginx.conf listening on 127.0.0.1:``listen`` in front of gunicorn on
    127.0.0.1:``upstream`` (:func:`cluster.nginx_config`), runnable by this user; other
    timeouts when given (``"2s"``)."""
    text = deployed_nginx_config(listen, [f"127.0.0.1:{upstream}"])
    if header_timeout:
        text = sub_line(text, r"client_header_timeout 10s;",
                        f"client_header_timeout {header_timeout};")
    if body_timeout:
        text = sub_line(text, r"client_body_timeout 10s;", f"client_body_timeout {body_timeout};")
    return text


def start_nginx(folder: Path, config: str, port: int) -> subprocess.Popen:
    """nginx in the foreground with ``config``, its prefix (pid, temporary files) in
    ``folder``, its log in ``folder/nginx.log``."""
    folder.mkdir(parents=True, exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(config)
    log = folder / "nginx.log"
    with log.open("ab") as fh:
        proc = subprocess.Popen([NGINX, "-p", f"{folder}/", "-c", str(conf)], stdout=fh,
                                stderr=fh, stdin=subprocess.DEVNULL, start_new_session=True)
    _wait_listening(proc, port, log, "nginx")
    return proc


def stop(proc: subprocess.Popen) -> None:
    """Stop a server started above and everything it started (its process group)."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def request(port: int, method: str, path: str, body: bytes | None = None,
            timeout: float = NORMAL_TIMEOUT) -> int:
    """One request on a new connection: its status."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body,
                     headers={"Content-Type": "application/json"} if body else {})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


# ---- trickling clients -----------------------------------------------------------------------

@dataclass
class Ending:
    after: float | None  # seconds from the connection's opening; None: still open
    how: str             # "closed", "reset", or the status line's code of an answer


def trickle(port: int, kind: str, sources: list[str], seconds: float,
            interval: float = 1.0, spacing: float = 0.02) -> list[Ending]:
    """Open one connection from each source address, ``spacing`` apart (gunicorn's workers
    then each accept their share, as they would from clients arriving over time), and send a
    request a byte every ``interval`` (``kind`` "header": the header, never finished; "body":
    a whole header, then the body) for ``seconds``; how and when the server ended each
    connection."""
    if kind == "header":
        first, rest = HEADER_TRICKLE[:1], HEADER_TRICKLE[1:]
    else:
        first, rest = BODY_TRICKLE_HEADER + b"{", b" " * 100000
    sel = selectors.DefaultSelector()
    opened: dict[socket.socket, float] = {}
    endings: dict[socket.socket, Ending] = {}
    start = time.monotonic()
    end = start + seconds

    def ended(s: socket.socket, how: str) -> None:
        endings[s] = Ending(time.monotonic() - opened[s], how)
        sel.unregister(s)
        s.close()

    def poll(timeout: float) -> None:
        """Note every connection the server ended within ``timeout`` s."""
        for key, _ in sel.select(timeout):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                ended(s, "reset")
                continue
            ended(s, data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed")

    try:
        for source in sources:
            s = socket.socket()
            s.bind((source, 0))
            s.settimeout(2)
            opened[s] = time.monotonic()
            try:
                s.connect(("127.0.0.1", port))
            except OSError:  # refused, or not accepted within 2 s
                endings[s] = Ending(time.monotonic() - opened[s], "not connected")
                s.close()
                continue
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            try:
                s.send(first)
            except OSError:
                ended(s, "reset")
            poll(spacing)
        sent, next_byte = 0, time.monotonic() + interval
        while sel.get_map() and (now := time.monotonic()) < end:
            poll(max(0.0, min(next_byte, end) - now))
            if time.monotonic() >= next_byte:
                for key in list(sel.get_map().values()):
                    try:
                        key.fileobj.send(rest[sent:sent + 1])
                    except BlockingIOError:
                        pass
                    except OSError:
                        ended(key.fileobj, "reset")
                sent, next_byte = sent + 1, next_byte + interval
    finally:
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()
    return [endings.get(s, Ending(None, "open")) for s in opened]


def normal_requests(port: int, until: float, every: float = 0.25) -> list[tuple[int | None,
                                                                          float]]:
    """GET /healthz and POST /api/v1/price in turn, one started every ``every`` s whatever
    the others do (clients do not wait for each other), each given NORMAL_TIMEOUT, the last
    ending by ``until``: (status or None, seconds) each."""
    out: list[tuple[int | None, float]] = []
    calls = [("GET", "/healthz", None), ("POST", "/api/v1/price", PRICE_BODY)]

    def one(method: str, path: str, body: bytes | None) -> None:
        t0 = time.monotonic()
        try:
            status: int | None = request(port, method, path, body, NORMAL_TIMEOUT)
        except OSError:
            status = None
        out.append((status, time.monotonic() - t0))

    threads = []
    while time.monotonic() + NORMAL_TIMEOUT < until:
        threads.append(threading.Thread(target=one, args=calls[len(threads) % 2],
                                        daemon=True))
        threads[-1].start()
        time.sleep(every)
    for t in threads:
        t.join(NORMAL_TIMEOUT + 5)
    return out


def phase(port: int, kind: str, sources: list[str], seconds: float) -> dict:
    """N trickles for ``seconds``; normal requests from 1.5 s on (every trickle connected)."""
    box: dict[str, list[Ending]] = {}
    t = threading.Thread(target=lambda: box.update(e=trickle(port, kind, sources, seconds)),
                         daemon=True)
    start = time.monotonic()
    t.start()
    time.sleep(1.5)
    normal = normal_requests(port, start + seconds - 0.5)
    t.join(seconds + 10)
    return {"endings": box.get("e", []), "normal": normal, "seconds": seconds}


def wait_recovered(port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if request(port, "GET", "/healthz", timeout=2) == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("gunicorn did not recover after the trickles ended")


def row(setup: str, what: str, result: dict) -> str:
    normal = result["normal"]
    ok = [s for status, s in normal if status == 200]
    p50 = f"{statistics.median(ok) * 1000:.0f} ms" if ok else "-"
    worst = max((s for _, s in normal), default=0.0)
    unanswered = any(status != 200 for status, _ in normal)
    top = (f">{worst:.1f} s" if unanswered else
           f"{worst * 1000:.0f} ms" if worst < 1 else f"{worst:.1f} s")
    ends = [e for e in result["endings"] if e.after is not None]
    n = len(result["endings"])
    if not ends:
        ended = f"0/{n} in {result['seconds']:.0f} s"
    else:
        groups = {}
        for e in ends:
            groups.setdefault(e.how, []).append(e.after)
        ended = f"{len(ends)}/{n}: " + ", ".join(
            f"{len(v)} {k} at {min(v):.1f}-{max(v):.1f} s" for k, v in sorted(groups.items()))
    return (f"{setup:<16} {what:<26} {f'{len(ok)}/{len(normal)}':>8} {p50:>7} {top:>8}  "
            f"{ended}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=64)
    args = ap.parse_args()
    if not Path(NGINX).exists():
        sys.exit("nginx is not installed (apt-get install nginx-light)")
    n = args.connections
    if not 1 <= n <= 254:
        sys.exit("--connections: 1 to 254 (one loopback address each)")
    many = [f"127.0.1.{i + 1}" for i in range(n)]
    one = ["127.0.0.2"] * n

    def overtime(signum, frame):
        raise SystemExit("bench/slowclients.py ran over 100 s")  # not an OSError: not caught

    # a safety net (every phase below is bounded on its own): the servers are still stopped
    signal.signal(signal.SIGALRM, overtime)
    signal.alarm(100)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = prepare_database(folder)
        g_port, n_port = free_port(), free_port()
        gunicorn = start_gunicorn(g_port, env, folder / "gunicorn.log")
        nginx = None
        try:
            assert request(g_port, "POST", "/api/v1/price", PRICE_BODY, 30) == 200
            for kind in ("header", "body"):
                rows.append(row("gunicorn direct", f"{kind}, {n} addresses",
                                phase(g_port, kind, many, 12)))
                wait_recovered(g_port)
            nginx = start_nginx(folder / "nginx", nginx_config(n_port, g_port), n_port)
            assert request(n_port, "POST", "/api/v1/price", PRICE_BODY, 30) == 200
            rows.append(row("nginx->gunicorn", f"header, {n} addresses",
                            phase(n_port, "header", many, 14)))
            rows.append(row("nginx->gunicorn", f"body, {n} addresses",
                            phase(n_port, "body", many, 10)))
            rows.append(row("nginx->gunicorn", f"body, {n} from 127.0.0.2",
                            phase(n_port, "body", one, 9)))
        finally:
            if nginx is not None:
                stop(nginx)
            stop(gunicorn)
    signal.alarm(0)
    print(f"gunicorn -w 2 -k gthread --threads 4; nginx: deploy/nginx.conf (header and body "
          f"timeouts 10 s, limit_conn 32 per address); {os.cpu_count()} cores")
    print(f"{n} connections trickle 1 byte/s; meanwhile GET /healthz and POST /api/v1/price in "
          f"turn, one started every 0.25 s, each given {NORMAL_TIMEOUT:.0f} s")
    print(f"{'setup':<16} {'trickling connections':<26} {'answered':>8} {'p50':>7} {'max':>8}  "
          f"trickled connections ended by the server")
    for line in rows:
        print(line)


if __name__ == "__main__":
    main()
