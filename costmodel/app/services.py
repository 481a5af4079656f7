"""What the service's use cases share, whatever the face (the API, the web pages, the
command line's ``save``): the database and its sessions, the catalog and curves it holds, and
pricing with a cache. Catalog entries and curves are never updated in place, so a (count, max
id) marker tells each worker when its copy is stale; a price is a pure function of the
scenario, the overrides and that catalog (as of its marker), so equal requests share one
answer.

A face is handed one :class:`Services` when it is built (the HTTP faces: on the Flask app, by
``costmodel.server.create_app``; the command line: its own, for one command) and passes it to
the use cases of :mod:`costmodel.app.saved`, :mod:`costmodel.app.keys` and
:mod:`costmodel.app.catalog`; no face opens the store itself."""
from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from .. import app
from ..sources.catalog import Catalog
from ..sources.curve_point import CurveLibrary
from ..store import repo
from ..store.db import database_url, make_engine, make_sessions
from ..store.health import (
    StoreUnreachable,
    StoreUnwritable,
    WriteHealth,
    unreachable_reason,
    unwritable_reason,
)
from ..store.models import CatalogEntry, CurveRecord
from .events import emit
from .specs import InlineScenario, ScenarioSpec

__all__ = ["Services", "ServiceContext", "PriceAsk", "etag_of", "database_url",
           "StoreUnreachable", "StoreUnwritable"]


def etag_of(content: bytes) -> str:
    """A strong ETag: the hash of the answer's content, SHA-256 cut to 128 bits (still a
    cryptographic hash: saved scenarios of different users share the ETag space). OpenSSL's
    SHA-256 (SHA-NI) hashes a 3.7 kB answer in about 2.6 us, BLAKE2b here in 4.5 us."""
    return '"' + hashlib.sha256(content).hexdigest()[:32] + '"'


class PriceAsk(Protocol):
    """A price request as a face received it (the API's ``PriceWhatIfRequest``): what
    :meth:`Services.price_answer` keys its cache by, beside the face's parsed spec."""
    scenario: Mapping[str, Any] | None
    scenario_id: int | None
    revision: int | None
    overrides: Mapping[str, Any]


class Services:
    """One database's engines and sessions, its catalog and curves as this worker last read
    them, and the answers of prices already asked; ``url``: as :func:`database_url` reads
    it (None: ``$DATABASE_URL``, else a SQLite file in the working folder)."""

    def __init__(self, url: str | None = None, *, cache_size: int = 4096):
        self.engine = make_engine(url)
        self._sessions = make_sessions(self.engine)
        self.writes = WriteHealth(self.engine)  # the last write refused (disk full...)
        # SQLite: reads begin deferred and run beside the writer; PostgreSQL: the same engine
        self.read_engine = make_engine(url, write=False) if self.engine.url.get_backend_name() \
            == "sqlite" else self.engine
        self._read_sessions = make_sessions(self.read_engine)
        self._lock = threading.Lock()
        self._catalog: tuple[Any, Catalog, float] | None = None  # marker, copy, trusted until
        self._curves: tuple[Any, CurveLibrary, float] | None = None
        # the one way this worker prices: its answers and known scenarios
        self.pricer = app.Pricer(etag_of, cache_size=cache_size)

    @contextmanager
    def sessions(self, *, write: bool = True) -> Iterator[Session]:
        """A session in a transaction: committed on success, rolled back on any error. A
        write the store cannot make (disk full, read-only database) is
        :class:`StoreUnwritable`, and recorded for ``/healthz``; a database not answering
        (stopped, restarting, out of connections) is :class:`StoreUnreachable`."""
        try:
            with (self._sessions if write else self._read_sessions).begin() as session:
                yield session
        except (DBAPIError, PoolTimeout) as exc:
            if write and (reason := unwritable_reason(exc)) is not None:
                self.writes.failed(reason)
                emit("store_error", 1.0, "unwritable")
                raise StoreUnwritable(reason) from exc
            if (reason := unreachable_reason(exc)) is not None:
                emit("store_error", 1.0, "unreachable")
                raise StoreUnreachable(reason) from exc
            emit("store_error", 1.0, "other")
            raise

    def dispose(self) -> None:
        self.engine.dispose()
        self.read_engine.dispose()

    def health(self) -> dict[str, Any]:
        """The database's state for ``/healthz``: ``ok``, ``unreachable``, or ``unwritable``
        (a write was refused and the write probe is refused still) with the time of the last
        refused write and why."""
        try:  # on SQLite the write engine's BEGIN IMMEDIATE is refused by a read-only file
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except DBAPIError as exc:
            reason = unwritable_reason(exc)
            if reason is None:
                return {"database": "unreachable"}
            self.writes.failed(reason)
        except Exception:  # any failure means unhealthy; the detail is in the server log
            return {"database": "unreachable"}
        if self.writes.failure is not None and not self.writes.probe():
            failure = self.writes.failure
            if failure is not None:
                return {"database": "unwritable", "last_failed_write": failure[0],
                        "reason": failure[1]}
        return {"database": "ok"}

    # -- catalog and curves, reloaded only when they changed ----------------------------
    # Checking the (count, max id) marker costs a query; within MARKER_SECONDS a worker
    # trusts its copy, and a key it does not know makes it look again at once (build()).
    MARKER_SECONDS = 1.0

    def catalog(self, session: Session | None, *, fresh: bool = False) -> tuple[Any, Catalog]:
        """(marker, catalog); ``session=None`` opens one only if the copy must be checked."""
        return self._snapshot("_catalog", CatalogEntry,
                              lambda s, *_: repo.catalog_snapshot(s), session, fresh)

    def forget_catalog(self) -> None:
        """Check the catalog's marker before the next use (after this worker wrote to it)."""
        cached = self._catalog
        if cached is not None:
            self._catalog = (cached[0], cached[1], 0.0)

    def curves(self, session: Session | None, *,
               fresh: bool = False) -> tuple[Any, CurveLibrary]:
        """(marker, curves); ``session=None`` opens one only if the copy must be checked."""
        return self._snapshot("_curves", CurveRecord, _curves_since, session, fresh)

    def _snapshot(self, slot: str, table: Any, load: Any, session: Session | None,
                  fresh: bool) -> tuple[Any, Any]:
        """(marker, copy): the copy is kept while the (count, max id) marker stands; when
        it moves, ``load(session, old marker, old copy)`` builds the new one."""
        cached = getattr(self, slot)
        if cached is not None and not fresh and time.monotonic() < cached[2]:
            return cached[0], cached[1]
        with self._session_or(session) as s:
            marker = tuple(s.execute(select(func.count(), func.max(table.id))).one())
            if cached is not None and cached[0] == marker:
                copy = cached[1]
            else:
                copy = load(s, *(cached[:2] if cached is not None else (None, None)))
        setattr(self, slot, (marker, copy, time.monotonic() + self.MARKER_SECONDS))
        return marker, copy

    @contextmanager
    def _session_or(self, session: Session | None) -> Iterator[Session]:
        if session is not None:
            yield session
        else:
            with self.sessions(write=False) as own:
                yield own

    # -- the application layer's context ------------------------------------------------
    def context(self, session: Session | None) -> ServiceContext:
        """The catalog, curves and saved revisions of this database, for the use cases;
        ``session=None`` opens one only when something must be read."""
        return ServiceContext(self, session)

    # -- pricing, answered from the app's pricer (its caches) ----------------------------
    @property
    def variants(self) -> Any:
        """The pricer's known scenarios (see :mod:`costmodel.app.variants`)."""
        return self.pricer.variants

    @variants.setter
    def variants(self, value: Any) -> None:
        self.pricer.variants = value

    def price_answer(self, req: PriceAsk, spec: ScenarioSpec, view: str = "full",
                     body: bytes | None = None) -> app.PriceAnswer:
        """The answer to a price request (``req`` as received, ``spec`` as the face parsed
        it): its data, its JSON (UTF-8 bytes, as the answer sends them) and its ETag, from
        :class:`~costmodel.app.Pricer`.

        Catalog entries and curves are only ever added, never changed, so a scenario prices
        the same while the catalog holds the same entries: inline requests are answered from
        a cache keyed by their content and the catalog's marker, without touching the
        database while the marker is trusted; a saved scenario costs one query for its
        revision. (The marker is in the key because an added entry can change an answer: a
        reference rate named without a date is the latest version, and a date names the
        latest on or before it.) ``body``, the request's bytes when the caller has them,
        is the inline request's content in the key (hashed as sent: no second serialisation
        of the parsed request; the same request sent with other spacing is priced again).
        A summary leaves out the per-input sources, so it is priced without completing them.
        """
        share = getattr(req, "flexible_share", None)  # the what-if (PriceWhatIfRequest)
        asked = {"flexible_share": share} if share is not None else {}
        if req.scenario is not None:  # inline: the database only if the catalog is stale
            marker = list(self.catalog(None)[0])
            if body is not None:  # (the what-if is in the body: in the key)
                key = (f"body:{marker[0]}:{marker[1]}:{view}:"
                       + hashlib.blake2b(body, digest_size=20).hexdigest())
            else:
                key = repo.content_hash({"scenario": req.scenario, "overrides": req.overrides,
                                         "catalog": marker, "view": view, **asked})
            return self.pricer.answer(key, self.context(None), spec, view=view, share=share,
                                      catalog=tuple(marker))
        with self.sessions(write=False) as session:
            ctx = self.context(session)
            data, label = ctx.revision(req.scenario_id, req.revision)
            marker = list(self.catalog(session)[0])
            key = repo.content_hash({"saved": label, "overrides": req.overrides,
                                     "catalog": marker, "view": view, **asked})
            inline = ScenarioSpec(InlineScenario(data, label), spec.overrides, spec.subject)
            return self.pricer.answer(key, ctx, inline, view=view, share=share)


def _curves_since(session: Session, marker: Any, library: CurveLibrary | None) -> CurveLibrary:
    """The stored curves, parsing only rows added since ``marker`` (count, max id): curves
    are only ever added, so a worker never parses a curve twice (a 34,000-point curve used to
    cost every worker 15-20 s each time any curve was added). Rows gone (a database reset)
    mean a full reload."""
    max_id = marker[1] if marker is not None else None
    if library is None or max_id is None:
        return repo.curve_library(session)
    added = repo.curves_after(session, max_id)
    now = session.scalar(select(func.count()).select_from(CurveRecord))
    if len(library) + len(added) != now:
        return repo.curve_library(session)  # something was removed: start again
    return library.extended(added)


class ServiceContext:
    """The use cases' :class:`~costmodel.app.Context` on the service's database: catalog and
    curves from the worker's snapshots, saved revisions, and no file a request names."""
    files_allowed = False
    override_label = "overrides"
    limited = True  # a request's counts are bounded (costmodel.app.caps), on every face

    def __init__(self, services: Services, session: Session | None):
        self._services, self._session = services, session

    def catalog(self, fresh: bool = False) -> Catalog:
        return self._services.catalog(self._session, fresh=fresh)[1]

    def curves(self, fresh: bool = False) -> CurveLibrary:
        return self._services.curves(self._session, fresh=fresh)[1]

    def revision(self, scenario_id: int, number: int | None) -> tuple[dict, str]:
        with self._services._session_or(self._session) as session:
            rev = repo.revision_get(session, scenario_id, number)  # NotFound: 404
            return rev.data, f"saved scenario {rev.scenario_id} revision {rev.number}"
