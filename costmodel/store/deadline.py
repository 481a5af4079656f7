"""PostgreSQL connections that never wait for an answer without end.

A database that accepts a connection and then says nothing (a frozen server, a proxy or a
network that stops forwarding) is not refused: without a bound, every request that touches
it would wait until gunicorn kills its worker (issue 38, item 3). Three bounds, one outcome:

- **connect**: ``connect_timeout`` (``COSTMODEL_DB_CONNECT_TIMEOUT``, 5 s; libpq's least is
  2 s): psycopg's ``ConnectionTimeout``;
- **statement**: PostgreSQL's own ``statement_timeout`` (``COSTMODEL_DB_STATEMENT_TIMEOUT``,
  10 s), set on each new connection: a live server cancels a statement running longer
  (SQLSTATE 57014) and the connection stays usable; and, for a server that does not answer
  at all (which cancels nothing), every wait of the connection for the server (a statement,
  the pool's check before use, a commit, a rollback) ends ``GRACE`` seconds later
  (:class:`DatabaseTimeout`); the connection is closed, as its state is unknown, and the pool
  replaces it;
- **pool checkout**: ``COSTMODEL_DB_POOL_TIMEOUT`` (:mod:`costmodel.store.db`).

Each is told apart by :func:`costmodel.store.health.unreachable_reason`: the same 503
``store-unreachable`` with ``Retry-After`` as a refused connection.
"""
from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["DatabaseTimeout", "DeadlineConnection", "GRACE", "connect"]

GRACE = 2.0  # [s] past the server's statement_timeout: its own cancel comes first when alive
_WAIT_TIMEOUT = getattr(psycopg.errors, "_WaitTimeout", psycopg.errors.OperationalError)


class DatabaseTimeout(psycopg.OperationalError):
    """The database did not answer a connection in ``seconds`` [s]; the connection is
    closed. (A DBAPI error: SQLAlchemy wraps it, and sees the connection as lost.)"""

    store_timeout = True  # what costmodel.store.health looks for

    def __init__(self, seconds: float):
        super().__init__(f"the database did not answer within {seconds:g} s")
        self.seconds = seconds


class DeadlineConnection(psycopg.Connection):
    """A psycopg connection whose every wait for the server ends after ``deadline`` [s]
    (None: no end)."""

    deadline: float | None = None

    def wait(self, gen: Any, interval: Any = None, timeout: float | None = None) -> Any:
        own = timeout is None and self.deadline is not None
        kwargs = {"timeout": self.deadline if own else timeout}
        if interval is not None:
            kwargs["interval"] = interval
        try:
            return super().wait(gen, **kwargs)
        except _WAIT_TIMEOUT as exc:
            if not own or exc.sqlstate is not None:
                raise  # a caller's own timeout, or an error the server answered
            # mid-exchange: what the server will still send is unknown; never use it again
            self.pgconn.finish()
            raise DatabaseTimeout(self.deadline or 0.0) from exc


def connect(cargs: tuple, cparams: dict[str, Any], *, statement_timeout: float) -> Any:
    """A new connection (SQLAlchemy's ``do_connect``): PostgreSQL's ``statement_timeout``
    set to ``statement_timeout`` [s] (0: none) on it, every wait bounded by that plus GRACE."""
    conn = DeadlineConnection.connect(*cargs, **cparams)
    if statement_timeout > 0:
        conn.deadline = statement_timeout + GRACE
        # a session setting, committed so that the pool's rollback on return keeps it
        conn.execute("SELECT set_config('statement_timeout', %s, false)",
                     (f"{round(statement_timeout * 1000)}ms",))
        conn.commit()
    return conn
