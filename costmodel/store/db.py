"""Engines, sessions and migrations."""
from __future__ import annotations

import math
import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["DEFAULT_URL", "database_url", "make_engine", "make_sessions", "upgrade",
           "pool_settings", "POOL_ENV", "TIMEOUT_ENV"]

DEFAULT_URL = "sqlite:///costmodel.db"


def database_url(url: str | None = None) -> str:
    """The given URL, else ``$DATABASE_URL``, else a SQLite file in the working folder.

    ``postgresql://`` URLs use the psycopg (3) driver.
    """
    url = url or os.environ.get("DATABASE_URL") or DEFAULT_URL
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str | None = None, *, write: bool = True,
                deadlines: bool = True) -> Engine:
    """An engine for ``url``. On SQLite a ``write`` engine takes the write lock when a
    transaction begins (two writers never deadlock upgrading read locks); a read engine
    begins deferred, so reads run beside the writer (WAL). Elsewhere both are the same, and
    every wait for the server is bounded (``deadlines``; migrations, which may run long on a
    large table, go without: :mod:`costmodel.store.deadline`)."""
    url = database_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection, _record):  # pragma: no cover - driver hook
            # let SQLAlchemy, not pysqlite, begin transactions; WAL lets readers run
            # beside the one writer; foreign keys are off by default in SQLite
            dbapi_connection.isolation_level = None
            cur = dbapi_connection.cursor()
            if ":memory:" not in url:
                cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn):  # pragma: no cover - driver hook
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
        return engine
    settings = pool_settings()
    statement_timeout = settings.pop("statement_timeout")
    statement_timeout = statement_timeout if deadlines else 0.0
    engine = create_engine(url, **settings)
    if url.startswith("postgresql+psycopg"):
        from . import deadline

        @event.listens_for(engine, "do_connect")
        def _connect(_dialect, _record, cargs, cparams):  # pragma: no cover - driver hook
            return deadline.connect(cargs, cparams, statement_timeout=statement_timeout)
    return engine


# PostgreSQL connections a worker may hold, and how long a request waits for one. Each worker
# (a gunicorn process) has its own pool: a host holds at most workers x (size + overflow)
# connections, and the database's max_connections must exceed that summed over every host
# (docs/operations.md#several-hosts). The defaults fit gunicorn's 4 threads a worker: a thread never
# waits for a connection another thread holds unless a fifth request runs at once.
POOL_ENV = {"pool_size": ("COSTMODEL_DB_POOL_SIZE", 4),
            "max_overflow": ("COSTMODEL_DB_MAX_OVERFLOW", 2),
            "pool_timeout": ("COSTMODEL_DB_POOL_TIMEOUT", 10)}  # [s], then a 503
# How long the server may take, then a 503 (docs/operations.md; costmodel.store.deadline):
# to accept a connection, and to answer one statement (a server that answers nothing at all
# is given GRACE seconds more)
TIMEOUT_ENV = {"connect_timeout": ("COSTMODEL_DB_CONNECT_TIMEOUT", 5),  # [s]
               "statement_timeout": ("COSTMODEL_DB_STATEMENT_TIMEOUT", 10)}  # [s], 0: none
CONNECT_TIMEOUT = TIMEOUT_ENV["connect_timeout"][1]


def pool_settings() -> dict:
    """``create_engine``'s pool arguments for a server database, from the environment: a
    bounded pool, each connection checked before use (a database back from a restart is used
    again at once: no restart of the service), a bounded wait to connect, and
    ``statement_timeout`` [s] (not an engine argument: :func:`make_engine` takes it out)."""
    settings: dict = {"pool_pre_ping": True}
    for name, (env, default) in POOL_ENV.items():
        raw = os.environ.get(env, "").strip()
        value = int(raw) if raw.isdigit() else default if not raw else -1
        if value < 0 or (name == "pool_size" and value < 1):
            raise ValueError(f"{env}={raw}: expected a whole number "
                             f"{'of at least 1' if name == 'pool_size' else '>= 0'}")
        settings[name] = value
    for name, (env, default) in TIMEOUT_ENV.items():
        raw = os.environ.get(env, "").strip()
        try:
            value = float(raw) if raw else default
        except ValueError:
            value = -1
        least = 1 if name == "connect_timeout" else 0  # 0 would mean no bound at all
        if not value >= least or value == float("inf"):
            raise ValueError(f"{env}={raw}: expected a number of seconds >= {least}")
        settings[name] = value
    # libpq takes whole seconds (2 at least); a fraction is rounded up, never to none
    settings["connect_args"] = {"connect_timeout": max(2, math.ceil(settings.pop(
        "connect_timeout")))}
    return settings


def make_sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Apply the Alembic migrations to ``url`` (see ``costmodel db upgrade``)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", database_url(url).replace("%", "%%"))
    command.upgrade(cfg, revision)
