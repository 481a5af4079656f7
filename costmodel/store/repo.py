"""Queries and writes. Every function takes a Session; the caller owns the transaction."""
from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..model.curves import Curve
from ..sources.catalog import KINDS, Catalog, Entry
from ..sources.curve_files import curves_csv_text, read_curve_text
from ..sources.curve_point import CurveLibrary
from .models import (
    ApiKey,
    CatalogEntry,
    CurveRecord,
    SavedScenario,
    ScenarioRevision,
    utcnow,
)

__all__ = ["NotFound", "Conflict", "Stale", "ROLES", "content_hash", "catalog_list",
           "catalog_get", "catalog_create", "catalog_snapshot", "curve_list", "curve_get",
           "curve_create", "curve_library", "curve_record", "scenario_create", "scenario_lock",
           "scenario_revise", "revision_expected", "scenario_get", "scenario_list",
           "revision_get", "key_create", "key_verify", "key_list", "key_revoke",
           "key_end_sessions", "role_allows", "curve_of", "curves_after"]

ROLES = ("viewer", "editor", "admin")  # each includes the ones before it


class NotFound(LookupError):
    pass


class Conflict(ValueError):
    pass


def content_hash(data: Any) -> str:
    """SHA-256 [hex] of the canonical JSON of ``data``, which is JSON data (from a request
    body or file: no NaN or infinity)."""
    # the canonical text is orjson's: sorted keys, no spaces, UTF-8, shortest float repr
    # (1e-7, not 1e-07); stored hashes depend on it, so it must not change
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _page(session: Session, stmt, limit: int, offset: int):
    total = session.scalar(select(func.count()).select_from(stmt.subquery()))
    rows = session.scalars(stmt.limit(limit).offset(offset)).all()
    return rows, int(total or 0)


# ---- catalog --------------------------------------------------------------------------------

def catalog_list(session: Session, kind: str, *, q: str | None = None, limit: int = 50,
                 offset: int = 0) -> tuple[list[CatalogEntry], int]:
    stmt = select(CatalogEntry).where(CatalogEntry.kind == kind).order_by(CatalogEntry.key)
    if q:
        stmt = stmt.where(CatalogEntry.key.contains(q, autoescape=True))
    return _page(session, stmt, limit, offset)


def catalog_get(session: Session, kind: str, key: str) -> CatalogEntry:
    row = session.scalar(select(CatalogEntry).where(CatalogEntry.kind == kind,
                                                    CatalogEntry.key == key))
    if row is None:
        raise NotFound(f"no {kind} {key!r}")
    return row


def catalog_create(session: Session, kind: str, key: str, data: dict, provenance: dict,
                   origin: str) -> CatalogEntry:
    if kind not in KINDS:
        raise ValueError(f"unknown catalog kind {kind!r}")
    row = CatalogEntry(kind=kind, key=key, data=data, provenance=provenance, origin=origin)
    session.add(row)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"{kind} {key!r} exists already; catalog entries are not "
                       f"overwritten") from None
    return row


def catalog_snapshot(session: Session) -> Catalog:
    """The whole catalog as the engine's :class:`Catalog`."""
    entries: dict[str, dict[str, Entry]] = {k: {} for k in KINDS}
    for row in session.scalars(select(CatalogEntry)):
        entries.setdefault(row.kind, {})[row.key] = Entry(row.kind, row.key, row.data,
                                                          row.provenance)
    return Catalog(entries)


# ---- curves ---------------------------------------------------------------------------------

def curve_list(session: Session, *, q: str | None = None, hardware: str | None = None,
               model: str | None = None, limit: int = 50,
               offset: int = 0) -> tuple[list[CurveRecord], int]:
    stmt = select(CurveRecord).order_by(CurveRecord.curve_id)
    if q:
        stmt = stmt.where(CurveRecord.curve_id.contains(q, autoescape=True))
    if hardware:
        stmt = stmt.where(CurveRecord.hardware == hardware)
    if model:
        stmt = stmt.where(CurveRecord.model == model)
    return _page(session, stmt, limit, offset)


def curve_get(session: Session, curve_id: str) -> CurveRecord:
    row = session.scalar(select(CurveRecord).where(CurveRecord.curve_id == curve_id))
    if row is None:
        raise NotFound(f"no curve {curve_id!r}")
    return row


def curve_record(curve: Curve, origin: str) -> CurveRecord:
    """A new row for ``curve``: its key, and its points as costmodel curve CSV."""
    return CurveRecord(curve_id=curve.key.id, hardware=curve.key.hardware,
                       model=curve.key.model, points=len(curve), csv=curves_csv_text([curve]),
                       source=curve.source, origin=origin)


def curve_create(session: Session, curve: Curve, origin: str) -> CurveRecord:
    row = curve_record(curve, origin)
    session.add(row)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"curve {curve.key.id!r} exists already") from None
    return row


def curve_of(row: CurveRecord) -> Curve:
    (curve,) = read_curve_text(row.csv, name=f"curve {row.curve_id}")
    return curve


def curve_library(session: Session) -> CurveLibrary:
    return CurveLibrary({row.curve_id: (curve_of(row), "database")
                         for row in session.scalars(select(CurveRecord))})


def curves_after(session: Session, after_id: int) -> dict[str, tuple[Curve, str]]:
    """Curves stored after row ``after_id``, parsed: id -> (curve, origin)."""
    rows = session.scalars(select(CurveRecord).where(CurveRecord.id > after_id)
                           .order_by(CurveRecord.id))
    return {row.curve_id: (curve_of(row), "database") for row in rows}


# ---- scenarios ------------------------------------------------------------------------------

def scenario_create(session: Session, name: str, data: dict, result: dict, *,
                    engine_version: str, created_by: str,
                    created_by_key_id: int | None = None) -> ScenarioRevision:
    scenario = SavedScenario(name=name, latest_revision=0)
    session.add(scenario)
    session.flush()
    return _add_revision(session, scenario.id, data, result, engine_version, created_by,
                         created_by_key_id)


@dataclass(frozen=True)
class RevisionRef:
    """What names a revision and its author, kept after its transaction ends."""
    scenario_id: int
    number: int
    content_hash: str
    created_by: str
    created_by_key_id: int | None


class Stale(Conflict):
    """The scenario moved on from the revision the writer based its edit on: nothing was
    written. ``latest`` is the scenario's latest revision now."""

    def __init__(self, message: str, latest: ScenarioRevision | RevisionRef):
        super().__init__(message)
        self.latest = RevisionRef(latest.scenario_id, latest.number, latest.content_hash,
                                  latest.created_by, latest.created_by_key_id)


def scenario_lock(session: Session, scenario_id: int) -> SavedScenario:
    """The scenario, locked until the transaction ends: concurrent writers of one scenario
    take turns (``SELECT ... FOR UPDATE`` on PostgreSQL; on SQLite a write transaction holds
    the database's write lock from its start). Read afresh, not from the session's map."""
    row = session.scalar(select(SavedScenario).where(SavedScenario.id == scenario_id)
                         .with_for_update()
                         .execution_options(populate_existing=True))
    if row is None:
        raise NotFound(f"no scenario {scenario_id}")
    return row


def scenario_revise(session: Session, scenario_id: int, data: dict, result: dict, *,
                    engine_version: str, created_by: str,
                    created_by_key_id: int | None = None,
                    expect: Callable[[ScenarioRevision], bool] | None = None,
                    ) -> tuple[ScenarioRevision, bool]:
    """Save ``data`` as the next revision; (revision, created). Content equal to the latest
    revision is not an edit: the latest is returned and nothing is written.

    ``expect(latest)`` (If-Match, the page's revision it was based on) is asked about the
    latest revision; False raises :class:`Stale` and nothing is written. The check, the
    comparison with the latest and the increment are one step: the scenario's row is locked
    first, so two writers of equal content at once make one revision, not two."""
    latest = _expected(_revision_of(session, scenario_lock(session, scenario_id), None),
                       expect)
    if latest.content_hash == content_hash(data):
        return latest, False
    return _add_revision(session, scenario_id, data, result, engine_version, created_by,
                         created_by_key_id), True


def revision_expected(session: Session, scenario_id: int,
                      expect: Callable[[ScenarioRevision], bool] | None) -> ScenarioRevision:
    """The scenario's latest revision, asked first by a writer before it prices its edit:
    :class:`NotFound` without the scenario, :class:`Stale` when ``expect`` refuses the latest
    (:func:`scenario_revise` asks again under the lock)."""
    return _expected(revision_get(session, scenario_id, None), expect)


def _expected(latest: ScenarioRevision,
              expect: Callable[[ScenarioRevision], bool] | None) -> ScenarioRevision:
    if expect is not None and not expect(latest):
        raise Stale(f"scenario {latest.scenario_id} moved on to revision {latest.number} "
                    f"(by {latest.created_by}); nothing was written", latest)
    return latest


def _add_revision(session: Session, scenario_id: int, data: dict, result: dict,
                  engine_version: str, created_by: str,
                  created_by_key_id: int | None = None) -> ScenarioRevision:
    # One atomic increment hands out revision numbers: concurrent writers each get their
    # own n (the row lock on PostgreSQL, the write lock on SQLite), none is lost.
    number = session.execute(
        update(SavedScenario).where(SavedScenario.id == scenario_id)
        .values(latest_revision=SavedScenario.latest_revision + 1)
        .returning(SavedScenario.latest_revision)).scalar_one_or_none()
    if number is None:
        raise NotFound(f"no scenario {scenario_id}")
    revision = ScenarioRevision(scenario_id=scenario_id, number=number,
                                content_hash=content_hash(data), data=data, result=result,
                                engine_version=engine_version, created_by=created_by,
                                created_by_key_id=created_by_key_id)
    session.add(revision)
    session.flush()
    return revision


def scenario_get(session: Session, scenario_id: int) -> SavedScenario:
    row = session.get(SavedScenario, scenario_id)
    if row is None:
        raise NotFound(f"no scenario {scenario_id}")
    return row


def scenario_list(session: Session, *, q: str | None = None, limit: int = 50,
                  offset: int = 0) -> tuple[list[SavedScenario], int]:
    stmt = select(SavedScenario).order_by(SavedScenario.id)
    if q:
        stmt = stmt.where(SavedScenario.name.contains(q, autoescape=True))
    return _page(session, stmt, limit, offset)


def revision_get(session: Session, scenario_id: int, number: int | None) -> ScenarioRevision:
    """Revision ``number`` of a scenario, or its latest when ``number`` is None."""
    return _revision_of(session, scenario_get(session, scenario_id), number)


def _revision_of(session: Session, scenario: SavedScenario,
                 number: int | None) -> ScenarioRevision:
    scenario_id = scenario.id
    n = scenario.latest_revision if number is None else number
    row = session.scalar(select(ScenarioRevision).where(
        ScenarioRevision.scenario_id == scenario_id, ScenarioRevision.number == n))
    if row is None:
        raise NotFound(f"scenario {scenario_id} has no revision {n} "
                       f"(latest: {scenario.latest_revision})")
    return row


# ---- keys -----------------------------------------------------------------------------------

def _hash_secret(secret: str) -> str:
    # the secret is 256 random bits: a plain SHA-256 cannot be brute-forced
    return hashlib.sha256(secret.encode()).hexdigest()


def key_create(session: Session, name: str, role: str) -> tuple[ApiKey, str]:
    """A new key; returns the row and the token, which is shown once and never stored."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    row = ApiKey(name=name, role=role, prefix=prefix, secret_hash=_hash_secret(secret))
    session.add(row)
    session.flush()
    return row, f"cm_{prefix}_{secret}"


def key_verify(session: Session, token: str) -> ApiKey | None:
    """The live key a token belongs to, or None."""
    parts = token.split("_", 2)
    if len(parts) != 3 or parts[0] != "cm":
        return None
    row = session.scalar(select(ApiKey).where(ApiKey.prefix == parts[1],
                                              ApiKey.revoked_at.is_(None)))
    if row is None or not hmac.compare_digest(row.secret_hash, _hash_secret(parts[2])):
        return None
    return row


def key_list(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.id)))


def key_revoke(session: Session, key_id: int) -> ApiKey:
    row = session.get(ApiKey, key_id)
    if row is None:
        raise NotFound(f"no key {key_id}")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    return row


def key_end_sessions(session: Session, key_id: int) -> None:
    """End every session of the pages signed in with this key (sign-out): its generation
    moves on, so no cookie signed in before matches it again, on any worker or host."""
    session.execute(update(ApiKey).where(ApiKey.id == key_id)
                    .values(session_generation=ApiKey.session_generation + 1))


def role_allows(role: str, needed: str) -> bool:
    return ROLES.index(role) >= ROLES.index(needed)


