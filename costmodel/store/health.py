"""Whether the store can write: a full disk or a read-only database told apart from any other
database error, the time of the last write it refused, and a probe that finds out whether it
writes again.

SQLite says ``database or disk is full`` (SQLITE_FULL: the disk, or ``max_page_count``),
``attempt to write a readonly database`` (SQLITE_READONLY) or ``disk I/O error``
(SQLITE_IOERR); PostgreSQL answers SQLSTATE 53100 (disk_full; ``could not extend file``) or
25006 (read_only_sql_transaction: ``default_transaction_read_only``, a hot standby). Such a
write is rolled back whole: nothing is half-written.

A database that does not answer at all (stopped, restarting, unreachable, out of connections)
is told apart too (:func:`unreachable_reason`), and so is one that accepts and never answers
(each wait bounded: :mod:`costmodel.store.deadline`): the faces answer 503 with its own
problem type and a ``Retry-After``, never a 500, and the next request tries again (the pool
checks each connection before use, so a database back from a restart is used again without a
restart of the service).
"""
from __future__ import annotations

import threading
from datetime import UTC, datetime

from sqlalchemy import Engine, event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

__all__ = ["StoreUnwritable", "StoreUnreachable", "unwritable_reason", "unreachable_reason",
           "WriteHealth"]

_MESSAGES = (  # lower case, as the drivers write them
    ("database or disk is full", "the disk is full"),
    ("disk full", "the disk is full"),
    ("could not extend file", "the disk is full"),
    ("no space left on device", "the disk is full"),
    ("readonly database", "the database is read-only"),
    ("read-only database", "the database is read-only"),
    ("read-only transaction", "the database is read-only"),
    ("disk i/o error", "a disk I/O error"),
)
_SQLSTATES = {"53100": "the disk is full", "25006": "the database is read-only"}
PROBE_TABLE = "costmodel_write_probe"  # created and rolled back: never kept
# SQLSTATEs of a database that is not answering: class 08 (connection exception), 57P01-03
# (shut down by an administrator or a crash, starting up), 53300 (too many connections)
_GONE_SQLSTATES = ("57P01", "57P02", "57P03", "53300")
# query_canceled: the server's statement_timeout (costmodel.store.deadline), or a cancel
_STATEMENT_TIMEOUT = "57014"
_SQLITE_GONE = (("database is locked", "the database is busy (locked by another writer)"),
                ("unable to open database file", "the database file cannot be opened"))


class _StoreDown(Exception):
    """The store could not do what a request asked; ``reason`` says why, in words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class StoreUnwritable(_StoreDown):
    """A write the store refused because it cannot write (disk full, read-only); rolled
    back, so nothing of it was kept."""


def unwritable_reason(exc: BaseException) -> str | None:
    """Why ``exc`` says the store cannot write (``"the disk is full"``...), or None when it is
    another error."""
    if not isinstance(exc, DBAPIError):
        return None
    orig = exc.orig
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if state in _SQLSTATES:
        return _SQLSTATES[state]
    message = str(orig if orig is not None else exc).lower()
    return next((reason for fragment, reason in _MESSAGES if fragment in message), None)


class StoreUnreachable(_StoreDown):
    """The database did not answer (stopped, restarting, unreachable, out of connections):
    nothing of the request was done; the next request tries again."""


def unreachable_reason(exc: BaseException) -> str | None:
    """Why ``exc`` says the database is not answering (``"the database is unreachable"``...),
    or None when it is another error (a bad statement, a constraint: a bug or a conflict,
    which must not be hidden behind a 503)."""
    if isinstance(exc, PoolTimeout):
        return "every database connection of this worker is busy"
    if not isinstance(exc, DBAPIError):
        return None
    orig = exc.orig
    if type(orig).__module__.startswith("sqlite3"):
        message = str(orig).lower()
        return next((why for fragment, why in _SQLITE_GONE if fragment in message), None)
    if getattr(orig, "store_timeout", False):  # no answer in time (costmodel.store.deadline)
        return str(orig)
    kinds = {k.__name__ for k in type(orig).__mro__}
    if "ConnectionTimeout" in kinds:  # psycopg: connect_timeout passed
        return "the database did not accept a connection in time"
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if state == _STATEMENT_TIMEOUT:
        return "the database did not answer within its statement timeout"
    if exc.connection_invalidated or (state and (state.startswith("08")
                                                 or state in _GONE_SQLSTATES)):
        return "the database is unreachable or restarting"
    if state is None and kinds & {"OperationalError", "InterfaceError"}:
        return "the database is unreachable"  # refused or lost before any SQLSTATE
    return None


class WriteHealth:
    """The last write the store refused, forgotten once a write is committed again (or the
    probe writes). Installed on the engine that writes."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._lock = threading.Lock()
        self._failure: tuple[datetime, str] | None = None

        @event.listens_for(engine, "after_cursor_execute")
        def _wrote(conn, _cursor, statement, *_):  # pragma: no cover - driver hook
            if statement.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
                conn.info["costmodel_wrote"] = True

        @event.listens_for(engine, "commit")
        def _committed(conn):  # pragma: no cover - driver hook
            # before the driver's commit: a commit that fails is recorded again by failed()
            if not conn.invalidated and conn.info.pop("costmodel_wrote", False):
                self.recovered()

        @event.listens_for(engine, "rollback")
        def _rolled_back(conn):  # pragma: no cover - driver hook
            # a connection the database dropped (a restart) is invalidated: reading its info
            # would try to reconnect inside the failed transaction (PendingRollbackError, a
            # 500 in place of the 503 the lost connection is)
            if not conn.invalidated:
                conn.info.pop("costmodel_wrote", None)

    @property
    def failure(self) -> tuple[datetime, str] | None:
        """(when [UTC], why) of the last refused write, while no write has succeeded since."""
        return self._failure

    def failed(self, reason: str) -> None:
        with self._lock:
            self._failure = (datetime.now(UTC), reason)

    def recovered(self) -> None:
        with self._lock:
            self._failure = None

    def probe(self) -> bool:
        """Whether the store writes now: a table created and rolled back (it takes a new
        page, so a full disk refuses it as a read-only database does). A success forgets the
        failure; a refusal records it again; another error (no privilege to create a table)
        leaves it as it is."""
        try:
            with self.engine.connect() as conn, conn.begin() as tx:
                conn.execute(text(f"CREATE TABLE {PROBE_TABLE} (x INTEGER)"))
                tx.rollback()
        except DBAPIError as exc:
            reason = unwritable_reason(exc)
            if reason is not None:
                self.failed(reason)
            return False
        self.recovered()
        return True
