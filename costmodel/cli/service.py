"""The service: ``db`` (migrations, fixtures), ``keys`` (API keys) and ``serve``, each through
the application layer (:mod:`costmodel.app.database`, :mod:`costmodel.app.keys`)."""
from __future__ import annotations

import click

from .. import __version__
from .common import fail, service_database

__all__ = ["db", "keys", "serve"]


@click.group()
def db() -> None:
    """The database: migrations and fixtures (DATABASE_URL, default sqlite:///costmodel.db)."""


@db.command("upgrade")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def db_upgrade(url: str | None) -> None:
    """Apply the schema migrations (Alembic) up to the latest."""
    from ..app.database import database_url, upgrade
    upgrade(url)
    click.echo(f"database at {_redact(database_url(url))} is up to date")


@db.command("seed")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def db_seed(url: str | None) -> None:
    """Load fixtures/ (catalog and curves) into the database; existing entries stay."""
    from ..app.database import seed
    from ..sources.catalog import fixtures_dir
    added = seed(url, fixtures_dir())
    click.echo("seeded: " + ", ".join(f"{n} {kind}" for kind, n in added.items()))


def _redact(url: str) -> str:
    """A database URL without its password, for messages."""
    from sqlalchemy.engine import make_url
    return make_url(url).render_as_string(hide_password=True)


@click.group()
def keys() -> None:
    """API keys (roles: viewer, editor, admin). Only hashes are stored."""


@keys.command("create")
@click.option("--name", required=True, help="Who or what the key is for.")
@click.option("--role", type=click.Choice(["viewer", "editor", "admin"]), required=True)
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_create(name: str, role: str, url: str | None) -> None:
    """Create a key and print its token (shown once)."""
    from ..app.keys import create_key
    with service_database(url) as services:
        row, token = create_key(services, name, role)
    click.echo(f"key {row.id} ({name}, {role}): {token}")


@keys.command("list")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_list(url: str | None) -> None:
    """List keys (never their secrets)."""
    from ..app.keys import list_keys
    with service_database(url) as services:
        rows = list_keys(services)
    for row in rows:
        state = f"revoked {row.revoked_at:%Y-%m-%d}" if row.revoked_at else "active"
        click.echo(f"{row.id:4d}  {row.role:7s}  {state:18s}  {row.name}")


@keys.command("revoke")
@click.argument("key_id", type=int)
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
def keys_revoke(key_id: int, url: str | None) -> None:
    """Revoke a key by its number."""
    from ..app.keys import NotFound, revoke_key
    with service_database(url) as services:
        try:
            revoke_key(services, key_id)
        except NotFound as exc:
            fail(str(exc))
    click.echo(f"key {key_id} revoked")


def _is_loopback(host: str) -> bool:
    """Whether every address ``host`` resolves to is a loopback address (127.0.0.0/8, ::1).

    Decided on the resolved addresses, never on the name's spelling: ``localhost.invalid``
    or ``127.example.com`` may resolve anywhere, and ``::10`` is not ``::1``.
    """
    import ipaddress
    import socket
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        return False  # gunicorn will fail to bind it anyway
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def _cannot_listen(host: str, port: int) -> tuple[str, str] | None:
    """Why gunicorn could not listen on ``host:port``: the option at fault (``--host`` or
    ``--port``) and the reason in words, or None if it can.

    Bound as gunicorn binds (SO_REUSEADDR: a port left in TIME_WAIT is free, one another
    server listens on is not), then released for gunicorn.
    """
    import errno
    import socket
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((address, port))
    except (socket.gaierror, UnicodeError):
        return "--host", f"--host: cannot resolve {host!r}"
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return "--port", "taken by another server"
        if exc.errno == errno.EACCES:
            return "--port", "not allowed to this user (ports below 1024 need root)"
        if exc.errno == errno.EADDRNOTAVAIL:
            return "--host", f"--host: {host} is not an address of this machine"
        return "--port", exc.strerror or str(exc)
    return None


def _next_free_port(host: str, port: int) -> int | None:
    """The first port after ``port`` that ``host`` can listen on (of the next 20)."""
    return next((p for p in range(port + 1, min(port + 21, 65536))
                 if _cannot_listen(host, p) is None), None)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
@click.option("--no-seed", is_flag=True, help="Do not load fixtures/ into the database.")
@click.option("--workers", default=1, show_default=True, type=int, help="gunicorn workers.")
@click.option("--threads", default=4, show_default=True, type=int, help="Threads a worker.")
def serve(host: str, port: int, url: str | None, no_seed: bool, workers: int,
          threads: int) -> None:
    """Run the pricing service for local use (for production: docs/operations.md#deployment).

    Migrates and seeds the database first. On a loopback address reads (price, compare,
    catalog) answer without a key; writes always need one.
    """
    from ..app.database import database_url, prepare
    from ..server import create_app, open_reads_from_env
    from ..sources.catalog import fixtures_dir
    # before anything is migrated: bad input changes nothing
    refused = _cannot_listen(host, port)
    if refused is not None and refused[0] == "--host":
        fail(refused[1])
    if refused is not None:
        why = refused[1]
        free = _next_free_port(host, max(port, 1023)) or "N"
        fail(f"--port: {host}:{port} is {why}; choose another port with --port {free} "
             f"(make run PORT={free})")
    url = database_url(url)
    prepare(url, None if no_seed else fixtures_dir())
    # the workers' counts in one folder, summed by /metrics (set before the app is made:
    # prometheus_client reads it when first imported)
    metrics_folder = _metrics_folder()
    loopback = _is_loopback(host)
    app = create_app({"DATABASE_URL": url,
                      "OPEN_READS": loopback or open_reads_from_env()})
    click.echo(f"costmodel {__version__} serving on http://{host}:{port} "
               f"(database {_redact(url)})")
    click.echo(f"  web pages: http://{host}:{port}/ (Price, Compare, Task, Plan, Quotes, "
               f"Chargeback, Saved, Sensitivity)")
    click.echo(f"  API docs: http://{host}:{port}/api/v1/docs")
    if app.config["OPEN_READS"]:
        click.echo("  reads (price, compare, catalog, scenarios) answer without a key"
                   + (" on this loopback address" if loopback else "")
                   + "; writes need a key: costmodel keys create --name me --role editor")
    else:
        click.echo("  every request needs a key: costmodel keys create --name me --role viewer")
    click.echo(f"  limits: {app.extensions['costmodel.limits'].describe()}")
    if app.config["METRICS"]:
        click.echo(f"  metrics: http://{host}:{port}"
                   f"{app.extensions['costmodel.metrics'].describe()}")
    app.extensions["costmodel"].dispose()  # no connection crosses gunicorn's fork
    try:
        _gunicorn(app, host, port, workers=workers, threads=threads)
    finally:
        if metrics_folder is not None:
            import shutil
            shutil.rmtree(metrics_folder, ignore_errors=True)


def _metrics_folder() -> str | None:
    """PROMETHEUS_MULTIPROC_DIR for this run's workers (the folder made here, to remove at
    the end; None when it was given, or the metrics are off)."""
    import os

    from ..server import metrics
    if not metrics.enabled_from_env():
        return None
    folder, made = metrics.prepare_folder(os.environ)
    return folder if made else None


def _gunicorn(app, host: str, port: int, *, workers: int, threads: int) -> None:
    """Run ``app`` under gunicorn in this process (the production server, not Flask's)."""
    from gunicorn.app.base import BaseApplication

    from ..server import metrics

    def child_exit(server, worker) -> None:  # its live gauges leave the sums
        metrics.worker_exited(worker.pid)

    class _Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            self.cfg.set("accesslog", "-")
            # the request's id (X-Request-ID, answered on every request) on its line
            self.cfg.set("access_log_format", '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s '
                                              '"%(f)s" "%(a)s" %({x-request-id}o)s')
            self.cfg.set("child_exit", child_exit)

        def load(self):
            return app

    _Server().run()
