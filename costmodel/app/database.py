"""The service's database as an operator prepares it: its URL, its schema brought up to date,
and the fixtures' catalog and curves loaded (what ``costmodel db`` and ``costmodel serve``
do)."""
from __future__ import annotations

from pathlib import Path

from ..store import seed as _seed
from ..store.db import database_url, make_engine, make_sessions, upgrade

__all__ = ["database_url", "upgrade", "seed", "prepare"]


def seed(url: str | None, fixtures: Path) -> dict[str, int]:
    """Load every catalog entry and curve of ``fixtures`` not in the database yet (existing
    ones stay); how many of each kind were added."""
    engine = make_engine(url)
    try:
        with make_sessions(engine).begin() as session:
            return _seed.seed(session, fixtures)
    finally:
        engine.dispose()


def prepare(url: str, fixtures: Path | None = None) -> dict[str, int] | None:
    """Migrate the database at ``url`` to the newest schema and, given ``fixtures``, seed it
    (what ``costmodel serve`` does before it serves); what :func:`seed` added."""
    return _seed.prepare(url, fixtures)
