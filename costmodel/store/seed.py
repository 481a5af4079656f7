"""Loading fixtures/ into the database, idempotently: existing entries are left alone."""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..sources.catalog import KINDS, Catalog
from ..sources.curve_files import read_curves
from .models import CatalogEntry, CurveRecord
from .repo import curve_record

__all__ = ["seed", "prepare"]


def seed(session: Session, fixtures: Path) -> dict[str, int]:
    """Insert every catalog entry and curve of ``fixtures`` that is not there yet; returns
    how many of each kind were added."""
    added: dict[str, int] = {}
    catalog = Catalog.load(fixtures)
    existing = {(k, key) for k, key in session.execute(
        select(CatalogEntry.kind, CatalogEntry.key))}
    for kind in KINDS:
        added[kind] = 0
        for key in catalog.keys(kind):
            if (kind, key) in existing:
                continue
            entry = catalog.get(kind, key, kind)
            session.add(CatalogEntry(kind=kind, key=key, data=entry.data,
                                     provenance=entry.provenance, origin="fixtures"))
            added[kind] += 1
    have = set(session.scalars(select(CurveRecord.curve_id)))
    added["curve"] = 0
    for path in sorted((fixtures / "curves").glob("*")):
        if path.suffix.lower() not in (".csv", ".json"):
            continue
        for curve in read_curves(path):
            if curve.key.id in have:
                continue
            session.add(curve_record(curve, origin="fixtures"))
            have.add(curve.key.id)
            added["curve"] += 1
    session.flush()
    return added


def prepare(url: str, fixtures: Path | None = None) -> dict[str, int] | None:
    """Migrate the database at ``url`` to the newest schema and, given ``fixtures``, seed it
    (what ``costmodel serve`` does before it serves); returns what :func:`seed` added."""
    from .db import make_engine, make_sessions, upgrade
    upgrade(url)
    if fixtures is None:
        return None
    engine = make_engine(url)
    try:
        with make_sessions(engine).begin() as session:
            return seed(session, fixtures)
    finally:
        engine.dispose()
