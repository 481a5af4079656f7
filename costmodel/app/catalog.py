"""The service's catalog entries and curves, for every face: list, read and add them.

Entries and curves are only ever added, never changed: adding one tells this worker to look at
the catalog again before its next answer (others look within ``Services.MARKER_SECONDS``). An
entry or curve that exists already is :class:`Conflict`; an unknown one :class:`NotFound`.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..model.curves import Curve
from ..store import repo
from ..store.repo import Conflict, NotFound
from .services import Services

__all__ = ["Conflict", "NotFound", "StoredEntry", "StoredCurve", "entries", "entry",
           "add_entry", "curves", "curve", "add_curves"]


@dataclass(frozen=True)
class StoredEntry:
    """A catalog entry as stored: plain values, their sources by dotted key, who added it."""
    kind: str
    key: str
    data: dict[str, Any]
    provenance: dict[str, Any]
    origin: str
    created_at: datetime


@dataclass(frozen=True)
class StoredCurve:
    """A stored curve's key and where it came from (its points: :func:`curve`)."""
    curve_id: str
    hardware: str
    model: str
    points: int
    source: str
    origin: str
    created_at: datetime


def _entry(row: Any) -> StoredEntry:
    return StoredEntry(row.kind, row.key, row.data, row.provenance, row.origin, row.created_at)


def _curve(row: Any) -> StoredCurve:
    return StoredCurve(row.curve_id, row.hardware, row.model, row.points, row.source,
                       row.origin, row.created_at)


def entries(services: Services, kind: str, *, q: str | None = None, limit: int = 50,
            offset: int = 0) -> tuple[list[StoredEntry], int]:
    """A page of the entries of ``kind`` (by key; ``q``: keys containing it) and how many."""
    with services.sessions(write=False) as session:
        rows, total = repo.catalog_list(session, kind, q=q, limit=limit, offset=offset)
        return [_entry(r) for r in rows], total


def entry(services: Services, kind: str, key: str) -> StoredEntry:
    with services.sessions(write=False) as session:
        return _entry(repo.catalog_get(session, kind, key))


def add_entry(services: Services, kind: str, key: str, data: dict[str, Any],
              provenance: dict[str, Any], origin: str) -> StoredEntry:
    """Add a checked entry (plain values and their sources)."""
    with services.sessions() as session:
        out = _entry(repo.catalog_create(session, kind, key, data, provenance, origin=origin))
    # an undated reference rate is the latest version: a new one changes it
    services.forget_catalog()
    return out


def curves(services: Services, *, q: str | None = None, hardware: str | None = None,
           model: str | None = None, limit: int = 50,
           offset: int = 0) -> tuple[list[StoredCurve], int]:
    with services.sessions(write=False) as session:
        rows, total = repo.curve_list(session, q=q, hardware=hardware, model=model,
                                      limit=limit, offset=offset)
        return [_curve(r) for r in rows], total


def curve(services: Services, curve_id: str) -> tuple[StoredCurve, Curve]:
    """A stored curve and its points, from the worker's parsed copy when it holds it."""
    with services.sessions(write=False) as session:
        row = repo.curve_get(session, curve_id)
        held = services.curves(session)[1].get(curve_id)
        return _curve(row), held[0] if held is not None else repo.curve_of(row)


def add_curves(services: Services, parsed: Iterable[Curve], origin: str) -> list[StoredCurve]:
    """Add parsed curves, all or none (:class:`Conflict` when one exists already)."""
    with services.sessions() as session:
        return [_curve(repo.curve_create(session, c, origin=origin)) for c in parsed]
