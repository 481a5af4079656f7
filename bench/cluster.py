"""Several costmodel hosts on one machine, as deployed: each host a gunicorn master of its own
(deploy/gunicorn.conf.py) on its own loopback address (127.0.0.2, 127.0.0.3, ...), all on one
PostgreSQL database and one Redis, with nginx (deploy/nginx.conf, one ``server`` line a host in
its upstream) in front of them.

PostgreSQL and Redis are the harness's own: a cluster made with ``initdb`` in a temporary folder
and a ``redis-server`` that keeps nothing on disk, each on a free loopback port, so that a test
may stop and restart them under load without touching the machine's shared servers. Every
address is a loopback one; every wait is bounded.

Used by tests/http/test_hosts.py (the short version, in CI) and bench/hosts.py (the capacity
figures and the long fault runs). Needs nginx (``nginx-light``), PostgreSQL's server binaries
(``postgresql``) and ``redis-server``.
"""
from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NGINX = "/usr/sbin/nginx"
GUNICORN_CONFIG = ROOT / "deploy" / "gunicorn.conf.py"
NGINX_CONFIG = ROOT / "deploy" / "nginx.conf"
SECRET = "cluster-test-secret-" + "0" * 44  # one COSTMODEL_SECRET_KEY for every host
BIN = Path(sys.executable).parent


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server binaries (initdb, pg_ctl, postgres), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def missing() -> list[str]:
    """What this machine lacks to run a cluster (empty: nothing)."""
    out = []
    if not Path(NGINX).exists():
        out.append("nginx (nginx-light)")
    if postgres_bin() is None:
        out.append("PostgreSQL's server binaries (postgresql)")
    if shutil.which("redis-server") is None:
        out.append("redis-server (redis-server)")
    return out


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def wait_for(what: str, check, seconds: float = 30.0, log: Path | None = None) -> None:
    """Poll ``check()`` every 0.1 s until it is true; a RuntimeError after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            if check():
                return
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-1500:] if log is not None and log.exists() else ""
    raise RuntimeError(f"{what} did not come up within {seconds:.0f} s\n{tail}")


def listening(address: str, port: int) -> bool:
    with socket.create_connection((address, port), timeout=0.2):
        return True


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 15) -> None:
    """Signal a server's whole process group (a gunicorn master and its workers)."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


# ---- PostgreSQL --------------------------------------------------------------------------------

class OwnPostgres:
    """A PostgreSQL cluster in ``folder``, listening on 127.0.0.1:``port`` only. As root, its
    files and processes belong to the ``postgres`` user (the server refuses to run as root)."""

    def __init__(self, max_connections: int = 200):
        self.bin = postgres_bin()
        if self.bin is None:
            raise RuntimeError("PostgreSQL's server binaries are not installed")
        # a folder of its own (a test's temporary folder is root's alone, and the server's
        # user must reach its files); removed by remove()
        self.folder = Path(tempfile.mkdtemp(prefix="costmodel-pg-"))
        self.data = self.folder / "pgdata"
        self.port = free_port()
        self.log = self.folder / "postgres.log"
        self.max_connections = max_connections
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8", "--locale", "C")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/costmodel"

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self._as, str(self.bin / tool), *args], capture_output=True,
                              text=True, timeout=120, cwd=self.folder)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-1500:] if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-1500:]}"
                               f"{done.stdout[-500:]}\n{log}")

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def start(self) -> None:
        # pg_ctl returns once the server accepts connections (-w), or fails after 60 s
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                  "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 "
                        f"-c unix_socket_directories={self.folder} "
                        f"-c max_connections={self.max_connections} -c fsync=on", "start")

    def stop(self) -> None:
        """A fast shutdown: open transactions are rolled back, connections are closed."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def create_database(self) -> None:
        from sqlalchemy import create_engine, text
        engine = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres",
                               isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text('CREATE DATABASE "costmodel"'))
        engine.dispose()


# ---- Redis -------------------------------------------------------------------------------------

class OwnRedis:
    """A redis-server on 127.0.0.1:``port`` that keeps nothing on disk."""

    def __init__(self, folder: Path):
        self.folder, self.port = folder, free_port()
        self.log = folder / "redis.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", str(self.folder)],
                stdout=fh, stderr=fh, stdin=subprocess.DEVNULL, start_new_session=True)
        wait_for("redis-server", lambda: listening("127.0.0.1", self.port), log=self.log)

    def stop(self) -> None:
        if self.proc is not None:
            kill_group(self.proc, signal.SIGKILL)  # as a crash would: nothing kept
            self.proc = None

    def client(self):
        import redis
        return redis.Redis.from_url(self.url, socket_timeout=2)


# ---- the hosts ---------------------------------------------------------------------------------

@dataclass
class Host:
    """One service host: a gunicorn master (deploy/gunicorn.conf.py) and its workers."""
    address: str
    port: int
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://{self.address}:{self.port}"

    def start(self) -> None:
        env = {**self.env, "COSTMODEL_BIND": f"{self.address}:{self.port}"}
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [str(BIN / "gunicorn"), "-c", str(GUNICORN_CONFIG)], cwd=ROOT, env=env,
                stdout=fh, stderr=fh, stdin=subprocess.DEVNULL, start_new_session=True)
        wait_for(f"host {self.address}", self._healthy, seconds=60, log=self.log)

    def _healthy(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError(f"host {self.address} exited: "
                               f"{self.log.read_text(errors='replace')[-1500:]}")
        import urllib.request
        with urllib.request.urlopen(self.base + "/healthz", timeout=5) as r:
            return r.status == 200

    def kill(self) -> None:
        """kill -9 of the master and every worker at once (a host lost)."""
        if self.proc is not None:
            kill_group(self.proc, signal.SIGKILL)

    def stop(self) -> None:
        if self.proc is not None:
            kill_group(self.proc)


def sub_line(text: str, pattern: str, replacement: str) -> str:
    """``text`` with the one line of deploy/nginx.conf matching ``pattern`` replaced (a
    ValueError when there is not exactly one: the file changed under the substitution)."""
    new, n = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    if n != 1:
        raise ValueError(f"deploy/nginx.conf: expected one line matching {pattern!r}, "
                         f"found {n}")
    return new


def nginx_config(listen: int, upstreams: list[str]) -> str:
    """deploy/nginx.conf listening on 127.0.0.1:``listen``, its upstream block naming every
    host (``address:port``), runnable by this user: as root the workers run as root (the
    temporary prefix is not www-data's); otherwise the directive is dropped."""
    text = sub_line(NGINX_CONFIG.read_text(), r"^user www-data;.*$",
                    "user root;" if os.geteuid() == 0 else "")
    text = sub_line(text, r"listen 8080;", f"listen 127.0.0.1:{listen};")
    return sub_line(text, r"^(\s*)server 127\.0\.0\.1:8000(.*)$",
                    "\n".join(rf"\g<1>server {u}\g<2>" for u in upstreams))


@dataclass
class Cluster:
    """PostgreSQL, Redis, ``hosts`` service hosts and nginx in ``folder``."""
    folder: Path
    hosts_count: int = 3
    workers: int = 2
    threads: int = 4
    extra_env: dict[str, str] = field(default_factory=dict)
    postgres: OwnPostgres | None = None
    redis: OwnRedis | None = None
    hosts: list[Host] = field(default_factory=list)
    nginx: subprocess.Popen | None = None
    nginx_port: int = 0
    env: dict[str, str] = field(default_factory=dict)
    # the hosts reach PostgreSQL through a proxy that can stop forwarding (bench/freezer.py):
    # a database that accepts and never answers
    freezable: bool = False
    freezer: Any = None

    def start(self) -> Cluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.postgres = OwnPostgres()
        self.postgres.start()
        self.postgres.create_database()
        self.redis = OwnRedis(self.folder)
        self.redis.start()
        url = self.postgres.url
        if self.freezable:
            from freezer import Freezer
            self.freezer = Freezer("127.0.0.1", self.postgres.port).start()
            url = url.replace(f":{self.postgres.port}/", f":{self.freezer.port}/")
        self.env = {**os.environ, "DATABASE_URL": url,
                    "REDIS_URL": self.redis.url, "COSTMODEL_SECRET_KEY": SECRET,
                    "COSTMODEL_OPEN_READS": "0", "WEB_CONCURRENCY": str(self.workers),
                    "GUNICORN_THREADS": str(self.threads), **self.extra_env}
        for step in ("upgrade", "seed"):
            subprocess.run([str(BIN / "costmodel"), "db", step], env=self.env, check=True,
                           capture_output=True, timeout=120)
        port = self._common_port()
        self.hosts = [Host(f"127.0.0.{i + 2}", port, self.env, self.folder / f"host{i + 2}.log")
                      for i in range(self.hosts_count)]
        for host in self.hosts:
            host.start()
        self.start_nginx()
        return self

    def _common_port(self) -> int:
        """A port free on every host's address (as on separate machines: one port)."""
        for _ in range(50):
            port = free_port("127.0.0.2")
            try:
                for i in range(self.hosts_count):
                    with socket.socket() as s:
                        s.bind((f"127.0.0.{i + 2}", port))
                return port
            except OSError:
                continue
        raise RuntimeError("no port free on every host address")

    def start_nginx(self, hosts: list[Host] | None = None) -> None:
        """nginx in front of ``hosts`` (default: every host); one at a time."""
        if self.nginx is not None:
            kill_group(self.nginx)
        self.nginx_port = free_port()
        prefix = self.folder / "nginx"
        prefix.mkdir(exist_ok=True)
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_config(self.nginx_port, [f"{h.address}:{h.port}"
                                                       for h in (hosts or self.hosts)]))
        log = prefix / "nginx.log"
        with log.open("ab") as fh:
            self.nginx = subprocess.Popen([NGINX, "-p", f"{prefix}/", "-c", str(conf)],
                                          stdout=fh, stderr=fh, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
        wait_for("nginx", lambda: listening("127.0.0.1", self.nginx_port), log=log)

    @property
    def front(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}"

    @property
    def nginx_log(self) -> Path:
        """nginx's log: its access lines and its error log (warnings and worse) together."""
        return self.folder / "nginx" / "nginx.log"

    def nginx_errors(self, since: int = 0) -> list[str]:
        """The lines of nginx's error log written after byte ``since`` of its log (an upstream
        that failed, was marked down, or none left), its access lines left out."""
        log = self.nginx_log
        if not log.exists():
            return []
        with log.open("rb") as fh:
            fh.seek(since)
            text = fh.read().decode(errors="replace")
        return [line for line in text.splitlines()
                if re.search(r"\[(warn|error|crit|alert|emerg)\]", line)]

    def key(self, role: str = "admin", name: str = "cluster") -> str:
        """A new API key's token, made by the operator's command."""
        out = subprocess.run([str(BIN / "costmodel"), "keys", "create", "--name", name,
                              "--role", role], env=self.env, check=True, capture_output=True,
                             text=True, timeout=60).stdout
        return out.strip().rsplit(" ", 1)[-1]

    def stop(self) -> None:
        if self.nginx is not None:
            kill_group(self.nginx)
        for host in self.hosts:
            host.stop()
        if self.redis is not None:
            self.redis.stop()
        if self.freezer is not None:
            self.freezer.stop()
        if self.postgres is not None:
            with contextlib.suppress(subprocess.SubprocessError, OSError, RuntimeError):
                self.postgres.stop()
            self.postgres.remove()

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


# ---- a mixed load ------------------------------------------------------------------------------

GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


@dataclass
class Outcome:
    at: float       # [s] since the load began
    kind: str       # "save", "price", "read"
    status: int     # 0: no answer (the connection failed or timed out)
    problem: str    # the problem type's last word, when a problem
    name: str = ""  # a save's scenario name
    scenario_id: int | None = None  # a save's acknowledged id (201)


def mixed_load(base: str, token: str, seconds: float, clients: int = 6,
               prefix: str = "load", timeout: float = 20.0, events=()) -> list[Outcome]:
    """``clients`` threads through ``base`` for ``seconds``: each in turn saves a scenario
    (a new name every time), prices an inline scenario (a new electricity price every time:
    never a cached answer) and reads a scenario it saved. ``events`` is a list of
    (second, callable) run from the calling thread at those times (a host killed, a
    database stopped). Every request is bounded by ``timeout``; an answer not received is
    status 0."""
    import threading

    import httpx
    outcomes: list[Outcome] = []
    lock = threading.Lock()
    start = time.monotonic()
    stop = threading.Event()

    def client(n: int) -> None:
        saved: list[int] = []
        i = 0
        with httpx.Client(base_url=base, timeout=timeout,
                          headers={"Authorization": f"Bearer {token}"}) as http:
            while not stop.is_set():
                step = i % 3
                name = f"{prefix}-{n}-{i}"
                try:
                    if step == 0:
                        r = http.post("/api/v1/scenarios",
                                      json={"name": name, "scenario": {**GB300, "name": name}})
                        kind = "save"
                    elif step == 1:
                        price = 0.05 + (n * 100_003 + i) % 99_991 / 1e6
                        r = http.post("/api/v1/price?view=summary", json={"scenario": {
                            **GB300, "electricity": {"price": f"{price:.6f} USD/kWh"}}})
                        kind = "price"
                    else:
                        r = http.get(f"/api/v1/scenarios/{saved[-1]}") if saved else \
                            http.get("/api/v1/accelerators/gb300")
                        kind = "read"
                    status = r.status_code
                    problem = r.json().get("type", "").rsplit("/", 1)[-1] \
                        if r.headers.get("content-type", "").startswith(
                            "application/problem+json") else ""
                    sid = r.json()["scenario_id"] if kind == "save" and status == 201 else None
                    if sid is not None:
                        saved.append(sid)
                except (httpx.HTTPError, ValueError, KeyError):
                    status, problem, sid = 0, "", None
                with lock:
                    outcomes.append(Outcome(time.monotonic() - start, kind, status, problem,
                                            name if kind == "save" else "", sid))
                i += 1

    threads = [threading.Thread(target=client, args=(n,), daemon=True)
               for n in range(clients)]
    for t in threads:
        t.start()
    for at, action in sorted(events, key=lambda e: e[0]):
        time.sleep(max(0.0, at - (time.monotonic() - start)))
        action()
    time.sleep(max(0.0, seconds - (time.monotonic() - start)))
    stop.set()
    for t in threads:
        t.join(timeout + 5)
    return sorted(outcomes, key=lambda o: o.at)


def saved_names(url: str, prefix: str) -> dict[str, int]:
    """How many scenarios of each name starting with ``prefix`` the database holds."""
    from sqlalchemy import create_engine, text
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT name, count(*) FROM scenarios WHERE name LIKE :p "
                                 "GROUP BY name"), {"p": prefix + "-%"}).all()
    engine.dispose()
    return {name: count for name, count in rows}


def logged_failures(cluster: Cluster, limit: int = 6000) -> str:
    """The hosts' logged errors with their traces (the end of them), for a failure message."""
    out = []
    for host in cluster.hosts:
        if host.log.exists():
            text = host.log.read_text(errors="replace")
            start = text.find("unexpected error")
            if start >= 0:
                out.append(f"--- {host.address}\n{text[start:start + limit // 3]}")
    return "\n".join(out)[-limit:]
